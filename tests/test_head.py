"""``objperf fetch --op head``: each key's headers (a stat) in place of ranged GETs, through the same engine and
drive loop: one row a HEAD, their rate and latency in the summary apart, each answer held to the object's size
and an ETag, and the dataset told again by analyze as the run told it."""

from __future__ import annotations

import json

import pytest
from hostile import HostileS3

from conftest import run_cli
from objperf import load

pytestmark = pytest.mark.timeout(120)


def head(store, out, *args: str, url: str | None = None) -> tuple[dict, object]:
    done = run_cli("objperf.fetch", url or f"s3://{store.bucket}/data/", "--endpoint", store.server.endpoint,
                   "--op", "head", "--out", str(out), "--json", *args, env=store.env())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), load(out)


@pytest.mark.integration
def test_heads_stat_every_key_in_turn_and_move_no_body(store, tmp_path):
    summary, rows = head(store, tmp_path / "run", "-c", "4", "--requests", "30", "--range-size", "1MiB")
    assert len(rows) == 30 and (rows["op"].astype(str) == "HEAD").all()
    assert (rows["status"] == 200).all() and (rows["curl_code"] == 0).all() and (rows["bytes"] == 0).all()
    assert (rows["offset"] == 0).all()
    assert (rows["length"] == rows["key"].astype(str).map(store.objects)).all()  # each the object's size
    counts = rows["key"].astype(str).value_counts()
    assert set(counts.index) == set(store.objects) and counts.max() - counts.min() <= 1  # keys in turn
    assert rows["etag"].astype(str).str.len().gt(0).all()
    ops = summary["ops"]
    assert set(ops) == {"HEAD"} and ops["HEAD"]["requests"] == 30 and ops["HEAD"]["failed"] == 0
    assert 0 < ops["HEAD"]["latency_ms_p50"] <= ops["HEAD"]["latency_ms_p99"]
    assert summary["bytes"] == 0 and summary["directions"] == {}


@pytest.mark.integration
def test_analyze_tells_a_head_run_as_it_ended(store, tmp_path):
    out = tmp_path / "run"
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/data/", "--endpoint", store.server.endpoint, "--op",
                   "head", "-c", "2", "--requests", "20", "--out", str(out), env=store.env())
    assert done.returncode == 0, done.stderr
    told = [line for line in done.stdout.splitlines() if line.startswith("  ")]
    assert any(line.startswith("  HEAD ") and "20 requests (0 failed)" in line for line in told), done.stdout
    assert any("in short     HEAD c2: " in line for line in told) and not any("TTFB" in line for line in told)
    again = run_cli("objperf.commands.analyze", str(out))
    assert again.returncode == 0, again.stderr
    assert [line for line in again.stdout.splitlines() if line.startswith(("  HEAD ", "  in short"))] == \
        [line for line in told if line.startswith(("  HEAD ", "  in short"))]
    scanned = run_cli("objperf.commands.analyze", str(out), "--scan", "--json")
    assert scanned.returncode == 0, scanned.stderr
    ops = json.loads(scanned.stdout)["summary"]["ops"]
    assert ops["HEAD"]["requests"] == 20 and ops["HEAD"]["failed"] == 0


@pytest.mark.integration
def test_a_head_that_names_another_size_than_the_listing_is_a_failed_row(tmp_path):
    import os

    env = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}
    with HostileS3("head-says-zero", objects={"data/obj.bin": 4 << 20}) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--op", "head",
                       "--requests", "4", "--out", str(tmp_path / "r"), env={**os.environ, **env}, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    rows = load(tmp_path / "r")
    assert len(rows) == 4 and (rows["op"].astype(str) == "HEAD").all() and (rows["curl_code"] == 8).all()


@pytest.mark.parametrize("args, says", [
    (("--sink", "file", "--sink-dir", "x"), "--sink file"),
    (("--verify",), "--verify"),
    (("--bytes", "1GiB"), "--bytes"),
    (("--engine", "requests"), "--engine requests"),
])
@pytest.mark.integration
def test_what_a_head_has_no_body_for_is_one_line_before_any_request(store, tmp_path, args, says):
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/data/", "--endpoint", store.server.endpoint, "--op",
                   "head", "--requests", "2", *args, "--out", str(tmp_path / "r"), env=store.env())
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr and "a HEAD has no body" in done.stderr
    assert not (tmp_path / "r").exists()

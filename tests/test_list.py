"""``objperf list``: listers paging through a prefix with continuation tokens, over and over, one row a page: every
pass lists what was put, a page of --max-keys at a time; a delimiter gives common prefixes; pages/s and keys/s in
the summary, ``objperf analyze`` telling the same; a run asked wrongly is one line before any request."""

from __future__ import annotations

import json
import math
import uuid

import pytest
from hostile import HostileS3
from test_hostile import env as hostile_env

from conftest import run_cli
from objperf import load

pytestmark = pytest.mark.timeout(180)


def put_keys(store, keys: list[str]) -> None:
    for key in keys:
        store.client.put_object(store.bucket, key, b"x" * 10)


def pages_by_place(rows) -> dict[int, list[int]]:
    """Each page's length by its place in its pass (its ``offset``: 0 for a pass's first page)."""
    return {int(offset): sorted(int(n) for n in mine) for offset, mine in rows.groupby("offset")["length"]}


def passes(lengths: list[int], times: int) -> dict[int, list[int]]:
    """What ``pages_by_place`` gives of ``times`` passes whose pages list ``lengths``."""
    return {place: [n] * times for place, n in enumerate(lengths)}


@pytest.mark.integration
@pytest.mark.parametrize("max_keys, listers", [(100, 2), (1000, 1), (7, 3)])
def test_every_pass_lists_the_keys_put_a_page_of_max_keys_at_a_time(store, tmp_path, max_keys, listers):
    n = 250
    prefix = f"list-{uuid.uuid4().hex[:8]}/"
    put_keys(store, [f"{prefix}k-{i:04d}" for i in range(n)])
    store.client.put_object(store.bucket, f"{prefix[:-1]}-beside", b"x")  # shares the prefix's start, not under it
    out = tmp_path / "run"
    done = run_cli("objperf", "list", f"s3://{store.bucket}/{prefix}", "--endpoint", store.server.endpoint,
                   "--max-keys", str(max_keys), "-c", str(listers), "--passes", "3", "--out", str(out), "--json",
                   env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(out)
    pages = math.ceil(n / max_keys)
    assert len(rows) == 3 * pages and (rows["op"].astype(str) == "LIST").all()
    assert (rows["status"] == 200).all() and (rows["curl_code"] == 0).all() and (rows["bytes"] > 0).all()
    assert set(rows["key"].astype(str)) == {prefix}
    # each pass: every key once, max-keys a page, the last page the rest
    assert pages_by_place(rows) == passes([max_keys] * (pages - 1) + [n - max_keys * (pages - 1)], 3)
    summary = json.loads(done.stdout)
    assert summary["passes"] == 3 and summary["ops"]["LIST"]["keys"] == 3 * n
    assert summary["ops"]["LIST"]["requests"] == 3 * pages and summary["error_requests"] == 0
    assert summary["ops"]["LIST"]["keys_per_s"] > 0 and summary["ops"]["LIST"]["requests_per_s"] > 0


@pytest.mark.integration
def test_a_delimiter_rolls_the_keys_below_it_into_common_prefixes(store, tmp_path):
    prefix = f"list-{uuid.uuid4().hex[:8]}/"
    put_keys(store, [f"{prefix}dir-{d}/k-{i}" for d in range(3) for i in range(5)] + [f"{prefix}top-{i}" for i in
                                                                                       range(4)])
    out = tmp_path / "run"
    done = run_cli("objperf", "list", f"s3://{store.bucket}/{prefix}", "--endpoint", store.server.endpoint,
                   "--delimiter", "/", "--max-keys", "2", "--passes", "2", "--out", str(out), env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(out)
    assert pages_by_place(rows) == passes([2, 2, 2, 1], 2)  # 3 common prefixes and 4 keys, two a page
    assert (rows["curl_code"] == 0).all()
    nested = run_cli("objperf", "list", f"s3://{store.bucket}/{prefix}dir-1/", "--endpoint", store.server.endpoint,
                     "--delimiter", "/", "--no-save", "--json", env=store.env())
    assert json.loads(nested.stdout)["ops"]["LIST"]["keys"] == 5


@pytest.mark.integration
def test_a_list_run_says_pages_and_keys_and_analyze_says_the_same(tmp_path):
    """No URL: objects seeded on the embedded server, listed; its summary lines, and analyze's of its dataset
    (loaded and scanned), give the same pages/s and keys/s."""
    out = tmp_path / "run"
    done = run_cli("objperf", "list", "--objects", "250", "--max-keys", "100", "-c", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith(("  LIST ", "  in short"))]
    assert len(said) == 2 and "500 keys listed" in said[0] and "keys/s" in said[1], done.stdout
    assert "LIST c2 max-keys 100" in said[1] and "2 passes through the listing completed" in done.stdout
    rows = load(out)
    assert len(rows) == 6 and pages_by_place(rows) == passes([100, 100, 50], 2)
    for scan in ((), ("--scan",)):
        again = run_cli("objperf", "analyze", str(out), *scan)
        assert again.returncode == 0, again.stderr
        lines = [line for line in again.stdout.splitlines() if line.startswith(("  LIST ", "  in short"))]
        if scan:  # over the rows' own span, not the run's clock: the same keys, at the rates of that span
            assert "6 requests (0 failed)" in lines[0] and "500 keys listed" in lines[0] and "keys/s" in lines[1]
        else:
            assert lines == said
    summary = json.loads(run_cli("objperf", "analyze", str(out), "--json").stdout)["summary"]
    assert summary["ops"]["LIST"]["keys"] == 500 == rows["length"].sum()


@pytest.mark.integration
@pytest.mark.parametrize("args, says", [
    (("--max-keys", "1001"), "--max-keys must be from 1 to 1,000"),
    (("--max-keys", "0"), "--max-keys"),
    (("--max-keys", "many"), "--max-keys"),
    (("--passes", "0"), "--passes"),
    (("--delimiter", "/" * 1025), "--delimiter is longer than any key"),
    (("--buckets", "a,b"), "drop --buckets"),
    (("--requests", "-1"), "--requests"),
])
def test_a_list_asked_wrongly_is_one_line_before_any_request(tmp_path, args, says):
    with HostileS3("well-behaved") as s3:
        done = run_cli("objperf", "list", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, *args, "--out",
                       str(tmp_path / "r"), env=hostile_env())
        assert s3.calls == {}
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.integration
def test_a_list_of_no_store_or_a_missing_bucket_is_one_line(store, tmp_path):
    done = run_cli("objperf", "list", "https://example.test/x", "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "give s3://BUCKET/PREFIX" in done.stderr and not (tmp_path / "r").exists()
    done = run_cli("objperf", "list", "s3://objperf-no-such-bucket/p/", "--endpoint", store.server.endpoint,
                   "--no-save", env=store.env())
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "bucket 'objperf-no-such-bucket' does not exist" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.integration
def test_the_api_lists_as_the_command_does(store, monkeypatch):
    """``objperf.api.list_objects`` (not ``list``: that would hide Python's own) runs objperf list."""
    from objperf import api

    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    there = store.client.list_keys(store.bucket, "data/")
    run = api.list_objects(f"s3://{store.bucket}/data/", endpoint=store.server.endpoint, max_keys=2, passes=2,
                           no_save=True, progress=False)
    assert run.status == "complete" and run.summary["passes"] == 2
    assert run.summary["ops"]["LIST"]["keys"] == 2 * len(there)
    assert run.summary["ops"]["LIST"]["requests"] == 2 * math.ceil(len(there) / 2)
    with pytest.raises(api.UsageError, match="--max-keys must be from 1 to 1,000"):
        api.list_objects(f"s3://{store.bucket}/data/", endpoint=store.server.endpoint, max_keys=5000, progress=False)

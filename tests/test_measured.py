"""Every number shown is what was measured: the store the user named or an error, missing values shown as
missing (never 0, never 'within noise'), JSON that is JSON, lines that say nothing false."""

from __future__ import annotations

import json
import os

import pytest
from hostile import HostileS3

from conftest import run_cli
from objperf import api

pytestmark = pytest.mark.timeout(120)


@pytest.mark.integration
@pytest.mark.parametrize("command", ["fetch", "put", "mixed", "study"])
@pytest.mark.parametrize("flags", [["--endpoint-url", "http://127.0.0.1:1"], ["--profile", "r2-test"],
                                   ["--region", "auto"], ["--region", "auto", "--profile", "x"]])
def test_target_flags_without_an_s3_url_are_one_line_before_anything_starts(tmp_path, command, flags):
    args = [command, *(["read-concurrency"] if command == "study" else []), *flags, "--out", str(tmp_path / "o")]
    done = run_cli("objperf", *args, timeout=60)
    assert done.returncode == 2, done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no s3://BUCKET/… URL was given" in lines[0], done.stderr
    assert "started local SeaweedFS" not in done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["fetch", "put", "list"])
def test_a_bad_endpoint_from_the_environment_is_one_line_that_says_where_it_came_from(tmp_path, command):
    """An endpoint botocore refuses, given by AWS_ENDPOINT_URL, was said as "bad endpoint None: …"."""
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_CONFIG_FILE": "/nonexistent",
           "AWS_ENDPOINT_URL": "http://127.0.0.1:1\nfoo", "OBJPERF_RUNS": str(tmp_path / "runs")}
    done = run_cli("objperf", command, "s3://b/k", "-d", "1s", env=env, timeout=60)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "None" not in lines[0], done.stderr
    assert "bad endpoint (from AWS_ENDPOINT_URL or the profile)" in lines[0], lines[0]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.integration
def test_target_flags_with_a_plain_http_url_are_refused_too():
    with HostileS3("well-behaved") as s3:
        done = run_cli("objperf.fetch", f"{s3.endpoint}/hostile/data/obj.bin", "--region", "eu-west-1", "--no-save",
                       timeout=60)
        assert s3.calls == {}
    assert done.returncode == 2 and "is not an s3:// URL" in done.stderr


@pytest.mark.integration
def test_the_api_refuses_target_options_without_a_url(tmp_path):
    with pytest.raises(ValueError, match="no s3://BUCKET/… URL was given"):
        api.fetch(endpoint_url="http://127.0.0.1:1", out=tmp_path / "o", progress=False)
    assert not (tmp_path / "o").exists()


def strict_json(text: str):
    def refuse(token):
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two small real runs and one in which every request failed (no TTFB, no spread: figures not measured)."""
    where = tmp_path_factory.mktemp("runs")
    with HostileS3("well-behaved", objects={"data/obj.bin": 4 << 20}) as s3:
        for name in ("a", "b"):
            done = run_cli("objperf.fetch", f"{s3.endpoint}/hostile/data/obj.bin", "--range-size", "256KiB", "-c",
                           "2", "--duration", "2s", "--out", str(where / name), timeout=60)
            assert done.returncode == 0, done.stderr
    with HostileS3("short-body", objects={"data/obj.bin": 4 << 20}) as s3:
        done = run_cli("objperf.fetch", f"{s3.endpoint}/hostile/data/obj.bin", "--requests", "3", "--out",
                       str(where / "failed"), timeout=60)
        assert done.returncode == 1 and (where / "failed" / "manifest.json").exists(), done.stderr
    return where


@pytest.mark.integration
def test_analyze_json_is_json_with_nulls_for_what_was_not_measured(runs):
    done = run_cli("objperf", "analyze", str(runs / "failed"), "--json", timeout=60)
    assert done.returncode == 0, done.stderr
    summary = strict_json(done.stdout)["summary"]
    assert summary["ttfb_ms_p50"] is None
    run = run_cli("objperf.fetch", f"{runs}/nowhere", "--json", timeout=60)  # a refusal prints no JSON at all
    assert run.returncode != 0


@pytest.mark.integration
def test_analyze_says_when_it_pools_separate_runs(runs):
    pooled = run_cli("objperf", "analyze", str(runs / "a"), str(runs / "b"), timeout=60)
    assert "2 separate runs counted as one" in pooled.stdout
    apart = run_cli("objperf", "analyze", str(runs / "a"), str(runs / "b"), "--by", "run_id", timeout=60)
    assert "counted as one" not in apart.stdout


@pytest.mark.integration
def test_cmp_never_calls_a_figure_not_measured_within_noise(runs):
    done = run_cli("objperf", "diff", str(runs / "a"), str(runs / "failed"), timeout=60)
    assert done.returncode == 0, done.stderr
    lines = {line.split()[1]: line for line in done.stdout.splitlines()[1:] if len(line.split()) > 1}
    assert "not measured" in lines["ttfb_ms_p50"]
    for metric in ("gbps", "steady_gbps"):
        assert "within noise" not in lines[metric] or "not measured" not in lines[metric]
    assert "NaN" not in done.stdout
    diffed = run_cli("objperf", "diff", str(runs / "a"), str(runs / "failed"), "--json", timeout=60)
    as_json = strict_json(diffed.stdout)
    ttfb = next(r for r in as_json["rows"] if r["metric"] == "ttfb_ms_p50")
    assert ttfb["failed"] is None


def test_beyond_noise_is_unknown_without_a_spread():
    from objperf.analysis.diff import beyond_noise

    nan = float("nan")
    assert beyond_noise(1.0, 2.0, [nan, nan]) is None
    assert beyond_noise(nan, 2.0, [0.1, 0.1]) is None
    assert beyond_noise(1.0, 1.05, [0.1, nan]) is False
    assert beyond_noise(1.0, 2.0, [0.1, 0.2]) is True


@pytest.mark.integration
@pytest.mark.parametrize("engine", ["curl", "requests"])
def test_a_request_that_got_no_byte_has_no_time_to_first_byte(tmp_path, engine):
    from objperf import load

    with HostileS3("get-stall") as s3:
        # the reference engine cannot cut a request that waits for its headers: its --timeout ends it
        done = run_cli("objperf.fetch", f"{s3.endpoint}/hostile/data/obj.bin", "-c", "2", "--duration", "1s",
                       "--timeout", "3s", "--engine", engine, "--out", str(tmp_path / "r"), timeout=60)
    rows = load(tmp_path / "r")
    assert done.returncode == 1 and len(rows) >= 2
    assert rows["ttfb_s"].isna().all(), rows["ttfb_s"].tolist()
    assert (rows["total_s"] > 0).all()


@pytest.mark.integration
def test_a_run_that_kept_no_rows_says_so_instead_of_an_empty_frame():
    with HostileS3("well-behaved", objects={"data/obj.bin": 4 << 20}) as s3:
        run = api.fetch(f"{s3.endpoint}/hostile/data/obj.bin", range_size="1MiB", no_save=True, progress=False)
    assert run.status == "complete" and run.summary["requests"] == 4
    with pytest.raises(ValueError, match="kept none of its 4 rows"):
        run.df  # noqa: B018


@pytest.mark.integration
def test_control_rows_say_no_address_etag_or_http_version(tmp_path):
    from objperf import load

    env = {**__import__("os").environ, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": "/nonexistent"}
    with HostileS3("well-behaved") as s3:
        done = run_cli("objperf", "put", f"s3://{s3.bucket}/w/", "--endpoint", s3.endpoint, "--object-size", "12MiB",
                       "--part-size", "5MiB", "--out", str(tmp_path / "p"), env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "HTTP/:" not in done.stdout and "the server answered" not in done.stdout
    rows = load(tmp_path / "p")
    control = rows[rows["op"].isin(["CREATE_MPU", "COMPLETE_MPU"])]
    assert len(control) == 2
    for column in ("remote_ip", "local_ip", "etag", "s3_error", "http_version"):
        assert (control[column].astype(str) == "").all(), (column, control[column].tolist())


@pytest.fixture
def nginx_h2(nginx):
    """nginx over TLS with HTTP/2: its 4 MiB file's URL and the CA that signed its certificate."""
    return nginx.https_url, nginx.ca


@pytest.mark.integration
def test_http2_streams_share_a_connection_and_the_summary_counts_both(nginx_h2, tmp_path):
    url, ca = nginx_h2
    done = run_cli("objperf.fetch", url, "--http", "2", "-c", "16", "--threads", "1", "--range-size", "256KiB",
                   "--requests", "64", "--ca-bundle", ca, "--json", "--no-save", timeout=60)
    assert done.returncode == 0, done.stderr
    summary = strict_json(done.stdout)
    assert summary["http_version_counts"] == {"2": 64}
    assert summary["connections_opened"] == 1, summary["connections_opened"]
    text = run_cli("objperf.fetch", url, "--http", "2", "-c", "16", "--threads", "1", "--range-size", "256KiB",
                   "--requests", "64", "--ca-bundle", ca, "--no-save", timeout=60).stdout
    assert "1 opened; 64 requests went over HTTP/2, 64.0 streams a connection" in text


@pytest.mark.parametrize("wall_s, warned", [(0.5, False), (10.0, True)])
def test_the_cpu_bound_warning_needs_a_run_long_enough_to_say(wall_s, warned):
    from objperf.run.sampler import Sampler

    sampler = Sampler()
    busy = 2.0 * wall_s  # every core of a 2-core box, all the run long
    sampler._cpu = [(0.0, "process", 0.0, 0.0, 0.0), (wall_s, "process", busy, 0.0, 0.0)]
    evidence = sampler.evidence({}, wall_s, engine_threads=1)
    assert evidence["client_cpu_bound"] is warned


@pytest.mark.integration
def test_the_objects_line_accounts_for_every_upload_opened(store, tmp_path):
    from objperf import load

    out = tmp_path / "m"
    done = run_cli("objperf", "mixed", f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
                   "--duration", "2s", "--object-size", "40MiB", "--part-size", "5MiB", "--write-concurrency", "8",
                   "--read-concurrency", "2", "--json", "--out", str(out), env=store.env(), timeout=120)
    assert done.returncode == 0, done.stderr
    summary = strict_json(done.stdout)
    rows = load(out)
    opened = int(((rows["op"] == "CREATE_MPU") & (rows["status"] == 200)).sum())
    accounted = sum(summary[k] for k in ("objects_written", "objects_failed", "objects_cut", "objects_unstarted"))
    assert opened == accounted, (opened, {k: v for k, v in summary.items() if k.startswith("objects")})


@pytest.mark.integration
def test_an_answer_that_is_not_http_is_named_so(tmp_path):
    with HostileS3("not-http") as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", s3.endpoint, "--requests",
                       "3", "--no-save", env={**__import__("os").environ, "AWS_ACCESS_KEY_ID": "k",
                                              "AWS_SECRET_ACCESS_KEY": "s", "AWS_CONFIG_FILE": "/nonexistent",
                                              "AWS_DEFAULT_REGION": "us-east-1"}, timeout=60)
    assert done.returncode == 1
    assert "an answer that was not HTTP (no status line): 3" in done.stdout, done.stdout


@pytest.mark.integration
def test_a_start_gate_that_fails_ends_the_run_failed_with_its_reason(store, tmp_path):
    """A cluster host whose start never comes (the driver gone): the run ends 'failed' saying why, not with an
    AttributeError from a clock that never started."""
    from objperf.core.errors import RunFailed
    from objperf.plan.reads import ReadWorkload
    from objperf.run.control import Control, controlled
    from objperf.run.reads import run_read
    from objperf.s3.target import resolve_read_target

    def gate():
        raise RunFailed("no start time came from the driver")

    target = resolve_read_target(f"s3://{store.bucket}/data/odd.bin", store.server.settings())
    with controlled(Control(gate=gate)), pytest.raises(RunFailed, match="no start time"):
        run_read(target, ReadWorkload(concurrency=2, threads=1, requests=4), out=tmp_path / "r")
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "no start time came from the driver" in manifest["summary"]["error"]

"""A WAN in the tests: objperf through a relay that holds every chunk a set delay each way (no netem in this
kernel).  Time to first byte carries both delays; throughput against concurrency follows Little's law; the
round trip objperf reads from TCP connects says what it measured: the hop to the relay, not the distance."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from conftest import RANGE, run_cli
from objperf import load
from objperf.servers.delay import DelayRelay

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]
ONE_WAY_S = 0.025


@pytest.fixture
def far_store(store):
    parts = urlsplit(store.server.endpoint)
    with DelayRelay((parts.hostname, parts.port), one_way_s=ONE_WAY_S) as relay:
        yield relay


def fetch_far(store, relay, out, *args):
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/data/even.bin", "--endpoint", relay.endpoint,
                   "--out", str(out), "--json", *args, env=store.env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), load(out)


def test_time_to_first_byte_carries_both_one_way_delays(store, far_store, tmp_path):
    summary, rows = fetch_far(store, far_store, tmp_path / "r", "-c", "4", "--range-size", "256KiB",
                              "--requests", "24", "--no-keepalive")
    gets = rows[(rows["op"] == "GET") & (rows["curl_code"] == 0)]
    assert len(gets) == 24 and gets["new_conn"].all()
    assert (gets["ttfb_s"] >= 2 * ONE_WAY_S * 0.98).all(), gets["ttfb_s"].min()
    # the connects end at the relay on this machine: the round trip they give is not the distance, and the
    # summary's TTFB is many of them
    assert summary["rtt_ms"] < ONE_WAY_S * 1000 / 5
    assert summary["ttfb_ms_p50"] >= 2 * ONE_WAY_S * 1000 * 0.98
    assert summary["rtt_connects"] == 24 and summary["rtt_loopback"]  # and the summary says so


def test_the_summary_says_what_the_round_trip_was_measured_from(store, far_store, tmp_path):
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/data/even.bin", "--endpoint", far_store.endpoint,
                   "--no-save", "-c", "2", "--requests", "8", "--no-keepalive", env=store.env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "10th percentile of 8 TCP connects" in done.stdout
    assert "ended at a loopback address" in done.stdout


@pytest.mark.parametrize("concurrency", [2, 8])
def test_throughput_against_concurrency_follows_littles_law(store, far_store, tmp_path, concurrency):
    summary, rows = fetch_far(store, far_store, tmp_path / "r", "-c", str(concurrency), "--range-size",
                              str(RANGE), "--duration", "4s", "--sink", "discard")
    done = rows[(rows["op"] == "GET") & (rows["curl_code"] == 0)]
    latency = float(done["total_s"].mean())
    predicted_gbps = concurrency * RANGE * 8 / latency / 1e9  # L = λW: in flight = rate × time each takes
    assert latency >= 2 * ONE_WAY_S
    assert summary["gbps"] == pytest.approx(predicted_gbps, rel=0.30), (summary["gbps"], predicted_gbps)

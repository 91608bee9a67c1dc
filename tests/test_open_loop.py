"""Fixed-rate (open-loop) load and a bandwidth cap: requests start on a schedule whatever the answers' pace,
latency is also counted from when each was due (a backlog shows), and --max-rate shapes a run."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import numpy as np
import pytest

from conftest import run_cli
from objperf import load
from objperf.servers.delay import DelayRelay

pytestmark = pytest.mark.timeout(180)


def fetch(store, out, *args, endpoint=None, key="data/small.bin"):
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/{key}", "--endpoint", endpoint or store.server.endpoint,
                   "--out", str(out), "--json", *args, env=store.env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), load(out)


@pytest.mark.integration
def test_an_open_loop_run_starts_requests_at_the_rate_asked(store, tmp_path):
    summary, rows = fetch(store, tmp_path / "r", "--rate", "200/s", "-c", "32", "--duration", "3s")
    open_loop = summary["open_loop"]
    assert abs(open_loop["rate_achieved"] - 200) / 200 < 0.05, open_loop
    due = np.sort(rows["t_intended"].to_numpy())
    assert np.allclose(np.diff(due), 1 / 200, rtol=0, atol=1e-6)  # the schedule: one every 5 ms (to the clock's grain)
    assert len(rows) == pytest.approx(600, rel=0.05)
    late = rows["t_start"] - rows["t_intended"]
    assert (late >= 0).all()
    # A request due while a slot is free starts when it is due.  Waits timed in milliseconds started them 0.6 ms
    # late in the median, lateness that the latency from the intended time would put on the store.  A request
    # due while every slot was busy (a loaded box answers slower) waits for one: that is the backlog, not lateness.
    started, ended = rows["t_start"].to_numpy(), (rows["t_start"] + rows["total_s"]).to_numpy()
    busy = np.array([np.count_nonzero((started < t) & (ended > t)) for t in rows["t_intended"].to_numpy()])
    free = busy < 32
    assert free.sum() > len(rows) / 2, busy
    assert late[free].median() < 0.0003, late[free].describe()


@pytest.mark.integration
def test_against_a_slowed_store_latency_from_the_schedule_grows_with_the_backlog(store, tmp_path):
    """2 slots and 40 ms each way hold at most 25 requests a second; asked for 100, the backlog grows and
    every later request waits longer for a slot: the service time stays flat, the corrected latency does not."""
    parts = urlsplit(store.server.endpoint)
    with DelayRelay((parts.hostname, parts.port), one_way_s=0.040) as relay:
        summary, rows = fetch(store, tmp_path / "slow", "--rate", "100/s", "-c", "2", "--duration", "3s",
                              endpoint=relay.endpoint)
    o = summary["open_loop"]
    assert o["rate_achieved"] < 40  # the store's pace, not the schedule's
    assert o["service_ms_p99"] >= 80  # two one-way delays at least
    assert o["latency_ms_p99"] > 3 * o["service_ms_p99"], o
    ok = rows[rows["status"].between(200, 299) & (rows["curl_code"] == 0)].sort_values("t_intended")
    assert len(ok) > 20
    waited = (ok["t_start"] - ok["t_intended"]).to_numpy()
    half = len(waited) // 2
    assert waited[half:].mean() > 2 * waited[:half].mean()  # the backlog grows: later requests wait longer


@pytest.mark.integration
def test_a_closed_loop_run_is_due_when_it_starts(store, tmp_path):
    summary, rows = fetch(store, tmp_path / "closed", "-c", "4", "--requests", "40")
    assert "open_loop" not in summary
    assert (rows["t_intended"] == rows["t_start"]).all()


@pytest.mark.integration
@pytest.mark.parametrize("range_size", ["256KiB", "8MiB"])  # transfers smaller than a socket buffer, and larger
def test_max_rate_caps_a_runs_bandwidth(store, tmp_path, range_size):
    cap = 40 << 20
    summary, _ = fetch(store, tmp_path / "capped", "--max-rate", "40MiB/s", "-c", "4", "--duration", "3s",
                       "--range-size", range_size, key="data/even.bin")
    achieved = summary["gbps"] * 1e9 / 8
    assert 0.5 * cap < achieved < 1.15 * cap, achieved / cap


@pytest.mark.integration
@pytest.mark.parametrize("flag, value", [("--rate", "0"), ("--rate", "fast"), ("--rate", "-5/s"),
                                         ("--max-rate", "0"), ("--max-rate", "lots/s")])
def test_a_bad_rate_is_one_line_before_any_request(flag, value):
    done = run_cli("objperf.fetch", "s3://b/k", "--endpoint", "http://127.0.0.1:9", flag, value, timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert flag in done.stderr


def sweep(rates, due_p99, *, failed=None, achieved=None):
    import pandas as pd

    return pd.DataFrame({"rate": rates, "due_ms_p99": due_p99, "service_ms_p99": [5.0] * len(rates),
                         "error_rate": failed or [0.0] * len(rates), "requests": [100] * len(rates),
                         "rate_achieved": achieved or [float(r) for r in rates]})


@pytest.mark.parametrize("steps, expected", [
    (sweep([100, 200, 400, 800], [6.0, 6.5, 7.0, 30.0]), (800, "2 × …")),  # the knee
    (sweep([100, 200, 400], [6.0, 6.2, 6.4], failed=[0.0, 0.02, 0.5]), (200, "failed")),
    (sweep([100, 200, 400], [6.0, 6.2, 6.4], achieved=[100.0, 199.0, 300.0]), (400, "started")),
    (sweep([100, 200], [6.0, 6.1]), None),
])
def test_the_saturation_point_is_the_first_rate_that_fails_falls_behind_or_bends(steps, expected):
    from objperf.analysis.stats import saturation_rate

    found = saturation_rate(steps)
    if expected is None:
        assert found is None
        return
    assert found[0] == expected[0]
    assert {"failed": "failed", "started": "started"}.get(expected[1], "lowest rate") in found[1]


def test_a_rate_sweep_figure_marks_its_saturation():
    from objperf import plots

    ax = plots.rate_saturation(sweep([100, 200, 400, 800], [6.0, 6.5, 7.0, 30.0]))
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert any("saturated at 800/s" in label for label in labels)
    assert ax.get_xlabel() and ax.get_ylabel() == "latency p99 (ms)"


@pytest.mark.integration
def test_a_stopped_open_loop_run_sends_no_request_whose_time_had_not_come(store):
    """A stop means no new request: slots waiting for their time give theirs up (and leave no row)."""
    import time

    from objperf._engine.config import plan_engine

    url = store.client.presign(store.bucket, "data/small.bin")
    with plan_engine([url], [1000], concurrency=4, threads=1, sink="discard", rate=1.0) as engine:
        engine.start(duration=30)
        time.sleep(0.3)  # what is measured: one request a second, the first at once, the next not before 1 s
        engine.stop()  # drain: the requests in flight finish, none is started
        assert engine.join(5)
        rows = engine.drain()
    assert rows is not None and len(rows["t_start"]) == 1

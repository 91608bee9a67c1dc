"""Statistics over rows from a real run: nothing is lost or invented."""

import numpy as np
import pytest

from conftest import RANGE
from objperf.analysis.stats import error_counts, throughput_timeline, ttfb_percentiles
from objperf.analysis.summary import percentiles
from objperf.plan.reads import ReadWorkload
from objperf.run.reads import run_read
from objperf.s3.target import resolve_read_target


@pytest.fixture(scope="module")
def rows(store):
    target = resolve_read_target(f"s3://{store.bucket}/data/", store.server.settings())
    return run_read(target, ReadWorkload(concurrency=3, threads=1, range_size=RANGE // 4, duration=1.5)).rows


@pytest.mark.integration
@pytest.mark.parametrize("bin_s", [0.05, 0.25, 1.0])
def test_timeline_conserves_bytes(rows, bin_s):
    timeline = throughput_timeline(rows, bin_s=bin_s)
    delivered = (timeline["gbps"] * 1e9 / 8 * bin_s).sum()
    assert delivered == pytest.approx(rows["bytes"].sum(), rel=1e-6)
    assert (timeline["gbps"] >= -1e-9).all()


@pytest.mark.integration
def test_timeline_by_key_adds_up(rows):
    per_key = throughput_timeline(rows, bin_s=0.5, by="key")
    total = throughput_timeline(rows, bin_s=0.5)
    summed = per_key.groupby("t_s")["gbps"].sum().to_numpy()
    assert np.allclose(summed, total["gbps"].to_numpy())
    assert set(per_key["key"]) == set(rows["key"])


@pytest.mark.integration
def test_ttfb_percentiles_are_ordered(rows):
    overall = ttfb_percentiles(rows).iloc[0]
    assert 0 < overall["p50"] <= overall["p90"] <= overall["p99"]
    by_key = ttfb_percentiles(rows, by="key")
    assert len(by_key) == 3


@pytest.mark.integration
def test_error_counts_of_a_clean_run(rows):
    assert error_counts(rows).empty


def test_concurrency_curve_matches_per_step_steady_throughput():
    from pathlib import Path

    from objperf import load
    from objperf.analysis.stats import concurrency_curve, steady_gbps
    from objperf.dataset.directory import load_steps

    sample = Path(__file__).resolve().parents[1] / "data" / "sample" / "read-concurrency"
    rows = load(sample)
    curve = concurrency_curve(rows).set_index("concurrency")
    steps = load_steps(sample).set_index("concurrency")
    assert list(curve.index) == list(steps.index)
    for concurrency in curve.index:
        assert curve.loc[concurrency, "steady_gbps"] == pytest.approx(steps.loc[concurrency, "steady_gbps"], rel=1e-6)
        assert curve.loc[concurrency, "steady_gbps"] == pytest.approx(
            steady_gbps(rows[rows["concurrency"] == concurrency]), rel=1e-9)
        assert curve.loc[concurrency, "requests"] == steps.loc[concurrency, "requests"]


@pytest.mark.integration
def test_summary_percentiles_are_numpys(rows):
    ttfb_ms = rows["ttfb_s"].to_numpy() * 1000
    assert np.allclose(percentiles(ttfb_ms, [50, 99]), np.nanpercentile(ttfb_ms, [50, 99]), rtol=0, atol=1e-12)
    ttfb_ms = ttfb_ms[~np.isnan(ttfb_ms)]  # a request with no first byte has none
    for values in (ttfb_ms, ttfb_ms[:1], ttfb_ms[:2], np.random.default_rng(7).exponential(size=1001)):
        assert np.allclose(percentiles(values, [50, 90, 99]), np.percentile(values, [50, 90, 99]), rtol=0, atol=1e-12)
    assert all(np.isnan(percentiles(np.array([]), [50, 99])))


def test_a_cut_request_is_a_failure_only_once_an_error_status_arrived():
    import pandas as pd

    from objperf.analysis.stats import cut_rows
    from objperf.analysis.summary import summarize
    from objperf.core.schema import CUT_CURL_CODE

    # Cut before any answer, cut mid-body of a 206, cut mid-body of a 503; then a finished 206.
    cols = {"status": np.array([0, 206, 503, 206], np.int16),
            "curl_code": np.array([CUT_CURL_CODE] * 3 + [0], np.int32),
            "bytes": np.array([0, 100, 0, 1000], np.int64), "op": np.zeros(4, np.int8),
            "ttfb_s": np.array([0, 0.01, 0.01, 0.01]), "total_s": np.ones(4), "s3_error": np.array([b""] * 4)}
    s = summarize(cols, wall_s=1.0, cpu_s=0.1)
    assert (s["requests"], s["ok_requests"], s["error_requests"], s["cut_requests"]) == (4, 1, 1, 2)
    assert s["bytes"] == 1100 and s["status_counts"] == {"206": 1, "503": 1} and s["curl_error_counts"] == {}
    frame = pd.DataFrame({k: list(v) for k, v in cols.items()})
    assert list(cut_rows(frame)) == [True, True, False, False]
    assert error_counts(frame)[["status", "count"]].values.tolist() == [[503, 1]]


def test_drift_says_the_gbps_lost_from_the_first_minute_to_the_last():
    import pandas as pd

    from objperf.analysis.stats import drift

    # Three minutes of back-to-back one-second requests: 2 Gbps the first minute, 1.5 the second, 1 the last.
    seconds = np.arange(180)
    gbps = np.select([seconds < 60, seconds < 120], [2.0, 1.5], 1.0)
    frame = pd.DataFrame({"t_start": 1e9 + seconds, "ttfb_s": 0.0, "total_s": 1.0, "bytes": gbps * 1e9 / 8,
                          "curl_code": 0, "status": 206, "op": "GET"})
    result = drift(frame)
    assert result["first_minute_gbps"] == pytest.approx(2.0, abs=0.05)
    assert result["last_minute_gbps"] == pytest.approx(1.0, abs=0.05)
    assert result["lost_gbps"] == pytest.approx(1.0, abs=0.1) and result["drift_gbps_per_min"] < 0


@pytest.mark.integration
def test_the_round_trip_and_ttfb_as_a_multiple_of_it(store):
    from objperf.analysis.summary_text import format_summary

    target = resolve_read_target(f"s3://{store.bucket}/data/even.bin", store.server.settings())
    summary = run_read(target, ReadWorkload(concurrency=4, threads=1, range_size=RANGE, requests=40)).summary
    assert 0 < summary["rtt_ms"] < 20  # loopback
    assert summary["ttfb_over_rtt"] == pytest.approx(summary["ttfb_ms_p50"] / summary["rtt_ms"])
    assert "round trip" in format_summary(summary)


@pytest.mark.integration
def test_a_write_cut_before_any_part_finished_says_none_was_acknowledged(store):
    from objperf.analysis.summary_text import format_summary
    from objperf.plan.writes import WriteWorkload
    from objperf.run.writes import run_write

    workload = WriteWorkload(object_size=256 << 20, part_size=128 << 20, concurrency=2, threads=1,
                             buckets=(store.bucket,), prefix="unacked/", duration=0.3)
    summary = run_write(store.server.settings(), workload).summary
    write = summary["directions"]["write"]
    assert write["acknowledged_bytes"] == write["bytes"] == 0 and write["sent_bytes"] > 0 and write["gbps"] == 0
    text = format_summary(summary)
    assert "no part acknowledged: " in text and "sent in parts the run's end cut" in text


def test_seconds_to_full_concurrency():
    import pandas as pd

    from objperf.analysis.stats import seconds_to_full_concurrency

    # Three slots: the third starts 2 s after the first, while the first two are still busy.
    frame = pd.DataFrame({"slot": [0, 1, 2, 0], "t_start": [100.0, 100.5, 102.0, 105.0],
                          "total_s": [5.0, 4.0, 1.0, 1.0]})
    assert seconds_to_full_concurrency(frame) == pytest.approx(2.0)
    assert np.isnan(seconds_to_full_concurrency(frame.assign(total_s=[1.0, 1.0, 1.0, 1.0])))


def test_a_summary_counted_a_group_of_rows_at_a_time_is_the_summary_of_all_of_them():
    """A run with a dataset counts its rows back a row group at a time, never all of them in memory: every
    count, sum and percentile must come out as if the rows had been summarized at once."""
    import math

    from objperf.analysis.summary import Tally, summarize
    from objperf.core.schema import CUT_CURL_CODE, OP, empty_columns

    rng = np.random.default_rng(7)
    n = 5000
    cols = empty_columns(n)
    cols["op"][:] = rng.choice([OP["GET"], OP["UPLOAD_PART"], OP["PUT"]], n, p=[0.7, 0.2, 0.1])
    cols["status"][:] = rng.choice([200, 206, 503, 0], n, p=[0.3, 0.6, 0.05, 0.05])
    cols["curl_code"][:] = np.where(cols["status"] == 0, rng.choice([7, 28], n), 0)
    cols["curl_code"][rng.random(n) < 0.02] = CUT_CURL_CODE
    cols["s3_error"][:] = np.where(cols["status"] == 503, b"SlowDown", b"")
    cols["bytes"][:] = rng.integers(0, 8 << 20, n)
    cols["ttfb_s"][:] = rng.uniform(0.001, 0.2, n)
    cols["total_s"][:] = cols["ttfb_s"] + rng.uniform(0.0, 1.0, n)
    cols["dns_s"][:] = rng.uniform(0, 0.001, n)
    cols["connect_s"][:] = cols["dns_s"] + rng.uniform(0.0001, 0.002, n)
    cols["tls_s"][:] = cols["connect_s"] + rng.uniform(0.001, 0.01, n)
    cols["new_conn"][:] = rng.random(n) < 0.1
    cols["tls_resumed"][:] = rng.choice([0, 1], n)
    cols["http_version"][:] = rng.choice([11, 20], n)
    answered = cols["status"] > 0
    cols["remote_ip"][:] = np.where(answered, rng.choice([b"127.0.0.1", b"::1"], n), b"")
    cols["remote_port"][:] = np.where(answered, rng.choice([9000, 9001], n), 0)

    whole = summarize(cols, wall_s=2.0, cpu_s=0.5, peak_rss_bytes=1 << 26)
    tally = Tally()
    for start in range(0, n, 777):  # uneven groups; one of them sees only one server
        tally.add({name: values[start:start + 777] for name, values in cols.items()})
    tally.add({name: values[:0] for name, values in cols.items()})  # an empty group counts nothing
    grouped = tally.result(wall_s=2.0, cpu_s=0.5, peak_rss_bytes=1 << 26)

    def same(a, b) -> bool:
        if isinstance(a, dict):
            return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        if isinstance(a, float):  # a sum taken group by group may differ in its last bit
            return isinstance(b, float) and math.isclose(a, b, rel_tol=1e-12)
        return a == b

    assert same(whole, grouped), (whole, grouped)
    assert len(whole["servers"]) == 4 and set(whole["directions"]) == {"read", "write"}
    assert whole["tls"]["handshakes"] > 0 and whole["s3_error_counts"] == {"SlowDown": whole["status_counts"]["503"]}
    assert whole["requests"] == n and whole["cut_requests"] > 0 and whole["curl_error_counts"]


def test_saved_rows_from_two_servers_are_summarized_by_server():
    """Rows loaded from a dataset carry addresses as text, not the engine's bytes: ``objperf analyze`` of a
    run spread over two servers failed on them."""
    from objperf.analysis.summary import summarize
    from objperf.core.schema import empty_columns

    cols = empty_columns(4)
    cols["status"][:] = 206
    cols["bytes"][:] = 1 << 20
    cols["ttfb_s"][:] = [0.01, 0.02, 0.03, 0.04]
    cols["total_s"][:] = 0.1
    cols["remote_ip"] = np.array(["127.0.0.1", "::1", "127.0.0.1", "::1"], dtype=object)
    cols["remote_port"][:] = 9000
    servers = summarize(cols, wall_s=1.0, cpu_s=0.1)["servers"]
    assert servers["127.0.0.1:9000"]["ttfb_ms_p50"] == pytest.approx(20.0)
    assert servers["[::1]:9000"]["requests"] == 2 and servers["[::1]:9000"]["ttfb_ms_p50"] == pytest.approx(30.0)


def test_the_round_trip_is_a_low_percentile_of_many_connects_robust_to_slow_ones():
    """A connect is only ever slowed (a busy box, a full accept queue): a few slow ones leave the round
    trip where most connects put it."""
    import numpy as np

    from objperf.analysis.summary import connects_measured, round_trip_ms

    connect_s = np.array([0.0002] * 18 + [0.104, 0.090])  # two connects stalled behind a busy server
    cols = {"new_conn": np.ones(20, dtype=bool), "dns_s": np.zeros(20), "connect_s": connect_s,
            "remote_ip": np.array([b"10.0.0.7"] * 20)}
    assert round_trip_ms(cols) == pytest.approx(0.2)
    assert connects_measured(cols) == (20, False)
    cols["remote_ip"] = np.array([b"::ffff:127.0.0.1"] * 10 + [b"::1"] * 10)
    assert connects_measured(cols) == (20, True)

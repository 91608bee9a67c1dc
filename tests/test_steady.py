"""Steady state (``objperf.analysis.steady``) on series and rows made to a known shape: a ramp then a plateau is
steady within one window of the ramp's end, noise within the tolerance is steady at once, a series that keeps
moving never is; a live judge fed rows as they end stops where the rows, judged again, say it did."""

from __future__ import annotations

import numpy as np
import pytest

from objperf.analysis.steady import LAG_S, Samples, SteadyRule, SteadyWatch, rule_of, steady_at, steady_state
from objperf.core.schema import CUT_CURL_CODE, OP

pytestmark = pytest.mark.timeout(60)

RULE = SteadyRule()  # warp's: 7 samples within 7.5 % of their mean
N = RULE.samples


def ramp_then_flat(ramp: int, flat: int, *, level: float = 100.0, noise: float = 0.0, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.concatenate([np.linspace(level / ramp, level, ramp, endpoint=False), np.full(flat, level)])
    return values * (1 + rng.uniform(-noise, noise, len(values)))


@pytest.mark.parametrize("ramp", [3, 5, 10])
def test_a_ramp_then_a_plateau_is_steady_within_one_window_of_the_ramps_end(ramp):
    values = ramp_then_flat(ramp, 40, noise=0.02)
    at = steady_at(values, RULE)
    assert at is not None
    # the window ends at most one window after the ramp's last sample, and starts no earlier than it
    assert at <= ramp + N - 1
    assert at - N + 1 >= ramp - 1


def test_a_ramp_slower_than_the_tolerance_over_a_window_looks_steady():
    """The rule sees one window at a time, as warp's does: a climb of under the tolerance across a window is
    within it.  A longer window (or a tighter tolerance) is what tells such a climb apart."""
    values = ramp_then_flat(60, 40)
    assert steady_at(values, RULE) < 60
    assert steady_at(values, SteadyRule(tolerance_pct=1)) >= 60


def test_a_step_is_steady_exactly_one_window_after_it():
    values = np.concatenate([np.full(N - 1, 30.0), np.full(20, 90.0)])
    assert steady_at(values, RULE) == N - 1 + N - 1


def test_a_plateau_is_a_steady_state_whatever_comes_after_it():
    """The first window that holds is the steady state: a run that would have doubled later was steady at the
    lower rate for a whole window first."""
    values = np.concatenate([np.full(N, 30.0), np.full(20, 90.0)])
    assert steady_at(values, RULE) == N - 1


def test_noise_within_the_tolerance_is_steady_from_the_first_window():
    values = 100 * (1 + np.random.default_rng(7).uniform(-0.05, 0.05, 50))
    assert steady_at(values, RULE) == N - 1


def test_a_series_that_keeps_moving_is_never_steady():
    assert steady_at(1.1 ** np.arange(200), RULE) is None  # climbing all along, 10 % a sample
    assert steady_at(100 * (1 + 0.3 * np.sin(np.arange(200) * 2 * np.pi / 12)), RULE) is None  # swinging
    noisy = 100 * (1 + np.random.default_rng(3).uniform(-0.4, 0.4, 200))  # far beyond 7.5 %
    assert steady_at(noisy, RULE) is None
    assert steady_at(np.zeros(50), RULE) is None  # nothing done is not a steady state
    assert steady_at(np.full(N - 1, 100.0), RULE) is None  # too short for one window


def test_the_tolerance_is_of_the_windows_mean():
    window = np.array([100, 100, 100, 100, 100, 100, 115.0])  # mean 102.1: the last 12.6 % above it
    assert steady_at(window, RULE) is None
    assert steady_at(window, SteadyRule(tolerance_pct=15)) == N - 1


def rows(ends: np.ndarray, nbytes: int, *, duration: float = 0.05, op: str = "GET", curl_code=0, status=206) -> dict:
    n = len(ends)
    return {"t_start": ends - duration, "total_s": np.full(n, duration), "bytes": np.full(n, nbytes, np.int64),
            "status": np.full(n, status, np.int16), "curl_code": np.full(n, curl_code, np.int32),
            "op": np.full(n, OP[op], np.int16)}


T0 = 1_700_000_000.0  # rows' times are Unix seconds


def ramp_rows(*, ramp_s: float, end_s: float, slow: float, fast: float) -> dict:
    """Requests of 1 MiB ending ``slow`` a second at first, ever more often until ``fast`` a second at ``ramp_s``,
    then ``fast`` a second until ``end_s``."""
    ends, t = [], 0.0
    while t < end_s:
        ends.append(t)
        t += 1 / (slow + (fast - slow) * min(t / ramp_s, 1.0) if ramp_s else fast)
    return rows(T0 + np.array(ends) + 0.05, 1 << 20)


def test_rows_say_the_warm_up_left_out_and_the_steady_window():
    rule = SteadyRule(window_s=3.5)  # samples of 0.5 s
    samples = Samples(rule.sample_s)
    samples.add(ramp_rows(ramp_s=6.0, end_s=20.0, slow=5, fast=60))
    found = steady_state(samples, rule)
    assert found["reached"] and found["by"] == "bytes"
    assert 6.0 - 2 * rule.sample_s <= found["warmup_s"] <= 6.0 + rule.sample_s
    assert found["start_s"] == found["warmup_s"]
    assert found["end_s"] == pytest.approx(found["start_s"] + 3.5)
    assert found["end_s"] <= 6.0 + rule.window_s + rule.sample_s  # within one window of the ramp's end
    assert found["mib_per_s"] == pytest.approx(60, rel=0.06)  # the plateau's, not the run's average
    assert found["spread_pct"] <= 7.5


def test_rows_too_short_for_a_window_say_so():
    samples = Samples(RULE.sample_s)
    samples.add(ramp_rows(ramp_s=1.0, end_s=4.0, slow=10, fast=10))
    found = steady_state(samples, RULE)
    assert not found["reached"]
    assert found["measured_s"] == pytest.approx(4.0, abs=0.1)


def test_failed_requests_count_nothing_and_a_run_of_no_bytes_counts_requests():
    samples = Samples(0.5)
    samples.add(rows(T0 + np.arange(0, 10, 0.01), 0, op="HEAD", status=200))
    found = steady_state(samples, SteadyRule(window_s=3.5))
    assert found["reached"] and found["by"] == "requests"
    assert found["requests_per_s"] == pytest.approx(100, rel=0.05)
    failing = Samples(0.5)
    failing.add(rows(T0 + np.arange(0, 10, 0.01), 1 << 20, status=503))
    assert steady_state(failing, SteadyRule(window_s=3.5))["by"] == "requests"  # no byte done; no success either
    assert not steady_state(failing, SteadyRule(window_s=3.5))["reached"]


def test_rows_given_in_any_order_and_groups_make_the_same_samples():
    made = ramp_rows(ramp_s=4.0, end_s=15.0, slow=5, fast=50)
    whole = Samples(0.5)
    whole.add(made)
    order = np.random.default_rng(5).permutation(len(made["t_start"]))
    pieces = Samples(0.5)
    for chunk in np.array_split(order, 7):
        pieces.add({name: column[chunk] for name, column in made.items()})
    rule = SteadyRule(window_s=3.5)
    assert steady_state(whole, rule) == steady_state(pieces, rule)


def test_a_live_judge_stops_where_the_rows_judged_again_say_steady():
    rule = SteadyRule(window_s=3.5)
    made = ramp_rows(ramp_s=5.0, end_s=30.0, slow=5, fast=60)
    ends = made["t_start"] + made["total_s"]
    watch = SteadyWatch(rule)
    now, handed = T0, 0
    while not watch.steady(now):
        now += 0.1  # the drive loop's step: rows ended by now are handed over
        upto = int(np.searchsorted(ends, now, side="right"))
        watch.add({name: column[handed:upto] for name, column in made.items()})
        handed = upto
        assert now < T0 + 30, "never judged steady"
    # the run stops now: what is in flight is cut, ending now (a cut read counts what had arrived)
    kept = {name: column[:handed] for name, column in made.items()}
    cut = rows(np.array([now] * 4), 1 << 19, curl_code=CUT_CURL_CODE, status=0)
    again = Samples(rule.sample_s)
    again.add(kept)
    again.add(cut)
    found = steady_state(again, rule)
    assert found["reached"]
    assert T0 + found["end_s"] <= now - LAG_S + 1e-9  # the window had ended when the judge said so
    assert now - (T0 + found["end_s"]) <= rule.sample_s + LAG_S + 0.1 + 1e-9  # and it said so at once
    assert 5.0 - 2 * rule.sample_s <= found["start_s"]  # the window holds the ramp's last samples at most
    assert found["end_s"] <= 5.0 + rule.window_s + rule.sample_s  # within one window of the ramp's end


def test_the_rule_comes_from_the_manifest_and_a_bad_one_is_not_taken():
    assert rule_of({"steady_window": 4.0, "steady_tolerance": 5.0}) == SteadyRule(window_s=4.0, tolerance_pct=5.0)
    assert rule_of({"read": {"steady_window": 20, "steady_tolerance": 10}}) == SteadyRule(20.0, 10.0)
    assert rule_of({"workloads": [{"steady_window": 3, "steady_tolerance": 1}]}) == SteadyRule(3.0, 1.0)
    for bad in (None, [], "x", {"steady_window": -1, "steady_tolerance": 5}, {"steady_window": True},
                {"steady_window": float("nan"), "steady_tolerance": 5}, {"steady_window": 5, "steady_tolerance": 100},
                {"steady_window": "10s", "steady_tolerance": 5}):
        assert rule_of(bad) == SteadyRule()


def test_until_steady_without_a_bound_is_capped_and_a_bound_is_kept():
    from objperf.core.steady import CAP_S
    from objperf.options.runs import FetchOptions, PutOptions
    from objperf.options.spec import build

    assert build(FetchOptions, {"until_steady": True}).workload().duration == CAP_S
    assert build(FetchOptions, {"until_steady": True, "duration": "20s"}).workload().duration == 20
    bounded = build(FetchOptions, {"until_steady": True, "requests": 100}).workload()
    assert (bounded.duration, bounded.requests) == (None, 100)
    assert build(FetchOptions, {}).workload().duration is None  # without --until-steady nothing changes
    put = build(PutOptions, {"until_steady": True, "steady_window": "4s", "steady_tolerance": "5%"})
    workload = put.write_workload(put.concurrency, ["b"], "p/")
    assert (workload.duration, workload.steady_window, workload.steady_tolerance) == (CAP_S, 4.0, 5.0)
    assert put.write_workload(put.concurrency, ["b"], "p/", requests=10).duration is None


@pytest.mark.parametrize("given, says", [
    ({"until_steady": True, "steady_window": "0.5s"}, "steady window must be 1 s or more"),
    ({"until_steady": True, "local_cluster": 2}, "--until-steady judges one host's throughput"),
])
def test_a_rule_that_cannot_be_judged_is_refused_in_one_line(given, says):
    from objperf.core.errors import UsageError
    from objperf.options.runs import FetchOptions
    from objperf.options.spec import build

    with pytest.raises(UsageError) as refused:
        options = build(FetchOptions, given)
        options.check_cluster()
        options.workload()
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_a_cluster_is_judged_as_one_over_every_hosts_rows():
    from pathlib import Path

    from objperf.analysis.cluster_summary import cluster_summary
    from objperf.analysis.saved import summary_of
    from objperf.dataset.directory import load

    rows = load(Path(__file__).resolve().parents[1] / "data" / "sample" / "sustained")
    rows = rows.assign(host=["h0" if i % 2 else "h1" for i in range(len(rows))])
    rows.attrs["manifest"] = {"workload": {"steady_window": 2.1, "steady_tolerance": 30}}  # a 4 s run: 0.3 s samples
    results = {label: {"status": "complete", "summary": summary_of(part)} for label, part in rows.groupby("host")}
    whole = summary_of(rows)["steady"]
    assert whole["reached"] and whole["window_s"] == 2.1
    from objperf.cluster.merge import SUMMARY_COLUMNS  # what a live cluster run reads back of its hosts' rows

    assert cluster_summary(rows[SUMMARY_COLUMNS], results, {})["steady"] == whole


@pytest.mark.parametrize("name", ["sustained", "mixed"])
@pytest.mark.parametrize("rule", [SteadyRule(), SteadyRule(window_s=2.1, tolerance_pct=30)])
def test_a_scan_of_the_files_judges_as_the_loaded_rows(name, rule):
    pytest.importorskip("duckdb")
    from pathlib import Path

    from objperf.analysis.saved import summary_of
    from objperf.analysis.scan import steady_scanned
    from objperf.dataset.directory import load

    path = Path(__file__).resolve().parents[1] / "data" / "sample" / name
    rows = load(path)
    rows.attrs["manifest"] = {"workload": {"steady_window": rule.window_s, "steady_tolerance": rule.tolerance_pct}}
    assert steady_scanned([str(path)], rule) == summary_of(rows)["steady"]

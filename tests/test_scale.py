"""Past one box: latency sketches that merge exactly enough across hosts, and datasets analysed where they
lie, without loading their rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from objperf import load
from objperf.analysis.scan import scan, scan_summary, timeline
from objperf.analysis.sketch import RELATIVE_ACCURACY, Sketch, merged
from objperf.analysis.summary import summarize
from objperf.core.errors import UsageError
from objperf.dataset.source import DatasetError

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
STEPS = sorted((SAMPLE / "read-concurrency" / "steps").iterdir()) + sorted((SAMPLE / "mixed" / "steps").iterdir())


def latencies(n: int, seed: int) -> np.ndarray:
    """Milliseconds as a store gives them: most near a median, a long tail, some zeros."""
    rng = np.random.default_rng(seed)
    values = rng.lognormal(np.log(20), 0.8, n)
    values[rng.random(n) < 0.001] *= 50  # the tail a hot shard gives
    return values


@pytest.mark.parametrize("q", [0.5, 0.9, 0.99, 0.999])
def test_a_sketch_is_within_its_accuracy_of_the_value_of_that_rank(q):
    values = latencies(200_000, 1)
    exact = np.quantile(values, q, method="lower")
    assert abs(Sketch().add(values).quantile(q) - exact) <= RELATIVE_ACCURACY * exact * (1 + 1e-9)


def test_hosts_sketches_merged_agree_with_the_exact_percentiles_of_every_row_within_one_percent():
    hosts = [latencies(100_000 + 7919 * i, seed=i) * (1 + 0.1 * i) for i in range(8)]  # each host its own shape
    whole = merged([Sketch().add(h).to_json() for h in hosts])  # as saved in each host's summary
    everything = np.concatenate(hosts)
    assert whole.count == len(everything)
    assert whole.counts == Sketch().add(everything).counts  # merging is exact: the sketch of all the values
    for p in (50, 99, 99.9):
        exact = np.percentile(everything, p)
        assert abs(whole.quantile(p / 100) - exact) / exact < 0.01, p


def test_a_sketch_counts_zeros_and_leaves_out_what_was_not_measured():
    sketch = Sketch().add(np.array([0.0, 0.0, np.nan, 5.0, 10.0]))
    assert sketch.count == 4 and sketch.zeros == 2 and sketch.quantile(0.0) == 0.0
    assert abs(sketch.quantile(1.0) - 10.0) <= RELATIVE_ACCURACY * 10
    assert np.isnan(Sketch().quantile(0.5))


@pytest.mark.parametrize("bad", [{}, {"relative_accuracy": 2, "zeros": 0, "keys": [], "counts": []},
                                 {"relative_accuracy": 0.005, "zeros": 0, "keys": [1, 2], "counts": [3]},
                                 {"relative_accuracy": 0.005, "zeros": -1, "keys": [], "counts": []},
                                 {"relative_accuracy": 0.005, "zeros": 0, "keys": ["x"], "counts": [1]}])
def test_a_malformed_saved_sketch_is_one_line(bad):
    with pytest.raises(DatasetError, match="malformed"):
        Sketch.from_json(bad)


def test_a_run_summary_keeps_its_sketches_and_they_agree_with_its_percentiles():
    n = 50_000
    cols = {"op": np.zeros(n, dtype=np.int8), "status": np.full(n, 206, dtype=np.int16),
            "curl_code": np.zeros(n, dtype=np.int32), "bytes": np.ones(n, dtype=np.int64),
            "ttfb_s": latencies(n, 5) / 1000, "total_s": latencies(n, 6) / 500,
            "s3_error": np.full(n, b"", dtype="S64")}
    s = summarize(cols, wall_s=1.0, cpu_s=0.0)
    ttfb, latency = (Sketch.from_json(s["sketches"][name]) for name in ("ttfb_ms", "latency_ms"))
    assert ttfb.count == latency.count == n
    for p in (50, 99, 99.9):
        exact = s[f"ttfb_ms_p{str(p).replace('.', '')}"]
        assert abs(ttfb.quantile(p / 100) - exact) / exact < 0.01, p


def test_a_scan_counts_what_loading_counts():
    """The SQL rules for success, cut and failure are objperf.core.schema's: the same counts either way."""
    found = scan(STEPS)
    assert len(found) == 1
    whole = load(STEPS)
    ok = (whole["curl_code"] == 0) & whole["status"].between(200, 299)
    cut = (whole["curl_code"] == 42) & (whole["status"] < 300)
    s = found[0]
    assert (s["requests"], s["ok_requests"], s["cut_requests"]) == (len(whole), int(ok.sum()), int(cut.sum()))
    writes = whole["op"].isin(["PUT", "UPLOAD_PART"])
    assert s["bytes"] == int(whole.loc[~writes | ok, "bytes"].sum())  # of writes, what the store acknowledged
    assert writes.any() == ("sent_bytes" in s) and s.get("sent_bytes", 0) == int(whole.loc[writes, "bytes"].sum())
    first_byte = ((whole["curl_code"] == 0) | (whole["curl_code"] == 42)) & whole["status"].between(200, 299) \
        & (whole["ttfb_s"] > 0) & (whole["op"] == "GET")
    for p in (50, 99):
        exact = np.percentile(whole.loc[first_byte, "ttfb_s"] * 1000, p, method="lower")
        assert abs(s[f"ttfb_ms_p{p}"] - exact) <= RELATIVE_ACCURACY * exact * (1 + 1e-9), p
    by_op = {row["op"]: row for row in scan(STEPS, by="op")}
    assert sum(row["requests"] for row in by_op.values()) == len(whole)
    assert sum(g["requests"] for g in by_op.values()) == s["requests"]
    seconds = timeline(STEPS)
    assert seconds and sum(1 for _ in seconds) >= 1


@pytest.mark.parametrize("statistics", [True, False])
def test_a_scanned_timeline_is_the_loaded_one(tmp_path, statistics):
    """Seconds from the first start, each request's bytes spread from its first byte to its end as the loaded
    timeline (``stats.throughput_timeline``) spreads them, and failed requests in the second they ended: a
    transfer that spans seconds counts in each, the first request is not the first to end."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from objperf.analysis.stats import throughput_timeline

    rng = np.random.default_rng(3)
    n = 4000
    t = np.sort(rng.random(n) * 8) + 1000.0
    total = rng.random(n) * 0.3
    total[0] = 4.5  # the first to start spans five seconds
    status = np.where(np.arange(n) % 40 == 7, 503, 206).astype(np.int16)
    ttfb = total * rng.random(n)
    ttfb[10:20] = total[10:20] * 3  # a first byte after the end (a file may say anything): all at the first byte
    ttfb = pa.array(ttfb, mask=np.arange(n) % 300 == 1)  # no first byte: spread from the start
    frame = {"op": pa.array(["GET"] * n).dictionary_encode(), "status": status, "curl_code": np.zeros(n, np.int32),
             "bytes": rng.integers(1, 1 << 20, n), "t_start": t, "ttfb_s": ttfb, "total_s": total}
    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    for i, rows in enumerate((slice(0, 1500), slice(1500, n))):
        pq.write_table(pa.table({k: v[rows] for k, v in frame.items()}), dataset / "requests" / f"part-{i:05d}.parquet",
                       row_group_size=500, write_statistics=statistics)
    whole = pd.DataFrame({k: (v.to_pandas() if isinstance(v, pa.Array) else v) for k, v in frame.items()})
    for bin_s in (1.0, 0.25):
        loaded = throughput_timeline(whole, bin_s=bin_s)
        scanned = timeline([dataset], bin_s=bin_s)
        assert [s for s, _, _ in scanned] == pytest.approx(list(loaded["t_s"]), abs=1e-9)
        # within a few bytes a bin: the loaded path's sums of rate·t lose the last bits to the rates of the
        # requests that end as their first byte comes
        assert [g for _, g, _ in scanned] == pytest.approx(list(loaded["gbps"]), rel=1e-6, abs=64 * 8 / bin_s / 1e9)
        ends = np.floor((whole["t_start"] + whole["total_s"] - whole["t_start"].min()) / bin_s).astype(int)
        failed = np.bincount(ends[whole["status"] == 503], minlength=len(scanned))
        assert [f for _, _, f in scanned] == list(failed[:len(scanned)]) and failed[len(scanned):].sum() == 0


def test_a_scanned_timeline_of_times_a_file_made_up_is_bins_or_nothing_never_a_traceback(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    nan, inf = float("nan"), float("inf")
    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    pq.write_table(pa.table({"status": pa.array([206] * 6, pa.int16()), "curl_code": pa.array([0] * 6, pa.int32()),
                             "bytes": [100] * 6, "t_start": [5.0, 5.0, nan, 6.0, 5.5, 7.0],
                             "ttfb_s": [nan, -3.0, 0.1, 0.1, inf, 0.0], "total_s": [-9.0, 1.0, 1.0, nan, 0.2, 0.0]}),
                   dataset / "requests" / "part-00000.parquet")
    seconds = timeline([dataset])
    assert [t for t, _, _ in seconds] == [0.0, 1.0] and all(0 <= g < 1e-5 for _, g, _ in seconds)  # to the last end
    assert sum(f for _, _, f in seconds) == 0


@pytest.mark.parametrize("where", ["a study's own column", "each run's manifest"])
def test_the_concurrency_curve_is_scanned_as_it_is_loaded(where):
    """``--by concurrency`` out of core: from the column a study's rows hold, or from the manifest of each run
    given; the same requests, Gbps over each group's own span and TTFB (within the sketch's accuracy)."""
    from objperf.analysis.saved import grouped, with_settings

    study = SAMPLE / "read-concurrency"
    paths = [study] if where == "a study's own column" else sorted((study / "steps").iterdir())
    rows = with_settings(load(paths))
    loaded = grouped(rows, "concurrency").set_index("concurrency")
    scanned = pd.DataFrame(scan(paths, by="concurrency")).set_index("concurrency")
    assert sorted(scanned.index) == sorted(loaded.index) == [1, 4, 16]
    first_byte = ((rows["curl_code"] == 0) | (rows["curl_code"] == 42)) & rows["status"].between(200, 299) \
        & (rows["ttfb_s"] > 0) & (rows["op"] == "GET")
    for value, row in loaded.iterrows():
        mine = scanned.loc[value]
        assert (mine["requests"], mine["error_requests"]) == (row["requests"], row["failed"])
        assert mine["gbps"] == pytest.approx(row["gbps"], rel=1e-9)
        ttfb_ms = rows.loc[first_byte & (rows["concurrency"] == value), "ttfb_s"] * 1000
        for p in (50, 99):
            exact = np.percentile(ttfb_ms, p, method="lower")
            assert abs(mine[f"ttfb_ms_p{p}"] - exact) <= RELATIVE_ACCURACY * exact * (1 + 1e-9), (value, p)


@pytest.mark.parametrize("workload", [[1, 2], "c=16", {"concurrency": {"x": 1}}, {"read": 5, "write": [1]},
                                      {"read": {"concurrency": "many"}, "write": {"concurrency": 2}}])
def test_a_manifests_workload_a_file_made_up_groups_as_not_recorded_loaded_or_scanned(tmp_path, workload):
    import shutil

    from objperf.analysis.saved import grouped

    step = tmp_path / "step"
    shutil.copytree(sorted((SAMPLE / "read-concurrency" / "steps").iterdir())[0], step)
    manifest = json.loads((step / "manifest.json").read_text())
    manifest["workload"] = workload
    (step / "manifest.json").write_text(json.dumps(manifest))
    scanned = scan([step], by="concurrency")
    assert len(scanned) == 1 and scanned[0]["concurrency"] is None and scanned[0]["requests"] > 0
    loaded = grouped(load(step), "concurrency")
    assert len(loaded) == 1 and loaded["requests"].iloc[0] == scanned[0]["requests"]


@pytest.mark.integration
def test_analyze_scan_draws_the_concurrency_curve_the_timeline_and_ttfb_of_rows_it_never_loads(tmp_path):
    from conftest import run_cli
    from objperf.plots.notebooks import is_blank

    figures = tmp_path / "figures"
    done = run_cli("objperf", "analyze", "--scan", str(SAMPLE / "read-concurrency"), "--by", "concurrency",
                   "--figures", str(figures))
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()[-3:]] == ["1", "4", "16"]
    drawn = sorted(p.name for p in figures.iterdir())
    assert drawn == ["concurrency.png", "throughput.png", "ttfb.png"]
    assert not [name for name in drawn if is_blank(figures / name)]
    assert done.stderr.count("figure ") == 3


@pytest.mark.parametrize("args, message", [
    (("--by", "colour"), "neither a column of the rows nor a workload setting"),
    (("--op", "GET"), "need the rows loaded"),
])
@pytest.mark.integration
def test_analyze_scan_refuses_what_it_cannot_do_in_one_line_before_any_figure(tmp_path, args, message):
    from conftest import run_cli

    done = run_cli("objperf", "analyze", "--scan", str(SAMPLE / "read-concurrency"), *args,
                   "--figures", str(tmp_path / "figures"))
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "figures").exists()


def test_a_scan_by_what_neither_the_rows_nor_the_manifests_hold_is_one_line():
    with pytest.raises(UsageError, match="neither a column of the rows nor a workload setting"):
        scan([SAMPLE / "read-concurrency"], by="colour")


def test_a_scan_refuses_a_part_that_leads_out_of_its_dataset(tmp_path):
    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    (dataset / "requests" / "part-0.parquet").symlink_to("/etc/passwd")
    with pytest.raises(DatasetError, match="not a file of the dataset"):
        scan([dataset])


def test_a_scan_reads_parts_that_lack_columns_and_refuses_a_damaged_one_in_a_line(tmp_path):
    """Other tools' imports and older datasets hold fewer columns: what a part lacks counts as not measured."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    pq.write_table(pa.table({"status": pa.array([206, 206, 503], pa.int16()), "bytes": [10, 20, 0],
                             "t_start": [0.0, 1.0, 2.0], "total_s": [0.5, 0.5, 0.5]}),
                   dataset / "requests" / "part-00000.parquet")
    found = scan_summary([dataset])
    # no libcurl code: no success, and a request that did not succeed moved no byte that counts
    assert (found["requests"], found["bytes"], found["ok_requests"]) == (3, 0, 0)
    assert found["status_counts"] == {"206": 2, "503": 1} and found["s3_error_counts"] == {}
    assert found["ttfb_ms_p50"] != found["ttfb_ms_p50"]  # NaN: no TTFB was measured, never 0
    assert [g["host"] for g in scan([dataset], by="host")] == [None]
    (dataset / "requests" / "part-00001.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetError, match="cannot be read"):
        scan_summary([dataset])
    (dataset / "requests" / "part-00001.parquet").unlink()
    pq.write_table(pa.table({"status": ["x"], "curl_code": ["y"]}), dataset / "requests" / "part-00001.parquet")
    with pytest.raises(DatasetError, match="cannot be scanned"):
        scan_summary([dataset])


@pytest.mark.parametrize("statistics", [True, False])
@pytest.mark.parametrize("negative", [True, False])
def test_a_scans_latency_sketch_is_the_loaded_one_whatever_the_rows_hold(tmp_path, statistics, negative):
    """Zeros count as zeros, a latency not measured (NULL, NaN) is left out, a negative one counts as a zero,
    as loading counts them: with the parts' statistics (which a scan reads to skip guards no row needs) and
    without, and in a group of ``by`` as in the whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(11)
    totals = rng.lognormal(np.log(0.02), 0.8, 5000)
    totals[:40] = 0.0
    totals[40:60] = np.nan
    if negative:
        totals[60:70] = -0.5
    total = pa.array(totals, pa.float64(), mask=np.arange(5000) % 97 == 3)  # and some NULLs
    status = np.where(np.arange(5000) % 50 == 0, 503, 206).astype(np.int16)
    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    pq.write_table(pa.table({"op": pa.array(["GET"] * 5000).dictionary_encode(), "status": status,
                             "curl_code": np.zeros(5000, np.int32), "bytes": np.full(5000, 100, np.int64),
                             "t_start": np.arange(5000) / 1000, "ttfb_s": np.full(5000, 0.001), "total_s": total}),
                   dataset / "requests" / "part-00000.parquet", row_group_size=1000, write_statistics=statistics)
    ok = status == 206
    loaded = Sketch().add(total.to_numpy(zero_copy_only=False)[ok] * 1000)  # a NULL reads as NaN
    for found in (scan([dataset])[0], scan([dataset], by="op")[0]):
        scanned = Sketch.from_json(found["sketches"]["latency_ms"])
        assert (scanned.zeros, scanned.counts) == (loaded.zeros, loaded.counts)


@pytest.mark.parametrize("statistics", [True, False])
def test_the_span_of_a_scan_is_the_rows_whatever_the_parts_statistics_say(tmp_path, statistics):
    """The first start and last end come from row-group statistics where the parts have them: the last end
    must still be the rows' own, here a long request in the first row group that ends after every other."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    starts, totals = [], []
    for part in range(3):
        t = np.sort(rng.random(3000) * 10 + part * 10)
        total = rng.random(3000) * 0.1
        if part == 0:
            total[5] = 100.0  # started early, ended last
        starts.append(t)
        totals.append(total)
        pq.write_table(pa.table({"op": pa.array(["GET"] * 3000).dictionary_encode(),
                                 "status": np.full(3000, 206, np.int16), "curl_code": np.zeros(3000, np.int32),
                                 "bytes": np.full(3000, 100, np.int64),
                                 "t_start": t, "ttfb_s": total / 2, "total_s": total}),
                       dataset / "requests" / f"part-{part:05d}.parquet", row_group_size=1000,
                       write_statistics=statistics)
    t, total = np.concatenate(starts), np.concatenate(totals)
    exact = float((t + total).max() - t.min())
    assert scan([dataset])[0]["wall_s"] == pytest.approx(exact, rel=1e-12)
    assert scan([dataset], by="op")[0]["wall_s"] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("layout", ["a host a part", "a host a part, no statistics", "hosts mixed in a part"])
def test_each_groups_span_is_its_own_rows_whatever_the_parts_statistics_say(tmp_path, layout):
    """By host: each host's span from its first start to its last end, from the statistics where every row group
    holds one host (a cluster's parts), from the rows where not; a long request early in a host's rows ends last."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(9)
    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    frames = []
    for i, host in enumerate(["h0", "h1", "h2"]):
        t = np.sort(rng.random(2000) * (5 + i)) + 3 * i
        total = rng.random(2000) * 0.1
        total[3] = 20.0 + i  # started early, ended last
        frames.append(pd.DataFrame({"host": host, "op": "GET", "status": np.int16(206), "curl_code": np.int32(0),
                                    "bytes": np.int64(100), "t_start": t, "ttfb_s": total / 2, "total_s": total}))
    rows = pd.concat(frames, ignore_index=True)
    if layout == "hosts mixed in a part":
        pq.write_table(pa.Table.from_pandas(rows.sample(frac=1, random_state=1), preserve_index=False),
                       dataset / "requests" / "part-00000.parquet", row_group_size=700)
    else:
        for i, frame in enumerate(frames):
            pq.write_table(pa.Table.from_pandas(frame, preserve_index=False),
                           dataset / "requests" / f"part-{i:05d}.parquet", row_group_size=700,
                           write_statistics="no statistics" not in layout)
    found = {g["host"]: g for g in scan([dataset], by="host")}
    for host, mine in rows.groupby("host"):
        exact = float((mine["t_start"] + mine["total_s"]).max() - mine["t_start"].min())
        assert found[host]["wall_s"] == pytest.approx(exact, rel=1e-12), host
        assert found[host]["requests"] == len(mine)


ROWS_PER_PART = 10_000_000
PARTS = 20


def synthetic_dataset(where: Path) -> Path:
    """200 M rows: one part of 10 M written once, then linked 20 times (as many parts, no 20× the disk)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    n = ROWS_PER_PART
    status = np.where(rng.random(n) < 0.01, 503, 206).astype(np.int16)
    table = pa.table({
        "op": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)), pa.array(["GET"])),
        "status": status, "curl_code": np.zeros(n, dtype=np.int32), "bytes": np.full(n, 1 << 20, dtype=np.int64),
        "t_start": np.sort(rng.random(n) * 600), "ttfb_s": latencies(n, 3) / 1000,
        "total_s": latencies(n, 4) / 500})
    (where / "requests").mkdir(parents=True)
    first = where / "requests" / "part-00000.parquet"
    pq.write_table(table, first, row_group_size=1 << 20)
    for i in range(1, PARTS):
        os.link(first, where / "requests" / f"part-{i:05d}.parquet")
    return where


@pytest.mark.integration
@pytest.mark.slow
def test_200_million_rows_are_analysed_within_2_gib(tmp_path):
    dataset = synthetic_dataset(tmp_path / "big")
    # The child's own high-water mark (VmHWM): wait4's ru_maxrss starts from the forking process's, here pytest's.
    script = ("import sys, time, json; from objperf.analysis.scan import scan_summary, timeline; "
              "t = time.perf_counter(); s = scan_summary([sys.argv[1]], memory_limit='1GB'); "
              "took = time.perf_counter() - t; t = time.perf_counter(); seconds = timeline([sys.argv[1]]); "
              "line = time.perf_counter() - t; "
              "hwm = [int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM')][0]; "
              "print(json.dumps({'s': took, 'timeline_s': line, 'seconds': len(seconds), 'requests': s['requests'], "
              "'p99': s['ttfb_ms_p99'], 'kib': hwm}))")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script, str(dataset)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    peak = found["kib"] * 1024
    assert found["requests"] == ROWS_PER_PART * PARTS
    assert found["seconds"] >= 600  # the starts span 600 s
    assert peak < 2 << 30, f"peak RSS {peak / (1 << 20):.0f} MiB"
    print(f"\n200 M rows scanned in {found['s']:.1f} s ({found['requests'] / found['s'] / 1e6:.0f} M rows/s), "
          f"its timeline in {found['timeline_s']:.1f} s "
          f"({found['requests'] / found['timeline_s'] / 1e6:.0f} M rows/s), "
          f"peak RSS {peak / (1 << 20):.0f} MiB, wall {time.perf_counter() - started:.1f} s")


def test_scanned_figures_draw_the_concurrencies_recorded_and_leave_out_a_word_or_none(tmp_path):
    from objperf.plots.figures import draw_scanned_figures

    groups = pd.DataFrame({"concurrency": [1, "many", None, 16], "gbps": [1.0, 2.0, 3.0, 4.0],
                           "requests": [10, 20, 30, 40]})
    drawn = draw_scanned_figures(tmp_path, timeline=[], ttfb=Sketch(), rows=0, groups=groups, by="concurrency")
    assert [p.name for p in drawn] == ["concurrency.png"]  # no timeline, no TTFB: no figure of nothing
    assert all(p.stat().st_size > 0 for p in drawn)


@pytest.mark.parametrize("by", ["concurrency", "status", "host"])
def test_a_summary_made_with_its_groups_is_the_summary_made_alone(by):
    """``analyze --scan --by`` reads the rows once: the summary is its groups merged, the same in every figure."""
    from objperf.analysis.scan import scan_summary_by

    paths = sorted((SAMPLE / "read-concurrency" / "steps").iterdir())
    alone = scan_summary(paths)
    merged, groups = scan_summary_by(paths, by)
    assert groups and sum(g["requests"] for g in groups) == alone["requests"]
    assert json.dumps(merged, sort_keys=True, default=str) == json.dumps(alone, sort_keys=True, default=str)

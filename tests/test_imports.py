"""Other tools' results brought into objperf: warp's per-operation files (both header generations, zstd or
not, with errors) and elbencho's result and live CSV files, written here in their formats."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from conftest import run_cli
from objperf import load
from objperf.dataset.directory import load_table, read_manifest

T0 = "2026-12-01T10:00:00.000000000Z"
NEW_HEADER = "idx\tthread\top\tclient_id\tn_objects\tbytes\tendpoint\tfile\terror\tstart\tfirst_byte\tlast_byte\tend" \
             "\tduration_ns\tcat"
OLD_HEADER = "idx\tthread\top\tn_objects\tbytes\tfile\terror\tstart\tfirst_byte\tend\tduration_ns"


def stamp(seconds: float) -> str:
    """RFC 3339 with nanoseconds, as warp writes them."""
    whole = int(seconds)
    nanos = round((seconds - whole) * 1e9)
    return f"2026-12-01T10:00:{whole:02d}.{nanos:09d}Z"


def warp_ops(n: int = 40):
    """n operations: (thread, op, bytes, file, error, start, first_byte, end) with known times."""
    ops = []
    for i in range(n):
        start = 1.0 + i * 0.05
        error = "connection reset by peer" if i % 10 == 9 else ""
        first = "" if error else stamp(start + 0.002 + i * 1e-6)
        ops.append((i % 4, "GET" if i % 2 else "PUT", 0 if error else 1 << 20, f"obj/{i % 5}", error, stamp(start),
                    first, stamp(start + 0.010 + i * 1e-6)))
    return ops


def write_warp(path, ops, *, old: bool = False, zstd: bool = True):
    lines = [OLD_HEADER if old else NEW_HEADER]
    for i, (thread, op, nbytes, file, error, start, first, end) in enumerate(ops):
        if old:
            lines.append("\t".join(map(str, (i, thread, op, 1, nbytes, file, error, start, first, end, 10_000_000))))
        else:
            lines.append("\t".join(map(str, (i, thread, op, f"client{thread % 2}", 1, nbytes, "127.0.0.1:9000", file,
                                             error, start, first, end, end, 10_000_000, 0))))
    lines.append("# warp get --host=127.0.0.1:9000 --obj.size=1MiB --benchdata=out")
    data = ("\n".join(lines) + "\n").encode()
    if zstd:
        sink = pa.BufferOutputStream()
        stream = pa.CompressedOutputStream(sink, "zstd")
        stream.write(data)
        stream.close()
        data = sink.getvalue().to_pybytes()
    path.write_bytes(data)
    return path


@pytest.mark.integration
@pytest.mark.parametrize("old, zstd", [(False, True), (True, True), (False, False)])
def test_a_warp_file_becomes_rows_exactly(tmp_path, old, zstd):
    ops = warp_ops()
    path = write_warp(tmp_path / ("warp.csv.zst" if zstd else "warp.csv"), ops, old=old, zstd=zstd)
    out = tmp_path / "imported"
    proc = run_cli("objperf", "import", "warp", str(path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = load(out).sort_values("t_start", ignore_index=True)
    assert len(rows) == len(ops)
    assert rows["bytes"].sum() == sum(op[2] for op in ops)
    assert rows["op"].astype(str).tolist() == [op[1] for op in ops]
    starts = np.array([1.0 + i * 0.05 for i in range(len(ops))])
    assert rows["t_start"].to_numpy() - rows["t_start"].iloc[0] == pytest.approx(starts - starts[0], abs=1e-6)
    assert rows["total_s"].to_numpy() == pytest.approx([0.010 + i * 1e-6 for i in range(len(ops))], abs=1e-6)
    failed = rows["status"] == 0
    assert failed.sum() == 4 and (rows.loc[failed, "s3_error"] == "connection reset by peer").all()
    assert rows.loc[~failed, "ttfb_s"].to_numpy() == pytest.approx(
        [0.002 + i * 1e-6 for i in range(len(ops)) if i % 10 != 9], abs=1e-6)
    assert rows.loc[failed, "ttfb_s"].isna().all()
    assert set(rows["host"].astype(str)) == ({"warp"} if old else {"client0", "client1"})
    manifest = read_manifest(out)
    assert manifest["source"] == "warp" and manifest["command"].startswith("warp get --host")
    assert manifest["summary"]["error_requests"] == 4 and manifest["summary"]["requests"] == len(ops)


@pytest.mark.integration
def test_imported_warp_rows_plot_and_compare_beside_objperfs(tmp_path):
    from objperf import plots

    out = tmp_path / "w"
    assert run_cli("objperf", "import", "warp", str(write_warp(tmp_path / "w.csv.zst", warp_ops())), "--out",
                   str(out)).returncode == 0
    rows = load(out)
    ax = plots.throughput_over_time(rows)
    assert ax.lines and ax.lines[0].get_ydata().max() > 0
    plots.ttfb_distribution(rows)
    again = run_cli("objperf", "analyze", str(out), "--json")
    assert again.returncode == 0, again.stderr


def test_the_python_api_imports_warp(tmp_path):
    import objperf

    rows = objperf.import_warp(write_warp(tmp_path / "w.csv", warp_ops(12), zstd=False))
    assert len(rows) == 12 and rows.attrs["manifest"]["source"] == "warp"


@pytest.mark.parametrize("mangle, message", [
    (lambda lines: lines[:1] + ["1\t0\tGET\tx\t1\t10"] + lines[2:], "line 2: 6 fields where the header has 15"),
    (lambda lines: lines[:2] + [lines[2].replace("2026-12-01T10:00:01.050000000Z", "yesterday")] + lines[3:],
     "line 3: bad start time 'yesterday'"),
    (lambda lines: ["idx\tthread\tcolour"] + lines[1:], "line 1: not a warp header"),
])
@pytest.mark.integration
def test_a_malformed_warp_file_is_one_line_naming_the_line(tmp_path, mangle, message):
    path = write_warp(tmp_path / "w.csv", warp_ops(6), zstd=False)
    path.write_text("\n".join(mangle(path.read_text().splitlines())) + "\n")
    proc = run_cli("objperf", "import", "warp", str(path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.integration
@pytest.mark.parametrize("times", [(2.0, 2.001, 1.0),  # it ends before it starts
                                   (1.0, 1.5, 1.2),  # its first byte after its end
                                   (1.0, 0.9, 1.2),  # its first byte before its start
                                   (1.0, "", "2027-01-01T10:00:01.000000000Z")])  # a request of a month
def test_warp_times_that_are_no_requests_are_one_line_naming_the_line(tmp_path, times):
    """A warp row whose end came before its start imported as '50331648 Gbps, 6e9 requests/s'."""
    ops = warp_ops(6)
    start, first, end = times
    ops[3] = (*ops[3][:5], stamp(start), stamp(first) if first else "", end if isinstance(end, str) else stamp(end))
    path = write_warp(tmp_path / "w.csv", ops, zstd=False)
    proc = run_cli("objperf", "import", "warp", str(path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2, proc.stdout
    assert "line 5: its times are not a request's" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


# -- elbencho -------------------------------------------------------------------------------------

RESULT_COLUMNS = ["ISO date", "label", "path type", "paths", "hosts", "threads", "dirs", "files", "file size",
                  "block size", "direct IO", "random", "random aligned", "IO depth", "shared paths", "truncate",
                  "operation", "time ms [first]", "time ms [last]", "CPU% [first]", "CPU% [last]",
                  "entries/s [first]", "entries/s [last]", "IOPS [first]", "IOPS [last]", "MiB/s [first]",
                  "MiB/s [last]", "entries [first]", "entries [last]", "MiB [first]", "MiB [last]",
                  "Ent lat us [min]", "Ent lat us [avg]", "Ent lat us [max]", "IO lat us [min]", "IO lat us [avg]",
                  "IO lat us [max]", "rwmix read entries/s [first]", "rwmix read entries/s [last]",
                  "rwmix read IOPS [first]", "rwmix read IOPS [last]", "rwmix read MiB/s [first]",
                  "rwmix read MiB/s [last]", "rwmix read entries [first]", "rwmix read entries [last]",
                  "rwmix read MiB [first]", "rwmix read MiB [last]", "rwmix read Ent lat us [min]",
                  "rwmix read Ent lat us [avg]", "rwmix read Ent lat us [max]", "rwmix read IO lat us [min]",
                  "rwmix read IO lat us [avg]", "rwmix read IO lat us [max]", "version", "command"]


def write_elbencho_results(path, phases):
    """phases: (operation, threads, MiB/s [last]) rows of elbencho's --csvfile."""
    import csv

    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(RESULT_COLUMNS)
        for operation, threads, mibs in phases:
            row = dict.fromkeys(RESULT_COLUMNS, "0")
            row.update({"ISO date": "2026-12-01T10:00:00Z", "label": "s3", "path type": "dir", "hosts": "2",
                        "threads": str(threads), "IO depth": "1", "operation": operation, "time ms [last]": "20000",
                        "MiB/s [last]": str(mibs), "IO lat us [avg]": "1500", "random aligned": "",
                        "version": "3.0.25", "command": "elbencho --s3endpoints http://127.0.0.1:9000 -r b"})
            writer.writerow([row[c] for c in RESULT_COLUMNS])
    return path


def write_elbencho_live(path, intervals):
    """intervals: (phase, runtime ms, MiB/s) rows of elbencho's --livecsv, with its trailing commas."""
    header = "ISO Date,Label,Phase,RuntimeMS,Rank,MixType,Done%,DoneBytes,MiB/s,IOPS,Entries,Entries/s,Lat Ent us," \
             "Lat IO us,Active,CPU,Service,"
    lines = [header] + [f"2026-12-01T10:00:00Z,s3,{phase},{ms},Total,,50,{ms * 1000},{mibs},{mibs},0,0,0,900,16,"
                        f"80,," for phase, ms, mibs in intervals]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.integration
def test_an_elbencho_results_file_is_a_phases_table_the_concurrency_plot_takes(tmp_path):
    from objperf import plots

    path = write_elbencho_results(tmp_path / "r.csv", [("READ", 4, 1000), ("READ", 16, 2500), ("WRITE", 16, 800)])
    out = tmp_path / "e"
    proc = run_cli("objperf", "import", "elbencho", str(path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    phases = load_table(out, "phases")
    assert phases["concurrency"].tolist() == [8, 32, 32]  # 2 hosts × threads × IO depth 1
    assert phases["gbps"].tolist() == pytest.approx([m * (1 << 20) * 8 / 1e9 for m in (1000, 2500, 800)])
    assert phases["io_latency_us_avg"].tolist() == [1500] * 3
    assert read_manifest(out)["command"].startswith("elbencho --s3endpoints")
    ax = plots.throughput_against_concurrency(phases, hue="operation", y="gbps")
    assert len(ax.lines) >= 2


def test_an_elbencho_live_file_is_an_intervals_table_the_timeline_plot_takes(tmp_path):
    import objperf
    from objperf import plots

    path = write_elbencho_live(tmp_path / "live.csv", [("READ", 1000, 500), ("READ", 2000, 700), ("READ", 3000, 600)])
    table = objperf.import_elbencho(path)
    assert table["t_s"].tolist() == [1.0, 2.0, 3.0]
    assert table["gbps"].tolist() == pytest.approx([m * (1 << 20) * 8 / 1e9 for m in (500, 700, 600)])
    ax = plots.throughput_over_time(table, hue="phase")
    assert max(ax.lines[0].get_ydata()) == pytest.approx(700 * (1 << 20) * 8 / 1e9)


@pytest.mark.integration
def test_a_malformed_elbencho_file_is_one_line(tmp_path):
    path = write_elbencho_live(tmp_path / "live.csv", [("READ", 1000, 500), ("READ", 2000, 700)])
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace(",700,", ",fast,")
    path.write_text("\n".join(lines) + "\n")
    proc = run_cli("objperf", "import", "elbencho", str(path), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "line 3: bad MiB/s 'fast'" in proc.stderr, proc.stderr
    other = tmp_path / "other.csv"
    other.write_text("a,b,c\n1,2,3\n")
    proc = run_cli("objperf", "import", "elbencho", str(other), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "not an elbencho --csvfile or --livecsv header" in proc.stderr

"""elbencho's results, which are per phase or per interval, not per request: its ``--csvfile`` (one row per
phase: hosts, threads, ``[first]``/``[last]`` throughput, IOPS, latencies, the ``rwmix read`` repeats, version
and command) as a phases table whose ``concurrency`` and ``gbps`` columns the concurrency plots take, and its
``--livecsv`` (one row per interval and rank) as an intervals table of ``t_s`` and ``gbps`` that the
throughput-over-time plot takes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from objperf.core.errors import UsageError
from objperf.core.sanitize import printable
from objperf.imports import bounded

MIB_GBPS = (1 << 20) * 8 / 1e9  # MiB/s → Gbps
RESULTS_FIRST = "ISO date"
LIVE_FIRST = "ISO Date"
LIVE_REQUIRED = ("Phase", "RuntimeMS", "MiB/s")
RESULTS_REQUIRED = ("operation", "threads", "MiB/s [last]")


def read_rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the data rows with their line numbers (a trailing comma's empty last field dropped);
    streamed and bounded as every import is (``objperf.imports.bounded``)."""
    rows = []
    header = None
    for number, fields in bounded.records(path, ","):
        if fields and fields[-1] == "":
            fields = fields[:-1]
        if not fields:
            continue
        if header is None:
            header = [f.strip() for f in fields]
        elif fields[0].strip() == header[0]:
            continue  # elbencho repeats the header when it appends to an existing file
        else:
            rows.append((number, fields))
    if header is None:
        raise UsageError(f"{path}: empty, no elbencho header")
    for number, fields in rows:
        if len(fields) != len(header):
            raise UsageError(f"{path} line {number}: {len(fields)} fields where the header has {len(header)}")
    return header, rows


def kind_of(header: list[str]) -> str:
    if header[0] == LIVE_FIRST and all(name in header for name in LIVE_REQUIRED):
        return "intervals"
    if header[0] == RESULTS_FIRST and all(name in header for name in RESULTS_REQUIRED):
        return "phases"
    raise UsageError(f"not an elbencho --csvfile or --livecsv header: {','.join(header[:4])},…")


def numbers(frame: pd.DataFrame, column: str, lines: list[int], path: Path) -> pd.Series:
    if column not in frame.columns:
        return pd.Series([float("nan")] * len(frame))
    text = frame[column].str.strip()
    values = pd.to_numeric(text.where(text != "", None), errors="coerce")
    # every figure elbencho writes is a count, a size, a rate, a time or a share: none negative or past 2**53
    bad = (values.isna() & (text != "")) | (values < 0) | (values > bounded.MAX_COUNT)
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise UsageError(f"{path} line {lines[i]}: bad {column} {printable(frame[column].iloc[i])[:40]!r}")
    return values


def parse(path: str | Path) -> tuple[str, pd.DataFrame, str]:
    """("phases" or "intervals", the table, the command line when the file holds one)."""
    path = Path(path)
    header, rows = read_rows(path)
    kind = kind_of(header)
    lines = [number for number, _ in rows]
    raw = pd.DataFrame([fields for _, fields in rows], columns=header)
    if kind == "intervals":
        return kind, _intervals(raw, lines, path), ""
    table = _phases(raw, lines, path)
    commands = [c for c in raw.get("command", pd.Series(dtype=str)).unique() if c]
    return kind, table, bounded.redact_command(" / ".join(commands))


def _phases(raw: pd.DataFrame, lines: list[int], path: Path) -> pd.DataFrame:
    def num(column: str) -> pd.Series:
        return numbers(raw, column, lines, path)

    hosts = num("hosts").fillna(1)
    depth = num("IO depth").fillna(1)
    table = pd.DataFrame({
        "label": raw.get("label", ""), "operation": raw["operation"].str.strip(),
        "hosts": hosts, "threads": num("threads"), "io_depth": depth,
        "concurrency": hosts * num("threads") * depth,  # requests in flight at once, over all hosts
        "block_size": num("block size"), "file_size": num("file size"),
        "seconds": num("time ms [last]") / 1000, "seconds_first": num("time ms [first]") / 1000,
        "gbps": num("MiB/s [last]") * MIB_GBPS, "gbps_first": num("MiB/s [first]") * MIB_GBPS,
        "iops": num("IOPS [last]"), "entries_per_s": num("entries/s [last]"), "entries": num("entries [last]"),
        "mib": num("MiB [last]"), "cpu_pct": num("CPU% [last]"),
        "io_latency_us_avg": num("IO lat us [avg]"), "io_latency_us_max": num("IO lat us [max]"),
        "entry_latency_us_avg": num("Ent lat us [avg]"),
        "rwmix_read_gbps": num("rwmix read MiB/s [last]") * MIB_GBPS,
        "version": raw.get("version", ""),
    })
    table["steady_gbps"] = table["gbps"]  # what objperf's concurrency plots read by default
    return table


def _intervals(raw: pd.DataFrame, lines: list[int], path: Path) -> pd.DataFrame:
    def num(column: str) -> pd.Series:
        return numbers(raw, column, lines, path)

    return pd.DataFrame({
        "phase": raw["Phase"].str.strip(), "label": raw.get("Label", ""), "rank": raw.get("Rank", ""),
        "t_s": num("RuntimeMS") / 1000, "gbps": num("MiB/s") * MIB_GBPS, "iops": num("IOPS"),
        "entries": num("Entries"), "entries_per_s": num("Entries/s"), "done_bytes": num("DoneBytes"),
        "done_pct": num("Done%"), "io_latency_us": num("Lat IO us"), "entry_latency_us": num("Lat Ent us"),
        "active": num("Active"), "cpu_pct": num("CPU"),
    })

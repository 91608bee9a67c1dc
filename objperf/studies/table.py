"""A study's steps as a terminal shows them: the table after the study, and each step's line as it ends, both
made from the same results (a step's row of steps.parquet), cell by cell."""

from __future__ import annotations

import math
from collections.abc import Iterable

# The step results a study prints, under headers with their units; steps.parquet keeps all of them.
SHOWN_RESULTS = {"requests": "requests", "error_rate": "failed %", "steady_gbps": "steady read Gbps",
                 "read_gbps": "read Gbps", "write_acknowledged_gbps": "write Gbps (acked)",
                 "ttfb_ms_p50": "TTFB p50 ms", "ttfb_ms_p99": "TTFB p99 ms"}
# A study's own measures (its steps' ``measure``), shown before the common results: they are its point.
SHOWN_MEASURES = {"drift_gbps_per_min": "drift Gbps/min", "spread_gbps": "spread Gbps",
                  "rate_achieved": "started /s", "due_ms_p99": "p99 from due ms", "service_ms_p99": "service p99 ms",
                  "store_gbps": "store Gbps", "other_gbps": "other Gbps", "ops_per_s": "requests/s",
                  "latency_ms_p50": "latency p50 ms", "latency_ms_p99": "latency p99 ms", "throttled_pct": "503 %",
                  "gbps_vs_none": "Gbps/none", "cpu_vs_none": "CPU/none", "s3_codes": "S3 codes"}
# The common result a measure is read beside, and its header: shown just before the measure, not again after it.
BESIDE = {"gbps_vs_none": ("write_acknowledged_gbps", SHOWN_RESULTS["write_acknowledged_gbps"]),
          "cpu_vs_none": ("client_cpu_s_per_gib", "CPU-s/GiB"), "s3_codes": ("error_rate", SHOWN_RESULTS["error_rate"])}
# Every header a table may show, measures and results.
HEADERS = tuple(dict.fromkeys([*SHOWN_MEASURES.values(), *(h for _, h in BESIDE.values()), *SHOWN_RESULTS.values()]))
# Every measure a study may add, shown or not: never taken for a grid value.
MEASURES = frozenset(SHOWN_MEASURES) | {
    "first_minute_gbps", "last_minute_gbps", "lost_gbps", "mean_gbps", "errors_per_min", "drift_bin_s",
    "due_ms_p50", "service_ms_p50", "late_start_ms_p99", "sum_gbps", "nic", "nic_link_gbps", "of_link_pct",
    "other_stream"}
NOTE = "why not measured"
SIZES = frozenset({"part_size", "object_size", "range_size"})


def applies(name: str, directions: str) -> bool:
    """Whether a step that did ``directions`` ("read", "write", "read+write") should have figure ``name``."""
    reads, writes = "read" in directions, "write" in directions
    if name in ("read_gbps", "ttfb_ms_p50", "ttfb_ms_p99"):
        return reads
    if name == "steady_gbps":  # counts every byte moved: a read rate only where a step only read
        return reads and not writes
    if name == "write_acknowledged_gbps":
        return writes
    return True


def cell(name: str, results: dict) -> str:
    """One figure as the table and the step line show it: "" where it does not apply to the step, "-" where
    it applies but was not measured (the step's note says why)."""
    if not applies(name, str(results.get("directions") or "")):
        return ""
    value = results.get(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, str):  # a measure in words (a step's S3 codes): "" where there is nothing to say
        return value
    if name == "requests":
        return f"{int(value)}"
    return f"{value * 100 if name == 'error_rate' else value:.3f}"


def _columns(rows: list[dict]) -> list[tuple[str, str]]:
    """The (result, header) pairs shown for these rows: the study's measures they have (each after the common
    result it is read beside, if any; a measure in words only where one of them says something), then the
    other common results that apply to at least one of them."""
    shown = []
    for name, header in SHOWN_MEASURES.items():
        if not any(name in r for r in rows) or all(isinstance(r.get(name), str) and not r[name] for r in rows):
            continue
        if name in BESIDE:
            shown.append(BESIDE[name])
        shown.append((name, header))
    return shown + [(name, header) for name, header in SHOWN_RESULTS.items()
                    if name not in dict(shown) and any(applies(name, str(r.get("directions") or "")) for r in rows)]


def row_text(results: dict) -> str:
    """A step's line: its row of the table, header by header, then why a figure is missing."""
    parts = [f"{header} {cell(name, results)}" for name, header in _columns([results]) if cell(name, results)]
    note = results.get("note") or ""
    return ", ".join(parts) + (f" — {note}" if note else "")


def grid_columns(steps) -> list[str]:
    from objperf.studies.grids import STEP_RESULTS

    return [c for c in steps.columns
            if c not in STEP_RESULTS and c not in MEASURES and c not in ("step", "rep", "tags")]


def step_table(steps, width: int = 100, grid: Iterable[str] | None = None) -> str:
    """The steps as a terminal shows them: the grid's values, the study's measures, then the results that
    apply to its steps (a direction a study did not use is left out), units in the headers, and on each row
    why a figure is missing; ``width`` columns at most (the right-most results give way first, never the
    grid or the notes; a note too long to fit beside the grid alone runs past ``width``, and no figure gives
    way for it)."""
    from objperf.core.sizes import format_size

    grid = [c for c in steps.columns if c in set(grid)] if grid is not None else grid_columns(steps)
    rows = steps.to_dict("records")
    columns: list[tuple[str, list[str]]] = []
    if "rep" in steps and steps["rep"].nunique() > 1:
        columns.append(("rep", [str(r["rep"] + 1) for r in rows]))
    for name in grid:
        columns.append((name, [format_size(r[name]) if name in SIZES and r[name] == r[name] else str(r[name])
                               for r in rows]))
    fixed = len(columns)
    columns += [(header, [cell(name, r) for r in rows]) for name, header in _columns(rows)]
    notes = [str(r.get("note") or "") for r in rows] if any(r.get("note") for r in rows) else None

    def fits(text: str) -> bool:
        return max(map(len, text.splitlines())) <= width

    notes_fit = notes is not None and fits(_layout(columns[:fixed + 1], notes))
    while not fits(_layout(columns, notes if notes_fit else None)) and len(columns) > fixed + 1:
        columns = columns[:-1]
    return _layout(columns, notes)


def _layout(columns: list[tuple[str, list[str]]], notes: list[str] | None) -> str:
    """Right-aligned columns two spaces apart, the notes left-aligned last."""
    widths = [max(len(header), *(len(v) for v in values)) for header, values in columns]
    lines = ["  ".join(header.rjust(w) for (header, _), w in zip(columns, widths))]
    count = len(columns[0][1]) if columns else 0
    lines += ["  ".join(values[i].rjust(w) for (_, values), w in zip(columns, widths)) for i in range(count)]
    if notes is not None:
        lines = [f"{line}  {note}" for line, note in zip(lines, [NOTE, *notes])]
    return "\n".join(line.rstrip() for line in lines)


def study_summary(steps, planned: int | None, status: str) -> str:
    """What the rows say, counted: "6 steps: 5 measured, 1 measured nothing it set out to (its row says why)"."""
    rows = steps.to_dict("records") if len(steps) else []
    statuses = [str(r.get("status") or "complete") for r in rows]
    measured = sum(1 for r, s in zip(rows, statuses) if s == "complete" and not r.get("note"))
    short = sum(1 for r, s in zip(rows, statuses) if s == "complete" and r.get("note"))
    said = [f"{measured} measured"]
    if short:
        said.append(f"{short} with a figure missing (its row says why)")
    for kind in ("interrupted", "failed"):
        count = statuses.count(kind)
        if count:
            said.append(f"{count} {kind}")
    planned = planned if planned is not None else len(rows)
    if planned > len(rows):
        said.append(f"{planned - len(rows)} not run")
    return f"{planned} step{'s' if planned != 1 else ''}: " + ", ".join(said)

"""The figures of runs compared (``objperf diff``, ``analysis.diff``): one figure per kind holding every run —
their throughput timelines overlaid, each from its own first request's start; their TTFB distributions
overlaid; and what changed from the first run to the last, beside the runs' own noise."""

from __future__ import annotations

import numpy as np
import pandas as pd

from objperf.analysis.stats import throughput_timeline
from objperf.plots.runs import directions_in, first_byte_gets, measured_end_s
from objperf.plots.style import NothingToDraw, add_note, mib_axis, new_axes, step_line

METRIC_WORDS = {
    "gbps": "throughput", "steady_gbps": "steady throughput", "requests_per_s": "requests per second",
    "ttfb_ms_p50": "time to first byte, p50", "ttfb_ms_p90": "time to first byte, p90",
    "ttfb_ms_p99": "time to first byte, p99", "error_rate": "failed share",
    "client_cpu_s_per_gib": "client CPU per GiB",
}
DASHES = {"read": "-", "write": "--"}
VERDICT_COLOURS = {True: "C3", False: "C7", None: "C0"}


def timelines_overlaid(runs: dict[str, pd.DataFrame], *, ax=None, bin_s: float = 1.0, title: str | None = None):
    """Each run's throughput per ``bin_s`` (Gbps, MiB/s on the right) from its own first request's start, one
    colour a run; a run of reads and writes a line per direction (reads solid, writes dashed: bytes the store
    acknowledged).  Bins past a run's end that moved nothing (its teardown) are left out."""
    if not any(len(df) for df in runs.values()):
        raise NothingToDraw("none of the runs made a request: there is no throughput over time to draw")
    ax = new_axes(ax)
    for i, (label, df) in enumerate(runs.items()):
        if not len(df):
            continue
        held = directions_in(df)
        by = "direction" if len(held) > 1 else None
        timeline = throughput_timeline(df, bin_s=bin_s, by=by)
        end = measured_end_s(df) or 0.0
        peak = float(timeline["gbps"].max()) if len(timeline) else 0.0
        moved = timeline[timeline["gbps"] > peak * 1e-9]
        limit = max(end, float(moved["t_s"].max()) + bin_s if len(moved) else 0.0)
        if limit > 0:
            timeline = timeline[timeline["t_s"] < limit]
        if by:
            for direction, part in timeline.groupby(by, sort=True):
                step_line(ax, part, bin_s, color=f"C{i % 10}", linestyle=DASHES.get(direction, "-"),
                       label=f"{label}: {direction}{' (acknowledged)' if direction == 'write' else ''}")
        else:
            words = " (writes, acknowledged)" if held == ["write"] else ""
            step_line(ax, timeline, bin_s, color=f"C{i % 10}", label=f"{label}{words}")
    ax.legend(loc="best", fontsize=8)
    ax.set(xlabel="time since each run's first request started (s)", ylabel="throughput (Gbps)", ylim=(0, None),
           xlim=(0, None), title=title or "Throughput over time")
    mib_axis(ax)
    add_note(ax, f"{len(runs)} runs, {sum(len(df) for df in runs.values()):,} requests; reads count the bytes "
              "received, writes the bytes the store acknowledged")
    return ax


def ttfb_overlaid(runs: dict[str, pd.DataFrame], *, ax=None, title: str | None = None):
    """Each run's cumulative distribution of time to first byte (ms) over its GETs that had one, its p50 and
    p99 in its label.  Runs with no such GET (writes) are left out, and said so; none at all raises
    ``NothingToDraw``."""
    gets = {label: first_byte_gets(df) for label, df in runs.items()}
    drawn = {label: ok for label, ok in gets.items() if len(ok)}
    if not drawn:
        raise NothingToDraw("no run had a GET with a first byte: there is no time to first byte to compare")
    ax = new_axes(ax)
    for i, (label, ok) in enumerate(gets.items()):
        if not len(ok):
            continue
        values = np.sort(ok["ttfb_ms"].to_numpy(float))
        p50, p99 = np.percentile(values, [50, 99])
        shares = np.arange(1, len(values) + 1) / len(values)
        ax.step(values, shares, where="post", color=f"C{i % 10}",
                label=f"{label}: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    ax.legend(loc="lower right", fontsize=8)
    ax.set(xlabel="time to first byte (ms)", ylabel="share of GETs, at or below", ylim=(0, 1.02),
           title=title or "Time to first byte")
    left_out = [label for label in runs if label not in drawn]
    add_note(ax, f"{sum(len(ok) for ok in drawn.values()):,} GETs with a first byte in {len(drawn)} runs"
              + (f"; no GET in {', '.join(left_out)}" if left_out else ""))
    return ax


def changes_beyond_noise(table: pd.DataFrame, *, ax=None, title: str | None = None):
    """What changed from the first run to the last (``analysis.diff.compare``'s ``change_pct``), a bar per
    metric (and group), in percent; throughput's noise band (the runs' own per-second spread) drawn around
    zero behind its bars, each bar coloured by its verdict: beyond the noise, within it, or no noise measured
    for that metric."""
    runs = table.attrs.get("runs", [])
    data = table[table["metric"].isin(list(METRIC_WORDS))]
    if runs:  # a metric no run measured (TTFB of writes), or 0 in every run (the throughput of aborts), is left out
        values = data[runs].apply(pd.to_numeric, errors="coerce")
        said = values.notna() & ((values != 0) | (data["metric"] == "error_rate").to_numpy()[:, None])
        data = data[said.any(axis=1)]
    data = data.reset_index(drop=True)
    if not len(data):
        raise NothingToDraw("the comparison holds no metric to draw")
    groups = data["group"].astype(str).unique()
    names = [METRIC_WORDS[m] if len(groups) == 1 else f"{g}: {METRIC_WORDS[m]}"
             for g, m in zip(data["group"].astype(str), data["metric"])]
    ax = new_axes(ax, size=(8, max(3.5, 0.38 * len(data) + 1.5)))
    y = np.arange(len(data))[::-1]
    change = data["change_pct"].astype(float).to_numpy()
    noise = data["noise_pct"].astype(float).to_numpy() if "noise_pct" in data else np.full(len(data), np.nan)
    banded = False
    for at, band in zip(y, noise):
        if band == band:
            ax.barh(at, 2 * band, left=-band, height=0.9, color="grey", alpha=0.2,
                    label=None if banded else "noise: the runs' own per-second spread")
            banded = True
    verdicts = [v if isinstance(v, bool) else None for v in data["beyond_noise"]]
    said = set()
    for at, value, verdict, (_, row) in zip(y, change, verdicts, data.iterrows()):
        if value != value:
            ax.text(0, at, "  " + _no_change(row, runs), va="center", fontsize=8, color="dimgrey")
            continue
        words = {True: "beyond the noise", False: "within the noise"}.get(verdict, "no noise measured")
        ax.barh(at, value, height=0.5, color=VERDICT_COLOURS[verdict], label=None if words in said else words)
        said.add(words)
        ax.annotate(f"{value:+.1f} %", (value, at), xytext=(4 if value >= 0 else -4, 0), textcoords="offset points",
                    ha="left" if value >= 0 else "right", va="center", fontsize=8)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(y, names)
    reach = np.nanmax(np.abs(np.r_[change, noise, 1.0]))
    ax.set_xlim(-reach * 1.6, reach * 1.6)  # room for the labels beside the bars
    against = f"{runs[-1]} against {runs[0]}" if len(runs) >= 2 else "the last run against the first"
    ax.set(xlabel=f"change, {against} (%)", ylabel="", title=title or "What changed, beyond the noise")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    between = f" ({len(runs) - 2} between them: see the table)" if len(runs) > 2 else ""
    add_note(ax, f"the last of {len(runs)} runs against the first{between}")
    return ax


def _no_change(row: pd.Series, runs: list[str]) -> str:
    """Why a metric has no change in percent: not measured in one of the runs, or 0 in the first."""
    if len(runs) < 2:
        return "not compared"
    first, last = (pd.to_numeric(row.get(run), errors="coerce") for run in (runs[0], runs[-1]))
    if first != first or last != last:
        return f"not measured in {runs[0] if first != first else runs[-1]}"
    return "0 in both" if last == 0 else f"from 0 to {last:.3g}"


def diff_figures(runs: dict[str, pd.DataFrame], table: pd.DataFrame) -> list[tuple[str, object]]:
    """(file name, Axes) of each figure of runs compared that has something to draw: throughput.png,
    ttfb.png (where a run had GETs), changes.png."""
    drawn = [("throughput.png", timelines_overlaid(runs))]
    if any(len(first_byte_gets(df)) for df in runs.values()):
        drawn.append(("ttfb.png", ttfb_overlaid(runs)))
    drawn.append(("changes.png", changes_beyond_noise(table)))
    return drawn

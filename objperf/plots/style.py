"""The one style every figure is drawn in: its axes, small print, units and colours."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from objperf.core.errors import UsageError

STYLE = {"axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False}


def new_axes(ax, size=(7, 4)):
    if ax is None:
        with plt.rc_context(STYLE):
            _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


NOTE = "objperf-note"  # the gid of a figure's small print


def add_note(ax, text: str) -> None:
    """What a figure was drawn from (run length, how many requests or steps), in small print under its plot."""
    ax.annotate(text, (1.0, 0.0), xycoords="axes fraction", xytext=(0, -40), textcoords="offset points",
                ha="right", va="top", fontsize=7, color="dimgrey", gid=NOTE)


def run_note(df: pd.DataFrame, *, span_s: float | None = None) -> str:
    """'a 20.0 s run, 1,234 requests' (several runs: 'N runs, …'; a cluster's: 'on N hosts') of rows; ``span_s``
    the run's measured length, else the rows' own, from the first start to the last end."""
    if not len(df) or "t_start" not in df:
        return f"{len(df):,} rows"
    span = span_s if span_s is not None else float((df["t_start"] + df["total_s"]).max() - df["t_start"].min())
    runs = df["run_id"].nunique() if "run_id" in df else 1
    hosts = df["host"].nunique() if "host" in df else 1
    if hosts > 1 and runs == hosts:  # a cluster run: each host's part has its own run id
        return f"a {span:.1f} s run on {hosts} hosts, {len(df):,} requests"
    return (f"{runs} runs over {span:.1f} s" if runs > 1 else f"a {span:.1f} s run") + f", {len(df):,} requests"


def steps_note(steps: pd.DataFrame) -> str:
    """'6 steps, 1,234 requests' of a study's steps."""
    requests = int(steps["requests"].sum()) if "requests" in steps else None
    return f"{len(steps)} steps" + (f", {requests:,} requests" if requests is not None else "")


def log2_x(ax) -> None:
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


class NothingToDraw(UsageError):
    """A figure asked of rows that hold nothing it draws (a TTFB distribution of a run with no GET): no
    figure of nothing, and why."""


DIRECTION_LABELS = {"read": "read (bytes received)", "write": "write (acknowledged by the store)"}


DIRECTION_COLOURS = {"read": "C0", "write": "C1"}


MIB_PER_GBPS = 1e9 / 8 / (1 << 20)


def mib_axis(ax) -> None:
    """The same rate in MiB/s on the right: the project's units are Gbps and MiB/s."""
    if not any(getattr(child, "_objperf_mib", False) for child in ax.child_axes):
        right = ax.secondary_yaxis("right", functions=(lambda g: g * MIB_PER_GBPS, lambda m: m / MIB_PER_GBPS))
        right.set_ylabel("throughput (MiB/s)")
        right._objperf_mib = True


def finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and abs(value) != float("inf")


def step_line(ax, timeline: pd.DataFrame, width: float, **line):
    """A timeline as steps, its last bin as wide as the others (a plain step plot ends at its last point)."""
    t, g = timeline["t_s"].to_numpy(float), timeline["gbps"].to_numpy(float)
    if not len(t):
        return None
    return ax.step(np.r_[t, t[-1] + width], np.r_[g, g[-1]], where="post", **line)[0]


BOUND_MARKS = {"max": "≤ ", "min": "≥ ", "exact": ""}

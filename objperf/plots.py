"""Figures from tidy rows: ``f(df, *, ax=None, **kw) -> Axes``.  Statistics come
from ``objperf.analysis``; these functions only draw."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from objperf.analysis import ok_rows, throughput_timeline

STYLE = {"axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False}


def _axes(ax):
    if ax is None:
        with plt.rc_context(STYLE):
            _, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    return ax


def throughput_over_time(df: pd.DataFrame, *, ax=None, bin_s: float = 1.0, hue: str | None = None,
                         title: str | None = None):
    """Gbps per ``bin_s`` seconds across the run (one line per ``hue`` value)."""
    ax = _axes(ax)
    timeline = throughput_timeline(df, bin_s=bin_s, by=hue)
    sns.lineplot(data=timeline, x="t_s", y="gbps", hue=hue, ax=ax, drawstyle="steps-post")
    ax.set(xlabel="time since start (s)", ylabel="throughput (Gbps)", ylim=(0, None),
           title=title or "Throughput over time")
    return ax


def ttfb_distribution(df: pd.DataFrame, *, ax=None, hue: str | None = None, title: str | None = None):
    """Cumulative distribution of time to first byte (ms) over successful requests."""
    ax = _axes(ax)
    ok = df[ok_rows(df)].assign(ttfb_ms=lambda d: d["ttfb_s"] * 1000)
    sns.ecdfplot(data=ok, x="ttfb_ms", hue=hue, ax=ax)
    ax.set(xlabel="time to first byte (ms)", ylabel="share of requests", title=title or "Time to first byte")
    return ax

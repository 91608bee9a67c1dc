"""Figures of a run's rows: throughput over time, time to first byte, a sustained run's timeline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from objperf.analysis.stats import (
    TREND_MIN_BINS,
    cut_rows,
    direction_of,
    drift_line,
    first_byte_rows,
    measured_bytes,
    ok_rows,
    throughput_timeline,
)
from objperf.core.sizes import format_size
from objperf.plots.style import (
    DIRECTION_COLOURS,
    DIRECTION_LABELS,
    NothingToDraw,
    add_note,
    finite,
    mib_axis,
    new_axes,
    run_note,
    step_line,
)


def directions_in(df: pd.DataFrame) -> list[str]:
    """The directions (read, write) the rows hold, in that order."""
    if "op" not in df or not len(df):
        return []
    held = set(direction_of(df).dropna())
    return [name for name in ("read", "write") if name in held]


def timeline_title(df: pd.DataFrame) -> str:
    """'Read throughput over time', 'Write throughput over time (acknowledged)', or 'Read and write ...'."""
    held = directions_in(df)
    if held == ["read", "write"]:
        return "Read and write throughput over time"
    if held == ["write"]:
        return "Write throughput over time (acknowledged by the store)"
    if held == ["read"]:
        return "Read throughput over time"
    return "Throughput over time"


def measured_end_s(df: pd.DataFrame, manifest: dict | None = None) -> float | None:
    """When the run ended as it measured it, in seconds from its first request's start: its manifest's (or
    ``df.attrs``') summary wall time; a cluster's common window, from the first host's start.  None when the
    rows are not the whole run the manifest tells of (a selection of it), or no manifest says."""
    manifest = manifest if manifest is not None else df.attrs.get("manifest")
    summary = manifest.get("summary") if isinstance(manifest, dict) else None
    rows = manifest.get("rows") if isinstance(manifest, dict) else None
    whole = not isinstance(rows, int) or isinstance(rows, bool) or rows == len(df)
    if not isinstance(summary, dict) or not whole or not finite(summary.get("wall_s")) or summary["wall_s"] <= 0:
        return None
    spread = summary.get("start_spread_s")
    return float(summary["wall_s"]) + (float(spread) if finite(spread) and spread > 0 else 0.0)


def run_end_s(df: pd.DataFrame, manifest: dict | None = None) -> float | None:
    """``measured_end_s``, else the end of the rows' last request that moved a body (its cut requests end
    there); None for rows that say nothing of it."""
    measured = measured_end_s(df, manifest)
    if measured is not None or not len(df) or "t_start" not in df:
        return measured
    moved = direction_of(df).notna().to_numpy() if "op" in df else np.ones(len(df), bool)
    if not moved.any():
        return None
    ends = (df["t_start"] + df["total_s"]).to_numpy(float)[moved]
    return float(np.nanmax(ends) - df["t_start"].min())


def _unacknowledged_note(df: pd.DataFrame) -> str:
    """What was sent in writes the store did not acknowledge, which the timeline leaves out ('' if none)."""
    if "op" not in df or not len(df):
        return ""
    writes = (direction_of(df) == "write").to_numpy()
    if not writes.any():
        return ""
    sent = float(df["bytes"].to_numpy(float)[writes].sum())
    unacknowledged = sent - float(measured_bytes(df)[writes].sum())
    if unacknowledged <= 0:
        return ""
    return f"; {format_size(unacknowledged)} sent in writes the store did not acknowledge (cut or refused): not counted"


def throughput_over_time(df: pd.DataFrame, *, ax=None, bin_s: float = 1.0, hue: str | None = None,
                         title: str | None = None, aligned: bool = False, end_s: float | None = None):
    """Gbps (and MiB/s, on the right) per ``bin_s`` seconds from the run's first request's start: bytes received
    for reads, bytes the store acknowledged for writes.  A run of reads and writes draws a line per direction;
    ``hue`` a line per value of that column; ``aligned``: each from its own start, for runs made one after
    another.  The run's end is marked (``end_s``, else ``run_end_s``: its manifest's measured wall time), with
    the requests it cut in flight, so the last, partial bin's drop is explained."""
    ax = new_axes(ax)
    per_interval = "t_start" not in df.columns and {"t_s", "gbps"} <= set(df.columns)  # an imported timeline
    if per_interval and hue is None and "phase" in df and df["phase"].nunique() > 1:
        hue = "phase"  # an elbencho timeline's phases each start at 0 s: drawn apart, never mixed into one line
    if not per_interval and hue is None and len(directions_in(df)) > 1:
        hue = "direction"
    timeline = df if per_interval else throughput_timeline(df, bin_s=bin_s, by=hue, aligned=aligned)
    width = bin_s
    if per_interval and len(timeline) > 1:
        steps = np.diff(np.sort(timeline["t_s"].unique()))
        width = float(np.median(steps)) if len(steps) else bin_s
    measured = end_s if end_s is not None else None if aligned or per_interval else measured_end_s(df)
    end = measured if measured is not None or aligned or per_interval else run_end_s(df)
    peak = float(timeline["gbps"].max()) if len(timeline) else 0.0
    moved = timeline[timeline["gbps"] > peak * 1e-9]  # a bin's few bytes of rounding are no throughput
    limit = max(end or 0.0, float(moved["t_s"].max()) + width if len(moved) else 0.0)
    if limit > 0:  # bins past the end that moved nothing: the teardown (aborts, completes), not throughput
        timeline = timeline[timeline["t_s"] < limit]
    if not len(timeline):
        raise NothingToDraw("no request in these rows: there is no throughput over time to draw")
    if hue:
        for value, part in timeline.groupby(hue, observed=True, sort=False):
            step_line(ax, part.sort_values("t_s"), width, label=DIRECTION_LABELS.get(value, str(value))
                   if hue == "direction" else str(value), color=DIRECTION_COLOURS.get(value) if hue == "direction"
                   else None)
    else:
        held = directions_in(df) if not per_interval else []
        step_line(ax, timeline, width, label=DIRECTION_LABELS[held[0]] if len(held) == 1 else None,
               color=DIRECTION_COLOURS.get(held[0]) if len(held) == 1 else None)
    if not peak > 0:
        ax.text(0.5, 0.6, "the store acknowledged no write in this run" if directions_in(df) == ["write"]
                else "no byte moved in this run", transform=ax.transAxes, ha="center", fontsize=9)
    cut = int(cut_rows(df).sum()) if len(df) and not per_interval else 0
    if end is not None and (cut or measured is not None):  # the rows' own guess only where cut requests mark the end
        said = f"run ended at {end:.1f} s" + (f": {cut:,} request{'s' if cut > 1 else ''} cut in flight" if cut else "")
        ax.axvline(end, color="grey", linestyle=":", label=said)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=8)
    ax.set(xlabel="time since the first request started (s)" if not aligned else
           "time since each run's first request started (s)", ylabel="throughput (Gbps)", ylim=(0, None),
           xlim=(0, None), title=title or (timeline_title(df) if not per_interval else "Throughput over time"))
    mib_axis(ax)
    add_note(ax, f"{len(df):,} intervals" if per_interval else run_note(df, span_s=measured) + _unacknowledged_note(df))
    return ax


def first_byte_gets(df: pd.DataFrame) -> pd.DataFrame:
    """The GETs whose body's first byte arrived, with ``ttfb_ms``: what a TTFB distribution draws."""
    if not len(df) or "op" not in df:
        return df.iloc[:0].assign(ttfb_ms=pd.Series(dtype=float))
    gets = (direction_of(df) == "read").to_numpy()
    return df[first_byte_rows(df).to_numpy() & gets].assign(ttfb_ms=lambda d: d["ttfb_s"] * 1000)


def ttfb_distribution(df: pd.DataFrame, *, ax=None, hue: str | None = None, title: str | None = None,
                      marks: tuple[float, ...] = (50, 90, 99)):
    """Cumulative distribution of time to first byte (ms) over successful GETs, its ``marks`` percentiles
    drawn and named (without ``hue``).  Rows with no GET that had a first byte (a write run) raise
    ``NothingToDraw``: there is no distribution to draw."""
    ok = first_byte_gets(df)
    if not len(ok):
        raise NothingToDraw("no GET had a first byte in these rows (a write run reads nothing): there is no time "
                            "to first byte to draw")
    ax = new_axes(ax)
    sns.ecdfplot(data=ok, x="ttfb_ms", hue=hue, ax=ax)
    if hue is None and len(ok) and marks:
        for q, value in zip(marks, np.percentile(ok["ttfb_ms"], marks)):
            ax.axvline(value, color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"p{q:g} {value:.1f} ms", (value, q / 100), xytext=(4, -10), textcoords="offset points",
                        fontsize=8)
    ax.set(xlabel="time to first byte (ms)", ylabel="share of GETs, at or below", ylim=(0, 1.02),
           title=title or "Time to first byte")
    add_note(ax, f"{len(ok):,} GETs with a first byte, of {run_note(df, span_s=measured_end_s(df))}")
    return ax


def sketch_distribution(sketch, *, ax=None, title: str | None = None, xlabel: str = "time to first byte (ms)",
                        marks: tuple[float, ...] = (50, 90, 99)):
    """The cumulative distribution a latency sketch holds (``analysis.sketch``: rows analysed where they lie),
    each bucket at its representative value, within the sketch's relative accuracy; ``marks`` percentiles
    drawn and named."""
    if not sketch.count:
        raise NothingToDraw("the sketch holds no value: there is no distribution to draw")
    ax = new_axes(ax)
    values, shares = sketch.cdf()
    ax.step(values, shares, where="post")
    if len(values) and marks:
        for q, value in zip(marks, sketch.percentiles(list(marks))):
            ax.axvline(value, color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"p{q:g} {value:.1f} ms", (value, q / 100), xytext=(4, -10), textcoords="offset points",
                        fontsize=8)
    ax.set(xlabel=xlabel, ylabel="share of requests, at or below", ylim=(0, 1.02), title=title or "Time to first byte")
    add_note(ax, f"{sketch.count:,} values in a sketch, each bucket within {sketch.relative_accuracy:.1%} of its "
             "values")
    return ax


def sustained_timeline(df: pd.DataFrame, *, ax=None, bin_s: float = 1.0, title: str | None = None,
                       published_gbps: float | None = None, published_label: str = "published (R2)"):
    """Throughput per second over a long run, with its linear trend (the drift) when the run is long enough to
    have one; ``published_gbps`` draws a published sustained rate on the same axes."""
    ax = throughput_over_time(df, ax=ax, bin_s=bin_s, title=title or "Sustained reads")
    if published_gbps is not None:
        ax.axhline(published_gbps, color="grey", linestyle=":", label=f"{published_label}: {published_gbps:g} Gbps")
        ax.set_ylim(0, max(ax.get_ylim()[1], published_gbps * 1.1))
    inner, slope, intercept = drift_line(df, bin_s=bin_s)
    if slope == slope:  # not NaN: the run is long enough to have a trend
        ax.plot(inner["t_s"], slope * inner["t_s"] + intercept, "--", color="C3",
                label=f"drift {slope * 60:+.2f} Gbps/min")
    else:
        ax.text(0.02, 0.04, f"no trend drawn: {len(inner) * bin_s:g} s of full bins, a trend needs "
                            f"{TREND_MIN_BINS * bin_s:g} s", transform=ax.transAxes, fontsize=8)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=8)
    return ax


def sized_requests(df: pd.DataFrame) -> pd.DataFrame:
    """The requests that moved a body and succeeded (GETs, PUTs, parts), with ``size`` (their object's size
    group, ``analysis.saved.size_groups``), ``direction`` and ``latency_ms``: what ``latency_by_size`` draws."""
    from objperf.analysis.saved import size_groups

    if not len(df) or "object_size" not in df or "op" not in df:
        return pd.DataFrame(columns=["size", "direction", "latency_ms"])
    direction = direction_of(df)
    moved = (direction.notna() & ok_rows(df)).to_numpy()
    rows = df[moved]
    return pd.DataFrame({"size": size_groups(rows["object_size"]), "direction": direction[moved].to_numpy(),
                         "latency_ms": rows["total_s"].to_numpy(dtype=np.float64) * 1000}, index=rows.index)


def latency_by_size(df: pd.DataFrame, *, ax=None, title: str | None = None):
    """Each request's whole time (ms, log scale) by its object's size, a box per size group and direction (as
    ``objperf analyze --by size`` groups them; a multipart upload's parts go with their object's size).  Rows
    of one object size, or none known, raise ``NothingToDraw``."""
    data = sized_requests(df)
    data = data[data["size"] != "unknown"] if len(data) else data
    if not len(data) or data["size"].nunique() < 2:
        raise NothingToDraw("these requests' objects are of one size (or of none known): there is nothing to "
                            "draw by size")
    data = data.assign(size=data["size"].cat.remove_unused_categories(),
                       direction=data["direction"].map(DIRECTION_LABELS))
    ax = new_axes(ax, size=(max(7, 0.55 * data["size"].nunique() + 2), 4))
    palette = {DIRECTION_LABELS[name]: colour for name, colour in DIRECTION_COLOURS.items()}
    sns.boxplot(data=data, x="size", y="latency_ms", hue="direction", palette=palette, log_scale=True,
                showfliers=False, ax=ax)
    ax.set(xlabel="object size", ylabel="request time (ms)", title=title or "Request time by object size")
    if data["size"].nunique() > 6:
        ax.tick_params(axis="x", labelrotation=45)
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    fewest = int(data["size"].value_counts().min())
    add_note(ax, f"{len(data):,} requests that moved a body, {data['size'].nunique()} sizes, at least {fewest:,} "
             "each; boxes: quartiles, whiskers: 1.5 IQR")
    return ax

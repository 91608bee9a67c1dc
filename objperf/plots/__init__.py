"""Figures from tidy data: ``f(df, *, ax=None, **kw) -> Axes``.  Statistics come
from ``objperf.analysis`` (or a study's ``steps.parquet``); these functions
only draw, in one style, with units on every axis."""

from __future__ import annotations

from objperf.core.extras import require

require("matplotlib", "drawing figures")
require("seaborn", "drawing figures")

import matplotlib.pyplot as plt  # noqa: E402 - after the check that says which extra is missing
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from objperf.analysis.stats import (  # noqa: E402
    TREND_MIN_BINS,
    cut_rows,
    direction_of,
    drift_line,
    first_byte_rows,
    measured_bytes,
    throughput_timeline,
)
from objperf.core.errors import UsageError  # noqa: E402

STYLE = {"axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False}
SIZES = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]


def _axes(ax, size=(7, 4)):
    if ax is None:
        with plt.rc_context(STYLE):
            _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


NOTE = "objperf-note"  # the gid of a figure's small print


def _note(ax, text: str) -> None:
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


def _log2_x(ax) -> None:
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def size_label(n: float) -> str:
    for factor, unit in SIZES:
        if n >= factor:
            return f"{n / factor:g} {unit}"
    return f"{int(n)} B"


class NothingToDraw(UsageError):
    """A figure asked of rows that hold nothing it draws (a TTFB distribution of a run with no GET): no
    figure of nothing, and why."""


DIRECTION_LABELS = {"read": "read (bytes received)", "write": "write (acknowledged by the store)"}
DIRECTION_COLOURS = {"read": "C0", "write": "C1"}
MIB_PER_GBPS = 1e9 / 8 / (1 << 20)


def _mib_axis(ax) -> None:
    """The same rate in MiB/s on the right: the project's units are Gbps and MiB/s."""
    if not any(getattr(child, "_objperf_mib", False) for child in ax.child_axes):
        right = ax.secondary_yaxis("right", functions=(lambda g: g * MIB_PER_GBPS, lambda m: m / MIB_PER_GBPS))
        right.set_ylabel("throughput (MiB/s)")
        right._objperf_mib = True


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
    if not isinstance(summary, dict) or not whole or not _finite(summary.get("wall_s")) or summary["wall_s"] <= 0:
        return None
    spread = summary.get("start_spread_s")
    return float(summary["wall_s"]) + (float(spread) if _finite(spread) and spread > 0 else 0.0)


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


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and abs(value) != float("inf")


def _steps(ax, timeline: pd.DataFrame, width: float, **line):
    """A timeline as steps, its last bin as wide as the others (a plain step plot ends at its last point)."""
    t, g = timeline["t_s"].to_numpy(float), timeline["gbps"].to_numpy(float)
    if not len(t):
        return None
    return ax.step(np.r_[t, t[-1] + width], np.r_[g, g[-1]], where="post", **line)[0]


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
    return f"; {size_label(unacknowledged)} sent in writes the store did not acknowledge (cut or refused): not counted"


def throughput_over_time(df: pd.DataFrame, *, ax=None, bin_s: float = 1.0, hue: str | None = None,
                         title: str | None = None, aligned: bool = False, end_s: float | None = None):
    """Gbps (and MiB/s, on the right) per ``bin_s`` seconds from the run's first request's start: bytes received
    for reads, bytes the store acknowledged for writes.  A run of reads and writes draws a line per direction;
    ``hue`` a line per value of that column; ``aligned``: each from its own start, for runs made one after
    another.  The run's end is marked (``end_s``, else ``run_end_s``: its manifest's measured wall time), with
    the requests it cut in flight, so the last, partial bin's drop is explained."""
    ax = _axes(ax)
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
            _steps(ax, part.sort_values("t_s"), width, label=DIRECTION_LABELS.get(value, str(value))
                   if hue == "direction" else str(value), color=DIRECTION_COLOURS.get(value) if hue == "direction"
                   else None)
    else:
        held = directions_in(df) if not per_interval else []
        _steps(ax, timeline, width, label=DIRECTION_LABELS[held[0]] if len(held) == 1 else None,
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
    _mib_axis(ax)
    _note(ax, f"{len(df):,} intervals" if per_interval else run_note(df, span_s=measured) + _unacknowledged_note(df))
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
    ax = _axes(ax)
    sns.ecdfplot(data=ok, x="ttfb_ms", hue=hue, ax=ax)
    if hue is None and len(ok) and marks:
        for q, value in zip(marks, np.percentile(ok["ttfb_ms"], marks)):
            ax.axvline(value, color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"p{q:g} {value:.1f} ms", (value, q / 100), xytext=(4, -10), textcoords="offset points",
                        fontsize=8)
    ax.set(xlabel="time to first byte (ms)", ylabel="share of GETs, at or below", ylim=(0, 1.02),
           title=title or "Time to first byte")
    _note(ax, f"{len(ok):,} GETs with a first byte, of {run_note(df, span_s=measured_end_s(df))}")
    return ax


def sketch_distribution(sketch, *, ax=None, title: str | None = None, xlabel: str = "time to first byte (ms)",
                        marks: tuple[float, ...] = (50, 90, 99)):
    """The cumulative distribution a latency sketch holds (``analysis.sketch``: rows analysed where they lie),
    each bucket at its representative value, within the sketch's relative accuracy; ``marks`` percentiles
    drawn and named."""
    if not sketch.count:
        raise NothingToDraw("the sketch holds no value: there is no distribution to draw")
    ax = _axes(ax)
    values, shares = sketch.cdf()
    ax.step(values, shares, where="post")
    if len(values) and marks:
        for q, value in zip(marks, sketch.percentiles(list(marks))):
            ax.axvline(value, color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"p{q:g} {value:.1f} ms", (value, q / 100), xytext=(4, -10), textcoords="offset points",
                        fontsize=8)
    ax.set(xlabel=xlabel, ylabel="share of requests, at or below", ylim=(0, 1.02), title=title or "Time to first byte")
    _note(ax, f"{sketch.count:,} values in a sketch, each bucket within {sketch.relative_accuracy:.1%} of its values")
    return ax


def throughput_against_concurrency(steps: pd.DataFrame, *, ax=None, x: str = "concurrency", y: str = "steady_gbps",
                      hue: str | None = None, title: str | None = None, log_x: bool = True):
    """Throughput against concurrency from a study's steps (one line per ``hue``, e.g. part size).  An imported
    elbencho phases table of several operations (write, read) draws a line per operation, never one mixing
    them."""
    ax = _axes(ax)
    data = steps.copy()
    if hue is None and "operation" in data and data["operation"].nunique() > 1:
        hue = "operation"
    if hue == "part_size":
        data[hue] = data[hue].map(size_label)
    sns.lineplot(data=data, x=x, y=y, hue=hue, marker="o", ax=ax, errorbar=("pi", 100))
    if log_x:
        _log2_x(ax)
    ax.set(xlabel=f"{x.replace('_', ' ')} (requests in flight)" if x == "concurrency" else x.replace("_", " "),
           ylabel="throughput (Gbps)", ylim=(0, None), title=title or "Throughput against concurrency")
    if hue:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title=hue.replace("_", " "))
    _note(ax, steps_note(steps))
    return ax


def part_size_curves(steps: pd.DataFrame, *, ax=None, title: str | None = None):
    """Write throughput against concurrency, one line per part size: the bytes the store acknowledged (parts
    answered 2xx), never those sent.  A step in which no part was acknowledged (too short for one) is not
    drawn, and the figure says how many there were."""
    acknowledged = steps.dropna(subset=["write_acknowledged_gbps"])
    ax = throughput_against_concurrency(acknowledged, ax=ax, hue="part_size", y="write_acknowledged_gbps",
                                        title=title or "Write throughput by part size (acknowledged)")
    missing = len(steps) - len(acknowledged)
    if missing:
        ax.text(0.02, 0.96, f"{missing} step(s) acknowledged no part (too short for one): not drawn",
                transform=ax.transAxes, fontsize=8, va="top")
    return ax


BOUND_MARKS = {"max": "≤ ", "min": "≥ ", "exact": ""}


def grouped_bars(steps: pd.DataFrame, *, ax=None, x: str, y: str = "steady_gbps", hue: str | None = None,
                 ylabel: str = "throughput (Gbps)", title: str | None = None, bound: str | None = None):
    """Bars of ``y`` per ``x`` (and ``hue``): IPv4/IPv6, key and bucket fan-out, mixed, load generators.
    ``bound`` names a column saying which values are published bounds (``max``: "under 19 Gbps", ``min``: "past
    50 Gbps") rather than figures: those bars are hatched and pale, their labels read "≤ 19" or "≥ 50"."""
    ax = _axes(ax)
    order = list(dict.fromkeys(steps[x]))
    hue_order = list(dict.fromkeys(steps[hue])) if hue else None
    sns.barplot(data=steps, x=x, y=y, hue=hue, order=order, hue_order=hue_order, ax=ax, errorbar=("pi", 100))
    ax.set(xlabel=x.replace("_", " "), ylabel=ylabel,
           title=title or f"{ylabel.split(' (')[0].capitalize()} by {x.replace('_', ' ')}")
    kind_of: dict = {}
    if bound:
        for row in steps.itertuples(index=False):
            kind_of[(getattr(row, x), getattr(row, hue) if hue else None)] = getattr(row, bound)
    # seaborn draws one container per hue level, in hue_order, and leaves out the bars of missing (x, hue) pairs:
    # a bar's category is where it stands, not its place in the container
    for level, container in zip(hue_order or [None], ax.containers):
        kinds = [kind_of.get((order[min(len(order) - 1, max(0, round(bar.get_x() + bar.get_width() / 2)))], level),
                             "exact") for bar in container]
        for bar, kind in zip(container, kinds):
            if kind in ("max", "min"):
                bar.set_hatch("//")
                bar.set_alpha(0.45)
        labels = ["" if bar.get_height() != bar.get_height() else f"{BOUND_MARKS.get(kind, '')}{bar.get_height():.2f}"
                  for bar, kind in zip(container, kinds)]
        ax.bar_label(container, labels=labels, fontsize=8)
    if hue:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title=hue.replace("_", " "))
    if "requests" in steps and steps["requests"].notna().any():
        _note(ax, steps_note(steps.dropna(subset=["requests"])))
    return ax


def beside_published(local: pd.DataFrame, published: pd.DataFrame, *, x: str, y: str = "gbps",
                     local_label: str = "local", published_label: str = "published (R2)") -> pd.DataFrame:
    """One tidy table of local figures and the published ones they answer to, for ``grouped_bars(...,
    hue="source", bound="bound")``: both on the same axes, a published bound drawn as a bound.  ``local`` and
    ``published`` each have ``x`` and ``y``; ``published`` its ``bound`` (``exact``, ``max``, ``min``)."""
    mine = local[[x, y]].assign(source=local_label, bound="exact")
    theirs = published[[x, y]].assign(source=published_label,
                                      bound=published["bound"] if "bound" in published else "exact")
    return pd.concat([mine, theirs], ignore_index=True)


def ttfb_against_size(steps: pd.DataFrame, *, ax=None, reference_ms: float | None = None,
                      title: str | None = None):
    """TTFB p50 (ms, left axis) and throughput (Gbps, right axis) against object size; ``reference_ms``
    draws a published floor for comparison."""
    ax = _axes(ax)
    data = steps.sort_values("object_size")
    lines = ax.plot(data["object_size"], data["ttfb_ms_p50"], "o-", color="C0", label="TTFB p50 (ms)")
    if reference_ms is not None:
        label = f"published floor {reference_ms:g} ms"
        lines.append(ax.axhline(reference_ms, color="grey", linestyle=":", label=label))
    ax.set_xscale("log", base=2)
    top = max(data["ttfb_ms_p50"].max(), reference_ms or 0) * 1.15
    ax.set(xlabel="object size", ylabel="time to first byte p50 (ms)", ylim=(0, top),
           title=title or "TTFB and throughput against object size")
    right = ax.twinx()
    lines += right.plot(data["object_size"], data["steady_gbps"], "s-", color="C1", label="throughput (Gbps)")
    right.set(ylabel="throughput (Gbps)", ylim=(0, None))
    ticks = list(data["object_size"].unique())
    ax.set_xticks(ticks, [size_label(t) for t in ticks], rotation=30)
    ax.legend(handles=lines, loc="upper left")
    _note(ax, steps_note(data))
    return ax


def hot_object_errors(steps: pd.DataFrame, *, ax=None, threshold: float | None = None, title: str | None = None):
    """Failed requests (%) against concurrency on one hot object (one key, no replica); ``threshold`` marks a
    published throttling point."""
    ax = _axes(ax)
    single = steps[steps["variant"] == "single"] if "variant" in steps else steps
    data = single.assign(error_pct=single["error_rate"] * 100)
    sns.lineplot(data=data, x="concurrency", y="error_pct", marker="o", ax=ax, label="local, one key")
    if threshold is not None:
        ax.axvline(threshold, color="grey", linestyle=":", label=f"published: 503s above {threshold:g}")
    _log2_x(ax)
    ax.legend(loc="upper left")
    ax.set(xlabel="concurrent requests on one range", ylabel="failed requests (%)", ylim=(0, 100),
           title=title or "Hot object: failed requests against concurrency")
    _note(ax, steps_note(single))
    return ax


def replica_cure(steps: pd.DataFrame, *, ax=None, title: str | None = None):
    """Failed requests (%) against the number of replicas the hot load is spread over, at the study's highest
    concurrency: the curve of the cure, the point where fewer than 1 % fail marked."""
    from objperf.analysis.stats import CURED_SHARE, replicas_that_cure

    ax = _axes(ax)
    tried = steps[steps["variant"].isin(["single", "replicas"])]
    hottest = tried[tried["variant"] == "replicas"]["concurrency"].max()
    data = tried[tried["concurrency"] == hottest].assign(error_pct=lambda d: d["error_rate"] * 100)
    sns.lineplot(data=data, x="replicas", y="error_pct", marker="o", ax=ax, label=f"local, {hottest:g} in flight")
    ax.axhline(CURED_SHARE * 100, color="grey", linestyle=":", label=f"{CURED_SHARE:.0%} failed")
    cure = replicas_that_cure(steps)
    if cure is not None:
        ax.annotate(f"cured at {cure} replicas", (cure, float(data[data["replicas"] == cure]["error_pct"].mean())),
                    xytext=(0, 25), textcoords="offset points", ha="center", arrowprops={"arrowstyle": "->"})
    else:
        ax.text(0.98, 0.9, f"not cured by {int(data['replicas'].max())} replicas", transform=ax.transAxes,
                ha="right")
    _log2_x(ax)
    ax.legend(loc="upper right")
    ax.set(xlabel="replicas the hot object is spread over", ylabel="failed requests (%)", ylim=(0, 100),
           title=title or "Hot object: the cure by replicas")
    _note(ax, steps_note(data))
    return ax


def rate_saturation(steps: pd.DataFrame, *, ax=None, title: str | None = None):
    """A rate sweep (``objperf study rate-sweep``): p99 latency from when each request was due, and the service
    time alone, against the rate asked; the saturation point (``stats.saturation_rate``) marked with why."""
    from objperf.analysis.stats import saturation_rate

    ax = _axes(ax)
    data = steps.groupby("rate")[["due_ms_p99", "service_ms_p99", "rate_achieved"]].mean().reset_index()
    ax.plot(data["rate"], data["due_ms_p99"], marker="o", label="p99 from when each request was due")
    ax.plot(data["rate"], data["service_ms_p99"], marker="s", linestyle="--", label="p99 service time alone")
    found = saturation_rate(steps)
    if found is not None:
        ax.axvline(found[0], color="firebrick", linestyle=":", linewidth=1.5,
                   label=f"saturated at {found[0]:g}/s: {found[1]}")
    else:
        ax.text(0.02, 0.95, f"no saturation up to {data['rate'].max():g}/s", transform=ax.transAxes, va="top")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set(xlabel="requests started a second (asked)", ylabel="latency p99 (ms)",
           title=title or "Fixed-rate load: where the store saturates")
    _note(ax, steps_note(steps))
    return ax


def distance_curves(steps: pd.DataFrame, *, gbps: float | None = None, ax=None, title: str | None = None):
    """A wan study (``objperf.studies.catalog.wan``): throughput against concurrency, one line per added round
    trip; ``gbps`` marks a target and says, per distance, how many requests in flight reached it."""
    from objperf.analysis.stats import concurrency_for

    data = steps.assign(**{"added round trip": (2 * steps["delay_ms"]).map(lambda ms: f"+{ms:g} ms")})
    ax = throughput_against_concurrency(data, ax=ax, hue="added round trip",
                                        title=title or "Throughput against concurrency, by added distance")
    if gbps is not None:
        ax.axhline(gbps, color="grey", linestyle=":", linewidth=1)
        needed = concurrency_for(steps, gbps)
        text = "; ".join(f"+{2 * d:g} ms: {'more than tried' if c != c else f'{c:g} in flight'}"
                         for d, c in needed.items())
        ax.annotate(f"to reach {gbps:g} Gbps — {text}", (0.02, 0.96), xycoords="axes fraction", fontsize=8,
                    va="top")
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


def timing_runs(runs: pd.DataFrame, *, ax=None, title: str | None = None):
    """Seconds per run for each client, provider and operation (the S3-vs-R2 article's tables).  The figure
    widens with the number of client and operation pairs, and their labels slant, so none overlap."""
    data = runs.assign(series=runs["client"] + " " + runs["operation"])
    ax = _axes(ax, size=(max(8.0, 0.9 * data["series"].nunique()), 4.5))
    sns.barplot(data=data, x="series", y="seconds", hue="provider", ax=ax, errorbar=("pi", 100))
    sns.stripplot(data=data, x="series", y="seconds", hue="provider", dodge=True, ax=ax, palette="dark:black", size=3,
                  legend=False)
    ax.set(xlabel="", ylabel="time per run (s)", title=title or "100 MiB upload and download, five runs")
    ax.tick_params(axis="x", rotation=35)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    return ax


def cost_per_tib(table: pd.DataFrame, *, ax=None, title: str | None = None):
    """USD per TiB against request size (range or part size), one line per provider
    (``objperf.analysis.cost.cost_per_tib``): where request pricing starts to outweigh egress."""
    ax = _axes(ax)
    data = table.assign(size_mib=table["size"] / (1 << 20))
    # Providers whose lines coincide (no egress fee, the same request price) stay apart by their dashes and
    # markers, and the legend, outside the data, names each.
    sns.lineplot(data=data, x="size_mib", y="usd_per_tib", hue="provider", style="provider", markers=True,
                 dashes=True, ax=ax)
    _log2_x(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title="provider")
    direction = table["direction"].iloc[0] if len(table) else "read"
    ax.set(xlabel=f"{'range' if direction == 'read' else 'part'} size (MiB)", ylabel=f"USD per TiB {direction}",
           ylim=(0, None), title=title or f"Cost per TiB {direction} by request size (list prices: check them)")
    return ax

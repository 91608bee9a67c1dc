"""Figures of a study's steps (one row per step and repetition) and of tables: curves against concurrency,
part size, object size and distance, grouped bars beside the published values, errors, rates and costs."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from objperf.core.sizes import format_size
from objperf.plots.style import (
    BOUND_MARKS,
    add_note,
    log2_x,
    new_axes,
    steps_note,
)


def throughput_against_concurrency(steps: pd.DataFrame, *, ax=None, x: str = "concurrency", y: str = "steady_gbps",
                      hue: str | None = None, title: str | None = None, log_x: bool = True):
    """Throughput against concurrency from a study's steps (one line per ``hue``, e.g. part size).  An imported
    elbencho phases table of several operations (write, read) draws a line per operation, never one mixing
    them."""
    ax = new_axes(ax)
    data = steps.copy()
    if hue is None and "operation" in data and data["operation"].nunique() > 1:
        hue = "operation"
    if hue == "part_size":
        data[hue] = data[hue].map(format_size)
    sns.lineplot(data=data, x=x, y=y, hue=hue, marker="o", ax=ax, errorbar=("pi", 100))
    if log_x:
        log2_x(ax)
    ax.set(xlabel=f"{x.replace('_', ' ')} (requests in flight)" if x == "concurrency" else x.replace("_", " "),
           ylabel="throughput (Gbps)", ylim=(0, None), title=title or "Throughput against concurrency")
    if hue:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title=hue.replace("_", " "))
    add_note(ax, steps_note(steps))
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


def grouped_bars(steps: pd.DataFrame, *, ax=None, x: str, y: str = "steady_gbps", hue: str | None = None,
                 ylabel: str = "throughput (Gbps)", title: str | None = None, bound: str | None = None):
    """Bars of ``y`` per ``x`` (and ``hue``): IPv4/IPv6, key and bucket fan-out, mixed, load generators.
    ``bound`` names a column saying which values are published bounds (``max``: "under 19 Gbps", ``min``: "past
    50 Gbps") rather than figures: those bars are hatched and pale, their labels read "≤ 19" or "≥ 50"."""
    ax = new_axes(ax)
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
        add_note(ax, steps_note(steps.dropna(subset=["requests"])))
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
    ax = new_axes(ax)
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
    ax.set_xticks(ticks, [format_size(t) for t in ticks], rotation=30)
    ax.legend(handles=lines, loc="upper left")
    add_note(ax, steps_note(data))
    return ax


def hot_object_errors(steps: pd.DataFrame, *, ax=None, threshold: float | None = None, title: str | None = None):
    """Failed requests (%) against concurrency on one hot object (one key, no replica); ``threshold`` marks a
    published throttling point."""
    ax = new_axes(ax)
    single = steps[steps["variant"] == "single"] if "variant" in steps else steps
    data = single.assign(error_pct=single["error_rate"] * 100)
    sns.lineplot(data=data, x="concurrency", y="error_pct", marker="o", ax=ax, label="local, one key")
    if threshold is not None:
        ax.axvline(threshold, color="grey", linestyle=":", label=f"published: 503s above {threshold:g}")
    log2_x(ax)
    ax.legend(loc="upper left")
    ax.set(xlabel="concurrent requests on one range", ylabel="failed requests (%)", ylim=(0, 100),
           title=title or "Hot object: failed requests against concurrency")
    add_note(ax, steps_note(single))
    return ax


def replica_cure(steps: pd.DataFrame, *, ax=None, title: str | None = None):
    """Failed requests (%) against the number of replicas the hot load is spread over, at the study's highest
    concurrency: the curve of the cure, the point where fewer than 1 % fail marked."""
    from objperf.analysis.stats import CURED_SHARE, replicas_that_cure

    ax = new_axes(ax)
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
    log2_x(ax)
    ax.legend(loc="upper right")
    ax.set(xlabel="replicas the hot object is spread over", ylabel="failed requests (%)", ylim=(0, 100),
           title=title or "Hot object: the cure by replicas")
    add_note(ax, steps_note(data))
    return ax


def rate_saturation(steps: pd.DataFrame, *, ax=None, title: str | None = None):
    """A rate sweep (``objperf study rate-sweep``): p99 latency from when each request was due, and the service
    time alone, against the rate asked; the saturation point (``stats.saturation_rate``) marked with why."""
    from objperf.analysis.stats import saturation_rate

    ax = new_axes(ax)
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
    add_note(ax, steps_note(steps))
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


def timing_runs(runs: pd.DataFrame, *, ax=None, title: str | None = None):
    """Seconds per run for each client, provider and operation (the S3-vs-R2 article's tables).  The figure
    widens with the number of client and operation pairs, and their labels slant, so none overlap."""
    data = runs.assign(series=runs["client"] + " " + runs["operation"])
    ax = new_axes(ax, size=(max(8.0, 0.9 * data["series"].nunique()), 4.5))
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
    ax = new_axes(ax)
    data = table.assign(size_mib=table["size"] / (1 << 20))
    # Providers whose lines coincide (no egress fee, the same request price) stay apart by their dashes and
    # markers, and the legend, outside the data, names each.
    sns.lineplot(data=data, x="size_mib", y="usd_per_tib", hue="provider", style="provider", markers=True,
                 dashes=True, ax=ax)
    log2_x(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title="provider")
    direction = table["direction"].iloc[0] if len(table) else "read"
    ax.set(xlabel=f"{'range' if direction == 'read' else 'part'} size (MiB)", ylabel=f"USD per TiB {direction}",
           ylim=(0, None), title=title or f"Cost per TiB {direction} by request size (list prices: check them)")
    return ax



def requests_against_concurrency(steps: pd.DataFrame, *, ax=None, title: str | None = None):
    """A request-rate study: requests a second against concurrency, a line per operation, dashed for more
    than one prefix; the steps where the store answered 503 to some of them marked with their share."""
    ax = new_axes(ax)
    data = steps.assign(prefixes=steps["prefixes"].map(lambda p: f"{p:g} prefix{'es' if p != 1 else ''}"))
    sns.lineplot(data=data, x="concurrency", y="requests_per_s", hue="op", style="prefixes", marker="o", ax=ax,
                 errorbar=("pi", 100))
    for row in data[data["throttled_pct"] > 0].itertuples():
        ax.annotate(f"503 {row.throttled_pct:.0f}%", (row.concurrency, row.requests_per_s), fontsize=7,
                    color="firebrick", textcoords="offset points", xytext=(4, 4))
    log2_x(ax)
    ax.set_yscale("log")
    ax.set(xlabel="concurrency (requests in flight)", ylabel="requests a second (finished)",
           title=title or "Small-object requests a second against concurrency")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    add_note(ax, steps_note(steps))
    return ax


def checksum_costs(steps: pd.DataFrame, *, ax=None, title: str | None = None):
    """A checksums study: each checksum and how it was sent, its acknowledged write Gbps and client CPU-s per
    GiB acknowledged as ratios to the same writes with no checksum (the dotted 1, labelled with what they
    measured); a step the store refused has no bars, its S3 codes written where they would stand."""
    ax = new_axes(ax, size=(8, 4.5))
    base = steps[steps["checksum"] == "none"]
    rest = steps[steps["checksum"] != "none"].assign(sent=lambda d: d["checksum"] + "\n" + d["mode"])
    order = list(dict.fromkeys(rest["sent"]))
    data = pd.concat([rest.assign(what="write Gbps (acknowledged)", ratio=rest["gbps_vs_none"]),
                      rest.assign(what="client CPU-s per GiB", ratio=rest["cpu_vs_none"])], ignore_index=True)
    if len(data):
        sns.barplot(data=data, x="sent", y="ratio", hue="what", order=order, ax=ax, errorbar=("pi", 100))
    for container in ax.containers:
        ax.bar_label(container, labels=["" if h != h else f"{h:.2f}" for h in container.datavalues], fontsize=7)
    refused = rest[rest["gbps_vs_none"].isna() & (rest["errors"] > 0)]
    for sent, part in refused.groupby("sent", sort=False):
        codes = "/".join(dict.fromkeys(c for c in part["s3_codes"] if c)) or "failed"
        ax.annotate(f"refused:\n{codes}", (order.index(sent), 0.05), ha="center", va="bottom", fontsize=7,
                    color="firebrick", rotation=90)
    gbps, cpu = base["write_acknowledged_gbps"].mean(), base["client_cpu_s_per_gib"].mean()
    ax.axhline(1.0, color="firebrick", linestyle=":", linewidth=1.5,
               label=f"no checksum (= 1): {gbps:.3f} Gbps, {cpu:.3f} CPU-s/GiB")
    top = max([1.0, *(h for c in ax.containers for h in c.datavalues if h == h)])
    ax.set(xlabel="checksum, sent in a header or as a trailer", ylabel="ratio to no checksum (× none)",
           ylim=(0, top * 1.4), title=title or "What a checksum on every write costs, beside none")
    ax.legend(loc="upper left", fontsize=8)  # above the bars: the axis leaves it room
    add_note(ax, steps_note(steps))
    return ax

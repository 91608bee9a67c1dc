"""A study's own figures, the ones its notebook draws (notebooks/01-04), each with the published figures it
answers to on the same axes: ``draw_study_figures(study_dir, out_dir)``.  ``objperf study NAME --figures DIR``,
``objperf analyze STUDY_DIR --figures DIR`` and ``objperf.api.study_figures`` all call it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from objperf.analysis.published import AWS_REQUESTS_A_PREFIX, r2_figure
from objperf.core.errors import UsageError
from objperf.core.sanitize import printable
from objperf.plots.runs import sustained_timeline, ttfb_distribution
from objperf.plots.steps import (
    beside_published,
    checksum_costs,
    distance_curves,
    grouped_bars,
    hot_object_errors,
    part_size_curves,
    rate_saturation,
    replica_cure,
    requests_against_concurrency,
    throughput_against_concurrency,
    ttfb_against_size,
)

PUBLISHED = "published (R2)"


def _published(figure: str, metric: str, condition: str | None = None) -> float:
    rows = r2_figure(figure).query("metric == @metric")
    if condition is not None:
        rows = rows[rows["condition"] == condition]
    return float(rows["value"].iloc[0])


def _level(ax, value: float, label: str, *, axis: str = "y") -> None:
    """A published figure as a dotted line across the local one's axes, the axis stretched to hold it."""
    if axis == "y":
        ax.axhline(value, color="firebrick", linestyle=":", linewidth=1.5, label=label)
        bottom, top = ax.get_ylim()
        ax.set_ylim(bottom if ax.get_yscale() == "log" else 0, max(top, value * 1.1))
    else:
        ax.axvline(value, color="firebrick", linestyle=":", linewidth=1.5, label=label)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)


def _reads_by_concurrency(steps, rows, context):
    ax = throughput_against_concurrency(steps, title=f"GET throughput against concurrency\n{context}")
    ax.lines[0].set_label("local (steady read Gbps)")
    _level(ax, _published("load-generators", "read throughput",
                          "any client with enough concurrent ranged GETs on one key"),
           f"{PUBLISHED}: one key, enough concurrent GETs")
    return ax


def _ttfb_by_concurrency(steps, rows, context):
    ax = ttfb_distribution(rows(), hue="concurrency", title=f"Time to first byte by concurrency\n{context}")
    _level(ax, _published("ttfb", "TTFB floor"), f"{PUBLISHED}: TTFB floor", axis="x")
    return ax


def _part_sizes(steps, rows, context):
    ax = part_size_curves(steps, title=f"Write throughput by part size (acknowledged)\n{context}")
    peak = _published("part-size", "write throughput peak")
    at = _published("part-size", "connections at peak")
    ax.plot([at], [peak], "*", color="firebrick", markersize=12, label=f"{PUBLISHED}: 32 MiB peak at {at:g}")
    ax.set_xlim(right=max(ax.get_xlim()[1], at * 1.4))
    ax.set_ylim(0, max(ax.get_ylim()[1], peak * 1.1))
    _level(ax, _published("part-size", "write throughput (at most)", "8 MiB parts"),
           f"{PUBLISHED}: 8 and 128 MiB under this")
    return ax


def _bars(local: pd.DataFrame, published: pd.DataFrame, *, x: str, title: str):
    return grouped_bars(beside_published(local, published, x=x, published_label=PUBLISHED), x=x,
                        y="gbps", hue="source", bound="bound", title=title)


def _key_reads(steps, rows, context):
    reads = steps[steps["direction"] == "read"].assign(
        keys=lambda d: d["keys"].map(lambda k: "1 key" if k == 1 else "many keys"), gbps=lambda d: d["steady_gbps"])
    r2 = r2_figure("key-fanout").query("metric == 'read throughput'").assign(
        keys=lambda d: d["condition"].map({"1 key": "1 key", "32 keys": "many keys"}), gbps=lambda d: d["value"])
    return _bars(reads, r2, x="keys", title=f"Reads: one key against many (R2: 32 keys)\n{context}")


def _bucket_writes(steps, rows, context):
    writes = steps[steps["direction"] == "write"].assign(
        buckets=lambda d: d["buckets"].map(lambda b: f"{b} bucket{'s' if b > 1 else ''}"),
        gbps=lambda d: d["write_acknowledged_gbps"])
    r2 = r2_figure("bucket-fanout").query("metric == 'write throughput'").assign(buckets="2 buckets",
                                                                               gbps=lambda d: d["value"])
    return _bars(writes, r2, x="buckets", title=f"Writes (acknowledged): one bucket against two\n{context}")


def _ip_edge(steps, rows, context):
    family = steps.groupby("family")["steady_gbps"].mean()
    local = pd.DataFrame({"measure": ["IPv4 edge over IPv6"],
                          "gbps": [family.get("IPv4", float("nan")) - family.get("IPv6", float("nan"))]})
    r2 = r2_figure("ip-family").assign(measure=lambda d: d["metric"].str.replace("IPv4 edge over IPv6 ", "IPv4 edge "),
                                       gbps=lambda d: d["value"])
    return _bars(local, r2, x="measure", title=f"IPv4 against IPv6: how much faster IPv4 reads\n{context}")


def _mixed(steps, rows, context):
    both = steps[steps["mode"] == "both"]
    read, write = both["read_gbps"].mean(), both["write_acknowledged_gbps"].mean()
    local = pd.DataFrame({"direction": ["read", "write", "total"], "gbps": [read, write, read + write]})
    r2 = r2_figure("mixed").assign(direction=lambda d: d["metric"].str.split().str[0], gbps=lambda d: d["value"])
    return _bars(local, r2, x="direction", title=f"Reads and writes at once (writes: acknowledged)\n{context}")


def _sustained(steps, rows, context):
    bin_s = float(steps["drift_bin_s"].iloc[0]) if "drift_bin_s" in steps and steps["drift_bin_s"].notna().any() \
        else 1.0
    return sustained_timeline(rows(), bin_s=bin_s, published_gbps=_published("sustained", "read throughput"),
                              published_label=f"{PUBLISHED}, 10 minutes",
                              title=f"Sustained reads over time\n{context}")


def _ttfb_size(steps, rows, context):
    return ttfb_against_size(steps, reference_ms=_published("ttfb", "TTFB floor"),
                             title=f"TTFB and throughput against object size (R2's floor dotted)\n{context}")


def _hot_errors(steps, rows, context):
    return hot_object_errors(steps, threshold=_published("hot-object", "503 SlowDown above"),
                             title=f"Hot object: failed requests against concurrency\n{context}")


def _hot_cure(steps, rows, context):
    ax = replica_cure(steps, title=f"Hot object: the same load over replicas\n{context}")
    ax.axhline(_published("hot-object", "503s with replicas"), color="firebrick", linestyle=":", linewidth=1.5,
               label=f"{PUBLISHED}: no 503 over duplicate keys")
    ax.legend(loc="upper right", fontsize=8)
    return ax


def _distance(steps, rows, context):
    return distance_curves(steps, gbps=1.0, title=f"Reads by added distance (R2: TTFB "
                                                f"{_published('ttfb', 'TTFB floor'):g} ms on a 0.525 ms RTT)"
                                                f"\n{context}")


def _nic(steps, rows, context):
    local = steps.assign(streams=steps["streams"].map({"store alone": "store alone",
                                                        "store + other HTTP": "store + other traffic"}),
                         gbps=steps["nic_rx_gbps"])
    r2 = r2_figure("ceiling-proof").query("metric == 'NIC receive' and condition != 'later test phase'").assign(
        streams="store + other traffic", gbps=lambda d: d["value"])
    return _bars(local, r2, x="streams", title=f"NIC receive: the store alone, then beside other traffic\n{context}")


def _threads(steps, rows, context):
    ax = grouped_bars(steps, x="threads", y="steady_gbps",
                      title=f"Read throughput by engine threads\n{context}")
    _level(ax, _published("load-generators", "read throughput", "any client with enough concurrent ranged GETs "
                          "on one key"), f"{PUBLISHED}: one box's reads")
    return ax


def _rate(steps, rows, context):
    ax = rate_saturation(steps, title=f"Fixed-rate load: where the store saturates\n{context}")
    _level(ax, _published("ttfb", "TTFB floor"), f"{PUBLISHED}: TTFB floor")
    return ax


def _request_rate(steps, rows, context):
    ax = requests_against_concurrency(steps, title=f"Small-object requests a second against concurrency\n{context}")
    prefixes = int(steps["prefixes"].max())
    for ops, rate in (("GET/HEAD", AWS_REQUESTS_A_PREFIX["GET"]), ("PUT/DELETE", AWS_REQUESTS_A_PREFIX["PUT"])):
        _level(ax, rate * prefixes, f"published (AWS S3): {ops} {rate:,}/s a prefix × {prefixes}")
    return ax


def _checksums(steps, rows, context):
    return checksum_costs(steps, title=f"What a checksum on every write costs, beside none\n{context}")


Drawing = Callable[[pd.DataFrame, Callable[[], pd.DataFrame], str], object]
# Each study's figures, file name and drawing, in its notebook's order.
FIGURES: dict[str, list[tuple[str, Drawing]]] = {
    "read-concurrency": [("concurrency.png", _reads_by_concurrency), ("ttfb.png", _ttfb_by_concurrency)],
    "write-part-size": [("part-size.png", _part_sizes)],
    "key-fanout": [("keys.png", _key_reads)],
    "bucket-fanout": [("buckets.png", _bucket_writes)],
    "ip-family": [("edge.png", _ip_edge)],
    "mixed": [("mixed.png", _mixed)],
    "sustained": [("sustained.png", _sustained)],
    "ttfb-size": [("ttfb-size.png", _ttfb_size)],
    "hot-object": [("hot-object.png", _hot_errors), ("replicas.png", _hot_cure)],
    "wan": [("distance.png", _distance)],
    "ceiling-proof": [("nic.png", _nic)],
    "client-cpu": [("threads.png", _threads)],
    "rate-sweep": [("rate.png", _rate)],
    "request-rate": [("request-rate.png", _request_rate)],
    "checksums": [("checksums.png", _checksums)],
}


def study_context(manifest: dict) -> str:
    """Where and how a study ran, in words: "embedded SeaweedFS, quick, 6 steps"."""
    parameters = manifest.get("parameters", {})
    endpoint = str(parameters.get("endpoint") or "")
    where = printable(urlsplit(endpoint).netloc.rpartition("@")[2]) if "://" in endpoint else printable(endpoint)
    how = "quick" if parameters.get("quick") else "full"
    return f"{where or 'the embedded server'}, {how} study, {manifest.get('steps_done', '?')} steps"


def draw_study_figures(path: str | Path, out_dir: str | Path) -> list[Path]:
    """The figures of the study in ``path`` (a study directory, or a bundle of one) as PNG files in
    ``out_dir``; the paths.  Drawn from its steps.parquet, and its rows where a figure needs them."""
    from objperf.dataset.directory import load, load_steps, read_manifest

    manifest = read_manifest(path)
    name = manifest.get("study")
    if manifest.get("kind") != "study" or name not in FIGURES:
        raise UsageError(f"{path} holds no study whose figures objperf draws")
    steps = load_steps(path)
    if not len(steps):
        raise UsageError(f"{path}: the {name} study has no step to draw")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    loaded: list[pd.DataFrame] = []

    def rows() -> pd.DataFrame:
        if not loaded:
            loaded.append(load(path))
        return loaded[0]

    import matplotlib.pyplot as plt

    context = study_context(manifest)
    written = []
    for file, draw in FIGURES[name]:
        ax = draw(steps, rows, context)
        written.append(out_dir / f"{name}-{file}")
        ax.figure.savefig(written[-1], dpi=120)
        plt.close(ax.figure)
    return written

"""The standard figures of one run, written as PNG files next to its dataset."""

from __future__ import annotations

import contextlib
import textwrap
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from objperf.core.sanitize import printable
from objperf.core.sizes import format_size


def run_context(manifest: dict) -> str:
    """What a run's figures say about it: the endpoint's host, what it did, how hard (a cluster's hosts ×
    each one's requests in flight), its run id."""
    def record(value) -> dict:  # a manifest is a file: what is not a JSON object says nothing
        return value if isinstance(value, dict) else {}

    target, workload = record(manifest.get("target")), record(manifest.get("workload"))
    sides = {side: record(workload.get(side)) for side in ("read", "write") if side in workload}
    if sides:  # a mixed run's target and workload, per side
        target = record(target.get("read")) or record(target.get("write")) or target
    endpoint = target.get("endpoint") or target.get("url") or ""
    netloc = urlsplit(endpoint if isinstance(endpoint, str) else "").netloc
    where = printable(netloc.rpartition("@")[2]) or "the embedded server"  # never a URL's password
    hosts = manifest.get("hosts")
    hosts = len(hosts) if isinstance(hosts, list) and len(hosts) > 1 else 0
    kind = manifest.get("kind")
    if sides:
        how = "; ".join(_how(side, w, hosts) for side, w in sides.items())
    elif kind in ("read", "write"):
        how = _how(kind, workload, hosts)
    else:
        how = printable(str(kind or "run"))
    return f"{where}: {how}, run {printable(str(manifest.get('run_id', '?')))}"


def _how(side: str, workload: dict, hosts: int) -> str:
    """'GETs of 8 MiB ranges, 2 hosts × 16 in flight' of one side of a workload."""
    if side == "read":
        size = workload.get("range_size")
        what = f"GETs of {format_size(size)} ranges" if _count(size) else "GETs"
    else:
        size, part = workload.get("object_size"), workload.get("part_size")
        if isinstance(workload.get("sizes"), str):  # --sizes: each object's size drawn
            what = f"uploads of objects of sizes {printable(workload['sizes'])[:80]}"
        elif _count(size) and _count(part) and size > part:
            what = f"uploads of {format_size(size)} objects in {format_size(part)} parts"
        elif _count(size):
            what = f"PUTs of {format_size(size)} objects"
        elif _count(part):
            what = f"uploads in {format_size(part)} parts"
        else:
            what = "PUTs"
    concurrency = workload.get("concurrency")
    if not _count(concurrency):
        return what
    return f"{what}, {hosts} hosts × {concurrency} in flight" if hosts else f"{what}, {concurrency} in flight"


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def draw_run_figures(df: pd.DataFrame, directory: str | Path, manifest: dict | None = None) -> list[Path]:
    """The figures of one run that have something to draw (``run_figures``), saved as PNG files in
    ``directory`` (beside its dataset); their paths."""
    return _saved(directory, run_figures(df, manifest))


def run_figures(df: pd.DataFrame, manifest: dict | None = None) -> list[tuple[str, object]]:
    """(file name, Axes) of each figure of one run that has something to draw: throughput.png (a line per
    direction; reads' bytes received, writes' bytes the store acknowledged; the run's measured end marked),
    where a GET had a first byte, ttfb.png, and where reads or writes were of objects of several sizes,
    sizes.png; titled in words with the run's context when its manifest is given (or in ``df.attrs``).  Rows
    of no request draw nothing."""
    from objperf.plots.runs import (
        first_byte_gets,
        latency_by_size,
        sized_requests,
        throughput_over_time,
        timeline_title,
        ttfb_distribution,
    )
    from objperf.plots.style import NothingToDraw

    if not len(df):
        return []
    if manifest is not None and df.attrs.get("manifest") is not manifest:
        df = df.copy(deep=False)  # the figures read the run's measured end from the rows' manifest
        df.attrs = {**df.attrs, "manifest": manifest}
    manifest = df.attrs.get("manifest")
    context = textwrap.fill(run_context(manifest), 72) if isinstance(manifest, dict) else ""

    def titled(words: str) -> str:
        return f"{words}\n{context}" if context else words

    drawn = [("throughput.png", throughput_over_time(df, title=titled(timeline_title(df))))]
    if len(first_byte_gets(df)):
        drawn.append(("ttfb.png", ttfb_distribution(df, title=titled("Time to first byte of the GETs"))))
    sized = sized_requests(df)
    sized = sized[sized["size"] != "unknown"] if len(sized) else sized
    if len(sized) and sized.groupby("direction")["size"].nunique().max() > 1:  # a direction of several sizes
        with contextlib.suppress(NothingToDraw):
            drawn.append(("sizes.png", latency_by_size(df, title=titled("Request time by object size"))))
    return drawn


def draw_diff_figures(runs, directory: str | Path, *, table: pd.DataFrame | None = None,
                      by: str | None = None) -> list[Path]:
    """The figures of runs compared, saved as PNG files in ``directory`` (made if missing): throughput.png
    (every run's timeline from its own start), ttfb.png (their TTFB distributions, where they had GETs) and
    changes.png (what changed from the first to the last, beside the noise).  ``runs``: datasets (paths or
    frames) or ``analysis.diff.load_runs``'s dict; ``table``: their ``compare_runs`` (made when not given)."""
    from objperf.analysis.diff import compare_runs, load_runs
    from objperf.plots.diffs import diff_figures

    runs = runs if isinstance(runs, dict) else load_runs(*runs)
    if len(runs) < 2:
        from objperf.core.errors import UsageError

        raise UsageError("a comparison needs two or more datasets")
    Path(directory).mkdir(parents=True, exist_ok=True)
    return _saved(directory, diff_figures(runs, table if table is not None else compare_runs(runs, by=by)))


def _saved(directory: str | Path, drawn: list) -> list[Path]:
    """Each (file name, axes) saved as a PNG in ``directory``, its figure closed; the paths."""
    import matplotlib.pyplot as plt

    written = []
    for name, ax in drawn:
        path = Path(directory) / name
        ax.figure.savefig(path, dpi=120)
        plt.close(ax.figure)
        written.append(path)
    return written


def draw_scanned_figures(directory: str | Path, *, timeline: list[tuple[float, float, int]], ttfb, rows: int,
                         groups: pd.DataFrame | None = None, by: str | None = None) -> list[Path]:
    """The figures of rows analysed where they lie (``analysis.scan``) that have something to draw:
    throughput.png from the scanned timeline (reads' bytes received, writes' acknowledged), ttfb.png from the
    TTFB sketch where a GET had a first byte, concurrency.png when they are grouped by concurrency."""
    from objperf.plots.runs import sketch_distribution, throughput_over_time
    from objperf.plots.steps import throughput_against_concurrency

    where = f"{rows:,} rows analysed where they lie"
    drawn = []
    if timeline:
        drawn.append(("throughput.png", throughput_over_time(
            pd.DataFrame(timeline, columns=["t_s", "gbps", "failed"]), title=f"Throughput over time\n{where}")))
    if ttfb.count:
        drawn.append(("ttfb.png", sketch_distribution(ttfb, title=f"Time to first byte of the GETs\n{where}")))
    if by == "concurrency" and groups is not None:
        curve = groups.assign(concurrency=pd.to_numeric(groups["concurrency"], errors="coerce"))  # a manifest may
        curve = curve.dropna(subset=["concurrency", "gbps"])  # record none, or a word
        if len(curve) > 1:
            drawn.append(("concurrency.png", throughput_against_concurrency(
                curve, y="gbps", title=f"Throughput against concurrency\n{where}")))
    return _saved(directory, drawn)

"""The standard figures of one run, written as PNG files next to its dataset."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd

from objperf.sanitize import printable
from objperf.sizes import format_size


def run_context(manifest: dict) -> str:
    """What a run's figures say about it: the endpoint's host, what it did, how hard, its run id."""
    target, workload = manifest.get("target", {}), manifest.get("workload", {})
    netloc = urlsplit(target.get("endpoint") or target.get("url") or "").netloc
    where = printable(netloc.rpartition("@")[2]) or "the embedded server"  # never a URL's password
    if manifest.get("kind") == "read":
        how = f"GETs of {format_size(workload.get('range_size', 0))} ranges"
    elif manifest.get("kind") == "write":
        how = f"{format_size(workload.get('part_size', 0))} parts"
    else:
        how = manifest.get("kind", "run")
    concurrency = workload.get("concurrency")
    return f"{where}: {how}, {concurrency} in flight, run {manifest.get('run_id', '?')}" if concurrency else \
        f"{where}: {how}, run {manifest.get('run_id', '?')}"


def draw_run_figures(df: pd.DataFrame, directory: str | Path, manifest: dict | None = None) -> list[Path]:
    """throughput.png and ttfb.png beside the dataset, titled with the run's context when its manifest is given."""
    from objperf import plots

    context = run_context(manifest) if manifest else ""
    return _saved(directory, [(name, draw(df, title=f"{title}\n{context}" if context else title))
                              for name, draw, title in (("throughput.png", plots.throughput_over_time,
                                                         "Throughput over time"),
                                                        ("ttfb.png", plots.ttfb_distribution, "Time to first byte"))])


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
    """throughput.png and ttfb.png of rows analysed where they lie (``analysis.scan``): the scanned timeline
    and the TTFB sketch; concurrency.png too when they are grouped by concurrency."""
    from objperf import plots

    where = f"{rows:,} rows analysed where they lie"
    drawn = [("throughput.png", plots.throughput_over_time(pd.DataFrame(timeline, columns=["t_s", "gbps", "failed"]),
                                                           title=f"Throughput over time\n{where}")),
             ("ttfb.png", plots.sketch_distribution(ttfb, title=f"Time to first byte\n{where}"))]
    if by == "concurrency" and groups is not None:
        curve = groups.assign(concurrency=pd.to_numeric(groups["concurrency"], errors="coerce"))  # a manifest may
        curve = curve.dropna(subset=["concurrency", "gbps"])  # record none, or a word
        if len(curve) > 1:
            drawn.append(("concurrency.png", plots.throughput_against_concurrency(
                curve, y="gbps", title=f"Throughput against concurrency\n{where}")))
    return _saved(directory, drawn)

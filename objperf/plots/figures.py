"""The standard figures of one run, written as PNG files next to its dataset."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def draw_run_figures(df: pd.DataFrame, directory: str | Path) -> list[Path]:
    import matplotlib.pyplot as plt

    from objperf import plots

    directory = Path(directory)
    written = []
    for name, draw in (("throughput.png", plots.throughput_over_time), ("ttfb.png", plots.ttfb_distribution)):
        ax = draw(df)
        path = directory / name
        ax.figure.savefig(path, dpi=120)
        plt.close(ax.figure)
        written.append(path)
    return written

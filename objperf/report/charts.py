"""The report's figures as plain data (``Chart``: titled axes and their series), drawn by ``draw``.  Figures
of many rows are reduced before they reach the page: a throughput timeline is binned (at most ``MAX_BINS``
points, bins of 1-2-5 steps), a TTFB distribution is a CDF at ``CDF_POINTS`` ranks, or read from the latency
sketch (``objperf.analysis.sketch``) past ``SKETCH_ABOVE`` rows — so a page stays small whatever the rows."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

MAX_BINS = 1000
CDF_POINTS = 400
SKETCH_ABOVE = 100_000


@dataclass
class Series:
    """One series: ``mark`` is ``line``, ``points``, ``bar``, ``hline`` or ``vline`` (a level: ``y`` or ``x``
    holds its one value); ``reference`` draws it as a published or target figure (dotted)."""

    name: str
    x: list = field(default_factory=list)
    y: list = field(default_factory=list)
    mark: str = "line"
    reference: bool = False
    text: list | None = None  # per point, shown on hover (a published bound: "≤ 19")


@dataclass
class Chart:
    key: str
    title: str
    x_label: str
    y_label: str
    series: list[Series]
    x_log: bool = False
    y_log: bool = False
    categories: list[str] | None = None  # a bar chart's x
    note: str = ""


def nice_bin(span_s: float, most: int = MAX_BINS) -> float:
    """The smallest of 0.1, 0.2, 0.5, 1, 2, 5, 10 … seconds that cuts ``span_s`` into at most ``most`` bins."""
    wanted = max(span_s / most, 0.1)
    power = 10 ** math.floor(math.log10(wanted))
    for step in (1, 2, 5, 10):
        if step * power >= wanted - 1e-12:
            return float(round(step * power, 10))
    return float(10 * power)


def span_s(rows: pd.DataFrame) -> float:
    return float((rows["t_start"] + rows["total_s"]).max() - rows["t_start"].min()) if len(rows) else 0.0


def _clean(values) -> list:
    return [None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v for v in values]


def timeline(rows: pd.DataFrame, *, by: str | None = None, aligned: bool = False, bin_s: float | None = None,
             key: str = "timeline", title: str = "Throughput over time") -> Chart:
    """Gbps per time bin (``objperf.analysis.stats.throughput_timeline``), a line per ``by`` value."""
    from objperf.analysis.stats import throughput_timeline

    if bin_s is None:
        longest = max(span_s(part) for _, part in rows.groupby(by, observed=True)) if by and aligned \
            else span_s(rows)
        bin_s = nice_bin(longest)
    frame = throughput_timeline(rows, bin_s=bin_s, by=by, aligned=aligned)
    series = []
    for name, part in (frame.groupby(by, observed=True, sort=True) if by else [("throughput", frame)]):
        series.append(Series(f"{by.replace('_', ' ')} {name}" if by else "throughput",
                             _clean(part["t_s"].round(6).tolist()), _clean(part["gbps"].round(6).tolist())))
    return Chart(key, title, "seconds from the first request" + (" (each from its own start)" if aligned else ""),
                 "throughput (Gbps)", series, note=f"bins of {bin_s:g} s; bytes spread between each request's "
                                                   f"first and last byte")


def _cdf_of(values: np.ndarray) -> tuple[list, list]:
    values = np.sort(values[np.isfinite(values)])
    if not len(values):
        return [], []
    if len(values) > SKETCH_ABOVE:
        from objperf.analysis.sketch import Sketch

        return _cdf_of_sketch(Sketch().add(values))
    ranks = np.unique(np.linspace(0, len(values) - 1, min(CDF_POINTS, len(values))).round().astype(int))
    return values[ranks].round(4).tolist(), ((ranks + 1) / len(values)).round(6).tolist()


def _cdf_of_sketch(sketch) -> tuple[list, list]:
    x, share = sketch.cdf()
    return np.round(x, 4).tolist(), np.round(share, 6).tolist()


def ttfb_distribution(rows: pd.DataFrame, summary: dict | None = None, *, by: str | None = None,
                      key: str = "ttfb", title: str = "Time to first byte: distribution",
                      published_ms: float | None = None, published_label: str = "") -> Chart | None:
    """The TTFB CDF of the requests whose first byte arrived, a line per ``by`` value; the whole from the
    summary's sketch past ``SKETCH_ABOVE`` rows.  None when no first byte arrived."""
    from objperf.analysis.stats import first_byte_rows

    ok = rows[first_byte_rows(rows)]
    if not len(ok):
        return None
    series = []
    if by:
        for name, part in ok.groupby(by, observed=True, sort=True):
            x, y = _cdf_of(part["ttfb_s"].to_numpy(float) * 1000)
            series.append(Series(f"{by.replace('_', ' ')} {name}", x, y))
    else:
        sketch = (summary or {}).get("sketches", {}).get("ttfb_ms")
        if len(ok) > SKETCH_ABOVE and isinstance(sketch, dict):
            from objperf.analysis.sketch import Sketch

            x, y = _cdf_of_sketch(Sketch.from_json(sketch))
        else:
            x, y = _cdf_of(ok["ttfb_s"].to_numpy(float) * 1000)
        series.append(Series("TTFB", x, y))
    if published_ms is not None:
        series.append(Series(published_label, x=[published_ms], mark="vline", reference=True))
    return Chart(key, title, "time to first byte (ms)", "share of requests at or below", series, x_log=True,
                 note=f"{len(ok):,} requests whose first byte arrived"
                      + (f"; drawn from the latency sketch past {SKETCH_ABOVE:,}" if len(ok) > SKETCH_ABOVE else ""))

"""Figures from tidy data: ``f(df, *, ax=None, **kw) -> Axes``.  Statistics come
from ``objperf.analysis`` (or a study's ``steps.parquet``); these functions
only draw, in one style, with units on every axis.

The figures by kind: ``objperf.plots.runs`` (a run's rows), ``objperf.plots.steps`` (a study's steps and
tables), ``objperf.plots.diffs`` (runs compared), ``objperf.plots.studies`` (a study's own figures), all in
``objperf.plots.style``'s one style."""

from objperf.core.extras import require

require("matplotlib", "drawing figures")
require("seaborn", "drawing figures")

from objperf.plots.runs import (  # noqa: E402 - after the check that says which extra is missing
    directions_in,
    first_byte_gets,
    latency_by_size,
    measured_end_s,
    run_end_s,
    sketch_distribution,
    sustained_timeline,
    throughput_over_time,
    timeline_title,
    ttfb_distribution,
)
from objperf.plots.steps import (  # noqa: E402
    beside_published,
    checksum_costs,
    cost_per_tib,
    distance_curves,
    grouped_bars,
    hot_object_errors,
    part_size_curves,
    rate_saturation,
    replica_cure,
    throughput_against_concurrency,
    timing_runs,
    ttfb_against_size,
)
from objperf.plots.style import DIRECTION_LABELS, NOTE, NothingToDraw, run_note, steps_note  # noqa: E402

__all__ = [
    "DIRECTION_LABELS", "NOTE", "NothingToDraw", "beside_published", "checksum_costs", "cost_per_tib",
    "directions_in", "distance_curves",
    "first_byte_gets", "grouped_bars", "hot_object_errors", "latency_by_size", "measured_end_s", "part_size_curves",
    "rate_saturation", "replica_cure", "run_end_s", "run_note", "sketch_distribution", "steps_note",
    "sustained_timeline", "throughput_against_concurrency", "throughput_over_time", "timeline_title",
    "timing_runs", "ttfb_against_size", "ttfb_distribution",
]

"""``objperf report``: a run, a study or several runs as one self-contained HTML page to open from disk or mail —
the summary and its units, where and how it ran, breakdowns, errors, and interactive figures (Bokeh, every script
inlined).  ``build_report(paths, out)`` writes it; ``objperf.api.report`` and the command call it.

Modules, one job each: ``material`` (what the paths hold), ``tables`` (HTML tables), ``charts`` (the figures'
data, plot-free), ``study_charts`` (a study's own figures), ``draw`` (charts as Bokeh figures), ``page`` (the page
put together)."""

from objperf.report.page import build_report, render

__all__ = ["build_report", "render"]

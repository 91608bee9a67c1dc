"""``Chart``s drawn as Bokeh figures: hover for values, pan and zoom (box, wheel), a legend entry per series
that hides or shows it on click; published and target figures dotted in red.  Bokeh draws on a canvas, so a
figure costs its points, not a DOM node each."""

from __future__ import annotations

from objperf.report.charts import Chart, Series

WIDTH, HEIGHT = 900, 380
REFERENCE_COLOR = "firebrick"


def _span(values: list) -> tuple[float, float] | None:
    finite = [v for v in values if isinstance(v, (int, float)) and v == v]
    return (min(finite), max(finite)) if finite else None


def _level_points(series: Series, chart: Chart) -> tuple[list, list]:
    """A level (hline, vline) as a line across what the other series span, so it hides as any series does."""
    others = [s for s in chart.series if s.mark not in ("hline", "vline")]
    if series.mark == "hline":
        if chart.categories:
            return [chart.categories[0], chart.categories[-1]], series.y * 2
        xs = _span([x for s in others for x in s.x]) or (0, 1)
        return list(xs), series.y * 2
    ys = _span([y for s in others for y in s.y] + [0]) or (0, 1)
    return series.x * 2, list(ys)


def figure_of(chart: Chart):
    from bokeh.models import ColumnDataSource, FactorRange, FixedTicker, HoverTool, Legend
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure
    from bokeh.transform import dodge

    options = {"x_axis_type": "log" if chart.x_log else "linear", "y_axis_type": "log" if chart.y_log else "linear"}
    bars = [s for s in chart.series if s.mark == "bar"]
    if chart.categories:
        options = {"x_range": FactorRange(*chart.categories), "y_axis_type": options["y_axis_type"]}
    p = figure(title=chart.title, height=HEIGHT, width=WIDTH, sizing_mode="stretch_width",
               tools="pan,box_zoom,wheel_zoom,reset,save", active_drag="box_zoom",
               x_axis_label=chart.x_label, y_axis_label=chart.y_label, **options)
    p.add_layout(Legend(click_policy="hide", label_text_font_size="8pt"), "right")
    width = 0.8 / max(len(bars), 1)
    for i, series in enumerate(chart.series):
        color = REFERENCE_COLOR if series.reference else Category10_10[i % 10]
        x, y = _level_points(series, chart) if series.mark in ("hline", "vline") else (series.x, series.y)
        if chart.x_log or chart.y_log:  # a log axis has no place for 0 or less
            kept = [(a, b) for a, b in zip(x, y) if (not chart.x_log or (a or 0) > 0) and (not chart.y_log or
                                                                                         (b or 0) > 0)]
            x, y = [a for a, _ in kept], [b for _, b in kept]
        data = {"x": x, "y": y, "text": series.text or [f"{v:.4g}" if isinstance(v, float) else str(v) for v in y]}
        source = ColumnDataSource(data)
        common = {"source": source, "legend_label": series.name, "name": series.name, "color": color}
        if series.mark == "bar":
            offset = -0.4 + width * (bars.index(series) + 0.5)
            p.vbar(x=dodge("x", offset, range=p.x_range), top="y", width=width * 0.9,
                   alpha=0.45 if series.reference else 0.85, **common)
        elif series.mark == "points":
            p.scatter("x", "y", size=12, marker="star", **common)
        else:
            p.line("x", "y", line_width=2, line_dash="dotted" if series.reference else "solid", **common)
            if series.mark == "line" and len(x) <= 60:
                p.scatter("x", "y", size=6, **common)
    ticks = sorted({x for s in chart.series if s.mark not in ("hline", "vline") for x in s.x
                    if isinstance(x, (int, float)) and x > 0})
    if chart.x_log and 1 < len(ticks) <= 12:  # a sweep's own values on its log axis (1, 4, 16 …), as the notebooks
        p.xaxis.ticker = FixedTicker(ticks=ticks)
    p.add_tools(HoverTool(tooltips=[("", "$name"), (chart.x_label, "@x"), (chart.y_label, "@text")]))
    if not chart.y_log:  # throughput and shares from 0, as the notebooks draw them
        p.y_range.start = min([0.0] + [y for s in chart.series for y in s.y if isinstance(y, (int, float))])
    return p

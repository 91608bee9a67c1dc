"""The report page: its sections (summary, study question, comparison, figures, breakdowns, errors,
environment) put together with Bokeh's scripts and styles inlined, so it opens from disk with no network."""

from __future__ import annotations

import html
import os
import time
from pathlib import Path

import pandas as pd

from objperf.report import tables
from objperf.report.charts import Chart, timeline, ttfb_distribution
from objperf.report.material import Material, gather

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1100px;
       padding: 0 1.5em 3em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
.meta, .note { color: #666; font-size: 0.9em; } .question { font-size: 1.1em; font-style: italic; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
td, th { border: 1px solid #ddd; padding: 0.25em 0.6em; vertical-align: top; text-align: left; }
th { background: #f4f4f4; } table.numbers td { font-variant-numeric: tabular-nums; }
table.summary td:first-child, table.environment td:first-child { font-weight: 600; white-space: nowrap; }
.figure { margin: 1.2em 0; } .warning { color: #a00; }
"""


def _section(title: str, body: str) -> str:
    return f"<section><h2>{html.escape(title)}</h2>{body}</section>" if body else ""


def _with_labels(material: Material) -> pd.DataFrame:
    """Several datasets' rows, each with the name of the dataset it came from (``dataset``)."""
    rows = material.rows
    manifests = rows.attrs.get("manifests", {})
    names = {str(Path(p)): label for p, label in zip(material.paths, material.labels)}
    by_run = {run_id: names.get(str(Path(m.get("path", ""))), run_id) for run_id, m in manifests.items()}
    labelled = rows.assign(dataset=rows["run_id"].astype(str).map(by_run).fillna(rows["run_id"].astype(str)))
    labelled.attrs = rows.attrs
    return labelled


def charts_of(material: Material) -> list[Chart]:
    """The figures of the report: a study's own (beside the published values), and for any rows a throughput
    timeline (per host or per dataset where there are several) and the TTFB distribution."""
    rows = material.rows
    charts: list[Chart] = []
    if material.kind == "study":
        from objperf.report.study_charts import study_charts

        charts += study_charts(str(material.manifest.get("study")), material.steps, rows, material.summary)
    if material.kind == "runs":
        rows = _with_labels(material)
        charts.append(timeline(rows, by="dataset", aligned=True, title="Throughput over time, each dataset from "
                                                                        "its own start"))
        ttfb = ttfb_distribution(rows, by="dataset", title="Time to first byte by dataset")
    else:
        hosts = rows["host"].nunique() if "host" in rows else 1
        if material.kind != "study" or "sustained" != material.manifest.get("study"):
            charts.append(timeline(rows, by="host" if hosts > 1 else None,
                                   title="Throughput over time" + (" per host" if hosts > 1 else "")))
        ttfb = ttfb_distribution(rows, material.summary) if not any(c.key == "ttfb" for c in charts) else None
    return charts + ([ttfb] if ttfb else [])


def breakdowns(material: Material) -> str:
    """Per host, and per size (range, part, object) where the rows have more than one."""
    from objperf.analysis.saved import grouped
    from objperf.core.errors import UsageError

    rows = material.rows
    parts = []
    # Objects by their size as analyze --by size groups them: each size, or each power of two of many
    for by, heading in (("host", "host"), ("range_size", "range size"), ("part_size", "part size"),
                        ("size", "object size")):
        try:
            groups = grouped(rows, by)
        except UsageError:  # not a column or setting of these rows
            continue
        groups = groups.dropna(subset=[by])
        if len(groups) > 1:
            parts.append(f"<h3>per {html.escape(heading)}</h3>" + tables.group_table(groups, by))
    return "".join(parts)


STEP_COLUMNS = {"requests": "requests", "errors": "failed", "steady_gbps": "steady (Gbps)",
                "requests_per_s": "requests/s", "ttfb_ms_p50": "TTFB p50 (ms)", "ttfb_ms_p99": "TTFB p99 (ms)"}


def steps_table(material: Material) -> str:
    steps = material.steps
    grid = [c for c in material.manifest.get("grid", []) if isinstance(c, str) and c in steps.columns]
    extra = [c for c in ("variant", "replicas", "direction", "mode", "family", "streams") if c in steps.columns
             and c not in grid]
    shown = [c for c in ("step", "rep", *grid, *extra, *STEP_COLUMNS) if c in steps.columns]
    return tables.table([STEP_COLUMNS.get(c, c.replace("_", " ")) for c in shown],
                        [[tables._number(v) for v in row] for row in steps[shown].itertuples(index=False)],
                        cls="numbers")


def body_of(material: Material) -> tuple[str, list[Chart]]:
    manifest = material.manifest
    title = ", ".join(material.labels)
    parts = [f"<h1>objperf report: {tables.esc(title)}</h1>",
             f'<p class="meta">{material.kind}: {len(material.rows):,} requests; made '
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by objperf "
             f"{tables.esc(_version())}</p>"]
    if material.kind == "study":
        from objperf.options.names import STUDY_NAMES
        from objperf.studies.listing import question

        name = str(manifest.get("study"))
        parameters = manifest.get("parameters") if isinstance(manifest.get("parameters"), dict) else {}
        how = f"{'quick' if parameters.get('quick') else 'full'} study, {manifest.get('steps_done', '?')} steps"
        parts.append(f'<p class="question">The {tables.esc(name)} study: '
                     f"{tables.esc(question(name)) if name in STUDY_NAMES else ''}</p><p class='meta'>"
                     f"{tables.esc(how)}</p>")
    workload = manifest.get("workload") if material.kind == "run" else None
    parts.append(_section("Summary", tables.summary_table(material.summary, workload if isinstance(
        workload, dict) else None)))
    if material.kind == "runs":
        parts.append(_section("Comparison", comparison(material)))
    charts = charts_of(material)
    figures = "".join(f'<div class="figure" id="figure-{i}"><div class="objperf-figure" data-key="'
                      f'{html.escape(c.key)}">{{{{ figure {i} }}}}</div>'
                      + (f'<p class="note">{tables.esc(c.note)}</p>' if c.note else "") + "</div>"
                      for i, c in enumerate(charts))
    parts.append(_section("Figures", '<p class="note">Hover for values; drag to zoom a box, the wheel to zoom, '
                                     'a legend entry to hide or show its series.</p>' + figures))
    if material.kind == "study":
        parts.append(_section("Steps", steps_table(material)))
    parts.append(_section("Breakdowns", breakdowns(material)))
    parts.append(_section("Errors by HTTP status and S3 code", tables.error_table(material.rows)
                          or "<p>No request failed.</p>"))
    parts.append(_section("Environment and provenance", "".join(
        tables.environment_table(m, label) for m, label in zip(material.manifests, material.labels))))
    return "".join(parts), charts


def comparison(material: Material) -> str:
    from objperf.analysis.diff import compare

    diff = compare(*material.paths, labels=material.labels)
    mismatches = "".join(f'<p class="warning">{tables.esc(line)}</p>' for line in diff.attrs.get("mismatches", []))
    return (mismatches + tables.diff_table(diff) + '<p class="note">A throughput change is beyond noise when it is '
            "larger than the runs' own spread (the standard deviation of their per-second throughput).</p>")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("objperf")
    except PackageNotFoundError:
        return "(not installed)"


def render(material: Material) -> str:
    """The whole page, every script and style inlined."""
    from objperf.core.extras import imported

    imported("bokeh", "objperf report")
    from bokeh.embed import components
    from bokeh.resources import Resources

    inlined = Resources(mode="inline", components=["bokeh"])  # the core alone: no widgets, tables, MathJax
    body, charts = body_of(material)
    from objperf.report.draw import figure_of

    script, divs = components([figure_of(c) for c in charts]) if charts else ("", [])
    for i, div in enumerate(divs):
        body = body.replace(f"{{{{ figure {i} }}}}", div)
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>objperf report: {tables.esc(', '.join(material.labels))}</title>"
            f"<style>{STYLE}</style>{inlined.render_css()}{inlined.render_js()}{script}</head>"
            f"<body>{body}</body></html>")


def writable(out: str | Path) -> Path:
    """``out`` as a path a report can be written to (its directory made), or one line saying why not."""
    from objperf.core.errors import UsageError

    out = Path(out)
    if out.is_dir():
        raise UsageError(f"cannot write the report to {out}: it is a directory (give a FILE.html)")
    above = next((p for p in out.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise UsageError(f"cannot write the report to {out}: {above} is a file, not a directory")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {out}: {exc.strerror}") from None
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise UsageError(f"cannot write the report to {out}: permission denied")
    return out


def build_report(paths: list[str | Path], out: str | Path, *, labels: list[str] | None = None) -> Path:
    """Write the report of the local datasets ``paths`` (runs, a study, bundles) to ``out``; its path."""
    from objperf.core.errors import UsageError

    out = writable(out)
    page = render(gather(paths, labels))
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the report to {out}: {exc.strerror}") from None
    return out

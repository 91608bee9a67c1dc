"""``objperf report``: each kind of report (a read run, a write run, a study, two runs, a bundle, an s3://
dataset) opened from disk in headless Chromium — no JavaScript error, every figure drawn, a screenshot that is
not blank, the numbers ``objperf analyze --json`` gives for the same paths, and no request to the network."""

from __future__ import annotations

import html
import io
import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from chromium import CHROMIUM, Browser

from conftest import RANGE, run_cli
from objperf.plan.reads import ReadWorkload
from objperf.plan.writes import WriteWorkload
from objperf.run.reads import run_read
from objperf.run.writes import run_write
from objperf.s3.target import resolve_read_target

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
STUDIES = sorted(p.name for p in SAMPLE.iterdir() if (p / "steps.parquet").exists())

# Each figure's canvases and SVGs, through Bokeh's shadow roots, that the page laid out at a size.
DRAWN = """(() => { const deep = (node, out) => {
  if (node.tagName === 'CANVAS' || node.tagName === 'svg') out.push(node);
  if (node.shadowRoot) deep(node.shadowRoot, out);
  for (const c of node.children || []) deep(c, out); return out; };
  return Array.from(document.querySelectorAll('.objperf-figure')).map(f => deep(f, []).filter(c => {
    const r = c.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length); })()"""
BOXES = """Array.from(document.querySelectorAll('.objperf-figure')).map(f => { f.scrollIntoView();
  const r = f.getBoundingClientRect(); return {x: r.left + window.scrollX, y: r.top + window.scrollY,
  width: r.width, height: r.height}; })"""


@pytest.fixture(scope="module")
def runs(store, tmp_path_factory):
    """A read run, a second one, and a write run, each a second or so against the session store."""
    where = tmp_path_factory.mktemp("report")
    target = resolve_read_target(f"s3://{store.bucket}/data/odd.bin", store.server.settings())
    reads = [run_read(target, ReadWorkload(concurrency=c, threads=1, range_size=RANGE, duration=1.0),
                      out=where / f"read-c{c}") for c in (2, 4)]
    write = run_write(store.server.settings(), WriteWorkload(object_size=6 << 20, part_size=5 << 20, concurrency=2,
                                                             threads=1, buckets=(store.bucket,), prefix="report/",
                                                             requests=3, cleanup=True), out=where / "write")
    return {"read": reads[0].dataset, "read4": reads[1].dataset, "write": write.dataset, "where": where}


class Loads(HTMLParser):
    """Every address a tag of the page would load (script, link, img, iframe …)."""

    def __init__(self):
        super().__init__()
        self.addresses: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href", "data", "poster", "srcset") and value:
                self.addresses.append(f"<{tag} {name}={value}>")


def assert_offline(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    loads = Loads()
    loads.feed(text)
    remote = [a for a in loads.addresses if "http:" in a or "https:" in a or "=//" in a]
    assert not remote, remote
    assert "<script src" not in text and '<link rel="stylesheet"' not in text


def analyzed(*paths) -> dict:
    proc = run_cli("objperf", "analyze", *map(str, paths), "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["summary"]


def report(*paths, out: Path, extra: tuple[str, ...] = (), env=None) -> Path:
    proc = run_cli("objperf", "report", *map(str, paths), "-o", str(out), *extra, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and f"report {out}" in proc.stderr
    return out


def pixel_variety(png: bytes) -> int:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 20) or [])


def check_in_browser(browser: Browser, page: Path, summary: dict) -> None:
    """Opened from disk: no error, each figure drawn (and not blank), the dataset's numbers, no network."""
    browser.errors.clear()
    browser.requests.clear()
    browser.open(page.as_uri())
    counts = browser.wait_for(f"(() => {{ const n = {DRAWN}; return n.length && n.every(c => c > 0) && n; }})()",
                              what=f"every figure of {page.name} drawn")
    assert len(counts) >= 2  # a timeline and a distribution at least
    for box in browser.evaluate(BOXES):
        assert box["width"] > 100 and box["height"] > 100, box
        assert pixel_variety(browser.screenshot(box)) > 30, f"a blank figure in {page.name}: {box}"
    assert pixel_variety(browser.screenshot()) > 30
    text = browser.evaluate("document.body.innerText")
    assert f"{summary['gbps']:.3f} Gbps" in text
    assert f"{summary['requests']:,}" in text
    assert not browser.errors, browser.errors
    assert {url.partition(":")[0] for url in browser.requests} <= {"file", "data", "blob", "about"}, browser.requests
    assert_offline(page)


def test_chromium_is_there():
    assert CHROMIUM, "make test installs Debian's chromium (BROWSER_DEBS)"


@pytest.mark.integration
@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", ["read run", "write run", "two runs", "bundle of a run"])
def test_each_kind_of_run_report_opens_offline_and_shows_its_numbers(kind, runs, tmp_path):
    if kind == "bundle of a run":
        from objperf.dataset.bundle import pack

        paths = [pack(runs["read"], tmp_path / "read.tar.gz")]
    else:
        paths = {"read run": [runs["read"]], "write run": [runs["write"]],
                 "two runs": [runs["read"], runs["read4"]]}[kind]
    page = report(*paths, out=tmp_path / "report.html")
    assert page.stat().st_size < 3 << 20
    text = page.read_text(encoding="utf-8")
    if kind == "two runs":  # the diff and its noise verdicts
        assert "Comparison" in text and "noise verdict" in text and ("within noise" in text or "beyond noise" in text
                                                                    or "cannot tell" in text)
    if kind == "write run":
        assert "acknowledged" in text
    system = json.loads((runs["read"] / "manifest.json").read_text())["system"]
    for fact in ("libcurl_version", "tls_version", "kernel", "cpu_model"):
        assert str(system[fact]) in text, fact
    with Browser() as browser:
        check_in_browser(browser, page, analyzed(*paths))


@pytest.mark.timeout(400)
def test_every_sample_study_opens_with_its_question_and_figures(tmp_path):
    """Every study of data/sample/ (and one of them as a bundle): its question, its figures beside the published
    values, its numbers, in a real browser."""
    from objperf.dataset.bundle import pack
    from objperf.studies.listing import question

    pages = {name: report(SAMPLE / name, out=tmp_path / f"{name}.html") for name in STUDIES}
    bundle = pack(SAMPLE / "write-part-size", tmp_path / "write-part-size.zip")
    pages["bundle"] = report(bundle, out=tmp_path / "bundle.html")
    with Browser() as browser:
        for name, page in pages.items():
            assert page.stat().st_size < 10 << 20
            study = "write-part-size" if name == "bundle" else name
            assert html.escape(question(study)) in page.read_text(encoding="utf-8")
            check_in_browser(browser, page, analyzed(bundle if name == "bundle" else SAMPLE / name))
    errors = pages["hot-object"].read_text(encoding="utf-8").partition("Errors by HTTP status")[2]
    assert "ErrTooManyRequest" in errors and "503" in errors  # the throttled requests, by status and S3 code
    assert "per part size" in pages["write-part-size"].read_text(encoding="utf-8")


def test_a_study_has_an_interactive_figure_for_each_of_its_notebook_figures():
    from objperf.dataset.directory import load, load_steps
    from objperf.plots.studies import FIGURES
    from objperf.report.study_charts import study_charts

    for name in STUDIES:
        charts = study_charts(name, load_steps(SAMPLE / name), load(SAMPLE / name), {})
        assert len(charts) >= len(FIGURES[name]), name
        assert any(s.reference for c in charts for s in c.series), f"{name}: no published figure on its axes"
        for chart in charts:
            assert chart.series and all(len(s.x) or len(s.y) for s in chart.series), (name, chart.key)


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_dataset_in_a_store_is_reported(store, tmp_path):
    url = f"s3://{store.bucket}/report-pushed/"
    pushed = run_cli("objperf", "push", str(SAMPLE / "mixed"), url, "--endpoint", store.server.endpoint,
                     env=store.env())
    assert pushed.returncode == 0, pushed.stderr
    page = report(url, out=tmp_path / "pushed.html", extra=("--endpoint", store.server.endpoint), env=store.env())
    text = page.read_text(encoding="utf-8")
    summary = analyzed(SAMPLE / "mixed")
    assert f"{summary['gbps']:.3f} Gbps" in text and "report-pushed" in text
    assert store.server.secret_key not in text


def many_rows(n: int) -> pd.DataFrame:
    """``n`` rows made from a sample study's, one after another in time."""
    from objperf.dataset.directory import load

    rows = load(SAMPLE / "read-concurrency")
    copies = -(-n // len(rows))
    span = float((rows["t_start"] + rows["total_s"]).max() - rows["t_start"].min())
    big = pd.concat([rows.assign(t_start=rows["t_start"] + i * span) for i in range(copies)], ignore_index=True)
    return big.iloc[:n]


@pytest.mark.timeout(120)
def test_a_million_rows_reach_the_page_as_a_few_thousand_points():
    from objperf.analysis.saved import summary_of
    from objperf.report.charts import CDF_POINTS, MAX_BINS, timeline, ttfb_distribution

    rows = many_rows(1_000_000)
    summary = summary_of(rows)
    line = timeline(rows)
    assert 100 <= len(line.series[0].x) <= MAX_BINS + 1
    whole = ttfb_distribution(rows, summary)
    assert "sketch" in whole.note and len(whole.series[0].x) < 2000
    assert abs(np.interp(0.5, whole.series[0].y, whole.series[0].x) - summary["ttfb_ms_p50"]) \
        < 0.05 * summary["ttfb_ms_p50"]
    few = ttfb_distribution(rows.iloc[:5000], None)
    assert len(few.series[0].x) <= CDF_POINTS


@pytest.mark.integration
@pytest.mark.parametrize("case", ["missing path", "not a dataset", "parent is a file", "out is a directory"])
def test_bad_input_is_one_line_and_exit_2(case, tmp_path):
    (tmp_path / "file.txt").write_text("not a dataset")
    paths, out = {"missing path": ([str(tmp_path / "nowhere")], tmp_path / "r.html"),
                  "not a dataset": ([str(tmp_path / "file.txt")], tmp_path / "r.html"),
                  "parent is a file": ([str(SAMPLE / "mixed")], tmp_path / "file.txt" / "r.html"),
                  "out is a directory": ([str(SAMPLE / "mixed")], tmp_path)}[case]
    proc = run_cli("objperf", "report", *paths, "-o", str(out), timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("objperf report: error: "), proc.stderr
    assert not (tmp_path / "r.html").exists()


@pytest.mark.integration
def test_the_api_writes_the_same_page_and_text_from_a_dataset_cannot_reach_it_as_markup(tmp_path):
    from objperf import api
    from objperf.report import build_report

    page = api.report(SAMPLE / "mixed", tmp_path / "mixed.html")
    assert page == tmp_path / "mixed.html" and "Reads and writes at once" in page.read_text(encoding="utf-8")
    paths = [SAMPLE / "mixed", SAMPLE / "key-fanout"]
    plain = build_report(paths, tmp_path / "plain.html", labels=["a", "b"]).read_text(encoding="utf-8")
    hostile = build_report(paths, tmp_path / "hostile.html",
                           labels=["</script><script>alert(1)</script>", "bad\x1b[31m<b>"]).read_text(encoding="utf-8")
    assert hostile.count("<script") == plain.count("<script") and "alert(1)</script>" not in hostile
    assert "<b>" not in hostile.partition("<body>")[2] and "\x1b" not in hostile

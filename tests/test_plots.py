"""Every figure function draws from the shipped sample datasets and labels its axes with units."""

import json
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

from objperf import load, plots  # noqa: E402
from objperf.analysis.published import load_published  # noqa: E402
from objperf.dataset.directory import load_steps  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
UNITS = ("(Gbps)", "(ms)", "(s)", "(%)", "requests", "share", "size", "concurrency", "threads", "family",
         "mode", "keys", "buckets", "streams", "time", "(× none)")


def steps(name):
    return load_steps(SAMPLE / name)


FIGURES = {
    "throughput over time": lambda: plots.throughput_over_time(load(SAMPLE / "sustained")),
    "ttfb distribution": lambda: plots.ttfb_distribution(load(SAMPLE / "read-concurrency"), hue="concurrency"),
    "concurrency curve": lambda: plots.throughput_against_concurrency(steps("read-concurrency")),
    "part size curves": lambda: plots.part_size_curves(steps("write-part-size")),
    "ip family bars": lambda: plots.grouped_bars(steps("ip-family"), x="family"),
    "key fanout bars": lambda: plots.grouped_bars(steps("key-fanout"), x="keys", y="gbps", hue="direction"),
    "bucket fanout bars": lambda: plots.grouped_bars(steps("bucket-fanout"), x="buckets", y="gbps", hue="direction"),
    "ttfb against size": lambda: plots.ttfb_against_size(steps("ttfb-size"), reference_ms=40),
    "hot object errors": lambda: plots.hot_object_errors(steps("hot-object"), threshold=128),
    "replica cure": lambda: plots.replica_cure(steps("hot-object")),
    "distance curves": lambda: plots.distance_curves(steps("wan"), gbps=1.0),
    "checksum costs": lambda: plots.checksum_costs(steps("checksums")),
    "sustained timeline": lambda: plots.sustained_timeline(load(SAMPLE / "sustained")),
    "timing runs": lambda: plots.timing_runs(load_published("s3_vs_r2_runs")),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_draws_with_units(name):
    ax = FIGURES[name]()
    assert ax.has_data() or ax.patches or ax.lines
    assert any(unit in ax.get_ylabel() for unit in UNITS), ax.get_ylabel()
    assert ax.get_xlabel() or name == "timing runs"
    assert ax.get_title()
    # what it was drawn from: the run's length and requests, or the steps and their requests
    notes = [t.get_text() for t in ax.texts if t.get_gid() == plots.NOTE]
    assert notes and "requests" in notes[0] or name == "timing runs", notes


def test_figures_land_on_a_given_axes():
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2)
    assert plots.throughput_against_concurrency(steps("client-cpu"), x="threads", ax=left) is left
    assert plots.hot_object_errors(steps("hot-object"), ax=right) is right


def test_sample_datasets_are_whole():
    studies = [p for p in SAMPLE.iterdir() if p.is_dir() and json.loads((p / "manifest.json").read_text())["kind"]
               == "study"]
    from objperf.options.names import STUDY_NAMES

    assert sorted(p.name for p in studies) == sorted(STUDY_NAMES)  # every study has its sample
    for directory in sorted(studies):
        rows = load(directory)
        assert rows.attrs["manifest"]["status"] == "complete", directory
        assert len(rows) > 0 and len(load_steps(directory)) == rows.attrs["manifest"]["steps_done"]


def test_published_bounds_are_drawn_as_bounds():
    import pandas as pd

    published = pd.DataFrame({"condition": ["8 MiB parts", "32 MiB parts", "128 MiB parts"],
                              "gbps": [19.0, 26.8, 19.0], "bound": ["max", "exact", "max"]})
    ax = plots.grouped_bars(published, x="condition", y="gbps", bound="bound")
    bars = ax.containers[0]
    assert [bar.get_hatch() for bar in bars] == ["//", None, "//"]
    labels = [text.get_text() for text in ax.texts]
    assert labels == ["≤ 19.00", "26.80", "≤ 19.00"]


def test_a_runs_figures_carry_its_context_its_percentiles_and_its_end():
    import numpy as np
    import pandas as pd

    from objperf.plots.figures import run_context

    manifest = {"kind": "read", "run_id": "0123456789abcdef", "target": {"endpoint": "https://store.example:9000"},
                "workload": {"concurrency": 64, "range_size": 8 << 20}}
    assert run_context(manifest) == "store.example:9000: GETs of 8 MiB ranges, 64 in flight, run 0123456789abcdef"
    seconds = np.arange(100) * 0.1
    frame = pd.DataFrame({"t_start": 1e9 + seconds, "ttfb_s": 0.01 + seconds / 1000, "total_s": 0.1,
                          "bytes": 1 << 20, "status": 206, "op": "GET",
                          "curl_code": [0] * 97 + [42] * 3})
    ttfb = plots.ttfb_distribution(frame)
    marks = [text.get_text() for text in ttfb.texts if text.get_gid() != plots.NOTE]
    notes = [text.get_text() for text in ttfb.texts if text.get_gid() == plots.NOTE]
    assert notes == ["100 GETs with a first byte, of a 10.0 s run, 100 requests"]  # 3 of them cut after it
    assert [m.split()[0] for m in marks] == ["p50", "p90", "p99"] and all(m.endswith(" ms") for m in marks)
    timeline = plots.throughput_over_time(frame)
    assert any("3 requests cut in flight" in t.get_text() for t in timeline.get_legend().get_texts())


def test_a_published_bound_beside_local_bars_is_drawn_as_a_bound():
    import pandas as pd

    local = pd.DataFrame({"client": ["objperf", "s5cmd"], "gbps": [5.0, 3.0]})
    published = pd.DataFrame({"client": ["s5cmd", "warp", "every loader"], "gbps": [51.2, 54.2, 50.0],
                              "bound": ["exact", "exact", "min"]})
    ax = plots.grouped_bars(plots.beside_published(local, published, x="client"), x="client", y="gbps",
                            hue="source", bound="bound")
    bars = [bar for container in ax.containers for bar in container]
    hatched = [round(bar.get_height(), 1) for bar in bars if bar.get_hatch()]
    assert hatched == [50.0]  # the bound, and only it, whatever bars seaborn left out
    texts = [t.get_text() for t in ax.texts]
    assert "≥ 50.00" in texts and "51.20" in texts and "5.00" in texts


def test_an_elbencho_phases_table_draws_each_operation_apart():
    import pandas as pd

    phases = pd.DataFrame({"operation": ["WRITE", "READ", "WRITE", "READ"], "concurrency": [4, 4, 16, 16],
                           "steady_gbps": [1.0, 5.0, 2.0, 9.0], "requests": [10, 10, 10, 10]})
    ax = plots.throughput_against_concurrency(phases)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(labels) == ["READ", "WRITE"]


def test_cost_lines_that_coincide_stay_apart():
    from objperf.analysis.cost import cost_per_tib

    ax = plots.cost_per_tib(cost_per_tib([1 << 20, 8 << 20, 32 << 20], direction="write"))
    styles = {(line.get_linestyle(), line.get_marker()) for line in ax.lines if len(line.get_xdata())}
    providers = len({t.get_text() for t in ax.get_legend().get_texts()})
    assert providers >= 5 and len(styles) == providers  # each provider its own dashes and marker

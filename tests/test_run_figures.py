"""A run's figures draw what was measured, over every run kind (fetch, put, mixed, a cluster's): a write as the
store acknowledged it, a line per direction, the run's end where it measured it, on a time axis from its first
request's start; only figures that have something to draw; the run's context as its manifest says it."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

matplotlib.use("Agg")

from conftest import run_cli  # noqa: E402
from objperf import load, plots  # noqa: E402
from objperf.analysis.stats import throughput_timeline  # noqa: E402
from objperf.plots.figures import run_context, run_figures  # noqa: E402

pytestmark = pytest.mark.timeout(600)
MIB = 1 << 20
LABELS = plots.DIRECTION_LABELS
END = "run ended"


def cli_run(store, out, *args):
    done = run_cli("objperf", *args, "--endpoint", store.server.endpoint, "--duration", "2s", "--out", str(out),
                   "--figures", env=store.env(), timeout=300)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def runs(store, tmp_path_factory):
    """One dataset of each run kind, made by the command with --figures, on the real server."""
    where = tmp_path_factory.mktemp("kinds")
    read = f"s3://{store.bucket}/data/odd.bin"
    made = {}
    for kind, args in {
        "fetch": ("fetch", read, "--range-size", "1MiB", "-c", "2"),
        # parts of 5 MiB, four at a time for 2 s: parts in flight at the end are cut, sent but never acknowledged
        "put": ("put", f"s3://{store.bucket}/figures-put/", "--object-size", "20MiB", "--part-size", "5MiB",
                "-c", "4", "--cleanup"),
        "mixed": ("mixed", read, "--write-to", f"s3://{store.bucket}/figures-mixed/", "--range-size", "1MiB",
                  "--object-size", "20MiB", "--part-size", "5MiB", "--read-concurrency", "2",
                  "--write-concurrency", "4", "--cleanup"),
        "cluster": ("fetch", read, "--range-size", "1MiB", "-c", "2", "--local-cluster", "2"),
        "cluster-mixed": ("mixed", read, "--write-to", f"s3://{store.bucket}/figures-cluster/", "--range-size",
                          "1MiB", "--object-size", "20MiB", "--part-size", "5MiB", "--read-concurrency", "2",
                          "--write-concurrency", "3", "--cleanup", "--local-cluster", "2"),
    }.items():
        cli_run(store, where / kind, *args)
        made[kind] = where / kind
    return made


DIRECTIONS = {"fetch": ["read"], "put": ["write"], "mixed": ["read", "write"], "cluster": ["read"],
              "cluster-mixed": ["read", "write"]}


def timeline_lines(ax):
    """The timeline's lines (not the run-end marker), by label."""
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith(END)}


def drawn_bytes(line) -> float:
    """The bytes a step line of Gbps stands for: each step's height times its width."""
    x, y = line.get_xdata(), line.get_ydata()
    return float(np.sum(np.asarray(y[:-1]) * np.diff(x))) * 1e9 / 8


def acknowledged(rows: pd.DataFrame, direction: str) -> float:
    """What a direction's rows did: a write's bytes the store acknowledged (answered 2xx); a read's received,
    a cut one's what had arrived; a failure's none."""
    ops = {"read": ["GET"], "write": ["PUT", "UPLOAD_PART"]}[direction]
    mine = rows[rows["op"].astype(str).isin(ops)]
    ok = (mine["curl_code"] == 0) & (mine["status"] >= 200) & (mine["status"] < 300)
    cut = (mine["curl_code"] == 42) & (mine["status"] < 300)
    return float(mine.loc[ok | (cut & (direction == "read")), "bytes"].sum())


@pytest.mark.integration
@pytest.mark.parametrize("kind", sorted(DIRECTIONS))
def test_a_runs_figures_draw_what_it_measured(runs, kind):
    rows = load(runs[kind])
    manifest = rows.attrs["manifest"]
    summary = manifest["summary"]
    drawn = dict(run_figures(rows))
    # only what has data: a run of writes reads nothing, so it has no time to first byte to draw
    assert sorted(drawn) == sorted(["throughput.png"] + (["ttfb.png"] if "read" in DIRECTIONS[kind] else []))
    assert sorted(p.name for p in runs[kind].glob("*.png")) == sorted(drawn)  # what the command wrote
    for name, ax in drawn.items():
        assert ax.has_data(), name
        title = ax.get_title()
        assert "_" not in title.splitlines()[0] and title.splitlines()[0][0].isupper(), title  # words, no column
        assert ax.get_xlabel().endswith("(s)" if name == "throughput.png" else "(ms)"), ax.get_xlabel()
    timeline = drawn["throughput.png"]
    assert timeline.get_ylabel() == "throughput (Gbps)"
    assert [child.get_ylabel() for child in timeline.child_axes] == ["throughput (MiB/s)"]
    lines = timeline_lines(timeline)
    assert sorted(lines) == sorted(LABELS[d] for d in DIRECTIONS[kind])  # one line per direction, labelled
    legend = [t.get_text() for t in timeline.get_legend().get_texts()]
    assert set(lines) <= set(legend)
    for direction in DIRECTIONS[kind]:
        line = lines[LABELS[direction]]
        assert line.get_xdata()[0] == 0  # the time axis starts at the run's first request's start
        assert drawn_bytes(line) == pytest.approx(acknowledged(rows, direction), rel=1e-6, abs=1)
    # the run's end, where the run measured it: its wall time from the first start (a cluster's window, from
    # the first host's start), on the lines' axis
    (marker,) = [line for line in timeline.get_lines() if line.get_label().startswith(END)]
    end = summary["wall_s"] + (summary.get("start_spread_s") or 0.0)
    assert marker.get_xdata()[0] == pytest.approx(end)
    # ... which is the end of its transfers, not of its teardown (the uploads aborted after its time was up)
    moved = rows[rows["slot"] >= 0]
    assert end <= float((moved["t_start"] + moved["total_s"]).max() - rows["t_start"].min()) + 0.5
    assert f"{end:.1f} s" in marker.get_label()
    assert timeline.get_xlim()[0] == 0


@pytest.mark.integration
def test_a_write_runs_timeline_holds_only_acknowledged_bytes(runs):
    """The put run's parts cut at its end were sent, not acknowledged: the figure holds less than was sent,
    and says how much it left out."""
    rows = load(runs["put"])
    writes = rows[rows["op"].astype(str).isin(["PUT", "UPLOAD_PART"])]
    sent = float(writes["bytes"].sum())
    kept = acknowledged(rows, "write")
    assert sent > kept > 0, "the run should have had parts cut at its end and parts acknowledged"
    (ax,) = [ax for name, ax in run_figures(rows) if name == "throughput.png"]
    assert drawn_bytes(timeline_lines(ax)[LABELS["write"]]) == pytest.approx(kept, rel=1e-6)
    note = next(t.get_text() for t in ax.texts if t.get_gid() == plots.NOTE)
    assert "sent in writes the store did not acknowledge" in note


@pytest.mark.integration
@pytest.mark.parametrize("kind, says", [("fetch", ", 2 in flight"), ("cluster", "2 hosts × 2 in flight"),
                                        ("put", "4 in flight"), ("mixed", "; "),
                                        ("cluster-mixed", "2 hosts × 2 in flight; uploads of 20 MiB objects in "
                                                          "5 MiB parts, 2 hosts × 3 in flight")])
def test_a_runs_figures_say_what_its_manifest_says(runs, kind, says):
    rows = load(runs[kind])
    for _, ax in run_figures(rows):
        assert says in ax.get_title().replace("\n", " ")
        assert rows.attrs["manifest"]["run_id"] in ax.get_title()


def manifest_of(kind: str, hosts: int, **workload) -> dict:
    sides = {"read": {"concurrency": 8, "range_size": 8 * MIB},
             "write": {"concurrency": 6, "object_size": 64 * MIB, "part_size": 16 * MIB}}
    work = {"read": sides["read"], "write": sides["write"]} if kind == "mixed" else {**sides[kind], **workload}
    target = {"endpoint": "https://user:secret@store.example:9000"}
    return {"kind": kind, "run_id": "abc", "workload": work,
            "target": {"read": target, "write": target} if kind == "mixed" else target,
            **({"hosts": [{"label": f"h{i}"} for i in range(hosts)]} if hosts else {})}


@pytest.mark.parametrize("hosts", [0, 1, 2, 5])
@pytest.mark.parametrize("kind", ["read", "write", "mixed"])
def test_a_runs_context_counts_every_hosts_requests_in_flight(kind, hosts):
    said = run_context(manifest_of(kind, hosts))
    assert said.startswith("store.example:9000: ") and "secret" not in said and said.endswith(", run abc")
    each = {"read": ["8"], "write": ["6"], "mixed": ["8", "6"]}[kind]
    for n in each:
        assert (f"{hosts} hosts × {n} in flight" if hosts > 1 else f", {n} in flight") in said, said
    if hosts < 2:
        assert "hosts" not in said


def test_a_context_of_a_manifest_made_up_is_words_never_a_traceback():
    for manifest in ({}, {"kind": "write", "workload": "lots", "target": ["x"]}, {"kind": "mixed", "workload":
                     {"read": 3, "write": {"concurrency": True}}, "hosts": "many"}, {"kind": ["read"]}):
        assert isinstance(run_context(manifest), str)


# -- the class, over rows hypothesis makes up ---------------------------------------------------------------

OPS = ["GET", "PUT", "UPLOAD_PART", "CREATE_MPU", "COMPLETE_MPU"]
row = st.tuples(st.sampled_from(OPS), st.sampled_from([200, 204, 206, 403, 503, 0]), st.sampled_from([0, 0, 42, 28]),
                st.integers(0, 64 * MIB), st.floats(0, 20), st.floats(0, 1), st.floats(0, 5))


def frame_of(made) -> pd.DataFrame:
    ops, status, codes, nbytes, start, ttfb_share, total = zip(*made)
    total = np.asarray(total)
    body = np.isin(ops, ["GET", "PUT", "UPLOAD_PART"])  # the control plane's rows move no body
    return pd.DataFrame({"op": pd.Categorical(ops, categories=OPS), "status": np.asarray(status, np.int16),
                         "curl_code": np.asarray(codes, np.int32), "bytes": np.where(body, nbytes, 0).astype(np.int64),
                         "t_start": 1e9 + np.asarray(start), "ttfb_s": total * np.asarray(ttfb_share),
                         "total_s": total, "slot": 0, "thread": 0})


def delivered(timeline: pd.DataFrame, bin_s: float) -> float:
    return float(timeline["gbps"].sum()) * 1e9 / 8 * bin_s


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(made=st.lists(row, min_size=1, max_size=40), bin_s=st.sampled_from([0.25, 1.0]))
def test_a_timeline_holds_a_writes_acknowledged_bytes_never_more(tmp_path_factory, made, bin_s):
    """For any rows of writes, reads, or both: the timeline's write bytes are the rows' acknowledged ones, its
    read bytes those received; the scanned timeline is the loaded one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from objperf.analysis.scan import timeline

    rows = frame_of(made)
    by_direction = throughput_timeline(rows, bin_s=bin_s, by="direction")
    for direction in ("read", "write"):
        mine = by_direction[by_direction["direction"] == direction]
        expected = acknowledged(rows, direction)
        assert delivered(mine, bin_s) == pytest.approx(expected, rel=1e-6, abs=1e-3)
        assert delivered(mine, bin_s) <= expected * (1 + 1e-6) + 1e-3
    whole = throughput_timeline(rows, bin_s=bin_s)
    assert delivered(whole, bin_s) == pytest.approx(acknowledged(rows, "read") + acknowledged(rows, "write"),
                                                    rel=1e-6, abs=1e-3)
    dataset = tmp_path_factory.mktemp("rows")
    (dataset / "requests").mkdir()
    pq.write_table(pa.Table.from_pandas(rows.assign(op=rows["op"].astype(str)), preserve_index=False),
                   dataset / "requests" / "part-00000.parquet")
    scanned = timeline([dataset], bin_s=bin_s)
    assert [t for t, _, _ in scanned] == pytest.approx(list(whole["t_s"]), abs=1e-9)
    assert [g for _, g, _ in scanned] == pytest.approx(list(whole["gbps"]), rel=1e-6, abs=64 * 8 / bin_s / 1e9)


@settings(max_examples=40, deadline=None)
@given(made=st.lists(row, min_size=1, max_size=30))
def test_every_figure_of_any_rows_has_data_or_is_not_drawn(made):
    """No empty axes, no figure of nothing: each figure drawn has data, a title and labelled axes; the TTFB
    figure is drawn exactly when a GET had a first byte."""
    import matplotlib.pyplot as plt

    rows = frame_of(made)
    drawn = dict(run_figures(rows))
    gets = rows[(rows["op"] == "GET") & rows["curl_code"].isin([0, 42]) & rows["status"].between(200, 299)
                & (rows["ttfb_s"] > 0)]
    assert ("ttfb.png" in drawn) == (len(gets) > 0)
    assert "throughput.png" in drawn
    for name, ax in drawn.items():
        assert ax.has_data() and ax.get_title() and ax.get_xlabel() and ax.get_ylabel(), name
        lines = timeline_lines(ax) if name == "throughput.png" else {}
        held = [d for d in ("read", "write") if (rows["op"].isin(["GET"] if d == "read" else ["PUT", "UPLOAD_PART"])
                                                ).any()]
        if name == "throughput.png" and held:
            assert sorted(lines) == sorted(LABELS[d] for d in held)
    plt.close("all")


def test_figures_of_nothing_are_refused_in_words():
    rows = frame_of([("UPLOAD_PART", 200, 0, MIB, 0.0, 0.5, 1.0)])
    with pytest.raises(plots.NothingToDraw, match="no GET had a first byte"):
        plots.ttfb_distribution(rows)
    with pytest.raises(plots.NothingToDraw, match="no request"):
        plots.throughput_over_time(rows.iloc[:0])
    from objperf.analysis.sketch import Sketch

    with pytest.raises(plots.NothingToDraw):
        plots.sketch_distribution(Sketch())
    assert run_figures(rows.iloc[:0]) == []


# -- runs compared (objperf diff --figures) --------------------------------------------------------------------

@pytest.mark.integration
def test_diff_draws_one_figure_per_kind_holding_every_run(runs, tmp_path):
    from objperf.analysis.diff import compare_runs, load_runs
    from objperf.plots.diffs import METRIC_WORDS, diff_figures

    kinds = ["fetch", "put", "mixed", "cluster"]
    out = tmp_path / "figures"
    done = run_cli("objperf", "diff", *(str(runs[k]) for k in kinds), "--figures", str(out))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["changes.png", "throughput.png", "ttfb.png"]
    assert done.stderr.count("figure ") == 3
    loaded = load_runs(*(runs[k] for k in kinds))
    drawn = dict(diff_figures(loaded, compare_runs(loaded)))
    assert sorted(drawn) == ["changes.png", "throughput.png", "ttfb.png"]
    for name, ax in drawn.items():
        assert ax.has_data() and "_" not in ax.get_title(), name
        assert ax.get_xlabel().endswith(("(s)", "(ms)", "(%)")), ax.get_xlabel()
    timeline = drawn["throughput.png"]
    assert timeline.get_title() == "Throughput over time" and timeline.get_ylabel() == "throughput (Gbps)"
    lines = {line.get_label(): line for line in timeline.get_lines()}
    assert sorted(lines) == sorted(["fetch", "put (writes, acknowledged)", "mixed: read",
                                    "mixed: write (acknowledged)", "cluster"])
    for label, line in lines.items():  # each from its own start, holding what it measured
        run = label.split(":")[0].split(" ")[0]
        assert line.get_xdata()[0] == 0
        direction = "write" if "write" in label else "read"
        assert drawn_bytes(line) == pytest.approx(acknowledged(loaded[run], direction), rel=1e-6, abs=1)
    ttfb = drawn["ttfb.png"]
    assert ttfb.get_title() == "Time to first byte"
    assert sorted(line.get_label().split(":")[0] for line in ttfb.get_lines()) == ["cluster", "fetch", "mixed"]
    assert "no GET in put" in next(t.get_text() for t in ttfb.texts if t.get_gid() == plots.NOTE)
    changes = drawn["changes.png"]
    assert changes.get_title() == "What changed, beyond the noise"
    assert [t.get_text() for t in changes.get_yticklabels()] == list(METRIC_WORDS.values())
    assert "cluster against fetch" in changes.get_xlabel()
    legend = [t.get_text() for t in changes.get_legend().get_texts()]
    assert "noise: the runs' own per-second spread" in legend  # each bar's verdict: test_changes_are_coloured_...
    assert set(legend) <= {"noise: the runs' own per-second spread", "beyond the noise", "within the noise",
                           "no noise measured"}


@pytest.mark.integration
def test_diff_of_write_runs_draws_no_ttfb_and_says_a_null_change_is_within_the_noise(runs, tmp_path):
    from objperf.plots.figures import draw_diff_figures

    drawn = draw_diff_figures([runs["put"], runs["put"]], tmp_path / "f")
    assert [p.name for p in drawn] == ["throughput.png", "changes.png"]


def test_changes_are_coloured_by_their_verdict():
    from objperf.analysis.diff import compare_runs
    from objperf.plots.diffs import VERDICT_COLOURS, changes_beyond_noise

    rng = np.random.default_rng(5)
    runs = {}
    for label, size in (("before", MIB), ("after", 3 * MIB)):  # three times the bytes a request: beyond any noise
        starts = np.sort(rng.random(400) * 10)
        runs[label] = pd.DataFrame({
            "op": pd.Categorical(["GET"] * 400), "status": np.int16(206), "curl_code": np.int32(0),
            "bytes": np.int64(size), "t_start": 1e9 + starts, "ttfb_s": 0.01, "total_s": 0.1,
            "slot": np.arange(400) % 4, "thread": 0, "s3_error": "", "run_id": label, "host": "h"})
    table = compare_runs(runs)
    ax = changes_beyond_noise(table)
    gbps = table[table["metric"] == "gbps"].iloc[0]
    assert gbps["beyond_noise"] is True and gbps["change_pct"] == pytest.approx(200, rel=0.05)
    assert gbps["noise_pct"] > 0
    coloured = [bar for bar in ax.patches if bar.get_width() == pytest.approx(gbps["change_pct"])]
    assert coloured and matplotlib.colors.same_color(coloured[0].get_facecolor(), VERDICT_COLOURS[True])

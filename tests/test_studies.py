"""Every study's --quick run on the embedded SeaweedFS: the whole grid, in one loadable dataset."""

from __future__ import annotations

import pytest

from conftest import run_cli
from objperf import load
from objperf.core.schema import UNKNOWN_SIZE
from objperf.dataset.directory import load_samples, load_steps

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GRIDS = {
    "read-concurrency": ("concurrency", [1, 4, 16]),
    "write-part-size": ("part_size", [8 << 20, 8 << 20, 32 << 20, 32 << 20, 128 << 20, 128 << 20]),
    "key-fanout": ("keys", [1, 1, 4, 4]),
    "bucket-fanout": ("buckets", [1, 1, 2, 2]),
    "ip-family": ("family", ["IPv4", "IPv6"]),
    "mixed": ("mode", ["reads", "writes", "both"]),
    "sustained": ("minutes", [round(4 / 60, 3)]),
    "ttfb-size": ("object_size", [1 << 10, 64 << 10, 1 << 20, 8 << 20]),
    "hot-object": ("replicas", [1, 1, 2, 4, 8, 16, 32]),
    "ceiling-proof": ("streams", ["store alone", "store + other HTTP"]),
    "client-cpu": ("threads", [1, 2]),
    "wan": ("delay_ms", [0, 0, 20, 20]),
    "rate-sweep": ("rate", [50, 100, 200, 400, 800]),
    "request-rate": ("concurrency", [4, 16] * 8),
    "checksums": ("checksum", ["none"] + [name for name in ("crc32", "crc32c", "crc64nvme", "sha256") for _ in "ht"]),
}


def run_study(name, out, *extra):
    size = () if name == "request-rate" else ("--object-size", "8MiB")  # small objects are request-rate's point
    proc = run_cli("objperf", "study", name, "--quick", *size, "--out", str(out), *extra, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_quick_study_holds_its_grid(name, tmp_path):
    from objperf.studies.listing import planned_steps

    out = tmp_path / name
    proc = run_study(name, out, "--figures", str(tmp_path / "figures"))
    column, values = GRIDS[name]
    steps = load_steps(out)
    assert list(steps[column]) == values
    assert (steps["requests"] > 0).all()
    assert len(steps) == planned_steps(name, quick=True)  # what `objperf study --list` says it runs
    # Every step measured what it set out to: its quick preset is big enough on the embedded server.
    assert_table_is_its_step_lines(proc, steps)
    assert (steps["status"] == "complete").all() and (steps["note"] == "").all(), steps[["status", "note"]]
    assert f"{name}: {len(steps)} step{'s' if len(steps) > 1 else ''}: {len(steps)} measured;" in proc.stderr
    assert_figures(name, tmp_path / "figures", proc.stderr)
    rows = load(out)
    assert rows.attrs["manifest"]["kind"] == "study" and rows.attrs["manifest"]["status"] == "complete"
    assert set(rows["step"]) == set(range(len(values)))
    assert column in rows.columns
    sizes = sorted(set(rows["object_size"]) - {UNKNOWN_SIZE})  # the manifest says the sizes the steps used
    assert rows.attrs["manifest"]["parameters"]["object_size"] == (sizes[0] if len(sizes) == 1 else sizes)
    assert {"nic", "cpu"} <= set(load_samples(out))
    if name == "hot-object":
        single = steps[steps["variant"] == "single"].set_index("concurrency")["error_rate"]
        spread = steps[steps["variant"] == "replicas"].set_index("replicas")["error_rate"]
        assert list(single.index) == [16, 48] and (steps[steps["variant"] == "replicas"]["concurrency"] == 48).all()
        assert (single > 0.2).all()  # real 503s from the server's throttle
        assert spread.iloc[-1] < 0.01 < single.max()  # enough replicas (in other buckets) cure it
        from objperf.analysis.stats import replicas_that_cure

        cure = replicas_that_cure(steps)
        assert cure is not None and spread[cure] < 0.01 and (spread[spread.index < cure] >= 0.01).all()
        assert f"fewer than 1% of requests failed from {cure} replicas on" in proc.stderr
        # Each 503 names its S3 error code; one cut mid-body when its step's time was up has none yet.
        codes = rows.loc[(rows["status"] == 503) & (rows["curl_code"] == 0), "s3_error"].unique()
        assert len(codes) == 1 and codes[0] != ""
        assert (rows["attempt"] == 0).all()  # nothing was retried behind the user's back
    if name == "wan":  # farther, the same concurrency moves less: every GET waits two delays more
        near, far = (steps[steps["delay_ms"] == d].set_index("concurrency") for d in (0, 20))
        assert (far["ttfb_ms_p50"] >= 40 * 0.98).all() and (far["steady_gbps"] < near["steady_gbps"]).all()
        assert (far.loc[8, "steady_gbps"] > 2 * far.loc[2, "steady_gbps"])  # far away, concurrency pays
    if name == "sustained":
        assert {"drift_gbps_per_min", "spread_gbps"} <= set(steps.columns)
    if name == "ip-family":
        assert set(rows.loc[rows["family"] == "IPv6", "remote_ip"]) == {"::1"}
    if name == "request-rate":
        assert list(steps["op"]) == [op for op in ("GET", "HEAD", "PUT", "DELETE") for _ in range(4)]
        assert list(steps["prefixes"]) == [1, 1, 2, 2] * 4
        assert (steps["ops_per_s"] > 0).all() and (steps["throttled_pct"] == 0).all()
        made = {"GET": {"GET"}, "HEAD": {"HEAD"}, "PUT": {"PUT"}, "DELETE": {"DELETE"}}
        for step in steps.itertuples():
            mine = rows[rows["step"] == step.step]
            assert set(mine["op"].astype(str)) == made[step.op] and (mine["status"] < 300).all()
            if step.op in ("GET", "PUT"):  # small objects, whole (but those the step's end cut)
                assert (mine.loc[mine["curl_code"] == 0, "bytes"] == 4096).all()
            spread = {key.split("/")[-2] for key in mine["key"].astype(str)}
            assert len(spread) == step.prefixes  # the keys lie in as many prefixes as the step says
            if step.op == "DELETE":  # each seeded object deleted once
                assert len(mine) == max(200, 25 * step.concurrency) == mine["key"].nunique()
    if name == "checksums":
        from objperf.dataset.directory import read_manifest

        assert list(steps["mode"]) == ["-"] + ["header", "trailer"] * 4
        assert "warming the store up" in proc.stderr.split("step 1/9")[0]  # before the baseline, and not a step
        none = steps.iloc[0]
        for ratio, measured in (("gbps_vs_none", "write_acknowledged_gbps"), ("cpu_vs_none", "client_cpu_s_per_gib")):
            assert list(steps[ratio]) == pytest.approx(list(steps[measured] / none[measured]))  # each beside none
        assert (steps["s3_codes"] == "").all() and (steps["error_rate"] == 0).all()
        for step, entry in zip(steps.itertuples(), rows.attrs["manifest"]["steps"]):
            mine = rows[rows["step"] == step.step]
            assert set(mine["op"].astype(str)) == {"PUT"} and (mine["status"] < 300).all()  # one PUT an object
            assert (mine.loc[mine["curl_code"] == 0, "bytes"] == 8 << 20).all()  # the payload, not its framing
            workload = read_manifest(out / "steps" / entry["dataset"])["workload"]
            assert (workload["checksum"], workload["checksum_trailer"]) == (step.checksum, step.mode == "trailer")


def test_rerun_skips_finished_steps(tmp_path):
    out = tmp_path / "rc"
    run_study("client-cpu", out)
    again = run_study("client-cpu", out)
    assert again.stderr.count("already done, kept") == 2
    assert len(load_steps(out)) == 2
    other = run_cli("objperf", "study", "client-cpu", "--quick", "--object-size", "16MiB", "--out", str(out))
    assert other.returncode == 2 and "resumes only with the same target and options" in other.stderr
    assert len(load_steps(out)) == 2


def test_a_study_out_that_is_a_file_is_one_line(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("not a study")
    proc = run_cli("objperf", "study", "client-cpu", "--quick", "--out", str(taken))
    assert proc.returncode == 2 and "is a file" in proc.stderr and "Traceback" not in proc.stderr


def test_every_study_takes_the_workloads_options(tmp_path):
    out = tmp_path / "kf"
    run_study("key-fanout", out, "--concurrency", "32", "--range-size", "256KiB")
    rows = load(out)
    reads = rows[(rows["direction"] == "read") & (rows["op"] == "GET")]
    assert reads.groupby("step")["slot"].nunique().max() == 32  # 32 in flight, not the quick 16
    assert (reads["length"] <= 256 << 10).all()
    parts = rows[rows["op"].isin(["PUT", "UPLOAD_PART"])]
    assert parts.groupby("step")["slot"].max().max() == 31


def test_a_grid_override_is_the_sweep(tmp_path):
    out = tmp_path / "rc"
    run_study("read-concurrency", out, "--grid", "concurrency=2,8")
    assert list(load_steps(out)["concurrency"]) == [2, 8]


@pytest.mark.parametrize("flags, message", [
    (["read-concurrency", "--grid", "concurrency=two"], "bad --grid 'concurrency=two'"),
    (["read-concurrency", "--grid", "part_size=8MiB"], "read-concurrency sweeps concurrency"),
    (["read-concurrency", "-c", "64"], "give its values with --grid concurrency="),
    (["ttfb-size", "--range-size", "1MiB"], "ttfb-size sets range_size itself"),
])
def test_a_bad_grid_or_a_swept_option_is_one_line(flags, message, tmp_path):
    proc = run_cli("objperf", "study", *flags, "--quick", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def test_unknown_study_is_one_line():
    proc = run_cli("objperf", "study", "fastest-ever", "--out", "/tmp/x")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_ceiling_proof_reports_the_store_and_the_other_stream_apart(trickle_url, tmp_path):
    out = tmp_path / "cp"
    run_study("ceiling-proof", out, "--other-url", trickle_url)
    steps = load_steps(out).set_index("streams")
    together, alone = steps.loc["store + other HTTP"], steps.loc["store alone"]
    assert together["store_gbps"] > 0 and together["other_gbps"] > 0 and alone["other_gbps"] == 0
    assert together["sum_gbps"] == pytest.approx(together["store_gbps"] + together["other_gbps"])
    assert together["other_stream"] == trickle_url.split("/")[2] and together["nic"] == "lo"


def test_a_study_compares_one_source_address_against_two(store, tmp_path):
    out = tmp_path / "sources"
    proc = run_cli("objperf", "study", "read-concurrency", f"s3://{store.bucket}/study-sources/", "--endpoint",
                   store.server.endpoint, "--quick", "--interface", "127.0.0.2,127.0.0.3", "--grid", "sources=1,2",
                   "--grid", "concurrency=4", "--duration", "1s", "--out", str(out), env=store.env(), timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert list(load_steps(out)["sources"]) == [1, 2]
    rows = load(out)
    used = rows.groupby("sources")["local_ip"].apply(lambda ips: sorted(set(ips.astype(str)))).to_dict()
    assert used == {1: ["127.0.0.2"], 2: ["127.0.0.2", "127.0.0.3"]}
    bad = run_cli("objperf", "study", "read-concurrency", f"s3://{store.bucket}/x/", "--endpoint",
                  store.server.endpoint,
                  "--quick", "--interface", "127.0.0.2", "--grid", "sources=1,2", "--out", str(tmp_path / "b"),
                  env=store.env())
    assert bad.returncode == 2 and "needs --interface with at least 2 source addresses" in bad.stderr


RATE_PREFIX = "study-request-rate/"


@pytest.fixture(scope="module")
def request_rate_study(store, tmp_path_factory):
    """A quick request-rate study of two prefixes at 8 in flight, against the tests' store (which outlives it)."""
    out = tmp_path_factory.mktemp("request-rate") / "rr"
    proc = run_cli("objperf", "study", "request-rate", f"s3://{store.bucket}/{RATE_PREFIX}", "--endpoint",
                   store.server.endpoint, "--quick", "--grid", "concurrency=8", "--grid", "prefixes=2",
                   "--out", str(out), env=store.env(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.mark.timeout(360)
def test_request_rate_puts_write_a_new_key_each_and_delete_them_after(store, request_rate_study):
    """Its PUTs took turns over 8 keys a prefix, and were left in the store: every PUT now writes a key of its
    own, the prefixes taking turns, and the step deletes what it wrote."""
    rows = load(request_rate_study)
    puts = rows[rows["op"] == "PUT"]
    keys = puts["key"].astype(str)
    assert len(puts) > 2 * 8 and keys.nunique() == len(puts)
    spread = keys.str.split("/").str[-2].value_counts()
    assert set(spread.index) == {"p00", "p01"} and spread.max() - spread.min() <= 1  # the prefixes take turns
    put_step = load_steps(request_rate_study).query("op == 'PUT'")
    assert put_step["status"].tolist() == ["complete"]
    assert store.client.list_keys(store.bucket, f"{RATE_PREFIX}objperf-study/request-rate/put/") == []
    assert store.client.list_keys(store.bucket, f"{RATE_PREFIX}objperf-study/request-rate/p00/")  # its reads' kept


@pytest.mark.timeout(360)
def test_a_study_records_the_object_size_its_steps_used(request_rate_study):
    """request-rate's manifest said the quick study's default (32 MiB) for the 4 KiB objects it read and wrote."""
    from objperf.dataset.directory import read_manifest

    assert read_manifest(request_rate_study)["parameters"]["object_size"] == 4096
    assert set(load(request_rate_study)["object_size"]) == {4096}


def test_the_wan_study_refuses_a_tls_endpoint_in_one_line(store, tmp_path):
    proc = run_cli("objperf", "study", "wan", f"s3://{store.bucket}/wan-tls/", "--quick", "--endpoint",
                   store.server.endpoint_tls, "--ca-bundle", store.server.tls[2], "--out", str(tmp_path / "w"),
                   env=store.env(), timeout=120)
    assert proc.returncode == 2 and "relays plain HTTP" in proc.stderr and "Traceback" not in proc.stderr


def test_the_concurrency_a_throughput_needs_per_distance():
    import pandas as pd

    from objperf.analysis.stats import concurrency_for

    steps = pd.DataFrame({"delay_ms": [0, 0, 20, 20, 50, 50], "concurrency": [2, 8, 2, 8, 2, 8],
                          "steady_gbps": [2.8, 3.7, 0.3, 1.3, 0.1, 0.6]})
    needed = concurrency_for(steps, 1.0)
    assert needed[0] == 2 and needed[20] == 8 and needed[50] != needed[50]  # NaN: none of 50 ms's reached it


@pytest.mark.parametrize("name", ["write-part-size", "key-fanout", "mixed", "hot-object", "read-concurrency",
                                  "checksums"])
def test_a_studys_table_fits_the_terminal_with_units_and_counts_only_acknowledged_writes(name):
    from pathlib import Path

    from objperf.studies.table import step_table

    steps = load_steps(Path(__file__).resolve().parents[1] / "data" / "sample" / name)
    text = step_table(steps)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100 and len(lines) == len(steps) + 1
    header = lines[0]
    assert "failed %" in header and "Gbps" in header and "_" not in header.split("requests", 1)[1]
    assert "NaN" not in text and "nan" not in text
    if "write Gbps (acked)" in header and "steady read Gbps" in header:
        both = steps["write_gbps"] > 0
        rows = [line for line, wrote in zip(lines[1:], both) if wrote]
        cells = parsed_table(text, [])
        assert all(cell["steady read Gbps"] == "" for cell, wrote in zip(cells, both) if wrote)  # no sent bytes
        assert rows  # shown as a read rate


# -- the table and the step lines -------------------------------------------------------------------------


def parsed_table(text: str, grid: list[str]) -> list[dict]:
    """The table a study printed, cell by cell under its headers (right-aligned, the note left-aligned)."""
    import re

    from objperf.studies.table import HEADERS, NOTE

    lines = ["  " + line for line in text.splitlines()]  # every header then follows two spaces
    header = lines[0]
    found = sorted((m.start(), name) for name in [*grid, *HEADERS]
                   for m in re.finditer(r"(?<=  )" + re.escape(name) + r"(?=  |$)", header))
    spans, at = [], 0
    for start, name in found:
        spans.append((name, at, start + len(name)))
        at = start + len(name)
    note_at = header.find(NOTE)
    return [{**{name: line[a:b].strip() for name, a, b in spans},
             NOTE: line[note_at:].strip() if note_at >= 0 else ""} for line in lines[1:]]


def step_lines(stderr: str) -> list[tuple[str, str]]:
    """Each step's line: (its figures, its note)."""
    import re

    from objperf.studies.table import HEADERS

    first = "|".join(re.escape(h) for h in HEADERS)
    found = re.findall(rf"step \d+/\d+ .*?: ((?:{first}) .*)", stderr)  # a grid value may hold ':' (::1)
    return [tuple((line.split(" — ", 1) + [""])[:2]) for line in found]


def assert_table_is_its_step_lines(proc, steps) -> None:
    """The table's figures are the step lines' (both made from each step's results), and every row has its
    figures or says why not."""
    import re

    from objperf.studies.table import HEADERS, NOTE, SHOWN_RESULTS

    table = proc.stdout.strip("\n")
    grid = [c for c in steps.columns if c in table.splitlines()[0].split()]
    rows, lines = parsed_table(table, grid), step_lines(proc.stderr)
    assert len(rows) == len(lines) == len(steps), (table, proc.stderr)
    for row, (figures, note) in zip(rows, lines):
        assert row[NOTE] == note
        for header in HEADERS:
            if header not in row or row[header] == "":
                continue  # not this step's direction, or not shown
            said = re.search(r"(?:^|, )" + re.escape(header) + r" (\S+?)(?:,|$)", figures)
            assert said and said.group(1) == row[header], (header, row, figures)
            assert row[header] != "-" or note, f"{header} not measured, and the row does not say why: {row}"
        measured = [v for k, v in row.items() if k in SHOWN_RESULTS.values() and k != "requests" and v not in ("", "-")]
        assert measured or note, row


def assert_figures(name: str, directory, said: str = "") -> None:
    """The study's figures exist as PNG files, one per figure its notebook draws, each with something drawn."""
    from objperf.plots.notebooks import is_blank
    from objperf.plots.studies import FIGURES

    expected = [directory / f"{name}-{file}" for file, _ in FIGURES[name]]
    for path in expected:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not is_blank(path), path
        assert not said or f"figure {path}" in said


SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "sample"


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_a_studys_figures_are_its_notebooks_with_the_published_values(name, tmp_path):
    """From objperf.api and from objperf analyze, each study's figures: its notebook's kinds, the measured
    series drawn and, where the article published one, the published figure on the same axes."""
    import matplotlib.pyplot as plt

    from objperf import api
    from objperf.commands.analyze import main as analyze
    from objperf.dataset.directory import read_manifest
    from objperf.plots.studies import FIGURES, study_context

    drawn = api.study_figures(SAMPLE / name, tmp_path / "api")
    assert [p.name for p in drawn] == [f"{name}-{file}" for file, _ in FIGURES[name]]
    assert_figures(name, tmp_path / "api")
    assert analyze([str(SAMPLE / name), "--figures", str(tmp_path / "analyze")]) == 0
    assert_figures(name, tmp_path / "analyze")
    assert not list((tmp_path / "analyze").glob("throughput.png"))  # not the one pooled timeline of a run

    steps, rows = load_steps(SAMPLE / name), load(SAMPLE / name)
    for file, draw in FIGURES[name]:
        ax = draw(steps, lambda: rows, study_context(read_manifest(SAMPLE / name)))
        axes = ax.figure.axes
        title = ax.get_title()
        assert title and "_" not in title.splitlines()[0] and "?" not in title, title
        labels = [t.get_text() for a in axes if a.get_legend() for t in a.get_legend().get_texts()]
        labels += [line.get_label() for a in axes for line in a.lines]
        measured = [line for a in axes for line in a.lines if len(line.get_xdata()) > 1] + \
            [bar for a in axes for bar in a.patches if bar.get_height() == bar.get_height() and bar.get_height() > 0]
        assert measured, f"{file}: nothing measured is drawn"
        if name not in ("wan", "checksums"):  # the article measured no distance (its TTFB is named in the title
            # instead) and no checksum (the writes without one are the level drawn)
            assert any(label.startswith("published") for label in labels), (file, labels)
        plt.close(ax.figure)


def test_study_list_says_request_rates_quick_writes_last_their_step():
    """request-rate's PUT steps set their requests, so --quick runs them for their 1 s like its other steps:
    the list said they wrote "until one part per slot is acknowledged"."""
    from objperf.studies.listing import durations, planned_steps

    steps = planned_steps("request-rate", True)
    assert durations("request-rate").startswith(f"quick {steps} steps of 1 s ({steps} s of load);")
    assert "until one part per slot" in durations("key-fanout")


def test_study_list_gives_each_question_and_its_durations():
    from objperf.options.names import STUDY_NAMES
    from objperf.studies.listing import planned_steps, question

    proc = run_cli("objperf", "study", "--list")
    assert proc.returncode == 0 and not proc.stderr
    flat = " ".join(proc.stdout.split())
    for name in STUDY_NAMES:
        assert question(name).endswith("?")
        quick, full = planned_steps(name, True), planned_steps(name, False)
        entry = flat.split(f"{name} {question(name)} quick {quick} step{'s' if quick != 1 else ''}", 1)[1]
        assert f"full {full} step{'s' if full != 1 else ''} of" in entry.split(" quick ", 1)[0]


def test_a_step_that_measured_nothing_says_why_on_its_row(tmp_path):
    """Too short for one part of its size: the row says no part was acknowledged, and how long it ran."""
    out = tmp_path / "short"
    proc = run_cli("objperf", "study", "write-part-size", "--quick", "--duration", "0.3s", "--grid",
                   "part_size=128MiB", "--grid", "concurrency=2", "--out", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    steps = load_steps(out)
    assert steps["note"].str.startswith("no part acknowledged in").all(), steps["note"]
    assert "cut when the time was up" in steps["note"].iloc[0]
    assert_table_is_its_step_lines(proc, steps)
    assert "why not measured" in proc.stdout and "no part acknowledged in" in proc.stdout
    assert "1 step: 0 measured, 1 with a figure missing (its row says why)" in proc.stderr


def test_a_note_too_long_for_the_width_costs_no_figure():
    """A note longer than the width leaves beside the grid runs past it: the figures that fit without it stay.
    A short note still fits, the right-most figures giving way for it."""
    import pandas as pd

    from objperf.studies.table import step_table

    row = {"a": 1, "requests": 10, "error_rate": 0.5, "write_acknowledged_gbps": 1.25, "directions": "write"}
    long, short = "n" * 120, "n" * 30
    header, line = step_table(pd.DataFrame([{**row, "note": long}]), width=60, grid=["a"]).splitlines()
    assert line.endswith(long) and "write Gbps (acked)" in header and "1.250" in line  # every figure kept
    assert len(line.removesuffix(long).rstrip()) <= 60
    header, line = step_table(pd.DataFrame([{**row, "note": short}]), width=60, grid=["a"]).splitlines()
    assert line.endswith(short) and len(line) <= 60 and "failed %" in header and "write Gbps" not in header


def test_a_step_that_failed_ends_the_study_and_the_table_says_so(tmp_path):
    from objperf.core.errors import UsageError
    from objperf.studies.sweep import Step, run_sweep
    from objperf.studies.table import step_table, study_summary

    def refused(out, hosts=None):
        raise UsageError("the store refused the step")

    said = []
    out = run_sweep("x", [Step({"a": 1}, refused), Step({"a": 2}, refused)], tmp_path / "x", say=said.append)
    steps = load_steps(out)
    assert list(steps["status"]) == ["failed"] and steps["note"].iloc[0] == "failed: the store refused the step"
    assert "failed: the store refused the step" in step_table(steps, grid=["a"]).splitlines()[1]
    assert study_summary(steps, 2, "failed") == "2 steps: 0 measured, 1 failed, 1 not run"
    assert said == ["x step 1/2 a 1: requests 0, failed % - — failed: the store refused the step"]


def test_api_study_draws_its_figures_as_it_ends(tmp_path):
    from objperf import api
    from objperf.plots.studies import FIGURES

    run = api.study("client-cpu", quick=True, object_size="8MiB", out=tmp_path / "cc", figures=tmp_path / "figs",
                    progress=False)
    assert run.status == "complete"
    assert [p.name for p in run.figures] == [f"client-cpu-{file}" for file, _ in FIGURES["client-cpu"]]
    assert_figures("client-cpu", tmp_path / "figs")


# -- checksums: a store that refuses them, an algorithm not installed ---------------------------------------------


@pytest.mark.timeout(300)
def test_a_checksum_the_store_refuses_is_a_failed_step_with_its_codes_and_the_study_goes_on(store, tmp_path,
                                                                                           monkeypatch):
    """Every trailer sent wrong, as a store that refuses them would answer: its steps fail with the store's S3
    code on their rows and in the table, and the study runs every step to its end."""
    from objperf import api
    from objperf.plan.checksums import WriteChecksum
    from objperf.studies.table import step_table, study_summary

    right = WriteChecksum.request

    def wrong_trailer(self, payload, payload_offset, length):  # a trailer of other bytes than those sent
        return right(self, payload, payload_offset + (1 if self.trailer else 0), length)

    monkeypatch.setattr(WriteChecksum, "request", wrong_trailer)
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    run = api.study("checksums", f"s3://{store.bucket}/refused/", endpoint=store.server.endpoint, quick=True,
                    object_size="1MiB", duration="1s", out=tmp_path / "c", progress=False)
    steps = load_steps(tmp_path / "c")
    assert run.status == "complete" and len(steps) == 9
    trailer = steps["mode"] == "trailer"
    assert (steps.loc[trailer, "status"] == "failed").all() and (steps.loc[~trailer, "status"] == "complete").all()
    assert (steps.loc[trailer, "error_rate"] == 1).all() and (steps.loc[~trailer, "error_rate"] == 0).all()
    assert steps.loc[trailer, "s3_codes"].str.fullmatch(r"InvalidDigest×\d+").all()  # SeaweedFS's word for it
    assert steps.loc[trailer, "gbps_vs_none"].isna().all() and (steps.loc[trailer, "note"].str.contains(
        "InvalidDigest")).all()
    rows = load(tmp_path / "c")
    refused = rows[(rows["mode"] == "trailer") & (rows["curl_code"] == 0)]  # but those cut when time was up
    assert (refused["status"] == 400).all() and set(refused["s3_error"].astype(str)) == {"InvalidDigest"}
    table = step_table(steps).splitlines()
    assert "S3 codes" in table[0] and all("InvalidDigest×" in line for line in table[1:] if " trailer " in line)
    assert study_summary(steps, 9, run.status) == "9 steps: 5 measured, 4 failed"


def test_a_checksum_algorithm_not_installed_is_one_line_before_any_step(monkeypatch):
    """Without the AWS CRT, CRC-32C and CRC-64/NVME are said to be left out in one line as the steps are made,
    before any request (the store named does not exist), and the other steps are the study."""
    import objperf.core.checksums as checksums
    from objperf.s3.client import S3Settings
    from objperf.studies import catalog

    def absent():
        raise ImportError("No module named 'awscrt'")

    monkeypatch.setattr(checksums, "_crt", absent)
    said: list[str] = []
    ctx = catalog.StudyContext(settings=S3Settings(endpoint="http://127.0.0.1:9"), bucket="nowhere", prefix="p/",
                               quick=True, duration=1.0, object_size=8 << 20, say=said.append)
    steps = catalog.checksums(ctx)
    assert said == ["checksums: crc32c, crc64nvme left out, not installed: they need the 'checksums' extra: "
                    "pip install 'objperf[checksums]'"]
    assert [tuple(step.values.values()) for step in steps] == [
        ("none", "-"), ("crc32", "header"), ("crc32", "trailer"), ("sha256", "header"), ("sha256", "trailer")]

"""Every study's --quick run on the embedded SeaweedFS: the whole grid, in one loadable dataset."""

from __future__ import annotations

import pytest

from conftest import run_cli
from objperf import load
from objperf.dataset import load_samples
from objperf.studies.sweep import load_steps

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
}


def run_study(name, out, *extra):
    proc = run_cli("objperf", "study", name, "--quick", "--object-size", "8MiB", "--out", str(out), *extra, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_quick_study_holds_its_grid(name, tmp_path):
    out = tmp_path / name
    proc = run_study(name, out)
    column, values = GRIDS[name]
    steps = load_steps(out)
    assert list(steps[column]) == values
    assert (steps["requests"] > 0).all()
    rows = load(out)
    assert rows.attrs["manifest"]["kind"] == "study" and rows.attrs["manifest"]["status"] == "complete"
    assert set(rows["step"]) == set(range(len(values)))
    assert column in rows.columns
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


@pytest.mark.parametrize("name", ["write-part-size", "key-fanout", "mixed", "hot-object", "read-concurrency"])
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
        column = header.index("steady read Gbps") + len("steady read Gbps")
        assert all(row[:column].rstrip().endswith("-") for row in rows)  # no sent bytes shown as a read rate

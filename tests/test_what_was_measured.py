"""What a user sees is what was measured: every kind of run prints the summary its dataset tells again under
``objperf analyze``, line for line, and no headline of a write counts a byte the store did not acknowledge."""

from __future__ import annotations

import json
import re

import pytest

from conftest import run_cli
from objperf import load
from objperf.dataset.directory import read_manifest

pytestmark = pytest.mark.integration

MIB = 1 << 20
WRITES = ("PUT", "UPLOAD_PART")


def summary_lines(stdout: str) -> list[str]:
    """A printed summary's labelled lines (its title, the first line, names the command)."""
    lines = [line for line in stdout.splitlines() if line.startswith("  ")]
    assert lines, stdout
    return lines


def acknowledged_write_bytes(rows) -> int:
    ok = (rows["curl_code"] == 0) & (rows["status"] >= 200) & (rows["status"] < 300)
    return int(rows.loc[ok & rows["op"].astype(str).isin(WRITES), "bytes"].sum())


def sent_write_bytes(rows) -> int:
    return int(rows.loc[rows["op"].astype(str).isin(WRITES), "bytes"].sum())


def kinds(store) -> dict[str, list[str]]:
    """Every kind of run, as a user starts it, against the session's store."""
    url = f"s3://{store.bucket}/data/odd.bin"
    common = ["--endpoint", store.server.endpoint]
    return {
        "fetch": ["fetch", url, *common, "-c", "4", "--range-size", "1MiB", "--duration", "1.5s"],
        "open loop": ["fetch", url, *common, "-c", "4", "--range-size", "1MiB", "--duration", "1.5s", "--rate", "40"],
        "put": ["put", f"s3://{store.bucket}/measured-put/", *common, "--object-size", "6MiB", "--part-size", "5MiB",
                "-c", "2", "--duration", "1.5s", "--verify", "--cleanup"],
        "mixed": ["mixed", url, *common, "--read-concurrency", "2", "--write-concurrency", "2", "--range-size", "1MiB",
                  "--write-to", f"s3://{store.bucket}/measured-mixed/", "--object-size", "6MiB", "--part-size",
                  "5MiB", "--duration", "1.5s", "--cleanup"],
        "cluster": ["fetch", url, *common, "--local-cluster", "2", "-c", "2", "--range-size", "1MiB", "--duration",
                    "1.5s"],
    }


@pytest.fixture(scope="module")
def made(store, tmp_path_factory):
    """Each kind of run made once, with its printed summary and its dataset."""
    where = tmp_path_factory.mktemp("measured")
    found = {}
    for kind, args in kinds(store).items():
        out = where / kind.replace(" ", "-")
        proc = run_cli("objperf", *args, "--out", str(out), env=store.env(), timeout=240)
        assert proc.returncode == 0, (kind, proc.stderr)
        found[kind] = (proc.stdout, out)
    return found


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", ["fetch", "open loop", "put", "mixed", "cluster"])
def test_a_run_and_its_re_analysis_print_the_same_summary(made, kind):
    """analyze of a saved open-loop run dropped the latency from the intended send time that the run printed;
    of a cluster run it summed every host's rows over the common window; it printed no workload."""
    printed, out = made[kind]
    proc = run_cli("objperf", "analyze", str(out))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert summary_lines(proc.stdout) == summary_lines(printed)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", ["put", "mixed"])
def test_no_write_headline_counts_a_byte_the_store_did_not_acknowledge(made, kind):
    """The headline of a put run was the bytes sent: 1.843 Gbps printed above 0.707 Gbps acknowledged."""
    printed, out = made[kind]
    rows = load(out)
    summary = read_manifest(out)["summary"]
    write = summary["directions"]["write"]
    acknowledged = acknowledged_write_bytes(rows)
    assert write["bytes"] == acknowledged and write["sent_bytes"] == sent_write_bytes(rows)
    reads = int(rows.loc[rows["op"].astype(str) == "GET", "bytes"].sum())
    assert summary["bytes"] == reads + acknowledged
    assert summary["gbps"] == pytest.approx(summary["bytes"] * 8 / summary["wall_s"] / 1e9)
    assert summary["sent_bytes"] == sent_write_bytes(rows) >= acknowledged
    # The headline line says the acknowledged rate, and names the sent one as such
    (headline,) = [line for line in summary_lines(printed) if line.split()[0] == "throughput"]
    assert re.search(rf"\b{summary['gbps']:.3f} Gbps \([\d,.]+ MiB/s\) (received and )?acknowledged\b", headline)
    assert f"{summary['sent_gbps']:.3f} Gbps sent" in headline
    (short,) = [line for line in summary_lines(printed) if line.split()[:2] == ["in", "short"]]
    assert f"{summary['gbps']:.3f} Gbps" in short and "PUT c2 6MiB/5MiB" in short


def test_the_json_of_a_run_counts_as_its_headline(made):
    printed, out = made["put"]
    proc = run_cli("objperf", "analyze", str(out), "--json")
    again = json.loads(proc.stdout)["summary"]
    assert again["gbps"] == pytest.approx(read_manifest(out)["summary"]["gbps"])
    assert again["directions"]["write"]["bytes"] == acknowledged_write_bytes(load(out))


def test_a_cluster_summary_names_no_core_it_did_not_measure(made):
    """A cluster run printed 'each core of the machine was busy  (all processes)', the list empty."""
    printed, _ = made["cluster"]
    assert not re.search(r"busy\s+\(", printed)
    assert "(all processes)" not in printed or re.search(r"busy \d+%", printed)


@pytest.mark.parametrize("kind", ["put", "mixed"])
def test_a_scan_counts_writes_as_the_run_did(made, kind):
    """analyze --scan counted every byte sent as done."""
    _, out = made[kind]
    proc = run_cli("objperf", "analyze", str(out), "--scan", "--json")
    assert proc.returncode == 0, proc.stderr
    scanned = json.loads(proc.stdout)["summary"]
    recorded = read_manifest(out)["summary"]
    assert scanned["bytes"] == recorded["bytes"] and scanned["sent_bytes"] == recorded["sent_bytes"]


@pytest.mark.parametrize("kind", ["fetch", "put"])
def test_a_summary_speaks_one_convention_for_units(made, kind):
    """The cost line said '25.43 GB out' for 25.431 GiB: amounts are GiB or MiB, rates Gbps and MiB/s."""
    _, out = made[kind]
    proc = run_cli("objperf", "analyze", str(out), "--price", "r2,aws-s3")
    assert proc.returncode == 0, proc.stderr
    assert not re.findall(r"\d\s*(GB|MB|KB|TB)\b|\bMB/s\b|\bGB/s\b", proc.stdout), proc.stdout
    assert re.search(r"Gbps \([\d,.]+ MiB/s\)", proc.stdout)


def test_an_import_prints_the_summary_analyze_gives_of_it(tmp_path):
    from test_imports import warp_ops, write_warp

    out = tmp_path / "imported"
    proc = run_cli("objperf", "import", "warp", str(write_warp(tmp_path / "warp.csv", warp_ops(), zstd=False)),
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    again = run_cli("objperf", "analyze", str(out))
    assert again.returncode == 0, again.stderr
    assert summary_lines(again.stdout) == summary_lines(proc.stdout)
    assert f"{len(load(out)):,} (" in summary_lines(proc.stdout)[0]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("study, grid", [("read-concurrency", "concurrency=1,2"), ("write-part-size", None),
                                         ("checksums", None)])
def test_each_study_step_is_told_again_by_analyze_of_its_dataset(store, tmp_path, study, grid):
    """A study's table of steps and analyze of each step's dataset give the same figures."""
    import pandas as pd

    out = tmp_path / study
    proc = run_cli("objperf", "study", study, f"s3://{store.bucket}/measured-{study}/", "--endpoint",
                   store.server.endpoint, "--quick", *(["--grid", grid, "--duration", "1s"] if grid else []),
                   "--out", str(out), env=store.env(), timeout=400)
    assert proc.returncode == 0, proc.stderr
    steps = pd.read_parquet(out / "steps.parquet")
    manifest = read_manifest(out)
    assert len(steps) == len(manifest["steps"]) > 0
    for step, entry in zip(steps.itertuples(), manifest["steps"]):
        again = run_cli("objperf", "analyze", str(out / "steps" / entry["dataset"]), "--json")
        assert again.returncode == 0, again.stderr
        summary = json.loads(again.stdout)["summary"]
        assert step.requests == summary["requests"] and step.errors == summary["error_requests"]
        for name in ("gbps", "ttfb_ms_p50", "client_cpu_s_per_gib"):  # JSON's null: not measured, NaN here
            measured = float("nan") if summary[name] is None else summary[name]
            assert getattr(step, name) == pytest.approx(measured, nan_ok=True), name
        write = summary["directions"].get("write")
        if write and write["acknowledged_bytes"]:  # writes: the bytes the store acknowledged, in both
            assert step.write_acknowledged_gbps == pytest.approx(write["acknowledged_gbps"])

"""One ``objperf`` command for every job, the AWS CLI's spellings, -c where it means requests in flight."""

from __future__ import annotations

import subprocess
import sys

from conftest import run_cli
from objperf import load


def test_objperf_version_names_objperf_libcurl_and_tls():
    done = run_cli("objperf", "--version")
    assert done.returncode == 0
    assert done.stdout.startswith("objperf ") and ", libcurl " in done.stdout and ", TLS " in done.stdout


def test_objperf_runs_each_command_and_refuses_an_unknown_one(store, tmp_path):
    done = run_cli("objperf", "fetch", f"s3://{store.bucket}/data/small.bin", "--endpoint", store.server.endpoint,
                   "--out", str(tmp_path / "r"), env=store.env())
    assert done.returncode == 0, done.stderr
    assert len(load(tmp_path / "r")) == 1
    unknown = run_cli("objperf", "fastest")
    assert unknown.returncode == 2 and "unknown command 'fastest'" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    assert run_cli("objperf").returncode == 2 and "commands:" in run_cli("objperf").stdout


def test_the_aws_clis_spellings_work(store, tmp_path):
    done = run_cli("objperf", "fetch", f"s3://{store.bucket}/data/small.bin", "--endpoint-url",
                   store.server.endpoint, "--out", str(tmp_path / "r"), env=store.env())
    assert done.returncode == 0, done.stderr
    assert load(tmp_path / "r").attrs["manifest"]["target"]["endpoint"] == store.server.endpoint
    unsigned = run_cli("objperf", "fetch", f"s3://{store.bucket}/data/small.bin", "--endpoint-url",
                       store.server.endpoint, "--no-sign-request", env=store.env())
    assert unsigned.returncode == 1 and "access denied" in unsigned.stderr  # the bucket is private: sent unsigned


def test_mixed_takes_c_for_both_directions(store, tmp_path):
    out = tmp_path / "m"
    done = run_cli("objperf", "mixed", f"s3://{store.bucket}/data/even.bin", "--write-to",
                   f"s3://{store.bucket}/mixed-c/", "--endpoint", store.server.endpoint, "-c", "3",
                   "--object-size", "1MiB", "--duration", "1s", "--cleanup", "--out", str(out), env=store.env())
    assert done.returncode == 0, done.stderr
    workload = load(out).attrs["manifest"]["workload"]
    assert workload["read"]["concurrency"] == workload["write"]["concurrency"] == 3


def test_the_notebook_command_parses_its_arguments_and_runs_from_anywhere(tmp_path):
    done = subprocess.run([sys.executable, "-m", "objperf.plots.notebooks", "--help"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0 and "--notebooks" in done.stdout
    assert not list(tmp_path.iterdir())  # --help ran nothing and wrote nothing
    missing = subprocess.run([sys.executable, "-m", "objperf.plots.notebooks", "--notebooks", str(tmp_path / "x")],
                             capture_output=True, text=True, cwd=tmp_path)
    assert missing.returncode == 2 and "no notebooks in" in missing.stderr

"""One ``objperf`` command for every job, the AWS CLI's spellings, -c where it means requests in flight."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from objperf import load

pytestmark = pytest.mark.integration


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
    done = subprocess.run([sys.executable, "-m", "objperf.commands.notebooks", "--help"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0 and "--notebooks" in done.stdout
    assert not list(tmp_path.iterdir())  # --help ran nothing and wrote nothing
    missing = subprocess.run([sys.executable, "-m", "objperf.commands.notebooks", "--notebooks", str(tmp_path / "x")],
                             capture_output=True, text=True, cwd=tmp_path)
    assert missing.returncode == 2 and "no notebooks in" in missing.stderr


PROBE = """
import importlib.abc, json, os, sys
seen = {}
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "pyarrow" and not seen:
            seen.update({k: os.environ.get(k) for k in ("MIMALLOC_ARENA_EAGER_COMMIT", "MIMALLOC_PURGE_DELAY")})
sys.meta_path.insert(0, Watch())
from objperf.fetch import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "seen": seen}))
"""


def test_a_run_command_asks_for_arrows_lean_allocator_before_loading_it(trickle_url, tmp_path):
    """mimalloc reads its options once, when pyarrow loads: asked for later they do nothing, and a run's
    parquet parts then held tens of MiB more than they used.  A value the user set stays."""
    import json
    import os

    def probe(asked: dict) -> dict:
        # Without what an earlier command in this process left in its environment: only what the user asked.
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")} | asked
        done = subprocess.run([sys.executable, "-c", PROBE, trickle_url, "-n", "1", "--range-size", "64KiB",
                               "--out", str(tmp_path / f"r{len(asked)}")], capture_output=True, text=True,
                              env=env, timeout=120)
        out = json.loads(done.stdout.strip().splitlines()[-1])
        assert out["code"] == 0, done.stderr
        return out["seen"]

    assert probe({}) == {"MIMALLOC_ARENA_EAGER_COMMIT": "0", "MIMALLOC_PURGE_DELAY": "0"}
    assert probe({"MIMALLOC_PURGE_DELAY": "10"}) == {"MIMALLOC_ARENA_EAGER_COMMIT": "0", "MIMALLOC_PURGE_DELAY": "10"}


@pytest.mark.parametrize("command, abbreviated", [(["fetch"], "--conc"), (["put"], "--part"),
                                                  (["study", "mixed"], "--dur")])
def test_abbreviated_flags_are_refused_not_guessed(command, abbreviated):
    done = run_cli("objperf", *command, abbreviated, "4", timeout=60)
    assert done.returncode == 2
    assert f"unrecognized arguments: {abbreviated}" in done.stderr, done.stderr


def test_a_warning_is_one_line_that_names_the_command(tmp_path):
    """A dataset whose run never finished loads with a warning: one line, not Python's two naming a source line."""
    import json
    import shutil

    step = sorted((Path(__file__).resolve().parents[1] / "data" / "sample" / "read-concurrency" / "steps").iterdir())[0]
    killed = tmp_path / "killed"
    shutil.copytree(step, killed)
    manifest = json.loads((killed / "manifest.json").read_text())
    manifest["status"] = "running"
    del manifest["files"]  # as a run killed before its end leaves it
    (killed / "manifest.json").write_text(json.dumps(manifest))
    done = run_cli("objperf", "analyze", str(killed))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"objperf analyze: warning: {killed} did not finish (its run was killed or "
                                        "is still going): these are the rows it flushed"]

"""A cluster as users start one on real machines: a scheduler and workers started by dask's own commands
(``dask scheduler``, ``dask worker``: what dask-ssh, Kubernetes and batch systems run), and objperf pointed
at it with ``--cluster``; the driver shows the hosts' progress summed in one bar."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_cli, wait_until
from objperf import load

pytest.importorskip("distributed")
pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
DASK = str(Path(sys.executable).parent / "dask")


@pytest.fixture
def dask_cluster(store, tmp_path):
    """A scheduler and two single-threaded workers on loopback, started with dask's commands; the address."""
    with dask_started(store, tmp_path, nanny=True) as (address, _):
        yield address


@pytest.fixture
def dask_processes(store, tmp_path):
    """The scheduler's address, and the processes: the scheduler's, then the workers' (w1, w2), each worker
    without a nanny: a test kills one's process group, and a nanny's multiprocessing semaphores in /dev/shm
    outlive a SIGKILL that takes its resource tracker with it."""
    with dask_started(store, tmp_path, nanny=False) as started:
        yield started


@contextlib.contextmanager
def dask_started(store, tmp_path, *, nanny: bool):
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, **store.env()}  # the workers sign with the same credentials the driver has
    common = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(scheduler_file)], **common)]
    try:
        wait_until(lambda: scheduler_file.exists() and scheduler_file.stat().st_size > 0, timeout=60,
                   what="the scheduler's file")
        address = json.loads(scheduler_file.read_text())["address"]
        for name in ("w1", "w2"):
            procs.append(subprocess.Popen([DASK, "worker", address, "--nworkers", "1", "--nthreads", "1",
                                           "--no-dashboard", "--host", "127.0.0.1", "--name", name,
                                           *(() if nanny else ("--no-nanny",))], **common))
        yield address, procs
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def test_a_run_on_workers_started_by_dasks_own_commands(store, dask_cluster, tmp_path):
    out = tmp_path / "run"
    started = time.monotonic()
    proc = run_cli("objperf.fetch", f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
                   "--cluster", dask_cluster, "--wait-for", "2", "--range-size", "256KiB", "-c", "2",
                   "--duration", "3s", "--out", str(out), env=store.env(), timeout=240)
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    assert rows["host"].astype(str).nunique() == 2 and rows["bytes"].sum() > 0
    manifest = load(out).attrs["manifest"]
    assert manifest["cluster"]["scheduler"] == dask_cluster
    assert "2 hosts started together" in proc.stderr and time.monotonic() - started < 200


def test_a_study_on_workers_started_by_dasks_own_commands(store, dask_cluster, tmp_path):
    out = tmp_path / "study"
    proc = run_cli("objperf", "study", "read-concurrency", f"s3://{store.bucket}/dask-cli-study/", "--endpoint",
                   store.server.endpoint, "--quick", "--cluster", dask_cluster, "--wait-for", "2", "--grid",
                   "concurrency=1,4", "--duration", "1s", "--out", str(out), env=store.env(), timeout=240)
    assert proc.returncode == 0, proc.stderr
    steps = pd.read_parquet(out / "steps.parquet")
    assert list(steps["concurrency"]) == [1, 4] and (steps["errors"] == 0).all()
    assert load(out).groupby("step")["host"].nunique().tolist() == [2, 2]


def test_the_driver_sums_the_hosts_progress_in_one_bar(store, dask_cluster, monkeypatch, tmp_path):
    """On a terminal the bar shows every host's bytes at once (here through the API's listener)."""
    from objperf import api

    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    seen = []
    run = api.fetch(f"s3://{store.bucket}/data/even.bin", endpoint=store.server.endpoint, cluster=dask_cluster,
                    wait_for=2, range_size="256KiB", concurrency=2, duration="3s", out=tmp_path / "api",
                    progress=False, background=True)
    while not run.done:
        seen.append(run.bytes)
        time.sleep(0.2)
    run.wait()
    assert run.status == "complete"
    assert max(seen) > 0  # counts arrived while the hosts ran, not only at the end
    assert max(seen) <= run.summary["bytes"]


def store_parts(store, prefix: str) -> list[str]:
    return [key for key, _ in store.client.list_keys(store.bucket, prefix + "requests/")]


def objperf_scratch() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("objperf-*")}


def test_hosts_write_straight_into_the_store_and_a_killed_driver_strands_nothing(store, dask_cluster, tmp_path,
                                                                                   monkeypatch):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    prefix = "fleet/killed-driver/"
    scratch_before = objperf_scratch()
    here = tmp_path / "driver"
    here.mkdir()
    driver = subprocess.Popen([sys.executable, "-m", "objperf.fetch", f"s3://{store.bucket}/data/even.bin",
                               "--endpoint", store.server.endpoint, "--cluster", dask_cluster, "--wait-for", "2",
                               "--range-size", "256KiB", "-c", "2", "--duration", "8s", "--out",
                               f"s3://{store.bucket}/{prefix}"], env=store.env(), cwd=here,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:  # each host's first part (a second of rows) is in the store before the driver dies
        wait_until(lambda: {key.rsplit("/", 1)[1][:9] for key in store_parts(store, prefix)} >=
                   {"part-0000", "part-0001"}, timeout=120, what="both hosts' first parts")
    finally:
        driver.kill()
        driver.wait(timeout=30)
    with pytest.warns(UserWarning, match="did not finish"):
        rows = load(f"s3://{store.bucket}/{prefix}", endpoint=store.server.endpoint)
    assert rows["host"].astype(str).nunique() == 2 and (rows["bytes"] > 0).all()
    assert rows.attrs["manifest"]["status"] == "running"
    assert list(here.iterdir()) == []  # no dataset and no staging on the driver's machine
    assert objperf_scratch() <= scratch_before  # nor on the hosts' (here the same machine)


def test_a_cluster_dataset_in_the_store_keeps_what_a_lost_host_sent(store, dask_processes, tmp_path, monkeypatch):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    address, procs = dask_processes
    prefix = "fleet/lost-host/"
    driver = subprocess.Popen([sys.executable, "-m", "objperf.fetch", f"s3://{store.bucket}/data/even.bin",
                               "--endpoint", store.server.endpoint, "--cluster", address, "--wait-for", "2",
                               "--range-size", "256KiB", "-c", "2", "--duration", "6s", "--out",
                               f"s3://{store.bucket}/{prefix}"], env=store.env(), cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        wait_until(lambda: {key.rsplit("/", 1)[1][:9] for key in store_parts(store, prefix)} >=
                   {"part-0000", "part-0001"}, timeout=120, what="both hosts' first parts")
        os.killpg(procs[2].pid, signal.SIGKILL)  # the second worker, w2, dies mid-run
        _, stderr = driver.communicate(timeout=200)
    finally:
        driver.kill()
    assert driver.returncode == 1 and "lost" in stderr, stderr
    rows = load(f"s3://{store.bucket}/{prefix}", endpoint=store.server.endpoint)  # the manifest names every part
    manifest = rows.attrs["manifest"]
    assert manifest["status"] == "failed" and manifest["rows"] == len(rows)
    assert sorted(h["status"] for h in manifest["hosts"]) == ["complete", "lost"]
    assert rows["host"].astype(str).nunique() == 2  # the lost host's flushed rows are kept
    assert set(manifest["files"]) == {key[len(prefix):] for key, _ in
                                      store.client.list_keys(store.bucket, prefix)} - {"manifest.json"}

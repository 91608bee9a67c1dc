"""One run over several hosts: a dask.distributed LocalCluster of worker processes here, against the real
server, every host through the same drive loop, one dataset at the end."""

from __future__ import annotations

import functools
import os
import re
import signal
import threading
import time
import zlib

import pandas as pd
import pytest

from conftest import RANGE, run_cli
from objperf import load
from objperf.dataset.directory import read_manifest

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.cluster]

pytest.importorskip("distributed")

MIB = 1 << 20


def test_two_hosts_read_one_object_together(store, tmp_path):
    out = tmp_path / "run"
    proc = run_cli("objperf", "fetch", f"s3://{store.bucket}/data/odd.bin", "--endpoint", store.server.endpoint,
                   "--local-cluster", "2", "--range-size", "1MiB", "-c", "2", "--duration", "3s", "--verify",
                   "--out", str(out), env=store.env(), timeout=180)
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    hosts = sorted(rows["host"].astype(str).unique())
    assert len(hosts) == 2 and all("/" in h for h in hosts)  # one machine: the worker's name beside the host's
    data = store.expected("data/odd.bin")
    done = rows[rows["status"] == 206]
    assert len(done) > 10
    for row in done.itertuples():  # every range's bytes right, on both hosts
        assert row.crc32 == zlib.crc32(bytes(data[row.offset:row.offset + row.bytes]))
    summary = read_manifest(out)["summary"]
    per_host = summary["hosts"]
    assert set(per_host) == set(hosts) and all(h["status"] == "complete" for h in per_host.values())
    assert summary["gbps"] == pytest.approx(sum(h["window_gbps"] for h in per_host.values()))
    first = rows.groupby(rows["host"].astype(str))["t_start"].min()
    spread = first.max() - first.min()
    print(f"start spread {spread * 1000:.1f} ms")
    assert spread < 0.5 and summary["start_spread_s"] == pytest.approx(spread)
    assert "all running together" in proc.stdout


def test_hosts_write_under_their_own_prefixes_and_clean_up(store, tmp_path):
    out = tmp_path / "run"
    proc = run_cli("objperf", "put", f"s3://{store.bucket}/cluster-put/", "--endpoint", store.server.endpoint,
                   "--local-cluster", "2", "--object-size", "12MiB", "--part-size", "5MiB", "--requests", "3",
                   "--keys", "3", "-c", "4", "--cleanup", "--out", str(out), env=store.env(), timeout=180)
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    done = rows[rows["op"].isin(["COMPLETE_MPU"]) & (rows["status"] == 200)]
    keys = done["key"].astype(str)
    assert len(done) == 6 and keys.is_unique
    assert {k.split("/")[1] for k in keys} == {"host00", "host01"}
    assert store.client.list_keys(store.bucket, "cluster-put/") == []
    assert store.client.open_uploads(store.bucket, "cluster-put/") == []


def test_a_host_killed_mid_run_is_named_and_the_others_rows_kept(store, tmp_path):
    from objperf.cluster.connect import open_cluster
    from objperf.cluster.runner import run_on_cluster
    from objperf.plan.reads import ReadWorkload
    from objperf.run.jobs import ReadSource, read_job

    workload = ReadWorkload(concurrency=2, threads=1, range_size=RANGE, duration=8.0)
    job = functools.partial(read_job, ReadSource(f"s3://{store.bucket}/data/odd.bin", store.server.settings()),
                            workload)
    with open_cluster(None, 2, workers=None, wait_for=None, say=print) as cluster:
        victim = cluster.hosts[1]
        pid = cluster.client.run(os.getpid, workers=[victim.address])[victim.address]
        threading.Timer(3.0, lambda: os.kill(pid, signal.SIGKILL)).start()
        result = run_on_cluster(cluster, job, kind="read", out=tmp_path / "run", target={}, workload={},
                                say=print)
    assert result.status == "failed" and list(result.lost) == [victim.label], result.lost
    manifest = read_manifest(tmp_path / "run")
    assert [h["status"] for h in manifest["hosts"]] == ["complete", "lost"]
    rows = load(tmp_path / "run")
    assert set(rows["host"].astype(str)) == {cluster.hosts[0].label} and len(rows) > 10
    assert "lost" in manifest["summary"]["error"]


def test_no_host_is_called_lost_while_the_client_refreshes_its_view_of_the_cluster(store, tmp_path):
    """The dask client refreshes its cached scheduler identity every few seconds without the workers: read
    from that cache, a moment's empty list of workers made every running host "lost".  Refreshing every
    5 ms makes that moment come every time."""
    import dask

    from objperf.cluster.connect import open_cluster
    from objperf.cluster.runner import run_on_cluster
    from objperf.plan.reads import ReadWorkload
    from objperf.run.jobs import ReadSource, read_job

    workload = ReadWorkload(concurrency=1, threads=1, range_size=RANGE, duration=3.0)
    job = functools.partial(read_job, ReadSource(f"s3://{store.bucket}/data/odd.bin", store.server.settings()),
                            workload)
    with dask.config.set({"distributed.client.scheduler-info-interval": "5ms"}):
        with open_cluster(None, 2, workers=None, wait_for=None, say=print) as cluster:
            result = run_on_cluster(cluster, job, kind="read", out=tmp_path / "run", target={}, workload={},
                                    say=print)
    assert result.status == "complete" and result.lost == {}, result.lost


def test_a_worker_with_another_objperf_version_is_refused(monkeypatch):
    import objperf.cluster.connect as connect
    from objperf.core.errors import UsageError

    monkeypatch.setattr(connect, "__version__", "0.0.0-driver")
    with pytest.raises(UsageError, match="runs objperf .* this driver 0.0.0-driver"):
        with connect.open_cluster(None, 1, workers=None, wait_for=None, say=print):
            pass


@pytest.mark.parametrize("args, message", [
    (["--cluster", "tcp://127.0.0.1:1"], "cannot reach the dask scheduler at tcp://127.0.0.1:1"),
    (["--cluster", "tcp://127.0.0.1:1", "--local-cluster", "2"], "contradict"),
    (["--workers", "2"], "give --cluster or --local-cluster"),
    (["--local-cluster", "1", "--workers", "2"], "the cluster has 1 worker(s), the run asks for 2"),
    (["--cluster", "tcp://127.0.0.1:1", "--object-size", "1MiB"], "the embedded server listens on this machine"),
    (["--local-cluster", "1", "--wait-for", "2", "--wait-timeout", "2s"],
     "only 1 of the 2 workers asked for joined within 2 s"),
])
def test_bad_cluster_input_is_one_line_and_exit_2(store, args, message):
    url = [f"s3://{store.bucket}/data/small.bin", "--endpoint", store.server.endpoint] \
        if "--object-size" not in args else []
    proc = run_cli("objperf.fetch", *url, *args, "--no-save" if "--workers" in args and len(args) == 2 else "-n1",
                   env=store.env(), timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2


def test_ctrl_c_on_the_driver_stops_every_host_and_keeps_their_rows(store, tmp_path):
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "objperf.fetch", f"s3://{store.bucket}/data/odd.bin", "--endpoint",
                             store.server.endpoint, "--local-cluster", "2", "--range-size", "1MiB", "-c", "2",
                             "--duration", "120s", "--out", str(out)], env=store.env(), stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    started = b""
    while b"started together" not in started and time.monotonic() < deadline:
        started += proc.stderr.readline().encode()
    line = ""  # the hosts' counts summed, as the driver prints them: requests answered on both hosts
    while not re.search(r"\s[1-9]\d* req/s", line) and time.monotonic() < deadline:
        line = proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert read_manifest(out)["status"] == "interrupted"
    rows = load(out)
    assert rows["host"].astype(str).nunique() == 2 and (rows["status"] == 206).sum() > 4


def test_a_study_runs_every_step_on_one_then_two_hosts(store, tmp_path):
    out = tmp_path / "study"
    proc = run_cli("objperf", "study", "read-concurrency", f"s3://{store.bucket}/cluster-study/", "--endpoint",
                   store.server.endpoint, "--quick", "--local-cluster", "2", "--grid", "hosts=1,2", "--grid",
                   "concurrency=1,4", "--duration", "1s", "--out", str(out), env=store.env(), timeout=240)
    assert proc.returncode == 0, proc.stderr
    steps = pd.read_parquet(out / "steps.parquet")
    assert list(zip(steps["hosts"], steps["concurrency"])) == [(1, 1), (1, 4), (2, 1), (2, 4)]
    assert (steps["errors"] == 0).all() and (steps["gbps"] > 0).all()
    rows = load(out)
    hosts_per_step = rows.groupby("step")["host"].nunique()
    assert hosts_per_step.tolist() == [1, 1, 2, 2]
    assert (rows.groupby(["step", "host"], observed=True)["slot"].nunique()
            == rows.groupby(["step", "host"], observed=True)["concurrency"].first()).all()
    assert read_manifest(out)["parameters"]["hosts"] == sorted(rows["host"].astype(str).unique())


def test_a_write_study_on_two_hosts_keeps_keys_apart_and_cleans_up(store, tmp_path):
    out = tmp_path / "study"
    proc = run_cli("objperf", "study", "write-part-size", f"s3://{store.bucket}/cluster-wps/", "--endpoint",
                   store.server.endpoint, "--quick", "--local-cluster", "2", "--grid", "part_size=5MiB",
                   "--grid", "concurrency=2", "--duration", "2s", "--out", str(out), env=store.env(), timeout=240)
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    done = rows[(rows["op"] == "COMPLETE_MPU") & (rows["status"] == 200)]
    assert len(done) >= 2 and (done.groupby(done["key"].astype(str))["host"].nunique() == 1).all()
    assert {k.split("/")[-2] for k in done["key"].astype(str)} == {"host00", "host01"}
    assert store.client.list_keys(store.bucket, "cluster-wps/objperf-study/write-part-size/") == []
    assert store.client.open_uploads(store.bucket, "cluster-wps/") == []


@pytest.mark.parametrize("args, message", [
    (["--grid", "hosts=1,2"], "hosts are a cluster's; give --cluster or --local-cluster"),
    (["--local-cluster", "1", "--grid", "hosts=1,2"], "the cluster has 1 worker(s), the run asks for 2"),
])
def test_bad_study_hosts_grid_is_one_line_and_exit_2(store, tmp_path, args, message):
    proc = run_cli("objperf", "study", "read-concurrency", f"s3://{store.bucket}/x/", "--endpoint",
                   store.server.endpoint, "--quick", *args, "--out", str(tmp_path / "s"), env=store.env())
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_a_host_killed_mid_put_leaves_nothing_of_its_run_behind(store, tmp_path):
    """With --cleanup, what a lost host had finished stayed in the store (its open uploads were aborted): the
    driver did not know the host's run id, which names its objects.  The driver now chooses it."""
    from objperf.cluster.connect import open_cluster
    from objperf.cluster.runner import run_on_cluster
    from objperf.cluster.writes import abort_lost
    from objperf.plan.writes import WriteWorkload, host_prefix
    from objperf.run.jobs import write_job

    settings = store.server.settings()
    store.client.put_object(store.bucket, "lost-put/host01/kept-from-before.bin", b"not this run's")
    workload = WriteWorkload(object_size=6 * MIB, part_size=5 * MIB, concurrency=2, threads=1,
                             buckets=(store.bucket,), prefix="lost-put/", duration=8.0, cleanup=True)
    job = functools.partial(write_job, settings, workload, False)
    with open_cluster(None, 2, workers=None, wait_for=None, say=print) as cluster:
        victim = cluster.hosts[1]
        pid = cluster.client.run(os.getpid, workers=[victim.address])[victim.address]
        threading.Timer(3.0, lambda: os.kill(pid, signal.SIGKILL)).start()
        result = run_on_cluster(cluster, job, kind="write", out=tmp_path / "run", target={}, workload={},
                                say=print, on_lost=functools.partial(abort_lost, settings, workload))
    assert result.status == "failed" and list(result.lost) == [victim.label], result.lost
    index = [h["label"] for h in read_manifest(tmp_path / "run")["hosts"]].index(victim.label)
    left = [key for key, _ in store.client.list_keys(store.bucket, host_prefix("lost-put/", index))]
    assert left == [f"{host_prefix('lost-put/', index)}kept-from-before.bin"]  # only what the run did not write
    assert store.client.list_keys(store.bucket, host_prefix("lost-put/", 1 - index)) == []  # the survivor's cleanup
    assert store.client.open_uploads(store.bucket, "lost-put/") == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("into", ["directory", "store"])
def test_a_host_killed_before_the_start_ends_the_wait_at_once_naming_it(store, tmp_path, into):
    """The run's task is pinned to the dead worker and never runs elsewhere: waiting for it to be ready took the
    whole ready timeout (300 s) before.  A run that never started leaves a dataset's store prefix empty."""
    from objperf.cluster.connect import open_cluster, workers_present
    from objperf.cluster.runner import run_on_cluster
    from objperf.core.errors import RunFailed
    from objperf.dataset.store_prefix import StorePrefix
    from objperf.plan.reads import ReadWorkload
    from objperf.run.jobs import ReadSource, read_job

    job = functools.partial(read_job, ReadSource(f"s3://{store.bucket}/data/odd.bin", store.server.settings()),
                            ReadWorkload(concurrency=2, threads=1, range_size=RANGE, duration=2.0))
    with open_cluster(None, 2, workers=None, wait_for=None, say=print) as cluster:
        victim = cluster.hosts[1]
        pid = cluster.client.run(os.getpid, workers=[victim.address])[victim.address]
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while victim.address in workers_present(cluster.client) and time.monotonic() < deadline:
            time.sleep(0.1)
        started = time.monotonic()
        out = tmp_path / "run" if into == "directory" else \
            StorePrefix.parse(f"s3://{store.bucket}/never-started/", store.server.settings()).check_new()
        with pytest.raises(RunFailed, match=f"{victim.label} .*left the cluster before the run could start"):
            run_on_cluster(cluster, job, kind="read", out=out, target={}, workload={}, say=print)
        assert time.monotonic() - started < 30
    assert store.client.list_keys(store.bucket, "never-started/") == []
    assert not (tmp_path / "run").exists()


@pytest.mark.timeout(300)
def test_a_cluster_put_on_the_embedded_server_makes_its_bucket_once(tmp_path):
    """Both hosts made the embedded server's bucket at once: one failed with BucketAlreadyOwnedByYou."""
    out = tmp_path / "run"
    proc = run_cli("objperf", "put", "--local-cluster", "2", "--object-size", "6MiB", "--part-size", "5MiB",
                   "-c", "2", "--requests", "2", "--out", str(out), timeout=240)
    assert proc.returncode == 0 and "BucketAlreadyOwnedByYou" not in proc.stderr, proc.stderr
    assert read_manifest(out)["summary"]["objects_written"] == 4

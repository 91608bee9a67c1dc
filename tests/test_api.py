"""The Python API (``objperf.api``) and where runs keep their results: the same rows as the command
line, one exception for bad input, datasets never thrown away, runs that stop cleanly."""

from __future__ import annotations

import importlib
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from conftest import run_cli
from objperf import api, load
from objperf.dataset.directory import read_manifest

MIB = 1 << 20
COMMANDS = ("fetch", "put", "mixed", "list", "study", "compare", "bench")


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    """Runs given no --out land here (``OBJPERF_RUNS``)."""
    where = tmp_path / "runs"
    monkeypatch.setenv("OBJPERF_RUNS", str(where))
    return where


@pytest.fixture
def s3_env(store, monkeypatch):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    return store


@pytest.mark.integration
def test_the_api_and_the_command_line_give_the_same_rows(store, tmp_path):
    """The same workload on the embedded server, once from a shell and once from Python: every range
    once, so the rows match one for one."""
    out = tmp_path / "cli"
    proc = run_cli("objperf", "fetch", "--object-size", "6MiB", "--range-size", "1MiB", "-c", "3",
                   "--out", str(out), env=store.env())
    assert proc.returncode == 0, proc.stderr
    run = api.fetch(object_size="6MiB", range_size="1MiB", concurrency=3, out=tmp_path / "api", progress=False)
    assert run.status == "complete" and run.dataset == tmp_path / "api"
    columns = ["op", "offset", "length", "bytes", "status", "curl_code"]
    from_shell = load(out)[columns].sort_values("offset").reset_index(drop=True)
    from_python = run.df[columns].sort_values("offset").reset_index(drop=True)
    assert len(from_python) == 6 and from_python.astype(str).equals(from_shell.astype(str))
    assert load(run.dataset)["bytes"].sum() == 6 * MIB


@pytest.mark.integration
def test_importing_every_command_module_leaves_the_api_callable(s3_env, tmp_path):
    for name in COMMANDS:
        importlib.import_module(f"objperf.commands.{name}")
    run = api.fetch(f"s3://{s3_env.bucket}/data/even.bin", endpoint=s3_env.server.endpoint, range_size="1MiB",
                    out=tmp_path / "run", progress=False)
    assert run.summary["requests"] == 4 and run.summary["bytes"] == 4 * MIB


@pytest.mark.parametrize("options, message", [
    ({"concurrency": 0}, "must be at least 1"),
    ({"range_size": "8 potatoes"}, "range-size"),
    ({"bogus": 1}, "has no option 'bogus'"),
    ({"json": True}, "json is for the command line"),
    ({"out": "x", "no_save": True}, "contradict"),
])
@pytest.mark.integration
def test_bad_input_raises_one_usage_error_with_the_commands_line(options, message):
    with pytest.raises(api.UsageError, match=message):
        api.fetch("s3://bucket/key", progress=False, **options)


@pytest.mark.integration
def test_an_existing_out_is_refused_before_any_server_starts(tmp_path, monkeypatch):
    from objperf import fetch
    from objperf.servers.seaweed import LocalSeaweed

    started = []
    monkeypatch.setattr(LocalSeaweed, "start", lambda self: started.append(self))
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "something").write_text("kept")
    with pytest.raises(api.UsageError, match="not empty"):
        api.fetch(out=taken, progress=False)
    assert fetch.main(["--out", str(taken)]) == 2
    assert started == [] and (taken / "something").read_text() == "kept"


@pytest.mark.integration
def test_a_run_without_out_keeps_its_dataset_under_runs(store, runs_dir):
    proc = run_cli("objperf.fetch", "--object-size", "4MiB", "--range-size", "1MiB", "--figures",
                   env={**store.env(), "OBJPERF_RUNS": str(runs_dir)})
    assert proc.returncode == 0, proc.stderr
    (dataset,) = runs_dir.iterdir()
    assert dataset.name.endswith("-fetch") and f"dataset {dataset}" in proc.stderr
    assert len(load(dataset)) == 4 and (dataset / "ttfb.png").exists()


@pytest.mark.integration
def test_no_save_keeps_nothing_and_refuses_figures(store, runs_dir):
    proc = run_cli("objperf.fetch", "--object-size", "2MiB", "--no-save", env=store.env())
    assert proc.returncode == 0 and not runs_dir.exists()
    proc = run_cli("objperf.fetch", "--no-save", "--figures", env=store.env())
    assert proc.returncode == 2 and "drop --no-save" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.integration
def test_ctrl_c_during_an_api_run_keeps_its_rows(s3_env, tmp_path, trickle_url, collector_quiet):
    """The notebook's stop button is a SIGINT to the kernel: the run stops as on the command line."""
    timer = threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        run = api.fetch(f"s3://{s3_env.bucket}/data/odd.bin", endpoint=s3_env.server.endpoint, range_size="1MiB",
                        concurrency=2, duration="60s", out=tmp_path / "run", progress=False)
    finally:
        timer.cancel()
    assert run.status == "interrupted" and read_manifest(run.dataset)["status"] == "interrupted"
    assert len(run.df) > 0 and len(load(run.dataset)) == len(run.df)


@pytest.mark.integration
def test_a_background_run_can_be_watched_stopped_and_loaded(s3_env, tmp_path):
    run = api.fetch(f"s3://{s3_env.bucket}/data/odd.bin", endpoint=s3_env.server.endpoint, range_size="1MiB",
                    concurrency=2, duration="60s", out=tmp_path / "run", background=True, progress=False)
    deadline = time.monotonic() + 30
    while run.requests == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not run.done and run.requests > 0
    run.stop(timeout=30)
    assert run.done and run.status == "interrupted"
    assert read_manifest(run.dataset)["status"] == "interrupted"
    assert len(load(run.dataset)) == len(run.df) >= run.requests
    assert "interrupted" in run._repr_html_() and "time to first byte" in run._repr_html_()


@pytest.mark.integration
def test_local_server_serves_every_run_in_its_block(tmp_path, monkeypatch):
    from objperf.servers.seaweed import LocalSeaweed

    with api.local_server(ipv6=False) as s3:
        starts = []
        original = LocalSeaweed.start
        monkeypatch.setattr(LocalSeaweed, "start", lambda self: starts.append(self) or original(self))
        first = api.fetch(object_size="4MiB", range_size="1MiB", out=tmp_path / "a", progress=False)
        second = api.put(object_size="6MiB", part_size="5MiB", out=tmp_path / "b", progress=False)
        assert starts == []  # both used the block's server
        endpoints = {read_manifest(run.dataset)["target"]["endpoint"] for run in (first, second)}
        assert endpoints == {s3.endpoint}
    assert first.summary["bytes"] == 4 * MIB and second.summary["objects_written"] == 1


def test_every_command_takes_c_for_its_concurrency():
    for name in ("fetch", "put", "mixed", "study", "compare"):
        parser = importlib.import_module(f"objperf.commands.{name}").build_parser()
        args = parser.parse_args((["read-concurrency"] if name == "study" else []) + ["-c", "7"])
        assert args.concurrency == 7, name


@pytest.mark.integration
def test_help_lists_a_commands_options_and_defaults():
    import inspect

    params = inspect.signature(api.fetch).parameters
    assert params["concurrency"].default == 16 and "range_size" in params and "background" in params
    assert "--range-size" in api.fetch.__doc__ and "background=True" in api.fetch.__doc__
    assert Path(api.__file__).name == "api.py"


@pytest.mark.integration
def test_a_process_sent_sigterm_inside_local_server_leaves_no_server_and_no_directory(tmp_path):
    """A notebook kernel shut down (or ``kill``) with the block open: the block's clean-up still runs."""
    import subprocess
    import sys

    script = ("import sys, time; from objperf import api\n"
              "with api.local_server(ipv6=False) as s3:\n"
              "    print(s3.workdir, *s3.pids, flush=True)\n"
              "    time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        workdir, *pids = proc.stdout.readline().split()  # the server answers: the block is open
        assert Path(workdir).is_dir() and pids
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143
    finally:
        proc.kill()
    assert not Path(workdir).exists()
    for pid in map(int, pids):
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()

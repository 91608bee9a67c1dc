"""``objperf serve``: a local store other shells reach with the export lines it prints — objperf's own runs,
``push`` and ``analyze s3://`` — until Ctrl-C or SIGTERM, after which nothing of it is left."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import wait_for

from conftest import run_cli

pytestmark = pytest.mark.timeout(240)

EXPORT = re.compile(r"^export (AWS_[A-Z_]+)=(\S+)$")
ENDPOINT = re.compile(r"^S3 endpoint (http://127\.0\.0\.1:\d+), bucket '([^']+)'")


class Served:
    """A running ``objperf serve``, its printed endpoint, bucket and exports read off its stdout."""

    def __init__(self, *args: str, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "objperf", "serve", *args], cwd=cwd, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     env=clean_env())
        self.exports: dict[str, str] = {}
        self.stdout = []
        for line in self.proc.stdout:  # the lines come as the server is ready: waited on, never slept for
            self.stdout.append(line)
            if found := ENDPOINT.match(line):
                self.endpoint, self.bucket = found.groups()
            if found := EXPORT.match(line.strip()):
                self.exports[found[1]] = found[2]
            if line.startswith("s5cmd "):  # the last of the example commands
                break
        assert len(self.exports) == 4, (self.stdout, self.proc.stderr.read() if self.proc.poll() is not None else "")

    def env(self) -> dict:
        return {**clean_env(), **self.exports}

    def pids(self) -> set[int]:
        """The weed processes serving it (found by the endpoint's port on their command lines)."""
        port = self.endpoint.rpartition(":")[2]
        return {pid for pid, cmdline in weed_cmdlines().items() if f"-s3.port={port}" in cmdline}

    def stop(self, sig: int = signal.SIGINT) -> tuple[str, float]:
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=60)
        return err, time.monotonic() - t0


def clean_env() -> dict:
    """This environment without any AWS setting of the machine's (only what serve printed reaches the store)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return {**env, "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}


def weed_cmdlines() -> dict[int, str]:
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "weed":
                found[int(pid)] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            pass
    return found


def objperf(*args: str, env: dict, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "objperf", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (args, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    return done


def files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_is_a_store_that_objperf_reaches_from_its_exports_and_leaves_nothing(tmp_path, sig):
    served = Served("--bucket", "tour", cwd=tmp_path)
    try:
        assert served.bucket == "tour" and served.exports["AWS_ENDPOINT_URL"] == served.endpoint
        assert any("objperf fetch s3://tour/" in line for line in served.stdout)
        scratch_dir = Path(next(re.search(r"-dir=(\S+)/data-\d", cmd)[1]
                                for pid, cmd in weed_cmdlines().items() if pid in served.pids()))
        assert scratch_dir.is_dir()
        env, secret = served.env(), served.exports["AWS_SECRET_ACCESS_KEY"]
        objperf("put", "s3://tour/objects/", "--object-size", "1MiB", "--keys", "2", "--requests", "2",
                "--no-save", env=env, cwd=tmp_path)
        objperf("fetch", "s3://tour/objects/", "--duration", "1s", "-c", "2", "--out", str(tmp_path / "run"),
                env=env, cwd=tmp_path)
        objperf("push", str(tmp_path / "run"), "s3://tour/shared/run/", env=env, cwd=tmp_path)
        again = objperf("analyze", "s3://tour/shared/run/", "--json", env=env, cwd=tmp_path)
        assert '"requests"' in again.stdout
        assert files_holding(tmp_path / "run", secret) == [] and secret not in again.stdout + again.stderr
        assert files_holding(scratch_dir, secret) == []  # SeaweedFS's own log included
        pids = served.pids()
        assert pids
    finally:
        err, took = served.stop(sig)
    assert served.proc.returncode == 0, err
    assert took < 10, f"serve took {took:.1f} s to stop"
    assert "stopped SeaweedFS" in err and "Traceback" not in err and secret not in err
    assert wait_for(lambda: not (pids & set(weed_cmdlines())), timeout=5), "a weed process outlived serve"
    assert not scratch_dir.exists()
    port = int(served.endpoint.rpartition(":")[2])
    assert not Path(f"/tmp/seaweedfs-s3-grpc-{port + 10000}.sock").exists()  # SeaweedFS's own, in /tmp


def test_serve_dir_keeps_the_data_and_the_keys_for_the_next_time(tmp_path):
    keep = tmp_path / "store"
    with listening_below(55535) as probe:
        port = probe.getsockname()[1]
    first = Served("--dir", str(keep), "--port", str(port), cwd=tmp_path)
    try:
        assert first.endpoint == f"http://127.0.0.1:{port}"
        objperf("put", f"s3://{first.bucket}/kept/", "--object-size", "1MiB", "--keys", "1", "--requests", "1",
                "--no-save", env=first.env(), cwd=tmp_path)
    finally:
        err, _ = first.stop()
    assert first.proc.returncode == 0 and f"kept in {keep}" in err
    assert (keep / "objperf-serve-keys.json").stat().st_mode & 0o077 == 0  # the owner's only
    second = Served("--dir", str(keep), cwd=tmp_path)
    try:
        objperf("fetch", f"s3://{second.bucket}/kept/", "--duration", "0.5s", "-c", "1", "--no-save",
                env=second.env(), cwd=tmp_path)  # the data of the first time
    finally:
        err, _ = second.stop()
    assert second.proc.returncode == 0 and keep.is_dir()
    # What was pasted still reaches it: the same keys, and the same port unless another program took it meanwhile.
    if f"port {port}, which {keep} was served on last, is taken" in err:
        assert second.endpoint != first.endpoint
        second.exports.pop("AWS_ENDPOINT_URL"), first.exports.pop("AWS_ENDPOINT_URL")
    assert second.exports == first.exports


@pytest.mark.parametrize("args, said", [
    (["--bucket", "No_Such"], "bad --bucket 'No_Such'"),
    (["--port", "60000"], "bad --port 60000"),
    (["--port", "0"], "--port"),
])
@pytest.mark.integration
def test_serve_refuses_what_cannot_be_in_one_line(args, said):
    done = run_cli("objperf", "serve", *args, timeout=30)
    assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def listening_below(highest: int):
    """A socket listening on a port serve could be given (the kernel's own picks can be above ``highest``)."""
    import random
    import socket

    for port in random.sample(range(20000, highest), 200):
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.listen()
        return sock
    raise AssertionError("no free port to take")


@pytest.mark.integration
def test_serve_on_a_taken_port_says_so():
    with listening_below(55535) as taken:
        port = taken.getsockname()[1]
        done = run_cli("objperf", "serve", "--port", str(port), timeout=30)
    assert done.returncode == 2 and f"port {port} on 127.0.0.1 is taken" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

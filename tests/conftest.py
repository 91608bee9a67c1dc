"""Every test talks to one real SeaweedFS that this session starts on loopback
(127.0.0.1 and ::1, plain and over TLS with a certificate from a throwaway CA),
seeded with objects whose bytes the tests can regenerate."""

from __future__ import annotations

import http.server
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest

from objperf._engine.payload import payload, payload_parts
from objperf.s3.client import S3Client
from objperf.servers.seaweed import LocalSeaweed

# The compatibility suite starts Ceph and moto too: `make test-compat` runs it (OBJPERF_COMPAT=1).
collect_ignore = [] if os.environ.get("OBJPERF_COMPAT") else ["compat"]

# Runs given no --out keep their datasets under runs/: for the tests, a scratch directory of their own, removed
# when the session ends (and, should the session be killed, by the next objperf: it names its owner).
if "OBJPERF_RUNS" not in os.environ:
    from objperf.core import scratch

    _RUNS = scratch.make("test-runs")
    os.environ["OBJPERF_RUNS"] = str(_RUNS)

    def pytest_unconfigure(config):
        import shutil

        shutil.rmtree(_RUNS, ignore_errors=True)
        # What a run keeps for its user until the next objperf (dask's log of a worker a test killed) goes too
        scratch.sweep()

BUCKET = "objperf-tests"
RANGE = 1 << 20
OBJECTS = {
    "data/odd.bin": 5 * RANGE + 12345,  # a short last range
    "data/small.bin": 1000,             # smaller than one range
    "data/even.bin": 4 * RANGE,
}
TRICKLE_SIZE = 32 << 20


@dataclass
class Store:
    server: LocalSeaweed
    client: S3Client
    bucket: str
    objects: dict[str, int]

    def seed(self, key: str) -> int:
        return len(key) + self.objects[key]

    def expected(self, key: str):
        return payload(self.objects[key], seed=self.seed(key))

    @property
    def secrets(self) -> list[str]:
        return [self.server.access_key, self.server.secret_key]

    def env(self) -> dict:
        """Environment for a CLI subprocess that should find the server's credentials."""
        return {**os.environ, "AWS_ACCESS_KEY_ID": self.server.access_key,
                "AWS_SECRET_ACCESS_KEY": self.server.secret_key, "AWS_CONFIG_FILE": "/nonexistent",
                "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_DEFAULT_REGION": "us-east-1"}


def throwaway_ca(where) -> tuple[str, str, str]:
    """(certificate, key, CA) PEM files for 127.0.0.1, signed by a CA made for this session."""
    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    paths = tuple(str(where / name) for name in ("cert.pem", "key.pem", "ca.pem"))
    cert.cert_chain_pems[0].write_to_path(paths[0])
    cert.private_key_pem.write_to_path(paths[1])
    ca.cert_pem.write_to_path(paths[2])
    return paths


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    tls = throwaway_ca(tmp_path_factory.mktemp("tls"))
    server = LocalSeaweed(tmp_path_factory.mktemp("seaweed"), ipv6=True, tls=tls)
    server.start()
    try:
        client = S3Client(server.settings())
        client.create_bucket(BUCKET)
        store = Store(server, client, BUCKET, dict(OBJECTS))
        for key, size in OBJECTS.items():
            # Parts of 5 MiB (S3's minimum): the odd-sized object goes up as a real multipart upload.
            client.put_large_object(BUCKET, key, payload_parts(size, store.seed(key), part_size=5 << 20))
        yield store
    finally:
        server.stop()


def wait_until(condition, *, timeout: float = 30, what: str = "the condition") -> None:
    """Poll ``condition`` (a real signal: a file, an open upload, a process gone) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not come within {timeout:g} s")
        time.sleep(0.02)


def run_cli(module: str, *args: str, env: dict | None = None, timeout: float = 120):
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL)


class Trickle(http.server.BaseHTTPRequestHandler):
    """An object served at about 3 MiB/s per connection: no range of it finishes within a second.
    ``started`` counts the GETs it has begun to answer, ``sent`` the bytes of body it has written."""

    protocol_version = "HTTP/1.1"
    body = (np.arange(TRICKLE_SIZE) % 251).astype(np.uint8).tobytes()
    started = 0
    sent = 0
    lock = threading.Lock()

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_GET(self):
        first, last = map(int, re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers["Range"]).groups())
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {first}-{last}/{len(self.body)}")
        self.send_header("Content-Length", str(last - first + 1))
        self.end_headers()
        with Trickle.lock:
            Trickle.started += 1
        try:
            for at in range(first, last + 1, 64 << 10):
                self.wfile.write(self.body[at:min(at + (64 << 10), last + 1)])
                self.wfile.flush()
                with Trickle.lock:
                    Trickle.sent += min(64 << 10, last + 1 - at)
                time.sleep(0.02)
        except (BrokenPipeError, ConnectionResetError):  # the client cut the GET
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def trickle_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/slow.bin"
    server.shutdown()
    server.server_close()


@dataclass
class Nginx:
    http_url: str  # a 4 MiB file (bytes 0..255 over and over), over HTTP/1.1
    https_url: str  # the same over TLS, with HTTP/2
    ca: str  # the CA that signed nginx's certificate


@pytest.fixture
def nginx(tmp_path):
    """nginx serving a 4 MiB file from memory-fast files, plain and over TLS (the Debian package the Makefile
    installs): the raw HTTP ceiling, where a stream is as fast as the client reads it."""
    import shutil
    import socket
    import tempfile
    from pathlib import Path

    from hostile import wait_for

    from objperf.peers.bench import NGINX_CONF
    from objperf.servers.seaweed import free_port

    if not shutil.which("nginx"):
        pytest.fail("nginx is not installed: make system-deps installs it")
    root = Path(tempfile.mkdtemp(prefix="nginx-www-"))  # nginx's workers drop root: not under pytest's 0700 dirs
    root.chmod(0o755)
    (root / "f.bin").write_bytes(bytes(range(256)) * (4 << 12))
    (root / "f.bin").chmod(0o644)
    cert, key, ca = throwaway_ca(tmp_path)
    port, tls_port = free_port(), free_port()
    (tmp_path / "tmp").mkdir()
    (tmp_path / "nginx.conf").write_text(NGINX_CONF.format(dir=tmp_path, port=port, tls_port=tls_port, root=root,
                                                           cert=cert, key=key))
    proc = subprocess.Popen(["nginx", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def listening() -> bool:
        with socket.socket() as a, socket.socket() as b:
            return a.connect_ex(("127.0.0.1", port)) == 0 and b.connect_ex(("127.0.0.1", tls_port)) == 0

    try:
        assert wait_for(listening, timeout=20)
        yield Nginx(f"http://127.0.0.1:{port}/f.bin", f"https://127.0.0.1:{tls_port}/f.bin", ca)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def small_disk(tmp_path):
    """``small_disk(size)``: a directory on a tmpfs of ``size`` bytes, which fills up for real."""
    mounted = []

    def make(size: int):
        where = tmp_path / f"disk-{len(mounted)}"
        where.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()}): the full-disk tests need root")
        mounted.append(where)
        return where

    yield make
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def collector_quiet():
    """The cyclic garbage collector run now and held off for the test: a test that sends itself a Ctrl-C wants the
    KeyboardInterrupt where it waits for it, not inside a finalizer of an earlier test's garbage that the
    collector happened to run at that moment (Python reports it there as ignored, and the test sees none)."""
    import gc

    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


# -- markers: each test says whether it starts something (``integration``: a server, a command, a notebook
# kernel), and which are slow (``slow``), cluster's or the compatibility suite's.  What can be checked is:

SERVER_FIXTURES = {"store", "own_server", "trickle_url", "small_disk", "serve", "runs", "dataset", "nginx_h2", "nginx",
                   "put_sink", "s3_env", "compat", "runs_dir"}


def pytest_collection_modifyitems(config, items):
    """A test that takes a server fixture but is not marked ``integration`` is refused: ``make test-fast``
    would start a server for it."""
    unmarked = [item.nodeid for item in items
                if SERVER_FIXTURES & set(item.fixturenames) and item.get_closest_marker("integration") is None]
    if unmarked:
        raise pytest.UsageError("these tests start a server but are not marked integration: " + ", ".join(unmarked))

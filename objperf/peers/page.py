"""docs/benchmark.md from one bench run: when, on what machine, every version, and the tables the run printed
(``objperf bench --markdown PATH``)."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

from objperf.peers.clients import version_of

PEERS = ("s5cmd", "boto3", "aws crt", "obstore", "s3torchconnector", "curl")

METHOD = """\
`objperf bench` (what `nox -s bench` and `make bench` run) reads the same object from the same local
SeaweedFS with objperf and its peers (s5cmd, boto3, the AWS CRT, obstore, s3torchconnector, curl),
interleaved, median of the rounds, and, where nginx is installed, a file served from `/dev/shm` (the raw
HTTP ceiling of the box), which objperf, curl and obstore's HTTPStore read in a table of their own, each
client the object `--passes` times over (4 unless told), so that a start-up of a few tenths of a second
weighs as in a run of seconds rather than half of a 1 GiB read at 20 Gbps. Then it uploads the same bytes
with objperf and the peers that write (the peers from a file in `/dev/shm`, objperf from its own memory), and
writes them again to nginx as a PUT sink: each PUT read whole into a file in `/dev/shm` and answered 200 with
an ETag once all of it is in, a bucket's HEAD answered from its directory, nothing else of S3 (no multipart
upload), so objperf, s5cmd, the AWS CRT and obstore write the same size there as objects of 16 MiB
(`--sink-object-size`), one PUT each, as many at a time as their concurrency, every object's size (and on the
first round its CRC-32) checked as it arrived.
Every client is its own process, measured from outside: wall time, CPU from wait4, peak RSS (VmHWM) and
private memory (RssAnon); every read's bytes and every upload's stored object are checked against the
payload's CRC-32 (the rows that keep no file, objperf's discard sink, curl into `/dev/null` and `obstore
ram`, by their byte counts). obstore reads as ranges of the part size, as many `get_range_async` tasks at a
time as objperf's slots: "obstore" into a file in `/dev/shm` (each range written at its offset from a
thread), "obstore ram" holding each range as its own Bytes in memory, counted and let go, the counterpart of
objperf's RAM sink; it writes with `put_async` (multipart, the same part size and concurrency).
s3torchconnector reads through an S3Reader and writes through an S3Writer (the CRT sets its own
concurrency); it takes no CA bundle, so it runs over plain HTTP only. "objperf ram 128KiB" is objperf with
the fixed receive buffer its slots had before each followed its reads, the yardstick of the adaptive one;
the scale table holds objperf's memory at 4096 in flight to libcurl's own, a plain C program with one multi
handle and 4096 easy handles with objperf's options (`objperf/peers/multi_yardstick.c`), reading the same.

Columns: "marginal" CPU takes out what each client spends on a 1 MiB object (start-up, imports,
connection); "in-run" is objperf's own count during the transfer; "running" is a client's Gbps once started;
"server" is what SeaweedFS and nginx spent per GiB serving that client; "vs best peer" is the row's Gbps and
CPU-s/GiB over those of the fastest peer on the same server. A peer
that finished and verified its transfer but whose process then died (obstore 0.12 sometimes aborts in its
runtime's teardown) is listed under its table as "ok, crashed on exit (SIGABRT)"; one whose transfer did
not finish as "failed: …". On a 2-core box the server competes with the client for CPU, and the ratios move
by about ±10 % from one run to the next: the round-by-round ratios under each table show how far."""


def machine() -> dict[str, str]:
    """CPU model, cores, kernel and memory of this box, and how busy it was (what else ran beside the bench
    weighs on every figure)."""
    from objperf.run.metadata import cpu_model

    memory = "?"
    try:
        total_kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                         if line.startswith("MemTotal:"))
        memory = f"{total_kib / (1 << 20):.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    return {"CPU": cpu_model(), "cores": str(os.cpu_count() or "?"), "kernel": platform.release(),
            "memory": memory, "load average at the end (1, 5, 15 min)": load}


def _command_version(args: list[str], pattern: str) -> str:
    """A version a command prints (on stdout or stderr), found by ``pattern``'s first group; '?' if not."""
    if not shutil.which(args[0]) and not os.path.exists(args[0]):
        return "not installed"
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "?"
    found = re.search(pattern, done.stdout + done.stderr)
    return found.group(1) if found else "?"


def _commit() -> str:
    """`` (commit abc1234)`` when objperf runs from a git checkout, else ''."""
    try:
        done = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return f" (commit {done.stdout.strip()})" if done.returncode == 0 and done.stdout.strip() else ""


def versions() -> dict[str, str]:
    """objperf, the libraries its engine runs on, Python, each peer and each server."""
    import sys

    from objperf._curl.exchange import curl_versions
    from objperf.core.version import __version__
    from objperf.peers.clients import has_module, tool

    found = {"objperf": __version__ + _commit()}
    built = curl_versions()
    found.update({"libcurl": built["libcurl"] or "?", "TLS (libcurl's)": built["tls"] or "?",
                  "nghttp2": built["nghttp2"] or "?", "Python": sys.version.split()[0]})
    installed = {"s5cmd": bool(tool("s5cmd")), "boto3": has_module("boto3"), "aws crt": has_module("awscrt"),
                 "obstore": has_module("obstore"), "s3torchconnector": has_module("s3torchconnector"),
                 "curl": bool(shutil.which("curl"))}
    for peer in PEERS:
        found[peer] = version_of(peer) if installed[peer] else "not installed"
    try:
        from objperf.servers.seaweed import weed_binary

        found["SeaweedFS"] = _command_version([weed_binary(), "version"], r"version\s+(?:\d+GB\s+)?(\d\S*)")
    except Exception:  # the embedded server is an extra: without it the bench has not run either
        found["SeaweedFS"] = "not installed"
    found["nginx"] = _command_version(["nginx", "-v"], r"nginx/(\S+)")
    return found


def render(tables: list[str], *, command: str, started: str, ended: str) -> str:
    """The whole page: what the bench does, the run's date, machine and versions, then its tables."""
    lines = ["# objperf against its peers: `nox -s bench`", "", METHOD, "",
             "## This run", "", f"- command: `{command}`", f"- started {started}, ended {ended} (UTC)"]
    lines += [f"- {name}: {value}" for name, value in machine().items()]
    lines += ["", "| software | version |", "| --- | --- |"]
    lines += [f"| {name} | {value} |" for name, value in versions().items()]
    for table in tables:
        title = table.splitlines()[0].split(":")[0] if table.strip() else "table"
        lines += ["", f"## {title}", "", "```text", table.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def write(path: str | Path, tables: list[str], *, command: str, started: str, ended: str) -> Path:
    path = Path(path)
    path.write_text(render(tables, command=command, started=started, ended=ended))
    return path

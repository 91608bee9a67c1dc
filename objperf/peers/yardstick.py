"""libcurl's own memory at high concurrency, measured by a plain C program (``multi_yardstick.c``: one multi
handle, as many easy handles as objperf's slots, with their options): what objperf's peak memory beyond its own
c=1 run is held to.  Built where it runs, with the system's C compiler and curl-config."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from objperf.peers.clients import Measured
from objperf.peers.tables import median

SOURCE = Path(__file__).with_name("multi_yardstick.c")


def build(workdir: Path) -> Path | str:
    """The program built under ``workdir``, or why it could not be."""
    cc, config = shutil.which("cc") or shutil.which("gcc"), shutil.which("curl-config")
    if not cc or not config:
        return "no C compiler or curl-config (libcurl4-openssl-dev) here"
    flags = subprocess.run([config, "--cflags"], capture_output=True, text=True).stdout.split()
    libs = subprocess.run([config, "--libs"], capture_output=True, text=True).stdout.split()
    program = workdir / "multi_yardstick"
    done = subprocess.run([cc, "-O2", *flags, "-o", str(program), str(SOURCE), *libs], capture_output=True, text=True)
    if done.returncode != 0:
        return f"cannot build it: {(done.stderr.strip().splitlines() or ['cc failed'])[-1]}"
    return program


def command(program: Path, url: str, size: int, range_size: int, concurrency: int, buffer: int,
            seconds: float) -> list[str]:
    return [str(program), url, str(size), str(range_size), str(concurrency), str(buffer), f"{seconds:g}"]


def against(objperf: dict[int, list[Measured]], alone: dict[int, list[Measured]], program: Path | str) -> str:
    """objperf's peak RSS at 4096 in flight beyond its own c=1, against libcurl's in a plain C program."""
    if not isinstance(program, Path):
        return f"libcurl alone (C, one multi handle): not run, {program}"

    def beyond(runs: dict[int, list[Measured]]) -> float | None:
        low, high = ([m.peak_rss_mib for m in runs[c] if m.ok] for c in (1, 4096))
        return median(high) - median(low) if low and high else None

    mine, theirs = beyond(objperf), beyond(alone)
    if mine is None or theirs is None:
        failed = [m.detail for runs in alone.values() for m in runs if not m.ok] or ["objperf failed"]
        return f"libcurl alone (C, one multi handle): no comparison ({failed[-1][-200:]})"
    return (f"c=4096's peak RSS beyond c=1's: objperf {mine:.0f} MiB, libcurl alone (C, one multi handle, the same "
            f"options and server) {theirs:.0f} MiB: {mine / theirs:.2f}x (goal: at most 1.10x)")

"""libcurl's own memory at high concurrency, measured by a plain C program (``multi_yardstick.c``: one multi
handle, as many easy handles as objperf's slots, with their options): what objperf's peak memory beyond its own
c=1 run is held to.  Built where it runs, with the system's C compiler and curl-config."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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

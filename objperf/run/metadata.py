"""What every run records about the box it ran on, so its numbers can be trusted later."""

from __future__ import annotations

import os
import platform
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path

from objperf._curl.exchange import curl_versions
from objperf.core.version import __version__


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def platform_name() -> str:
    """``platform.platform()``'s text ("Linux-6.1.0-x86_64-with-glibc2.36") without the
    ``uname -p`` child process it starts to learn the processor: 15 ms of every run's start-up."""
    if sys.platform != "linux":
        return platform.platform()
    system = os.uname()
    try:
        libc = (os.confstr("CS_GNU_LIBC_VERSION") or "").replace(" ", "")
    except (ValueError, OSError):
        libc = ""
    return f"{system.sysname}-{system.release}-{system.machine}" + (f"-with-{libc}" if libc else "")


def nic_speeds() -> dict[str, int | None]:
    """Link speed in Mb/s per network interface (None where the system does not say)."""
    import psutil

    return {name: stats.speed or None for name, stats in sorted(psutil.net_if_stats().items())}


def system_info() -> dict:
    return {
        "objperf": __version__,
        **{f"{name}_version": value for name, value in curl_versions().items()},
        "python": sys.version.split()[0],
        "platform": platform_name(),
        "kernel": platform.release(),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "nics_mbps": nic_speeds(),
    }

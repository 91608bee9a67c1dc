"""What every run records about the box it ran on, so its numbers can be trusted later."""

from __future__ import annotations

import os
import platform
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path

from objperf import __version__


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


def nic_speeds() -> dict[str, int | None]:
    """Link speed in Mb/s per network interface (None where the kernel does not say)."""
    speeds: dict[str, int | None] = {}
    base = Path("/sys/class/net")
    if not base.is_dir():
        return speeds
    for nic in sorted(base.iterdir()):
        try:
            value = int((nic / "speed").read_text().strip())
            speeds[nic.name] = value if value > 0 else None
        except (OSError, ValueError):
            speeds[nic.name] = None
    return speeds


def system_info() -> dict:
    from objperf._engine.core import curl_versions

    return {
        "objperf": __version__,
        **{f"{name}_version": value for name, value in curl_versions().items()},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "kernel": platform.release(),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "nics_mbps": nic_speeds(),
    }

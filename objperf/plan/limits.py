"""What a run needs from the machine, checked before it sends anything: open files and memory.

Every slot holds a socket, and a shell's soft limit on open files (``ulimit -n``,
1024 on most Linux systems) is below the concurrency a ceiling study asks for.
Past it socket() fails, libcurl reports "Couldn't connect to server", and the
user blames the store.  So an engine raises the soft limit to the hard one
before it opens anything, as Go's runtime does for every Go program (s5cmd and
warp among them); root may raise the hard limit too.

Every RAM-sink slot owns a buffer of one range, faulted in up front; at high
concurrency that is easily more memory than the machine has, and the kernel's
answer is the OOM killer, which leaves no dataset and may take other processes
along.  Where either does not fit, the run stops with one line that says why."""

from __future__ import annotations

import resource
from pathlib import Path

import psutil

from objperf.core.errors import UsageError
from objperf.core.sizes import format_size

# Beyond one socket per slot: epoll sets and eventfds, libcurl's idle connections, the
# dataset's files, the server a run may start, and what imported modules hold open.
RESERVE = 64


def open_files_in_use() -> int:
    try:
        return psutil.Process().num_fds()
    except (psutil.Error, AttributeError):  # num_fds is POSIX only
        return RESERVE


def kernel_ceiling() -> int:
    """The most open files the kernel lets any process have (fs.nr_open)."""
    try:
        return int(Path("/proc/sys/fs/nr_open").read_text())
    except (OSError, ValueError):
        return 1 << 20


def ensure_open_files(concurrency: int, extra: int = 0, *, what: str = "") -> int:
    """Make room for a socket per slot (and ``extra`` more files) in this process; returns the
    soft limit now in force.  Raises UsageError when the process may not open that many, naming
    the concurrency as ``what`` (default "concurrency N")."""
    need = open_files_in_use() + concurrency + extra + RESERVE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or need <= soft:
        return soft
    if hard == resource.RLIM_INFINITY or need <= hard:
        raised = need if hard == resource.RLIM_INFINITY else hard
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
        return raised
    wanted = f"{what or f'concurrency {concurrency:,}'} needs about {need:,} open files"
    if need > kernel_ceiling():
        raise UsageError(f"{wanted}, more than this kernel allows a process (fs.nr_open = {kernel_ceiling():,}); "
                         "lower --concurrency")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, need))  # root may raise the hard limit
    except (ValueError, OSError):
        raise UsageError(f"{wanted}, and this process may open {hard:,} (ulimit -Hn); lower --concurrency, "
                         f"or raise the limit (ulimit -n {need} as root)") from None
    return need


def memory_available() -> int:
    """Bytes this process may still take: the memory available, less where a cgroup caps it (psutil
    does not read cgroups: a container's limit is read from cgroup v2's files)."""
    available = psutil.virtual_memory().available
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
        if limit != "max":
            available = min(available, int(limit) - used)
    except (OSError, ValueError):
        pass
    return available


def ensure_memory(slots: int, slot_bytes: int) -> None:
    """Raise UsageError when ``slots`` RAM-sink buffers of ``slot_bytes`` each would not fit."""
    need = slots * slot_bytes
    available = memory_available()
    if need > available:
        raise UsageError(f"the RAM sink needs {format_size(need)} ({slots:,} slots × {format_size(slot_bytes)}), "
                         f"and {format_size(max(available, 0))} of memory is available; lower --concurrency or "
                         "--range-size, or use --sink discard")

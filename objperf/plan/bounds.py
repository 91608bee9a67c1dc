"""How large a number a run may be given, checked before anything is sent: a value past these is a
typo or an attack, and would otherwise end in an OverflowError, a C integer wrapped round, or gigabytes
allocated before the first request."""

from __future__ import annotations

from objperf.core.errors import UsageError
from objperf.core.steady import MIN_WINDOW_S

MAX_CONCURRENCY = 1 << 24  # requests in flight: each a socket; the kernel's open-file limit is checked later
MAX_THREADS = 1024
MAX_KEYS = 1 << 40  # keys are named as they are used: none is held before its first request
MAX_COUNT = 1 << 62  # requests and bytes budgets (int64 in the engine)
MAX_SECONDS = 366 * 24 * 3600.0  # durations and timeouts


def check_at_most(name: str, value: float | None, limit: float) -> None:
    if value is not None and value > limit:
        raise UsageError(f"{name} {value:,} is more than objperf takes (at most {limit:,.0f})")


def check_run_numbers(workload) -> None:
    """The numbers every workload has: concurrency, threads, budgets, durations."""
    check_at_most("concurrency", workload.concurrency, MAX_CONCURRENCY)
    check_at_most("threads", workload.threads, MAX_THREADS)
    for name in ("requests", "bytes", "range_size"):
        check_at_most(name, getattr(workload, name, None), MAX_COUNT)
    for name in ("duration", "timeout", "connect_timeout"):
        check_at_most(f"{name} (seconds)", getattr(workload, name, None), MAX_SECONDS)
    check_steady(workload)


def check_steady(workload) -> None:
    """The steady-state rule a workload carries (``--steady-window``, ``--steady-tolerance``)."""
    window, tolerance = getattr(workload, "steady_window", None), getattr(workload, "steady_tolerance", None)
    if window is not None and not MIN_WINDOW_S <= window <= MAX_SECONDS:
        raise UsageError(f"steady window must be {MIN_WINDOW_S:g} s or more (its samples are judged as rows "
                         f"come in, every 0.1 s), not {window:g} s")
    if tolerance is not None and not 0 < tolerance < 100:
        raise UsageError(f"steady tolerance must be a percentage above 0 and below 100, not {tolerance:g}")

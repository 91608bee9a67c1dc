"""What the caller of a run may ask of the drive loop besides the workload — when to start, when to stop,
what its rows call this host — set around the run (``with controlled(Control(...))``) rather than passed
down every layer.  The API's background runs stop through it; a cluster's hosts start together through it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Control:
    stop: threading.Event | None = None  # set: the run stops as after Ctrl-C, its rows kept
    gate: Callable[[], None] | None = None  # called once the engines are built, returns when they are to start
    host: str | None = None  # the rows' ``host`` (default: this machine's name)
    run_id: str | None = None  # the run's id, chosen by the caller (a cluster's driver names each host's run)


NONE = Control()
_current: ContextVar[Control | None] = ContextVar("objperf_run_control", default=None)


@contextlib.contextmanager
def controlled(control: Control) -> Iterator[Control]:
    """Runs inside the block (in this thread) follow ``control``."""
    token = _current.set(control)
    try:
        yield control
    finally:
        _current.reset(token)


def current() -> Control:
    return _current.get() or NONE


def stop_requested() -> bool:
    stop = current().stop
    return stop is not None and stop.is_set()

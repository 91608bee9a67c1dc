"""Ctrl-C, SIGTERM and SIGHUP (a closed terminal) during a run, handled one way for the commands and the
library alike: the first stops the run (a KeyboardInterrupt, which the drive loop turns into a clean stop);
a second, while the stopped run cleans up (aborts its open uploads, writes its manifest), is said and
waited out; a third forces the way out."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOPPED_BY = {signal.SIGINT: "interrupted (Ctrl-C)", signal.SIGTERM: "terminated (SIGTERM)",
              signal.SIGHUP: "hung up (SIGHUP: its terminal closed)"}


def _say(text: str) -> None:
    """A line on stderr, if there is still one: after SIGHUP the terminal may be gone."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


class StopSignals:
    """A signal handler counting the stop signals it received; ``stopped_by`` is the first one."""

    def __init__(self, received: int = 0):
        self.count = received
        self.stopped_by = signal.SIGINT

    def __call__(self, signum, frame):
        self.count += 1
        if self.count == 1:
            self.stopped_by = signum
            _say(f"objperf: {STOPPED_BY.get(signum, 'stopped')}: stopping, cutting what is in flight and keeping "
                 "the rows so far")
            raise KeyboardInterrupt
        if self.count == 2:
            _say("objperf: finishing clean-up (aborting open uploads, writing the dataset); Ctrl-C again to force")
            return
        raise KeyboardInterrupt


@contextlib.contextmanager
def handled(stop: StopSignals) -> Iterator[StopSignals]:
    """``stop`` handles SIGINT, SIGTERM and SIGHUP inside the block (signals reach the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def cleaning_up() -> Iterator[None]:
    """A stopped run cleans up: a further signal is said and waited out, one more forces.  Where a command
    already handles signals with a ``StopSignals``, that one goes on counting."""
    if threading.current_thread() is threading.main_thread() and isinstance(signal.getsignal(signal.SIGINT),
                                                                          StopSignals):
        yield
        return
    with handled(StopSignals(received=1)):
        yield

"""Starting the engine's threads: the one stretch where a stop signal must wait."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def stop_signals_deferred() -> Iterator[None]:
    """Ctrl-C or SIGTERM while the engine starts its threads is taken once every thread has started.  Taken
    inside ``Thread.start``, between the thread's creation and its start being noted, it would leave a
    thread running that ``running`` and ``join`` do not see: ``close`` would free its handles under it."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    received = []
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler is not None:  # None: a handler set outside Python, left alone
            previous[sig] = handler
            signal.signal(sig, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum in received:
            signal.raise_signal(signum)  # its own handler now, as if it came a moment later

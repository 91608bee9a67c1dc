"""What every objperf command shares: one-line errors, exit codes, the live
progress line, signal handling and the embedded local server."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator

from objperf.errors import ObjperfError
from objperf.sizes import parse_duration, parse_size

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line (plus a pointer to --help)."""

    def error(self, message: str):  # noqa: D401 - argparse's name
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ObjperfError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def duration_arg(text: str) -> float:
    try:
        return parse_duration(text)
    except ObjperfError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def run_main(prog: str, body: Callable[[], int]) -> int:
    """Run a command body; any failure becomes one line on stderr and a non-zero exit."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return body()
    except ObjperfError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # the promise is one line, never a traceback
        if os.environ.get("OBJPERF_DEBUG"):
            raise
        print(f"{prog}: error: {type(exc).__name__}: {exc} (set OBJPERF_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_ERROR
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


class ProgressLine:
    """``12.34 Gbps  456 req/s  0 errors  8.0 s`` rewritten in place on a terminal; silent elsewhere."""

    def __init__(self, stream=sys.stderr, total_s: float | None = None):
        self.stream = stream
        self.enabled = stream.isatty()
        self.total_s = total_s
        self._last = (0.0, 0, 0)

    def __call__(self, elapsed: float, nbytes: int, nrequests: int, nerrors: int) -> None:
        if not self.enabled:
            return
        t_prev, b_prev, r_prev = self._last
        dt = max(elapsed - t_prev, 1e-9)
        self._last = (elapsed, nbytes, nrequests)
        of = f"/{self.total_s:.0f}" if self.total_s else ""
        self.stream.write(f"\r{(nbytes - b_prev) * 8 / dt / 1e9:8.3f} Gbps  {(nrequests - r_prev) / dt:9.1f} req/s  "
                          f"{nerrors} errors  {elapsed:6.1f}{of} s ")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


@contextlib.contextmanager
def embedded_server(say: Callable[[str], None], *, ipv6: bool = False) -> Iterator:
    """A local SeaweedFS for runs given no URL; stopped however the run ends."""
    from objperf.seaweed import LocalSeaweed

    t0 = time.monotonic()
    server = LocalSeaweed(ipv6=ipv6)
    server.start()
    say(f"started local SeaweedFS at {server.endpoint} in {time.monotonic() - t0:.1f} s")
    try:
        yield server
    finally:
        server.stop()

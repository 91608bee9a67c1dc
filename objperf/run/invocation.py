"""Who runs a run and how it talks back: the command line (lines on stderr; a progress bar on a terminal,
plain progress lines in a log or a pipe) or
the Python API (a bar in the notebook, a shared local server, a live ``Run``); where its dataset goes; the
embedded local server a run given no URL uses."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from objperf.core.errors import UsageError
from objperf.core.progress import BAR, LINES, NONE, Listener, Progress, phase, telling
from objperf.core.sanitize import printable
from objperf.dataset.destination import NOWHERE, Destination

RUNS_DIR_ENV = "OBJPERF_RUNS"  # where runs go when no --out is given (default ./runs)


def progress_mode(stream=None) -> str:
    """A bar on a terminal, plain lines anywhere else (a log, a pipe, CI)."""
    stream = stream or sys.stderr
    try:
        return BAR if stream.isatty() else LINES
    except (AttributeError, ValueError):
        return LINES


@dataclass
class Invocation:
    prog: str
    show_progress: bool | str  # ``bar``, ``lines`` or ``none`` (True: a bar, False: none)
    server: Any = None  # a running local server used when no URL is given (the API's ``local_server()``)
    listener: Listener | None = None  # told of progress as the run goes
    destination: Destination = NOWHERE  # where the run's dataset goes, once ``resolve_out`` has settled it

    def say(self, text: str) -> None:
        print(f"{self.prog}: {printable(text)}", file=sys.stderr, flush=True)

    @property
    def mode(self) -> str:
        return BAR if self.show_progress is True else NONE if self.show_progress is False else self.show_progress

    @contextlib.contextmanager
    def telling(self) -> Iterator[None]:
        """What a run does between its transfers (completing uploads, stopping the server …) said in the
        block, in a line; the progress of runs given none of their own (a study's steps) too, in plain lines
        every few seconds, on a terminal as in a log: a step of tens of seconds is never silent."""
        with telling(self.say, lines=self.mode in (LINES, BAR)):
            yield

    @contextlib.contextmanager
    def local_server(self, *, ipv6: bool = False) -> Iterator:
        """The server a run with no URL uses: the caller's, else one started (and stopped) for this run."""
        if self.server is not None and (self.server.ipv6 or not ipv6):
            yield self.server
            return
        with telling(self.say), embedded_server(self.say, ipv6=ipv6) as server:
            yield server

    @contextlib.contextmanager
    def seeding(self, total_bytes: int) -> Iterator[Progress]:
        """The bar of the objects written before a run reads them (not the run's: no listener)."""
        progress = Progress(total_s=None, shown=self.mode, total_bytes=total_bytes, label="seeding",
                            say=self._line)
        try:
            yield progress
        finally:
            progress.close()

    @contextlib.contextmanager
    def progress(self, total_s: float | None) -> Iterator[Progress]:
        progress = Progress(total_s=total_s, shown=self.mode, listener=self.listener, say=self._line)
        try:
            with telling(lambda text: progress.say(f"{self.prog}: {printable(text)}")):
                yield progress
        finally:
            progress.close()

    def _line(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def embedded_server(say: Callable[[str], None], *, ipv6: bool = False) -> Iterator:
    """A local SeaweedFS for runs given no URL; stopped however the run ends."""
    from objperf.servers.seaweed import LocalSeaweed

    t0 = time.monotonic()
    server = LocalSeaweed(ipv6=ipv6)
    try:
        with phase("starting a local SeaweedFS…"):
            server.start()
        say(f"started local SeaweedFS at {server.endpoint} in {time.monotonic() - t0:.1f} s")
        yield server
    finally:
        with phase("stopping the local SeaweedFS…"):
            server.stop()


def default_out(name: str) -> Path:
    """``runs/<UTC time>-<name>``, a new directory for every run (as warp keeps every run's results)."""
    base = Path(os.environ.get(RUNS_DIR_ENV) or "runs") / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{name}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def resolve_out(options, name: str, invocation: Invocation, *, store_ok: bool = False) -> Destination:
    """Where the run's dataset goes, settled before any server starts or object is seeded, and kept on
    ``invocation``: ``out`` (a new or empty directory, checked now; with ``store_ok``, an empty
    ``s3://BUCKET/PREFIX/`` of the run's own store), else ``runs/<UTC time>-<name>``; nowhere with ``no_save``."""
    if options.no_save:
        if options.out:
            raise UsageError("--out and --no-save contradict each other: give one")
        if options.figures:
            raise UsageError("--figures draws into the dataset's directory: drop --no-save")
        destination = NOWHERE
    elif store_ok and str(options.out or "").startswith("s3://"):
        destination = Destination.of(store_prefix(options))
    else:
        destination = Destination.of(options.out or default_out(name))
    invocation.destination = destination
    return destination


def store_prefix(options):
    """``--out s3://…``: the dataset written straight into the run's own store, as whom the run reads it."""
    from objperf.dataset.store_prefix import StorePrefix

    if options.figures:
        raise UsageError("--figures draws into a directory: with --out s3://… draw them afterwards with "
                         "objperf analyze s3://… --figures DIR")
    if not str(options.url or "").startswith("s3://"):
        raise UsageError("--out s3://… goes into the store the run measures: give the run its s3:// URL (the "
                         "embedded server goes away with the run; an http(s) URL names no store)")
    return StorePrefix.parse(options.out, options.s3_settings())

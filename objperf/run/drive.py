"""The one drive loop: every run — read, write, mixed, several reads at once, each
study step — goes through ``drive``.  Only what feeds the engines differs, and
that is a ``Part``: a read engine (``ReadPart``) or an upload control plane
(``objperf.run.uploader.Uploader``).

``drive`` starts the parts, drains their rows into the recorder, renews URLs,
reports progress and lets the deadline end the run.  Whatever ends it — the
plan, the clock, Ctrl-C, SIGTERM, an engine fault, a full disk, a bug — it then
stops the engines and joins their threads, only then closes the sinks (no engine
thread can write into a reused descriptor), stops the sampler, and writes the
manifest with the status the run really ended with."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from objperf.core.errors import EngineError, ObjperfError, RunFailed
from objperf.core.progress import ambient_progress, tell
from objperf.run.control import current, stop_requested
from objperf.run.recorder import Recorder
from objperf.run.signals import cleaning_up

STEP_S = 0.1
PROGRESS_EVERY_S = 0.5

ProgressFn = Callable[[float, int, int, int], None]


class Part(Protocol):
    """One source of load in a run, with its engine."""

    engine: object

    def start(self) -> None: ...
    def step(self) -> None: ...  # take finished rows in, feed the engine, renew URLs
    def wait(self, timeout: float) -> None: ...  # until something happens, at most ``timeout``
    @property
    def done(self) -> bool: ...
    def finish(self) -> None: ...  # the run ended as planned: take the last rows
    def end_now(self) -> None: ...  # the run's end came early (its throughput held): cut what is in flight, as its
    # deadline would, and go on stepping until done
    def abort(self) -> None: ...  # Ctrl-C or a failure: cut what is in flight, keep its rows
    def progress(self) -> tuple[int, int, int]: ...  # bytes done (received, or acknowledged), requests, failed


class ReadPart:
    """A read engine (plan mode): rows go to the recorder, ``key_index`` shifted by ``key_offset`` when
    several targets share one run's labels."""

    feeds_itself = True  # its engine plans its own requests: the drive loop's steps only take its rows

    def __init__(self, engine, recorder: Recorder, *, duration: float = 0.0, renew_urls: Callable[[], None] | None
                 = None, key_offset: int = 0):
        self.engine = engine
        self.recorder = recorder
        self.duration = duration
        self.renew_urls = renew_urls or (lambda: None)
        self.key_offset = key_offset

    def start(self) -> None:
        self.engine.start(self.duration)

    def _take(self, cols: dict | None) -> None:
        if cols is not None and self.key_offset:
            cols["key_index"] += self.key_offset
        self.recorder.add(cols)

    def step(self) -> None:
        self._take(self.engine.drain())
        self.renew_urls()

    def wait(self, timeout: float) -> None:
        self.engine.join(timeout)

    @property
    def done(self) -> bool:
        return not self.engine.running

    def finish(self) -> None:
        self._take(self.engine.drain())

    def end_now(self) -> None:
        self.engine.stop(abort=True)  # the GETs in flight are cut, as at the deadline; their rows come in the steps

    def abort(self) -> None:
        self.engine.stop(abort=True)
        drain_until_done(self.engine, self._take)

    def progress(self) -> tuple[int, int, int]:
        return self.engine.progress()


def drain_until_done(engine, take: Callable[[dict | None], None]) -> None:
    """Hand ``take`` the rows of an engine told to stop, until its threads end.  Draining while
    joining: a thread whose row ring is full waits for room before it can end."""
    while not engine.join(STEP_S):
        take(engine.drain())
    take(engine.drain())


def drive(recorder: Recorder, parts: list[Part], *, on_progress: ProgressFn | None = None,
          after_engines: Iterable[Callable[[], None]] = ()) -> str:
    """Run ``parts`` to their end; the status they ended with: ``complete``, ``interrupted``, or ``failed``
    when the run could not go on (an objperf error: ``recorder.error`` says why).  ``after_engines``
    (closing sink files) run once every engine thread has ended.  On any other end (a bug) the manifest
    says ``failed`` and the exception goes on; the rows so far are kept either way."""
    status = "complete"
    ambient = None
    if on_progress is None:  # a run nobody shows (a study's step): plain lines where the command writes a log
        ambient = ambient_progress(_planned_s(parts))
        on_progress = ambient
    try:
        gate = current().gate
        if gate is not None:
            try:
                gate()  # hosts of a cluster start together
            except BaseException:
                _close_unstarted(parts)  # built, never started: their handles go all the same
                raise
        if not all(getattr(part, "feeds_itself", False) for part in parts):
            recorder.load_later_modules()  # this thread steers the run: no import may hold it up once it runs
        recorder.start_clock()
        try:
            _loop(recorder, parts, on_progress)
            for part in parts:
                part.finish()
        except KeyboardInterrupt:
            status = "interrupted"
            with cleaning_up():
                _abort_all(parts)
        except ObjperfError as exc:  # the run could not go on (a full disk, an engine fault, a lost server)
            status = "failed"
            recorder.error = str(exc)
            with cleaning_up():
                _abort_all(parts)
        except BaseException:
            status = "failed"
            _abort_all(parts)
            raise
        finally:
            if ambient is not None:
                ambient.close()
            _teardown(recorder, parts, after_engines)
    except BaseException as exc:
        recorder.error = str(exc) if isinstance(exc, ObjperfError | OSError) else f"{type(exc).__name__}: {exc}"
        recorder.finish("failed")
        raise
    return status


def _loop(recorder: Recorder, parts: list[Part], on_progress: ProgressFn | None) -> None:
    for part in parts:
        part.start()
    recorder.load_later_modules()  # in flight now; done before the clock unless the engines feed themselves
    last_progress = 0.0
    while True:
        for part in parts:
            part.step()
            fault = part.engine.fault
            if fault is not None:
                raise fault
        lost = recorder.server_lost()
        if lost:
            raise RunFailed(lost)
        if stop_requested():
            raise KeyboardInterrupt  # the same clean stop as Ctrl-C
        watch = recorder.steady_watch
        if watch is not None and not recorder.ended_steady and watch.steady(time.time()):  # rows' clock: the wall
            recorder.ended_steady = True  # --until-steady: the throughput has held; the run ends as on time
            for part in parts:
                part.end_now()
        waiting = [part for part in parts if not part.done]
        if not waiting:
            return
        waiting[0].wait(STEP_S)
        if on_progress and recorder.elapsed - last_progress >= PROGRESS_EVERY_S:
            last_progress = recorder.elapsed
            totals = [sum(values) for values in zip(*(part.progress() for part in parts))]
            on_progress(last_progress, *totals)


def _planned_s(parts: list[Part]) -> float | None:
    """The run's planned length, where a part has one."""
    planned = [getattr(part, "duration", None) or getattr(getattr(part, "workload", None), "duration", None)
               for part in parts]
    return max((p for p in planned if p), default=None)


def _trouble(text: str) -> None:
    """What went wrong while a run ended, which must not end it: said to whoever is told, else logged."""
    if not tell(text):
        logging.getLogger("objperf").warning(text)


def _close_unstarted(parts: list[Part]) -> None:
    for part in parts:
        try:
            part.engine.close()
        except Exception as exc:
            _trouble(f"while closing an engine that never started: {exc}")


def _abort_all(parts: list[Part]) -> None:
    """Abort every part, the last started first, each whatever another's abort raised (a part with
    uploads open must still send its aborts)."""
    for part in reversed(parts):
        try:
            part.abort()
        except Exception as exc:  # one part that cannot stop must not keep the others' aborts from going out
            _trouble(f"while stopping the run: {exc}")


def _teardown(recorder: Recorder, parts: list[Part], after_engines: Iterable[Callable[[], None]]) -> None:
    stuck = None
    for part in parts:
        try:
            part.engine.close()  # stops and joins the threads, frees libcurl's handles
        except EngineError as exc:
            stuck = exc
    if stuck is None:  # a thread still running could write into a descriptor closed and reused
        for close in after_engines:
            close()
    recorder.stop_clock()
    recorder.rows_dropped += sum(part.engine.rows_dropped for part in parts)
    recorder.receive_buffers += [size for part in parts for size in part.engine.receive_buffers]
    for part in parts:
        for name, count in getattr(part.engine, "checksums", {}).items():
            recorder.checksums[name] = recorder.checksums.get(name, 0) + count
    if stuck is not None:
        raise stuck

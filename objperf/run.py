"""One read run: target + workload → engine → rows (flushed to the dataset as
they come) → summary.  Ctrl-C or SIGTERM ends it early and keeps every finished row.

Rows stay NumPy columns until someone asks for a DataFrame, so a run without
``out`` never pays for pandas or pyarrow."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from objperf.errors import UsageError
from objperf.recorder import Recorder, RunResult
from objperf.target import ResolvedTarget, UrlRenewal
from objperf.workload import ReadWorkload, spread_entries

__all__ = ["RunResult", "make_engine", "run_read"]

DRAIN_EVERY_S = 0.1
PROGRESS_EVERY_S = 0.5

ProgressFn = Callable[[float, int, int, int], None]


def make_engine(target: ResolvedTarget, workload: ReadWorkload, fds: list[int] | None):
    sizes = [o.size for o in target.objects]
    common = dict(concurrency=workload.concurrency, range_size=workload.range_size, sink=workload.sink,
                  random_ranges=workload.random_ranges, fds=fds, verify=workload.verify,
                  max_requests=workload.requests or -1, max_bytes=workload.bytes or -1,
                  timeout=workload.timeout, connect_timeout=workload.connect_timeout, seed=workload.seed)
    if workload.engine == "requests":
        from objperf.refengine import RequestsEngine

        return RequestsEngine(target.urls, sizes, **target.engine_tls(), **common)
    from objperf._engine.core import Engine

    return Engine(target.urls, sizes, threads=workload.threads, ip=workload.ip, connect_to=workload.connect_to,
                  spread_to=spread_entries(workload.spread_to),
                  interface=workload.interface, http_version=workload.http_version, tls=target.tls,
                  buffer_size=workload.buffer_size, **target.engine_tls(), **common)


def _open_sink_files(target: ResolvedTarget, workload: ReadWorkload) -> list[int] | None:
    if workload.sink != "file":
        return None
    base = Path(workload.sink_dir)
    fds = []
    for obj in target.objects:
        path = base / (obj.bucket or "http") / obj.key
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
            os.ftruncate(fd, obj.size)
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            raise UsageError(f"cannot write {path}: {exc.strerror}") from None
        fds.append(fd)
    return fds


def drain_until_done(engine, take: Callable[[dict | None], None]) -> None:
    """Hand ``take`` the rows of an engine told to stop, until its threads end.  Draining while
    joining: a thread whose row ring is full waits for room before it can end."""
    while not engine.join(DRAIN_EVERY_S):
        take(engine.drain())
    take(engine.drain())


def abort_and_drain(engine, take: Callable[[dict | None], None]) -> None:
    """Stop ``engine`` now and hand its last rows to ``take``, the requests it cut among them."""
    engine.stop(abort=True)
    drain_until_done(engine, take)


def default_requests(target: ResolvedTarget, workload: ReadWorkload) -> int:
    """With no duration, request or byte budget, a run reads every range of every object once."""
    return sum(max(1, -(-o.size // workload.range_size)) for o in target.objects)


def run_read(target: ResolvedTarget, workload: ReadWorkload, *, out: str | Path | None = None,
             on_progress: ProgressFn | None = None, keep_slot_buffers: bool = False) -> RunResult:
    workload.validate()
    if not (workload.duration or workload.requests or workload.bytes):
        workload.requests = default_requests(target, workload)
    recorder = Recorder("read", target=target.describe(), workload=workload.describe(), out=out,
                        buckets=[o.bucket for o in target.objects], keys=[o.key for o in target.objects],
                        engine_threads=workload.threads if workload.engine == "curl" else workload.concurrency)
    fds = _open_sink_files(target, workload)
    engine = make_engine(target, workload, fds)
    renew_urls = UrlRenewal(target, [engine])
    status = "complete"
    recorder.start_clock()
    try:
        engine.start(workload.duration or 0.0)
        last_progress = 0.0
        while engine.running:
            engine.join(DRAIN_EVERY_S)
            recorder.add(engine.drain())
            renew_urls()
            if on_progress and recorder.elapsed - last_progress >= PROGRESS_EVERY_S:
                last_progress = recorder.elapsed
                on_progress(last_progress, *engine.progress())
    except KeyboardInterrupt:
        status = "interrupted"
        abort_and_drain(engine, recorder.add)
    finally:
        recorder.add(engine.drain())
        if fds:
            for fd in fds:
                os.close(fd)
    buffers = [engine.slot_buffer(i) for i in range(workload.concurrency)] \
        if keep_slot_buffers and workload.sink == "ram" else []
    return recorder.finish(status, slot_buffers=buffers)

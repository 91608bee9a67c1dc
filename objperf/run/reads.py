"""Read runs — one target, or several at once — each target + workload →
engines → rows (flushed to the dataset as they come) → summary, through the one
drive loop (``objperf.run.drive``).  Ctrl-C or SIGTERM ends a run early and keeps
every finished row.

Rows stay NumPy columns until someone asks for a DataFrame, so a run without
``out`` never pays for pandas or pyarrow."""

from __future__ import annotations

import os
from pathlib import Path

from objperf._engine.config import plan_engine
from objperf.core.errors import UsageError
from objperf.dataset.destination import Destination
from objperf.plan.limits import ensure_memory, ensure_open_files
from objperf.plan.reads import RECEIVE_BUFFER_MIN, ReadWorkload, huge_pages_pay, range_count, spread_entries
from objperf.run.drive import ProgressFn, ReadPart, drive
from objperf.run.recorder import Recorder, RunResult
from objperf.run.sinkpath import confined_path
from objperf.s3.target import ResolvedTarget, UrlRenewal

__all__ = ["RunResult", "make_engine", "run_read", "run_reads_together", "settled"]


def check_read_resources(target: ResolvedTarget, workload: ReadWorkload) -> None:
    """The open files and memory the engine will need, before it is built (the open-file limit raised)."""
    if workload.engine == "requests":
        ensure_open_files(workload.concurrency)  # a thread, and a connection, per slot
    else:  # a socket per slot; per thread an epoll set, an eventfd and a few idle connections
        ensure_open_files(workload.concurrency, extra=8 * min(workload.threads, workload.concurrency))
    if workload.body_sink == "ram":
        largest = max((o.size for o in target.objects), default=0)
        ensure_memory(workload.concurrency, min(workload.range_size, max(largest, 1)))


def make_engine(target: ResolvedTarget, workload: ReadWorkload, fds: list[int] | None):
    check_read_resources(target, workload)
    target.sign_for(workload.op, workload.signed_headers)
    sizes = [o.size for o in target.objects]
    common = dict(concurrency=workload.concurrency, range_size=workload.range_size, sink=workload.body_sink,
                  random_ranges=workload.random_ranges, fds=fds, verify=workload.verify or workload.checksum_mode,
                  max_requests=workload.requests or -1, max_bytes=workload.bytes or -1,
                  timeout=workload.timeout, connect_timeout=workload.connect_timeout, seed=workload.seed)
    if workload.engine == "requests":
        from objperf._engine.reference import RequestsEngine

        return RequestsEngine(target.urls, sizes, **target.engine_tls(), **common)
    fds = common.pop("fds")
    return plan_engine(target.urls, sizes, fds=fds, threads=workload.threads, ip=workload.ip, op=workload.op,
                       connect_to=tuple(workload.connect_to), spread_to=tuple(spread_entries(workload.spread_to)),
                       interface=workload.interface, http_version=workload.http_version, tls=target.tls,
                       buffer_size=workload.receive_buffer(),
                       buffer_max=workload.receive_buffer_max(), buffer_min=RECEIVE_BUFFER_MIN,
                       keepalive=workload.keepalive, **target.engine_tls(), checksum_mode=workload.checksum_mode,
                       huge_pages=huge_pages_pay(workload, sizes),
                       headers=tuple(f"{name}: {value}" for name, value in workload.signed_headers.items()),
                       rate=workload.rate or 0.0, max_rate=workload.max_rate or 0, **common)


def open_sink_files(target: ResolvedTarget, workload: ReadWorkload) -> list[int]:
    """One file per object under ``--sink-dir`` for the file sink (none for the others).  Every key is checked
    before any file is made: one refused key writes nothing."""
    if workload.sink != "file":
        return []
    paths = [confined_path(workload.sink_dir, obj.bucket, obj.key) for obj in target.objects]
    fds: list[int] = []
    for obj, path in zip(target.objects, paths):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
            fds.append(fd)
            os.ftruncate(fd, obj.size)
        except OSError as exc:
            close_all(fds)
            raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    return fds


def close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def default_requests(target: ResolvedTarget, workload: ReadWorkload) -> int:
    """With no duration, request or byte budget, a run reads every range of every object once (asks for
    each key once, for any other op than GET)."""
    if workload.op != "get":
        return len(target.objects)
    return sum(range_count(o.size, workload.range_size) for o in target.objects)


def settled(target: ResolvedTarget, workload: ReadWorkload) -> ReadWorkload:
    """``workload`` with its engine threads settled for ``target``'s servers and objects."""
    return workload.with_threads(target.urls, max((o.size for o in target.objects), default=0))


def run_read(target: ResolvedTarget, workload: ReadWorkload, *, out: Destination | str | Path | None = None,
             on_progress: ProgressFn | None = None, keep_slot_buffers: bool = False,
             keep_rows: bool = True) -> RunResult:
    """One read run; ``keep_rows`` False: without ``out``, the result holds no rows (see ``Recorder``)."""
    workload.validate()
    workload = workload.capped()
    if not (workload.duration or workload.requests or workload.bytes):
        workload.requests = default_requests(target, workload)
    workload = settled(target, workload)
    out = Destination.of(out)
    fds = open_sink_files(target, workload)
    engine = None
    try:  # every refusal (memory, open files, libcurl) comes before the dataset is begun: it writes nothing
        engine = make_engine(target, workload, fds or None)
        recorder = Recorder("read", target=target.describe(), workload=workload.describe(), out=out,
                            buckets=[o.bucket for o in target.objects], keys=[o.key for o in target.objects],
                            sizes=[o.size for o in target.objects],
                            engine_threads=workload.threads if workload.engine == "curl" else workload.concurrency,
                            keep_rows=keep_rows)
    except BaseException:
        if engine is not None:
            engine.close()
        close_all(fds)
        raise
    part = ReadPart(engine, recorder, duration=workload.duration or 0.0, renew_urls=UrlRenewal(target, [engine]))
    status = drive(recorder, [part], on_progress=on_progress, after_engines=[lambda: close_all(fds)])
    buffers = [engine.slot_buffer(i) for i in range(workload.concurrency)] \
        if keep_slot_buffers and workload.body_sink == "ram" else []
    return recorder.finish(status, slot_buffers=buffers, extra=target.notes() or None)


def run_reads_together(pairs: list[tuple[ResolvedTarget, ReadWorkload]], *,
                       out: Destination | str | Path | None) -> RunResult:
    """Several read engines at once into one dataset (rows keep each target's bucket and key)."""
    out = Destination.of(out)
    pairs = [(target, settled(target, workload)) for target, workload in pairs]
    buckets, keys, sizes, offsets = [], [], [], []
    for target, _ in pairs:
        offsets.append(len(keys))
        buckets += [o.bucket for o in target.objects]
        keys += [o.key for o in target.objects]
        sizes += [o.size for o in target.objects]
    recorder = Recorder("reads-together", target={"targets": [t.describe() for t, _ in pairs]},
                        workload={"workloads": [w.describe() for _, w in pairs]}, out=out, buckets=buckets,
                        keys=keys, sizes=sizes, engine_threads=sum(w.threads for _, w in pairs))
    parts: list[ReadPart] = []
    try:
        for (target, workload), offset in zip(pairs, offsets):
            engine = make_engine(target, workload, None)
            parts.append(ReadPart(engine, recorder, duration=workload.duration or 0.0,
                                  renew_urls=UrlRenewal(target, [engine]), key_offset=offset))
    except BaseException:
        for part in parts:
            part.engine.close()
        recorder.discard()
        raise
    return recorder.finish(drive(recorder, parts))

"""One read run: target + workload → engine → rows (flushed to the dataset as
they come) → summary.  Ctrl-C or SIGTERM ends it early and keeps every finished row.

Rows stay NumPy columns until someone asks for a DataFrame, so a run without
``out`` never pays for pandas or pyarrow."""

from __future__ import annotations

import os
import resource
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from objperf.errors import UsageError
from objperf.metadata import system_info, utc_now
from objperf.summary import summarize
from objperf.target import ResolvedTarget
from objperf.workload import ReadWorkload

DRAIN_EVERY_S = 0.1
FLUSH_EVERY_S = 1.0
PROGRESS_EVERY_S = 0.5

ProgressFn = Callable[[float, int, int, int], None]


@dataclass
class RunResult:
    run_id: str
    status: str  # complete | interrupted
    columns: dict[str, np.ndarray] = field(repr=False)
    labels: dict = field(repr=False)  # run_id, host, buckets, keys: what turns indexes into names
    summary: dict
    manifest: dict
    dataset: Path | None = None
    slot_buffers: list = field(default_factory=list, repr=False)

    @cached_property
    def rows(self):
        """The rows as a pandas DataFrame, in the dataset's schema."""
        from objperf.schema import rows_to_table

        return rows_to_table(self.columns, **self.labels).to_pandas()


def engine_columns_empty() -> dict[str, np.ndarray]:
    from objperf._engine.core import ENGINE_COLUMNS

    return {name: np.zeros(0, dtype=dtype) for name, dtype in ENGINE_COLUMNS.items()}


def concat_columns(chunks: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if not chunks:
        return engine_columns_empty()
    if len(chunks) == 1:
        return chunks[0]
    return {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}


def make_engine(target: ResolvedTarget, workload: ReadWorkload, fds: list[int] | None):
    sizes = [o.size for o in target.objects]
    common = dict(concurrency=workload.concurrency, range_size=workload.range_size, sink=workload.sink,
                  random_ranges=workload.random_ranges, fds=fds, verify=workload.verify,
                  max_requests=workload.requests or -1, max_bytes=workload.bytes or -1,
                  timeout=workload.timeout, connect_timeout=workload.connect_timeout, seed=workload.seed)
    if workload.engine == "requests":
        from objperf.refengine import RequestsEngine

        return RequestsEngine(target.urls, sizes, **common)
    from objperf._engine.core import Engine

    return Engine(target.urls, sizes, threads=workload.threads, ip=workload.ip, connect_to=workload.connect_to,
                  interface=workload.interface, http_version=workload.http_version, tls=target.tls,
                  buffer_size=workload.buffer_size, **common)


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


def default_requests(target: ResolvedTarget, workload: ReadWorkload) -> int:
    """With no duration, request or byte budget, a run reads every range of every object once."""
    return sum(max(1, -(-o.size // workload.range_size)) for o in target.objects)


def run_read(target: ResolvedTarget, workload: ReadWorkload, *, out: str | Path | None = None,
             on_progress: ProgressFn | None = None, keep_slot_buffers: bool = False) -> RunResult:
    workload.validate()
    if not (workload.duration or workload.requests or workload.bytes):
        workload.requests = default_requests(target, workload)
    run_id = uuid.uuid4().hex[:16]
    labels = {"run_id": run_id, "host": socket.gethostname(), "buckets": [o.bucket for o in target.objects],
              "keys": [o.key for o in target.objects]}
    manifest = {"run_id": run_id, "kind": "read", "started_utc": utc_now(), "system": system_info(),
                "target": target.describe(), "workload": workload.describe()}
    writer = None
    if out:
        from objperf.dataset import DatasetWriter

        writer = DatasetWriter(out, manifest)
    fds = _open_sink_files(target, workload)
    engine = make_engine(target, workload, fds)

    chunks: list[dict[str, np.ndarray]] = []
    unflushed: list[dict[str, np.ndarray]] = []

    def collect() -> None:
        cols = engine.drain()
        if cols is not None:
            chunks.append(cols)
            unflushed.append(cols)

    def flush() -> None:
        if writer and unflushed:
            from objperf.schema import rows_to_table

            writer.append(rows_to_table(concat_columns(unflushed), **labels))
        unflushed.clear()

    status = "complete"
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    try:
        engine.start(workload.duration or 0.0)
        last_flush = last_progress = t0
        while engine.running:
            engine.join(DRAIN_EVERY_S)
            collect()
            now = time.monotonic()
            if now - last_flush >= FLUSH_EVERY_S:
                flush()
                last_flush = now
            if on_progress and now - last_progress >= PROGRESS_EVERY_S:
                on_progress(now - t0, *engine.progress())
                last_progress = now
    except KeyboardInterrupt:
        status = "interrupted"
        engine.stop(abort=True)
        engine.join()
    finally:
        wall = time.monotonic() - t0
        usage1 = resource.getrusage(resource.RUSAGE_SELF)
        collect()
        flush()
        if fds:
            for fd in fds:
                os.close(fd)
    cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    columns = concat_columns(chunks)
    summary = summarize(columns, wall_s=wall, cpu_s=cpu, peak_rss_bytes=usage1.ru_maxrss * 1024)
    manifest.update(status=status, ended_utc=utc_now(), summary=summary)
    if writer:
        writer.close(status, ended_utc=manifest["ended_utc"], summary=summary)
    buffers = [engine.slot_buffer(i) for i in range(workload.concurrency)] \
        if keep_slot_buffers and workload.sink == "ram" else []
    return RunResult(run_id, status, columns, labels, summary, manifest, Path(out) if out else None, buffers)

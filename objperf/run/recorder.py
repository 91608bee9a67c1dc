"""What every run keeps: its rows (NumPy chunks from the engines, flushed to the
dataset every second and then let go: while it runs, a run holds about a second
of rows, however long it goes), its manifest, its clock and its CPU.  Read, write
and mixed runs all end as a ``RunResult``."""

from __future__ import annotations

import gc
import importlib
import resource
import socket
import sys
import time
import uuid
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from objperf.analysis.steady import SteadyRule, SteadyWatch, rule_of
from objperf.analysis.summary import SUMMARY_COLUMNS, Tally, receive_buffer_figures
from objperf.core.curl_codes import NEVER_SENT
from objperf.core.errors import RunFailed, describe_os_error
from objperf.core.kernel_tls import kernel_tls
from objperf.core.sanitize import redacted
from objperf.core.schema import UNKNOWN_SIZE, empty_columns, ok_requests
from objperf.dataset.destination import NOWHERE, Destination, RowSink
from objperf.dataset.store_prefix import StorePrefix
from objperf.run.control import current
from objperf.run.metadata import system_info, utc_now
from objperf.run.outcome import failure
from objperf.run.sampler import Sampler

FLUSH_EVERY_S = 1.0
# A run whose connections have all been refused (or not resolved) this many times in a row, with no
# request succeeding for this long, has lost its server: it stops and says so rather than fail on.
LOST_AFTER_FAILURES = 100
LOST_AFTER_S = 1.0


def concat_columns(chunks: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if not chunks:
        return empty_columns()
    if len(chunks) == 1:
        return chunks[0]
    return {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}


@dataclass
class RunResult:
    run_id: str
    status: str  # complete | interrupted | failed
    columns: dict[str, np.ndarray] = field(repr=False)  # the rows held in memory: all of them without a dataset
    labels: dict = field(repr=False)  # run_id, host, buckets, keys: what turns indexes into names
    summary: dict
    manifest: dict
    destination: Destination = NOWHERE  # where the rows were written (a directory, a store prefix, nowhere)
    slot_buffers: list = field(default_factory=list, repr=False)
    rows_in_dataset: int = 0  # rows written to the dataset and let go from memory
    rows_let_go: int = 0  # rows counted into the summary and kept nowhere (no dataset, keep_rows False)

    @property
    def dataset(self) -> Path | StorePrefix | None:
        """The dataset's place: a directory, a store prefix (--out s3://…), or None."""
        return self.destination.place

    @cached_property
    def rows(self):
        """The rows as a pandas DataFrame, in the dataset's schema: read from the dataset, with any rows
        it could not take (a full disk) after them.  A run that kept its rows nowhere says so: an empty
        frame would read as a run that made no request."""
        from objperf.dataset.directory import rows_to_table

        if self.rows_let_go and not self.rows_in_dataset:
            from objperf.core.errors import UsageError

            raise UsageError(f"this run kept none of its {self.rows_let_go:,} rows (no_save): its summary holds "
                             "its figures; run it with a dataset (out=…) to have its rows")

        held = rows_to_table(self.columns, **self.labels).to_pandas()
        if not self.rows_in_dataset:
            return held
        written = self.destination.load()  # just written: hashing every file again proves nothing
        if not len(held):
            return written
        import pandas as pd

        return pd.concat([written, held], ignore_index=True)


class Recorder:
    """Collects a run's rows and writes them out as they come.

    ``buckets``/``keys``/``sizes`` are the labels of the rows' ``key_index`` (``sizes``: each object's size);
    a run may append to them while it goes (a write run names each object as it starts it).  Without a
    dataset the rows stay in memory for the result, unless ``keep_rows`` is False: then they are counted into
    the summary as they come and let go (about 24 bytes a row kept instead of 319), for a command that prints
    only the summary."""

    def __init__(self, kind: str, *, target: dict, workload: dict, out: Destination,
                 buckets: list[str], keys: list[str], sizes: list[int] | None = None, engine_threads: int = 1,
                 keep_rows: bool = True):
        self.run_id = current().run_id or uuid.uuid4().hex[:16]
        self.labels = {"run_id": self.run_id, "host": current().host or socket.gethostname(), "buckets": buckets,
                       "keys": keys, "sizes": [UNKNOWN_SIZE] * len(keys) if sizes is None else sizes}
        self.manifest = {"run_id": self.run_id, "kind": kind, "started_utc": utc_now(), "system": system_info(),
                         "target": redacted(target), "workload": workload}
        self.out = out
        self.writer: RowSink | None = out.open(self.manifest)
        self._chunks: list[dict[str, np.ndarray]] = []
        self.keep_rows = keep_rows
        self.steady_rule = rule_of(workload)  # judged by the rule the manifest names, as a re-analysis will
        # --until-steady: the rows go to a live judge too, and the drive loop ends the run once it says steady
        self.until_steady: SteadyRule | None = self.steady_rule if any(
            w.get("until_steady") for w in self._workloads()) else None
        self.steady_watch = SteadyWatch(self.until_steady) if self.until_steady else None
        self.ended_steady = False
        self._counted = Tally(self.steady_rule)  # rows let go as they came (keep_rows False, no dataset)
        self._unflushed: list[dict[str, np.ndarray]] = []
        self._last_flush = time.monotonic()
        self._usage0 = self._t0 = None
        self._stopped: tuple[float, float, int] | None = None
        self._setup_cpu_s = 0.0  # CPU spent in the run's clock on objperf's own start-up, not on its requests
        self._collector_was_on = True
        self.engine_threads = engine_threads
        self.sampler = Sampler()
        self.write_error: OSError | None = None  # the dataset could not be written: rows stay in memory
        self.rows_unwritten = 0
        self.rows_dropped = 0  # rows an aborted engine could not hand over (see Engine.rows_dropped)
        self.receive_buffers: list[int] = []  # each slot's receive buffer as its engine closed
        self.checksums: dict[str, int] = {}  # checksum mode's answers, by what they said (Engine.checksums)
        self.error: str | None = None  # why the run could not go on, when it could not
        self._last_ok = time.monotonic()
        self._last_ok_wall = time.time()
        self._connect_failures = 0  # in a row, since the last success

    def discard(self) -> None:
        """The run was refused before it sent anything: leave no dataset behind."""
        if self.writer:
            self.writer.discard()

    def start_clock(self) -> None:
        # Everything alive now (imports, botocore's models) lives for the whole run: out of the
        # collector's sight, full collections during the run no longer walk it all again.
        # stop_clock hands it back, so a process that runs many runs (a study) leaks nothing.
        # The collector runs during every run, also in a command that paused it for start-up.
        self._collector_was_on = gc.isenabled()
        gc.freeze()
        gc.enable()
        self.sampler.start()
        self._usage0 = resource.getrusage(resource.RUSAGE_SELF)
        self._t0 = time.monotonic()

    def stop_clock(self) -> None:
        """Freeze wall time and CPU: what follows (verification, cleanup) is not part of the run."""
        if self._stopped is None and self._usage0 is None:  # the clock never started (a start gate failed)
            self._stopped = (0.0, 0.0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
            return
        if self._stopped is None:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu = (usage.ru_utime - self._usage0.ru_utime) + (usage.ru_stime - self._usage0.ru_stime)
            cpu = max(0.0, cpu - self._setup_cpu_s)
            self._stopped = (time.monotonic() - self._t0, cpu, usage.ru_maxrss * 1024)
            self.sampler.stop()
            gc.unfreeze()
            if not self._collector_was_on:
                gc.disable()

    def load_later_modules(self) -> None:
        """Import what the run needs only once rows come in: NumPy's masked arrays, which np.unique loads on
        its first call (20 ms), and with a dataset pyarrow's parquet writer (50 ms).  The drive loop calls it
        once the first requests are in flight where engines feed themselves (a run's start need not wait for
        these), before the clock where this thread steers the run.  Their CPU within the clock, this thread's,
        is kept out of the run's, which counts what the requests cost."""
        wanted = ["numpy.ma"] + (["objperf.dataset.directory"] if self.writer is not None else [])
        if all(name in sys.modules for name in wanted):
            return
        started = time.thread_time()
        for name in wanted:
            importlib.import_module(name)
        if self._usage0 is not None:  # the clock runs
            self._setup_cpu_s += time.thread_time() - started

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    def add(self, cols: dict[str, np.ndarray] | None) -> None:
        if cols is not None and len(cols["offset"]):
            self._unflushed.append(cols)
            if self.writer is None and self.keep_rows:
                self._chunks.append(cols)
            elif self.writer is None:
                self._counted.add(cols)
            self._watch_connections(cols)
            if self.steady_watch is not None:
                self.steady_watch.add(cols)
        if time.monotonic() - self._last_flush >= FLUSH_EVERY_S:
            self.flush()

    def _watch_connections(self, cols: dict[str, np.ndarray]) -> None:
        ok = ok_requests(cols["curl_code"], cols["status"])
        if ok.any():
            last = int(np.flatnonzero(ok)[-1])
            self._connect_failures = int(np.isin(cols["curl_code"][last + 1:], NEVER_SENT).sum())
            self._last_ok, self._last_ok_wall = time.monotonic(), time.time()
        else:
            self._connect_failures += int(np.isin(cols["curl_code"], NEVER_SENT).sum())

    def server_lost(self) -> str | None:
        """Why the run should stop because its server is gone, or None."""
        if self._connect_failures < LOST_AFTER_FAILURES or time.monotonic() - self._last_ok < LOST_AFTER_S:
            return None
        since = time.strftime("%H:%M:%S", time.gmtime(self._last_ok_wall))
        return (f"server unreachable since {since} UTC: {self._connect_failures:,} connections refused in a row; "
                "the rows so far are kept")

    def flush(self) -> None:
        """Write the rows and samples gathered since the last flush.  The first time the dataset cannot
        be written (a full disk) this raises ``RunFailed``; from then on rows stay in memory, counted."""
        unflushed, self._unflushed = self._unflushed, []
        self._last_flush = time.monotonic()
        if not self.writer:
            return  # add keeps every row
        if self.write_error is not None:
            self._hold(unflushed)
            return
        from objperf.dataset import arrow
        from objperf.dataset.directory import SAMPLES_DIR, rows_to_table

        written = not unflushed
        try:
            if unflushed:
                self.writer.append(rows_to_table(concat_columns(unflushed), **self.labels))
                written = True
            for kind, table in self.sampler.take_new().items():
                self.writer.append(arrow.table(table), f"{SAMPLES_DIR}/{kind}")
        except OSError as exc:
            self.write_error = exc
            if not written:
                self._hold(unflushed)
            raise RunFailed(f"{describe_os_error(exc)} writing the dataset in {self.out}; "
                            f"the rows written before are kept") from None

    def _hold(self, chunks: list[dict[str, np.ndarray]]) -> None:
        """Rows the dataset could not take stay in memory, counted."""
        self._chunks += chunks
        self.rows_unwritten += sum(len(c["offset"]) for c in chunks)

    def _summary(self, held: dict[str, np.ndarray], *, wall_s: float, cpu_s: float, peak_rss: int) -> dict:
        """The summary of every row: those written to the dataset, read back a row group at a time (only the
        columns it needs, each group let go once counted), and those held in memory."""
        tally = self._counted
        if self.writer and self.writer.rows:
            from objperf.dataset.directory import engine_columns

            try:
                for group in self.writer.row_groups(list(SUMMARY_COLUMNS)):
                    tally.add(engine_columns(group))
            except OSError as exc:
                self.error = (f"{describe_os_error(exc)} reading the dataset back in {self.out}: the summary "
                              "counts none of its rows")
                tally = Tally(self.steady_rule)
        tally.add(held)
        return tally.result(wall_s=wall_s, cpu_s=cpu_s, peak_rss_bytes=peak_rss)

    def _workloads(self) -> list[dict]:
        """The workload descriptions of the run: one, or a mixed run's read and write, or several read runs'."""
        workload = self.manifest["workload"]
        parts = [workload.get("read"), workload.get("write"), *workload.get("workloads", [])]
        return [w for w in parts if isinstance(w, dict)] or [workload]

    def finish(self, status: str, *, extra: dict | None = None, slot_buffers: list | None = None) -> RunResult:
        """The run's result, and its manifest written with ``status``.  Never raises for a dataset that
        cannot be written: the summary says how many rows are missing from it."""
        self.stop_clock()
        wall, cpu, peak_rss = self._stopped
        try:
            self.flush()
        except RunFailed:
            status = "failed"
        columns = concat_columns(self._chunks)
        summary = self._summary(columns, wall_s=wall, cpu_s=cpu, peak_rss=peak_rss)
        asked = {w.get("http_version") for w in self._workloads()} - {None}
        if len(asked) == 1:
            summary["http_asked_for"] = asked.pop()
        if self.error:
            summary["error"] = self.error
        app_bytes = {name: d.get("sent_bytes", d["bytes"]) for name, d in summary["directions"].items()}  # on the wire
        summary["evidence"] = self.sampler.evidence(app_bytes, wall, self.engine_threads)
        if self.rows_unwritten:
            summary["rows_unwritten"] = self.rows_unwritten
        if self.rows_dropped:
            summary["rows_dropped"] = self.rows_dropped
        if self.receive_buffers:
            summary["receive_buffers"] = receive_buffer_figures(self.receive_buffers)
        if any(self.checksums.values()):
            summary["checksums"] = dict(self.checksums)
        if summary.get("tls"):
            summary["kernel_tls"] = kernel_tls()
        if self.until_steady:
            summary["until_steady"] = "steady" if self.ended_steady else "bound"
        summary.update(extra or {})
        reason = failure(summary) if status != "interrupted" else None
        if reason:
            status = "failed"
            summary["error"] = reason
        self.manifest.update(status=status, ended_utc=utc_now(), summary=summary)
        if self.write_error is not None:
            status = self.manifest["status"] = "failed"
        if self.writer:
            try:  # even on a full disk: the manifest is small, and saying "failed" matters
                self.writer.close(status, ended_utc=self.manifest["ended_utc"], summary=summary)
            except OSError as exc:
                self.write_error = self.write_error or exc
            self.manifest["files"] = self.writer.manifest.get("files", {})  # what the dataset holds
        return RunResult(self.run_id, status, columns, self.labels, summary, self.manifest, self.out,
                         slot_buffers or [], self.writer.rows if self.writer else 0,
                         rows_let_go=0 if self.writer or self.keep_rows else self._counted.requests)

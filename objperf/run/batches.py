"""Batch deletes (``objperf delete --batch N``): DeleteObjects of up to N keys each, on one engine in queue mode,
a part of the one drive loop (``objperf.run.drive.Part``), one row a batch.

The keys are the target's (a prefix listed, or ``--keys``), in order, each named once: a batch never spans two
buckets.  Each answer's document comes back in its job's bounded buffer and is read as outside input
(``objperf.s3.deletes``): keys the store refused (an ``<Error>`` each, in a 200) fail the row with code 22 and
the first refusal's S3 code; an answer that names a key not asked, names one twice or leaves one unaccounted
fails it with code 8.  A row's ``key`` is its batch's first key, its ``length`` the keys the batch names (its
``bytes`` 0: a document is no object's body)."""

from __future__ import annotations

import time
from pathlib import Path

from objperf._engine.config import queue_engine
from objperf.core.errors import TargetError, UsageError
from objperf.core.sanitize import printable
from objperf.core.schema import OP_DELETE_OBJECTS, cut_requests, ok_requests
from objperf.dataset.destination import Destination
from objperf.plan.batches import ANSWER_BOUND, BatchWorkload
from objperf.plan.limits import ensure_open_files
from objperf.run.answers import Breaches, broken, refused
from objperf.run.drive import ProgressFn, drive
from objperf.run.jobs import ReadSource
from objperf.run.queued_part import QueuedPart
from objperf.run.recorder import Recorder, RunResult
from objperf.s3.client import S3Client
from objperf.s3.deletes import delete_request, fits_a_document, read_delete_answer
from objperf.s3.target import ObjectRef


def batches_of(objects: list[ObjectRef], size: int) -> list[tuple[int, int]]:
    """``objects`` as (first, end) index ranges of at most ``size``, each of one bucket, in order."""
    found: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(objects) + 1):
        if i == len(objects) or i - start == size or objects[i].bucket != objects[start].bucket:
            found.append((start, i))
            start = i
    return found


def check_keys(objects: list[ObjectRef]) -> None:
    """Every key can be named in a DeleteObjects document: one line for the first that cannot, before any
    request."""
    for obj in objects:
        if not fits_a_document(obj.key):
            raise UsageError(f"key {printable(obj.key)!r} holds characters an XML document cannot carry, so no "
                             "DeleteObjects can name it: delete without --batch")


class BatchDeleter(QueuedPart):
    """Every batch once, ``workload.concurrency`` in flight, until they are done, the time is up or a stop."""

    def __init__(self, client: S3Client, objects: list[ObjectRef], workload: BatchWorkload, recorder: Recorder):
        self.client, self.objects, self.workload, self.recorder = client, objects, workload, recorder
        self.batches = batches_of(objects, workload.batch)
        self.engine = queue_engine(workload.concurrency + 1, **workload.engine_settings(client.endpoint),
                                   **client.settings.engine_tls())
        self._urls: dict[str, tuple[str, float]] = {}
        self.next = 0  # the next batch to send
        self.in_flight: dict[int, tuple[int, int]] = {}  # a batch's first key's index → (its end, its entry)
        self.done_batches = self.failed = self.keys_deleted = self.keys_refused = 0
        self.breaches = Breaches()
        self.stopping = False
        self.deadline = 0.0

    def _url(self, bucket: str) -> str:
        now = time.monotonic()
        kept = self._urls.get(bucket)
        if kept is None or now - kept[1] > self.workload.url_lifetime / 3:
            kept = self._urls[bucket] = (self.client.delete_objects_url(bucket, expires=self.workload.url_lifetime),
                                         now)
        return kept[0]

    # -- the drive loop's part ---------------------------------------------------------------

    def start(self) -> None:
        super().start()
        self._feed()

    @property
    def done(self) -> bool:
        return self.stopping and not self.in_flight

    def step(self) -> None:
        self._take(self.engine.drain())
        if not self.stopping and ((self.next == len(self.batches) and not self.in_flight)
                                  or (self.deadline and time.monotonic() >= self.deadline)):
            self.stopping = True
            self.engine.close_queue()
        if not self.stopping:
            self._feed()
        elif not self.engine.running:  # cut at the deadline: what was queued is never answered
            self.in_flight.clear()

    def progress(self) -> tuple[int, int, int]:
        return 0, self.done_batches, self.failed

    def summary(self) -> dict:
        """What the run's summary adds: the keys the answers said were deleted and refused, any broken answer."""
        return {"keys_deleted": self.keys_deleted, "keys_refused": self.keys_refused, **self.breaches.said()}

    # -- the batches -----------------------------------------------------------------------

    def _feed(self) -> None:
        while len(self.in_flight) < self.workload.concurrency and self.next < len(self.batches):
            start, end = self.batches[self.next]
            self.next += 1
            body, headers = delete_request([o.key for o in self.objects[start:end]])
            entry = self.engine.submit(self._url(self.objects[start].bucket), OP_DELETE_OBJECTS, start, 0,
                                       end - start, headers=headers, before=body, document=ANSWER_BOUND)
            self.in_flight[start] = (end, entry)

    def _take(self, cols: dict | None) -> None:
        if cols is None:
            return
        ok = ok_requests(cols["curl_code"], cols["status"]).tolist()
        cut = cut_requests(cols["curl_code"], cols["status"]).tolist()
        for row, start in enumerate(cols["key_index"].tolist()):
            end, entry = self.in_flight.pop(start, (None, None))
            if entry is None:
                continue
            document = self.engine.document(entry)
            self.done_batches += 1
            good = ok[row]
            if good:
                where = f"DeleteObjects s3://{self.objects[start].bucket}/ ({end - start:,} keys)"
                try:
                    told = read_delete_answer(document, [o.key for o in self.objects[start:end]], where)
                except TargetError as exc:
                    broken(cols, row)
                    self.breaches.add(exc)
                    good = False
                else:
                    self.keys_deleted += told.deleted
                    self.keys_refused += told.refused
                    if told.refused:
                        refused(cols, row, told.first_code)
                        good = False
            if not good and not cut[row]:
                self.failed += 1
        self.recorder.add(cols)


def batch_delete(source: ReadSource, workload: BatchWorkload, out: Destination | str | Path | None, *,
                 on_progress: ProgressFn | None = None, keep_rows: bool = True) -> RunResult:
    """DeleteObjects of the objects ``source`` names, ``workload.batch`` keys each."""
    workload.validate()
    target = source.resolve(sign=False)
    check_keys(target.objects)
    out = Destination.of(out)
    ensure_open_files(workload.concurrency, extra=8)
    client = target.client or S3Client(source.settings)
    recorder = Recorder("delete", target=target.describe(), workload=workload.describe(), out=out,
                        buckets=[o.bucket for o in target.objects], keys=[o.key for o in target.objects],
                        sizes=[o.size for o in target.objects], engine_threads=workload.threads or 1,
                        keep_rows=keep_rows)
    try:
        deleter = BatchDeleter(client, target.objects, workload, recorder)
    except BaseException:
        recorder.discard()
        raise
    status = drive(recorder, [deleter], on_progress=on_progress)
    return recorder.finish(status, extra={**target.notes(), **deleter.summary()})

"""A weighted mix of requests on whole objects (GET, HEAD, PUT, DELETE) and on their prefix (LIST), drawn one by
one from a seeded generator and kept in flight on one engine in queue mode: a part of the one drive loop
(``objperf.run.drive.Part``), one row a request, each op's rate, latency and errors apart in the summary.

The objects: a pool seeded before the run (``MixWorkload.objects_seeded``), which PUTs add to once the store
acknowledges them and DELETEs take from as they are sent; a GET or a HEAD never goes to an object being
deleted, nor a DELETE to one with a request in flight, so every answer is the store's to a request S3 would
serve.  A LIST asks for the first page of the mix's prefix (``max_keys`` keys), held to the S3 contract as
``objperf list`` holds its pages (a row's length: the keys it lists)."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import numpy as np

from objperf._engine.config import queue_engine
from objperf._engine.payload import payload
from objperf.core.errors import TargetError
from objperf.core.progress import phase, tell
from objperf.core.schema import OP, OP_COPY, OP_LIST, OPS, S3_ERROR_BYTES, UNKNOWN_SIZE, ok_requests
from objperf.dataset.destination import Destination
from objperf.plan.copies import DOCUMENT_BOUND, copy_source
from objperf.plan.limits import ensure_open_files
from objperf.plan.lists import PAGE_BOUND
from objperf.plan.mix import MixWorkload
from objperf.run.answers import Breaches, broken
from objperf.run.drive import ProgressFn, drain_until_done, drive
from objperf.run.queued_part import QueuedPart
from objperf.run.recorder import Recorder, RunResult
from objperf.s3.client import S3Client, S3Settings
from objperf.s3.listing import PageWalk
from objperf.s3.xml import copy_result

PAYLOAD_PERIOD = 16 << 20  # a larger object repeats its payload (the engine wraps round it)
RESIGN_EVERY_S = 300.0  # each (op, key)'s URL is kept this long, within any URL lifetime objperf signs for
METHOD = {"get": "get_object", "head": "head_object", "put": "put_object", "delete": "delete_object"}


class Mixer(QueuedPart):
    """Feeds an engine the mix's requests until its budget or a stop: a part of the drive loop."""

    def __init__(self, client: S3Client, workload: MixWorkload, recorder: Recorder, seeded: list[str]):
        self.client, self.workload, self.recorder = client, workload, recorder
        self.rng = np.random.default_rng(workload.seed)
        self.ops = list(workload.shares)
        self.weights = np.array([workload.shares[op] for op in self.ops])
        self.data = payload(max(min(workload.object_size, PAYLOAD_PERIOD), 1))
        self.depth = 2 * workload.concurrency
        self.engine = queue_engine(self.depth + 8, payload=self.data, **workload.engine_settings(client.endpoint),
                                   **client.settings.engine_tls())
        self.pool = [self._label(key) for key in seeded]  # key indexes of objects there, none being deleted
        self.in_flight: Counter[int] = Counter()
        self.submitted = self.unfinished = 0
        self.acknowledged_bytes = 0
        self.stopping = False
        self.deadline = 0.0
        self._urls: dict[tuple[str, int], tuple[str, float]] = {}
        self._puts = 0
        # LISTs: each names a label of the prefix of its own while it is in flight (its row is told apart by it)
        self.first_page = client.list_page_signer(workload.bucket, workload.prefix, max_keys=workload.max_keys,
                                                  expires=int(3 * RESIGN_EVERY_S))
        self.list_labels: list[int] = []  # labels of the prefix no LIST holds now
        self.listing: dict[int, int] = {}  # a LIST's label → its entry in the job table
        # COPYs: each writes a new object (its label) from one of the pool, which no DELETE takes meanwhile
        self.copying: dict[int, tuple[int, int]] = {}  # a copy's label → (its entry in the job table, its source's)
        self._copies = 0
        self.breaches = Breaches()

    def _label(self, key: str) -> int:
        """The key's index in the rows' labels."""
        self.recorder.labels["buckets"].append(self.workload.bucket)
        self.recorder.labels["keys"].append(key)
        self.recorder.labels["sizes"].append(self.workload.object_size)  # every object of a mix is this size
        return len(self.recorder.labels["keys"]) - 1

    def _url(self, op: str, index: int) -> str:
        now = time.monotonic()
        kept = self._urls.get((op, index))
        if kept is None or now - kept[1] > RESIGN_EVERY_S:
            url = self.client.presign(self.workload.bucket, self.recorder.labels["keys"][index], method=METHOD[op],
                                      expires=int(3 * RESIGN_EVERY_S))
            kept = self._urls[(op, index)] = (url, now)
        return kept[0]

    # -- the loop ---------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.stopping and self.unfinished == 0

    def step(self) -> None:
        self._take(self.engine.drain())
        if not self.stopping and (self._budget_spent() or (self.deadline and time.monotonic() >= self.deadline)):
            self.stopping = True
            self.engine.close_queue()
        if not self.stopping:
            self._feed()
        elif not self.engine.running:  # cut at the deadline: what was queued will never be answered
            self.unfinished = 0

    def progress(self) -> tuple[int, int, int]:
        _, requests, failed = self.engine.progress()
        return self.acknowledged_bytes, requests, failed

    def close(self, *, abort: bool = False) -> None:
        self.engine.stop(abort=abort)
        self.engine.close_queue()
        drain_until_done(self.engine, self._take)
        self.unfinished = 0
        self.stopping = True

    def _budget_spent(self) -> bool:
        return self.workload.requests is not None and self.submitted >= self.workload.requests

    def _feed(self) -> None:
        while self.unfinished < self.depth and not self._budget_spent():
            op = self._draw()
            if op is None:
                return
            self._submit(op)

    def _draw(self) -> str | None:
        """The next op, by its share; an op with no object to work on (every object deleted, or each busy)
        gives way to the others for this draw, and none at all waits for answers."""
        op = self.ops[int(self.rng.choice(len(self.ops), p=self.weights))]
        if op in ("put", "list") or self._object_for(op, take=False) is not None:
            return op
        possible = [o for o in self.ops if o in ("put", "list") or self._object_for(o, take=False) is not None]
        if not possible:
            return None
        weights = np.array([self.workload.shares[o] for o in possible])
        return possible[int(self.rng.choice(len(possible), p=weights / weights.sum()))]

    def _object_for(self, op: str, *, take: bool) -> int | None:
        """An object of the pool for a GET, HEAD or COPY (any), or a DELETE (none in flight; taken from the
        pool)."""
        if not self.pool:
            return None
        if op != "delete":
            return self.pool[int(self.rng.integers(len(self.pool)))]
        for _ in range(8):  # a few tries at random, then the first free one
            at = int(self.rng.integers(len(self.pool)))
            if not self.in_flight[self.pool[at]]:
                break
        else:
            free = [i for i, index in enumerate(self.pool) if not self.in_flight[index]]
            if not free:
                return None
            at = free[0]
        index = self.pool[at]
        if take:
            self.pool[at] = self.pool[-1]
            self.pool.pop()
        return index

    def _submit(self, op: str) -> None:
        if op == "list":
            self._submit_list()
            return
        if op == "copy":
            self._submit_copy()
            return
        if op == "put":
            self._puts += 1
            index = self._label(f"{self.workload.prefix}{self.recorder.run_id}/put-{self._puts:08d}")
        else:
            index = self._object_for(op, take=True)
        size = self.workload.object_size
        self.engine.submit(self._url(op, index), OP[op.upper()], index, 0, size, 0)
        self.in_flight[index] += 1
        self.submitted += 1
        self.unfinished += 1

    def _submit_list(self) -> None:
        if self.list_labels:
            index = self.list_labels.pop()
        else:
            self.recorder.labels["buckets"].append(self.workload.bucket)
            self.recorder.labels["keys"].append(self.workload.prefix)
            self.recorder.labels["sizes"].append(UNKNOWN_SIZE)
            index = len(self.recorder.labels["keys"]) - 1
        self.listing[index] = self.engine.submit(self.first_page(None), OP_LIST, index, 0, 0, document=PAGE_BOUND)
        self.submitted += 1
        self.unfinished += 1

    def _submit_copy(self) -> None:
        """A CopyObject of an object of the pool to a new key, its source signed in its URL."""
        source = self._object_for("copy", take=False)
        self._copies += 1
        index = self._label(f"{self.workload.prefix}{self.recorder.run_id}/copy-{self._copies:08d}")
        keys = self.recorder.labels["keys"]
        headers = {"x-amz-copy-source": copy_source(self.workload.bucket, keys[source])}
        url = self.client.presign(self.workload.bucket, keys[index], method="put_object",
                                  expires=int(3 * RESIGN_EVERY_S), headers=headers)
        entry = self.engine.submit(url, OP_COPY, index, 0, self.workload.object_size,
                                   headers=[f"{name}: {value}" for name, value in headers.items()],
                                   document=DOCUMENT_BOUND)
        self.copying[index] = (entry, source)
        self.in_flight[index] += 1
        self.in_flight[source] += 1  # no DELETE takes it while it is copied
        self.submitted += 1
        self.unfinished += 1

    def _copied(self, cols: dict, row: int, index: int, good: bool) -> bool:
        """A COPY's row held to its document (a 200 with an <Error>, or no ETag, copied nothing); whether the copy
        is there."""
        entry, source = self.copying.pop(index)
        self.in_flight[source] -= 1
        document = self.engine.document(entry)
        if not good:
            return False
        etag, error = copy_result(document)
        if etag is None:
            broken(cols, row)
            cols["s3_error"][row] = (error or "").encode("utf-8", "replace")[:S3_ERROR_BYTES]
            self.breaches.add(f"a CopyObject answered 200 without a copy's result ({error or 'no ETag'})")
            return False
        cols["etag"][row] = etag.encode()
        return True

    def _listed(self, cols: dict, row: int, index: int, good: bool) -> None:
        """A LIST's row: its page held to the contract, its length the keys it lists; its label free again."""
        entry = self.listing.pop(index, None)
        if entry is None:
            return
        self.list_labels.append(index)
        document = self.engine.document(entry)
        if not good:
            return
        walk = PageWalk(f"LIST s3://{self.workload.bucket}/{self.workload.prefix}", self.workload.prefix,
                        max_keys=self.workload.max_keys)
        try:
            cols["length"][row] = walk.take(document).count
        except TargetError as exc:
            broken(cols, row)
            self.breaches.add(exc)

    def _take(self, cols: dict | None) -> None:
        if cols is None:
            return
        ok = ok_requests(cols["curl_code"], cols["status"])
        for row, (index, code, good) in enumerate(zip(cols["key_index"].tolist(), cols["op"].tolist(),
                                                      ok.tolist())):
            self.unfinished -= 1
            op = OPS[code]
            if op == "LIST":
                self._listed(cols, row, index, good)
                continue
            self.in_flight[index] -= 1
            if op == "COPY":
                good = self._copied(cols, row, index, good)
            if good and op in ("GET", "PUT"):
                self.acknowledged_bytes += int(cols["bytes"][row])
            if (op in ("PUT", "COPY") and good) or (op == "DELETE" and not good):  # there (again) for the others
                self.pool.append(index)
        self.unfinished = max(self.unfinished, 0)
        self.recorder.add(cols)  # the LISTs' rows as their pages said

    def cleanup(self) -> int:
        """Delete the objects the mix left (seeded and written), not measured."""
        keys = sorted({self.recorder.labels["keys"][index] for index in self.pool})
        with phase(f"deleting the {len(keys):,} objects the mix left…"):
            for key in keys:
                self.client.delete_object(self.workload.bucket, key)
        return len(keys)


def run_mix(settings: S3Settings, workload: MixWorkload, *, out: Destination | str | Path | None = None,
            on_progress: ProgressFn | None = None, create_bucket: bool = False,
            keep_rows: bool = True) -> RunResult:
    """A weighted mix of GETs, HEADs, PUTs and DELETEs of whole objects under ``workload.prefix``, and LISTs of
    it, its pool of objects seeded first."""
    from objperf.run.seed import seed_places

    workload.validate()
    out = Destination.of(out)
    client = S3Client(settings)
    client.check_region(workload.bucket)
    if create_bucket:
        client.create_bucket(workload.bucket)
    ensure_open_files(workload.concurrency, extra=8)
    seeded = [f"{workload.prefix}pool/object-{i:06d}" for i in range(workload.objects_seeded)]
    seed_places(settings, [(workload.bucket, key) for key in seeded], workload.object_size, say=tell)
    recorder = Recorder("mix", target={"kind": "s3", **settings.describe(), "endpoint": client.endpoint,
                                       "buckets": [workload.bucket]},
                        workload=workload.describe(), out=out, buckets=[], keys=[], sizes=[], engine_threads=1,
                        keep_rows=keep_rows)
    try:
        mixer = Mixer(client, workload, recorder, seeded)
    except BaseException:
        recorder.discard()
        raise
    status = drive(recorder, [mixer], on_progress=on_progress)
    recorder.stop_clock()
    extra: dict = mixer.breaches.said()
    if workload.cleanup:
        extra["cleaned_up"] = mixer.cleanup()
    return recorder.finish(status, extra=extra)

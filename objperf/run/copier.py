"""Server-side copies around a queue-mode engine (``objperf copy``): a part of the one drive loop
(``objperf.run.drive.Part``).  An object up to the part size is one CopyObject; a larger one is a multipart copy:
CreateMultipartUpload, an UploadPartCopy a byte range (``x-amz-copy-source-range``), CompleteMultipartUpload with
the parts' ETags.  Every request is a row.

A copy's answer is a document, and S3 may answer 200 and fail the copy after (an ``<Error>`` in the body): each
copy's and each part's document is read before its row reaches the recorder, and a row whose document holds an
``<Error>``, or no ETag, fails (code 8, the error's S3 code) and copies nothing; a document past its bound fails
in the engine (code 63).  A multipart copy with a failed part is aborted, and so is every one still open when the
run is cut (its ``--duration``, Ctrl-C, a failure): no run leaves an upload of its own open behind it.  The
multipart calls go out on threads of their own, so the slots stay full while an upload opens or completes."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ALL_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import numpy as np

from objperf._engine.config import queue_engine
from objperf.core.curl_codes import CURLE_OK, CURLE_WEIRD_SERVER_REPLY, NEVER_SENT
from objperf.core.errors import ObjperfError
from objperf.core.progress import phase
from objperf.core.schema import CUT_CURL_CODE, OP_COPY, OP_UPLOAD_PART_COPY, S3_ERROR_BYTES, cut_requests, ok_requests
from objperf.plan.copies import DOCUMENT_BOUND, CopyWorkload, copy_source
from objperf.plan.limits import ensure_open_files
from objperf.run.drive import drain_until_done
from objperf.run.recorder import Recorder
from objperf.run.uploader import ABORTS_AT_ONCE, CREATE_GRACE_S, OPEN_AHEAD, closing_text, control_row
from objperf.s3.client import Attempt, S3Client
from objperf.s3.xml import copy_result

NOTHING_SENT = (CURLE_OK, *NEVER_SENT)  # an answer, or a request that never left


@dataclass(frozen=True)
class Source:
    """An object to copy."""

    bucket: str
    key: str
    size: int


@dataclass
class Copy:
    """One object's copy: one CopyObject, or a multipart copy's upload and its parts."""

    index: int  # the rows' key_index: they name the copy's key
    source: Source
    bucket: str
    key: str
    ranges: list[tuple[int, int]]  # (offset, length) of each request: one for a CopyObject
    multipart: bool
    upload_id: str | None = None
    part_url: Callable[..., str] | None = None
    submitted: int = 0
    in_flight: int = 0
    etags: dict[int, str] = field(default_factory=dict)  # by part number
    failed: bool = False
    closing: bool = False  # its CompleteMultipartUpload or AbortMultipartUpload has gone out
    abort_cut: bool = False  # an AbortMultipartUpload of it was cut on the wire

    @property
    def all_submitted(self) -> bool:
        return self.submitted >= len(self.ranges)

    def number(self, offset: int) -> int:
        """The part number of the part at ``offset``."""
        return offset // self.ranges[0][1] + 1


class Copier:
    """Copies ``sources`` through an engine in queue mode, ``workload.concurrency`` requests in flight; ``own_keys``:
    the copies' keys are the run's own (no ``--to``), so any upload open on one of them is the run's."""

    def __init__(self, client: S3Client, workload: CopyWorkload, recorder: Recorder, sources: list[Source], *,
                 own_keys: bool):
        self.client = client
        self.multipart = client.for_multipart()  # bounded by --timeout, not --duration: uploads must be closed
        self.workload = workload
        self.recorder = recorder
        self.own_keys = own_keys
        self.prefix = workload.destination_prefix(recorder.run_id)
        self.waiting = deque(sources)
        self.depth = 2 * workload.concurrency
        ensure_open_files(workload.concurrency, extra=8)
        self.engine = queue_engine(self.depth + workload.concurrency + 8,
                                   **workload.engine_settings(client.endpoint), **client.settings.engine_tls())
        self.open: dict[int, Copy] = {}  # by index: every copy begun and not yet done with
        self.entries: dict[tuple[int, int], int] = {}  # (index, offset) → the job-table entry holding its answer
        self.jobs_unfinished = 0
        self.copied: list[Copy] = []
        self.failed_objects = self.cut_objects = 0
        self.broken = 0  # answers 2xx whose document said the copy failed, or said no ETag
        self.left_open: list[str] = []  # uploads whose abort the store did not take: the user's to abort
        self.copied_bytes = 0  # what the store said it copied: the progress
        self.deadline = 0.0
        self.stopping = False
        self._pending: deque[dict[str, np.ndarray]] = deque()  # rows drained, a document of theirs not yet handed over
        self._part_etags: dict[tuple[int, int], str] = {}
        self._control = ThreadPoolExecutor(OPEN_AHEAD, thread_name_prefix="objperf-copy-control")
        self._calls: dict[Future, tuple[str, Copy]] = {}  # multipart calls out, by what they are of
        self._closed = False

    # -- the loop ---------------------------------------------------------------

    def start(self) -> None:
        if self.workload.duration:
            self.deadline = time.monotonic() + self.workload.duration
        self.engine.start(self.workload.duration or 0.0)

    @property
    def done(self) -> bool:
        return (self.stopping or not self.waiting) and not self.open and not self.jobs_unfinished \
            and not self._calls and not self._pending

    def step(self) -> None:
        if self.stopping:
            return
        self._take(self.engine.drain())
        self._collect()
        if self.deadline and time.monotonic() >= self.deadline:
            self._end_on_time()
            return
        self._settle()
        self._feed()

    def wait(self, timeout: float) -> None:
        self.engine.wait_finished(timeout)

    def progress(self) -> tuple[int, int, int]:
        """Bytes the store said it copied, requests finished, requests failed."""
        _, requests, failed = self.engine.progress()
        return self.copied_bytes, requests, failed + self.broken

    def finish(self) -> None:
        self.close()

    def end_now(self) -> None:
        self.deadline = time.monotonic()

    def abort(self) -> None:
        self.close(abort=True)

    def close(self, *, abort: bool = False) -> None:
        """End the engine, take its last rows, and abort every multipart copy still open (after an interrupt or
        a failure): the aborts go out whether or not the rows could be recorded."""
        self.stopping = True
        self.engine.stop(abort=abort)
        self.engine.close_queue()
        try:
            drain_until_done(self.engine, self._take)
            self._take(None, last=True)
        finally:
            self.jobs_unfinished = 0
            self._close_uploads(cut=abort, grace_s=0.0 if abort else CREATE_GRACE_S)

    # -- the rows ---------------------------------------------------------------

    def _take(self, cols: dict | None, *, last: bool = False) -> None:
        """Rows into the recorder, each copy's judged by its document first, in the order they came."""
        if cols is not None and len(cols["offset"]):
            self._pending.append(cols)
        while self._pending:
            if not self._judge(self._pending[0], last=last):
                return  # the engine hands a document over just after its row: the next step takes it
            self._count(self._pending.popleft())

    def _judge(self, cols: dict, *, last: bool) -> bool:
        """Fail the rows of ``cols`` whose 2xx answer's document is no copy's; False while a document is not
        yet to be had (``last``: the engine has ended, and what it did not hand over is no answer)."""
        ok = ok_requests(cols["curl_code"], cols["status"])
        for i in range(len(cols["offset"])):
            place = (int(cols["key_index"][i]), int(cols["offset"][i]))
            entry = self.entries.get(place)
            if entry is None:
                continue
            try:
                document = self.engine.document(entry)
            except RuntimeError:
                if not last:
                    return False
                document = b""
            del self.entries[place]
            if not ok[i]:
                continue
            etag, error = copy_result(document)
            if etag is not None:
                cols["etag"][i] = etag.encode()  # the column keeps its first ETAG_BYTES
                self._part_etags[place] = etag
                continue
            self.broken += 1
            cols["curl_code"][i] = CURLE_WEIRD_SERVER_REPLY  # a 200 that copied nothing: a failed row
            cols["s3_error"][i] = (error or "").encode("utf-8", "replace")[:S3_ERROR_BYTES]
            cols["bytes"][i] = 0
        cols["bytes"][~ok] = 0  # a copy cut in flight copied nothing the store said it did
        return True

    def _count(self, cols: dict) -> None:
        self.recorder.add(cols)
        ok = ok_requests(cols["curl_code"], cols["status"])
        cut = cut_requests(cols["curl_code"], cols["status"])
        for i in range(len(cols["offset"])):
            self.jobs_unfinished -= 1
            index, offset = int(cols["key_index"][i]), int(cols["offset"][i])
            etag = self._part_etags.pop((index, offset), None)
            copy = self.open.get(index)
            if copy is None:
                continue
            copy.in_flight -= 1
            if ok[i]:
                self.copied_bytes += int(cols["bytes"][i])
            if not copy.multipart:
                del self.open[index]
                if ok[i]:
                    self.copied.append(copy)
                elif cut[i]:
                    self.cut_objects += 1
                else:
                    self.failed_objects += 1
            elif ok[i] and etag is not None:
                copy.etags[copy.number(offset)] = etag
            elif not cut[i]:  # a part cut by the run's end leaves its copy cut, not failed
                copy.failed = True

    # -- feeding ----------------------------------------------------------------

    def _feed(self) -> None:
        while self.jobs_unfinished < self.depth and not self.stopping:
            copy = next((c for c in self.open.values() if c.upload_id and not c.all_submitted and not c.failed),
                        None)
            if copy is None:
                if not self.waiting:
                    return
                if self.workload.part_size_of(self.waiting[0].size):  # a multipart copy: its upload opens first
                    opening = sum(kind == "create" for kind, _ in self._calls.values())
                    if opening >= OPEN_AHEAD or self._parts_wanted() <= 0:
                        return
                    self._open(self._begin(self.waiting.popleft()))
                    continue
                copy = self._begin(self.waiting.popleft())
            self._submit(copy)

    def _parts_wanted(self) -> int:
        """Requests the queue could take beyond the parts of the multipart copies open or opening."""
        ready = sum(len(c.ranges) - c.submitted for c in self.open.values() if c.multipart and not c.failed)
        return self.depth - self.jobs_unfinished - ready

    def _begin(self, source: Source) -> Copy:
        """The copy of ``source``, named in the rows' labels."""
        labels = self.recorder.labels
        index = len(labels["keys"])
        bucket = self.workload.destination_bucket
        key = self.workload.destination_key(source.key, self.recorder.run_id)
        labels["buckets"].append(bucket)
        labels["keys"].append(key)
        labels["sizes"].append(source.size)
        ranges = self.workload.ranges_of(source.size)
        copy = Copy(index, source, bucket, key, ranges, multipart=bool(self.workload.part_size_of(source.size)))
        self.open[index] = copy
        return copy

    def _submit(self, copy: Copy) -> None:
        offset, length = copy.ranges[copy.submitted]
        headers = {"x-amz-copy-source": copy_source(copy.source.bucket, copy.source.key)}
        if copy.multipart:
            headers["x-amz-copy-source-range"] = f"bytes={offset}-{offset + length - 1}"
            url, op = copy.part_url(copy.submitted + 1, headers), OP_UPLOAD_PART_COPY
        else:
            url = self.client.presign(copy.bucket, copy.key, method="put_object", headers=headers,
                                      expires=self.workload.url_lifetime)
            op = OP_COPY
        lines = [f"{name}: {value}" for name, value in headers.items()]
        self.entries[(copy.index, offset)] = self.engine.submit(url, op, copy.index, offset, length, headers=lines,
                                                                document=DOCUMENT_BOUND)
        copy.submitted += 1
        copy.in_flight += 1
        self.jobs_unfinished += 1

    # -- the multipart calls ----------------------------------------------------

    def _call(self, kind: str, copy: Copy, method: str, **params) -> None:
        future = self._control.submit(self.multipart.attempt, method, Bucket=copy.bucket, Key=copy.key, **params)
        self._calls[future] = (kind, copy)

    def _open(self, copy: Copy) -> None:
        self._call("create", copy, "create_multipart_upload")

    def _complete(self, copy: Copy) -> None:
        copy.closing = True
        parts = [{"PartNumber": n, "ETag": copy.etags[n]} for n in sorted(copy.etags)]
        self._call("complete", copy, "complete_multipart_upload", UploadId=copy.upload_id,
                   MultipartUpload={"Parts": parts})

    def _abort(self, copy: Copy) -> None:
        copy.closing = True
        self._call("abort", copy, "abort_multipart_upload", UploadId=copy.upload_id)

    def _settle(self) -> None:
        """Complete the multipart copies whose every part is in; abort those with a failed part, once none of
        theirs is in flight (a part that lands after its upload's abort could open it again)."""
        for copy in list(self.open.values()):
            if not copy.multipart or not copy.upload_id or copy.closing or copy.in_flight:
                continue
            if copy.failed:
                self._abort(copy)
            elif len(copy.etags) == len(copy.ranges):
                self._complete(copy)

    def _collect(self, *, wait_s: float | None = 0.0) -> None:
        """Take in the multipart calls answered (waiting up to ``wait_s`` for all; None: as long as they take)."""
        if self._calls and wait_s != 0.0:
            wait(list(self._calls), timeout=wait_s, return_when=ALL_COMPLETED)
        for future in [f for f in self._calls if f.done()]:
            kind, copy = self._calls.pop(future)
            outcome: Attempt | None = None if future.exception() is not None else future.result()
            if outcome is not None:
                op = {"create": "CREATE_MPU", "complete": "COMPLETE_MPU", "abort": "ABORT_MPU"}[kind]
                self.recorder.add(control_row(op, copy.index, outcome, length=copy.source.size if kind ==
                                              "complete" else 0))
            {"create": self._created, "complete": self._completed, "abort": self._aborted}[kind](copy, outcome)

    def _created(self, copy: Copy, outcome: Attempt | None) -> None:
        if outcome is None or outcome.curl_code == CUT_CURL_CODE:  # no answer: an upload may be open all the same
            self._abort_unanswered(copy)
        elif not outcome.ok:
            self.failed_objects += 1
            del self.open[copy.index]
            if outcome.curl_code not in NOTHING_SENT:  # sent, its answer lost on the way
                self._abort_unanswered(copy, count=False)
        elif self.stopping:  # opened as the run ended: closed at once
            copy.upload_id = outcome.response["UploadId"]
        else:
            copy.upload_id = outcome.response["UploadId"]
            copy.part_url = self.client.part_url_signer(copy.bucket, copy.key, copy.upload_id,
                                                        expires=self.workload.url_lifetime)

    def _completed(self, copy: Copy, outcome: Attempt | None) -> None:
        if outcome is not None and outcome.ok:
            del self.open[copy.index]
            self.copied.append(copy)
        else:  # refused, or no answer: aborted (an upload completed after all answers the abort 404)
            copy.failed = True
            self._abort(copy)

    def _aborted(self, copy: Copy, outcome: Attempt | None) -> None:
        if outcome is not None and outcome.curl_code == CUT_CURL_CODE and not copy.abort_cut:
            copy.abort_cut = True  # cut on the wire as the run ended (its calls all cut at once): sent again
            self._abort(copy)
            return
        self.open.pop(copy.index, None)
        if copy.failed:
            self.failed_objects += 1
        else:
            self.cut_objects += 1
        if outcome is None or (not outcome.ok and outcome.status != 404):  # 404 NoSuchUpload: nothing is open
            self.left_open.append(f"s3://{copy.bucket}/{copy.key} upload id {copy.upload_id}")

    def _abort_unanswered(self, copy: Copy, *, count: bool = True) -> None:
        """CreateMultipartUpload went out and its answer never came: the store may have opened an upload whose id
        never reached the run.  On a key of the run's own every upload open is the run's, and aborted; on a key
        under ``--to`` one found is named, for the user to judge."""
        self.open.pop(copy.index, None)
        if count:
            self.cut_objects += 1
        try:
            found = [upload_id for key, upload_id in self.multipart.open_uploads(copy.bucket, copy.key)
                     if key == copy.key]
        except ObjperfError:
            self.left_open.append(f"s3://{copy.bucket}/{copy.key} (its CreateMultipartUpload got no answer and the "
                                  "store's open uploads could not be listed: one may be open)")
            return
        for upload_id in found:
            if not self.own_keys:
                self.left_open.append(f"s3://{copy.bucket}/{copy.key} upload id {upload_id} (open on a key whose "
                                      "CreateMultipartUpload got no answer: this run's, or another's)")
                continue
            outcome = self.multipart.attempt("abort_multipart_upload", Bucket=copy.bucket, Key=copy.key,
                                             UploadId=upload_id)
            self.recorder.add(control_row("ABORT_MPU", copy.index, outcome))
            if not outcome.ok and outcome.status != 404:
                self.left_open.append(f"s3://{copy.bucket}/{copy.key} upload id {upload_id}")

    # -- the end ----------------------------------------------------------------

    def _end_on_time(self) -> None:
        """The run's time is up: the engine cuts the copies in flight.  Take their rows, stop the clock (closing
        the uploads copies nothing), complete the multipart copies whose every part was in, abort the rest."""
        self.stopping = True
        self.engine.stop(abort=True)
        drain_until_done(self.engine, self._take)
        self._take(None, last=True)
        self.recorder.stop_clock()
        self.jobs_unfinished = 0  # jobs queued and never started leave no row
        self._close_uploads(cut=False, grace_s=CREATE_GRACE_S)

    def _close_uploads(self, *, cut: bool, grace_s: float) -> None:
        """Every multipart copy still open completed (every part in, not ``cut``) or aborted; CopyObjects never
        started dropped.  The calls already out are waited for (those opening uploads ``grace_s``, then cut)."""
        if self._closed:
            return
        self._closed = True
        for copy in [c for c in self.open.values() if not c.multipart or not c.upload_id and not c.closing]:
            if copy.multipart and any(c is copy for _, c in self._calls.values()):
                continue  # its upload is being opened
            del self.open[copy.index]  # never sent, or cut with a row already
        whole = [c for c in self.open.values() if c.upload_id and not c.closing and not c.failed and not cut
                 and len(c.etags) == len(c.ranges)]
        with phase(closing_text(len(whole), len(self.open) - len(whole))):
            opening = [f for f, (kind, _) in self._calls.items() if kind == "create"]
            if not cut:  # completions and aborts out are waited for (each bounded by --timeout)
                wait([f for f in self._calls if f not in opening], return_when=ALL_COMPLETED)
            if opening:
                wait(opening, timeout=grace_s, return_when=ALL_COMPLETED)
            if any(not f.done() for f in self._calls):
                self.multipart.cancel_calls()  # the run is over: a store trickling an answer would hold it up
            while self._calls:
                self._collect(wait_s=None)
            for copy in whole:
                if copy.index in self.open and not copy.closing:
                    self._complete(copy)
            self._collect(wait_s=None)
            while self._calls:  # a completion refused is aborted
                self._collect(wait_s=None)
            rest = [c for c in self.open.values() if c.upload_id and not c.closing]
            if rest:
                with ThreadPoolExecutor(min(ABORTS_AT_ONCE, len(rest)), thread_name_prefix="objperf-abort") as pool:
                    outcomes = list(pool.map(self._send_abort, rest))
                for copy, outcome in zip(rest, outcomes):
                    self.recorder.add(control_row("ABORT_MPU", copy.index, outcome))
                    self._aborted(copy, outcome)
            self.open.clear()
            self._sweep()
        self._control.shutdown(wait=False)

    def _send_abort(self, copy: Copy) -> Attempt:
        return self.multipart.attempt("abort_multipart_upload", Bucket=copy.bucket, Key=copy.key,
                                      UploadId=copy.upload_id)

    def _sweep(self) -> None:
        """Any upload still open under the run's own prefix is aborted: a store may take a part after its
        upload's abort and so open it again.  Under ``--to`` the keys may be another's: nothing is swept."""
        if not self.own_keys or not any(self.workload.part_size_of(s) for s in self.recorder.labels["sizes"]):
            return
        named = {key: i for i, key in enumerate(self.recorder.labels["keys"])}
        left = {entry.split(" upload id ")[-1].split(" ")[0] for entry in self.left_open}
        try:
            listed = self.multipart.open_uploads(self.workload.destination_bucket, self.prefix)
        except ObjperfError:
            return  # the aborts were sent and said; a listing that fails now tells nothing more
        for key, upload_id in listed:
            if upload_id in left or key not in named:
                continue
            copy = Copy(named[key], Source("", "", 0), self.workload.destination_bucket, key, [(0, 1)], True,
                        upload_id=upload_id)
            outcome = self._send_abort(copy)
            self.recorder.add(control_row("ABORT_MPU", copy.index, outcome))
            if not outcome.ok and outcome.status != 404:
                self.left_open.append(f"s3://{copy.bucket}/{key} upload id {upload_id}")

    # -- after the run ----------------------------------------------------------

    def summary(self) -> dict:
        return {"objects_copied": len(self.copied), "objects_failed": self.failed_objects,
                "objects_cut": self.cut_objects, "uploads_left_open": self.left_open,
                "copied_to": f"s3://{self.workload.destination_bucket}/{self.prefix}"}

"""The upload control plane around a queue-mode engine: it opens multipart
uploads, presigns each part, keeps the engine's queue about two requests deep
per slot, completes an upload when its last part is in and aborts it when a
part failed or the run ended.  Every part is a row, and so is every create,
complete and abort.  No run leaves a multipart upload of its own open behind it."""

from __future__ import annotations

import enum
import itertools
import math
import time
from collections.abc import Callable
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import numpy as np

from objperf._engine.config import queue_engine
from objperf._engine.payload import make_payload
from objperf.core.curl_codes import CURLE_OK, NEVER_SENT
from objperf.core.errors import ObjperfError
from objperf.core.progress import phase
from objperf.core.schema import (
    CUT_CURL_CODE,
    DIRECTIONS,
    OP,
    OP_PUT,
    OP_UPLOAD_PART,
    S3_ERROR_BYTES,
    cut_requests,
    empty_columns,
    ok_requests,
)
from objperf.plan.checksums import WriteChecksum
from objperf.plan.limits import ensure_open_files
from objperf.plan.reads import spread_entries
from objperf.plan.writes import WriteWorkload, expected_bytes, own_key_starts, write_targets
from objperf.run.drive import STEP_S, drain_until_done
from objperf.run.recorder import Recorder
from objperf.s3.client import Attempt, S3Client


def control_row(op: str, key_index: int, outcome: Attempt, *, length: int = 0) -> dict[str, np.ndarray]:
    """A row for a request the control plane made (create, complete, abort), in the engine's columns."""
    row = empty_columns(1)
    row["op"][0] = OP[op]
    row["key_index"][0] = key_index
    row["length"][0] = length
    row["status"][0] = outcome.status
    row["s3_error"][0] = outcome.s3_error.encode()[:S3_ERROR_BYTES]
    row["curl_code"][0] = outcome.curl_code
    row["t_start"][0] = row["t_intended"][0] = outcome.t_start  # sent when it was due
    row["ttfb_s"][0] = row["total_s"][0] = outcome.seconds
    row["dns_s"][0] = row["connect_s"][0] = row["tls_s"][0] = row["pretransfer_s"][0] = np.nan
    row["thread"][0] = row["slot"][0] = -1
    return row


@dataclass
class Upload:
    index: int  # the rows' key_index
    bucket: str
    key: str
    size: int
    nparts: int
    upload_id: str | None = None  # None: a single PUT
    part_url: Callable[[int], str] | None = None  # presigned UploadPart URL by part number
    submitted: int = 0
    in_flight: int = 0
    etags: dict[int, str] = field(default_factory=dict)
    checksums: dict[int, str] = field(default_factory=dict)  # each part's checksum (--checksum), by number
    failed: bool = False

    @property
    def all_submitted(self) -> bool:
        return self.submitted >= self.nparts


OPEN_AHEAD = 8  # CreateMultipartUpload calls in flight at most
ABORTS_AT_ONCE = 32  # AbortMultipartUpload calls in flight at most, at the end of a run
DELETES_AT_ONCE = 32  # DeleteObject calls in flight at most, cleaning up after a run
NOTHING_SENT = (CURLE_OK, *NEVER_SENT)  # an answer, or a request that never left
CREATE_GRACE_S = 2.0  # how long the end of a run waits for CreateMultipartUpload answers before cutting them


def plural(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def closing_text(completing: int, aborting: int) -> str:
    """What the end of a write run is doing: ``completing 6 uploads, aborting 10…``."""
    said = ([f"completing {plural(completing, 'upload')}"] if completing else []) + \
           ([f"aborting {plural(aborting, 'upload')} not completed"] if aborting else [])
    return ", ".join(said) + "…" if said else "closing the run's uploads…"


def check_write_resources(workload: WriteWorkload) -> None:
    """The open files the upload engine will need, before it is built: a socket per slot; per thread an
    epoll set, an eventfd and a few idle connections."""
    ensure_open_files(workload.concurrency, extra=8 * min(workload.threads, workload.concurrency))


class State(enum.IntEnum):
    """Where a write run stands.  It only moves forward, and each state stops more than the one before: a
    later reason to stop never undoes a stronger one."""

    RUNNING = 0  # objects begin while the budget lasts
    STOPPING = 1  # no new object: the open ones are completed or aborted, then the run ends
    UNANSWERED = 2  # a multipart call got no answer: the store stopped answering, so nothing more is completed
    ENDED_ON_TIME = 3  # the deadline cut the parts in flight and the run's uploads were closed


class Uploader:
    """Keeps an engine in queue mode fed with parts until the workload's budget or a stop: a part of the
    drive loop (``objperf.run.drive.Part``)."""

    def __init__(self, client: S3Client, workload: WriteWorkload, recorder: Recorder):
        self.client = client
        # Opens and closes the multipart uploads, bounded by --timeout, not --duration
        self.multipart = client.for_multipart() if workload.multipart else client
        self.workload = workload
        self.recorder = recorder
        self.data = make_payload(workload)
        self.checksum = WriteChecksum.of(workload.checksum, workload.checksum_trailer)
        self.targets = write_targets(workload, recorder.run_id)
        self.sizes = workload.size_stream()  # each object's size, drawn in turn
        self.depth = 2 * workload.concurrency
        self.engine = queue_engine(self.depth + workload.concurrency + 8, payload=self.data,
                                   concurrency=workload.concurrency, threads=workload.threads,
                                   sink="discard", ip=workload.ip, connect_to=tuple(workload.connect_to),
                                   spread_to=tuple(spread_entries(workload.spread_to)),
                                   interface=workload.interface, http_version=workload.http_version,
                                   tls=client.endpoint.startswith("https://"), buffer_size=workload.buffer_size,
                                   keepalive=workload.keepalive, max_rate=workload.max_rate or 0,
                                   timeout=workload.timeout, connect_timeout=workload.connect_timeout,
                                   **client.settings.engine_tls())
        self.open: dict[int, Upload] = {}
        self.unfinished_jobs = 0
        self.objects_started = 0
        self.written: list[Upload] = []
        self.maybe_written: list[Upload] = []  # single PUTs cut or failed once sent: their objects may be there
        self.failed_objects = 0
        self.cut_objects = 0  # aborted because the run's time was up, not because anything failed
        self.unstarted_objects = 0  # opened, then aborted as the run ended before any part of theirs was sent
        self.left_open: list[str] = []  # uploads whose abort the store did not take: the user's to abort
        self.deadline = 0.0
        self.acknowledged_bytes = 0  # bytes of the parts and objects the store answered 2xx: the progress
        self.state = State.RUNNING
        self._put_urls: dict[tuple[str, str], tuple[str, float]] = {}  # URL, when it was signed
        # Multipart uploads are opened ahead of need, several CreateMultipartUpload calls at once, so the
        # slots fill within the first second even with few large parts per upload.
        self._opener = ThreadPoolExecutor(OPEN_AHEAD, thread_name_prefix="objperf-open") \
            if workload.multipart else None
        self._opening: dict[Future, Upload] = {}  # CreateMultipartUpload sent, its answer not yet taken in

    # -- the loop ---------------------------------------------------------------

    def start(self) -> None:
        if self.workload.duration:
            self.deadline = time.monotonic() + self.workload.duration
        self.engine.start(self.workload.duration or 0.0)

    @property
    def done(self) -> bool:
        return self.state is not State.RUNNING and not self.open and self.unfinished_jobs == 0 and not self._opening

    def step(self) -> None:
        """Take finished parts in, complete or abort what can be, feed the engine."""
        if self.done:
            return
        self._take(self.engine.drain())
        if self._time_is_up() and self.state is not State.ENDED_ON_TIME:
            self._end_on_time()
            return
        if self.state is State.RUNNING and self._budget_spent():
            self._move_to(State.STOPPING)
        self._settle()
        if not self.done:
            self._feed()

    def wait(self, timeout: float) -> None:
        self.engine.wait_finished(timeout)

    def progress(self) -> tuple[int, int, int]:
        """Bytes the store acknowledged (not bytes sent: a part cut or refused moved nothing that counts),
        parts finished, parts failed."""
        _, requests, failed = self.engine.progress()
        return self.acknowledged_bytes, requests, failed

    def finish(self) -> None:
        self.close()

    def end_now(self) -> None:
        """The run's end came early (its throughput held): its time is up now, and the next step ends it as on
        time, completing the objects whose every part arrived."""
        self.deadline = time.monotonic()

    def abort(self) -> None:
        self.close(abort=True)

    def close(self, *, abort: bool = False) -> None:
        """End the engine; abort every upload still open (after an interrupt or an error).  The aborts
        are sent whether or not the rows could be recorded (the recorder keeps them in memory then)."""
        self.engine.stop(abort=abort)
        self.engine.close_queue()
        try:
            drain_until_done(self.engine, self._take)
        finally:
            self._abort_open(abort)
            if self._opener is not None:
                self._opener.shutdown(wait=False)

    def _abort_open(self, interrupted: bool) -> None:
        if interrupted:
            self._cancel_opening(0.0)
        self._collect_opened(wait_all=True)  # uploads still being opened are aborted too
        aborts = []
        for upload in list(self.open.values()):
            started = upload.submitted > 0
            upload.in_flight = 0
            aborts.append((upload, not interrupted and started, started))
            self.unstarted_objects += not started and upload.upload_id is not None
        with phase(closing_text(0, len(aborts))):
            self._abort_all(aborts)
            self._sweep_own_keys()

    def _end_on_time(self) -> None:
        """The run's time is up: the engine cuts the parts in flight, as it cuts reads (here, if this
        comes first).  Take their rows, complete the objects whose every part had arrived, abort the
        rest.  The run's clock stops first: closing the uploads moves no data, and a run lasts its
        duration."""
        unanswered = self.state is State.UNANSWERED  # a store that stopped answering completes nothing
        self._move_to(State.ENDED_ON_TIME)
        self.engine.stop(abort=True)
        drain_until_done(self.engine, self._take)
        self.recorder.stop_clock()
        self.unfinished_jobs = 0  # jobs queued but never started leave no row
        self._cancel_opening(CREATE_GRACE_S)
        self._collect_opened(wait_all=True)  # uploads being opened as the time ran out are aborted too
        aborts = []
        whole = {u.index for u in self.open.values()
                 if not u.failed and len(u.etags) == u.nparts and not unanswered}
        with phase(closing_text(len(whole), len(self.open) - len(whole))):
            for upload in list(self.open.values()):
                started = upload.in_flight < upload.submitted  # a part of it has a row: it had begun to move
                upload.in_flight = 0
                if upload.index in whole:
                    self._complete(upload)
                if upload.index in self.open:  # not completed
                    aborts.append((upload, upload.failed, started))
                    self.unstarted_objects += not (upload.failed or started) and upload.upload_id is not None
            self._abort_all(aborts)
            self._sweep_own_keys()

    def _abort_unanswered_create(self, upload: Upload, *, count: bool = True) -> None:
        """CreateMultipartUpload went out but its answer never came in (lost, timed out, cut): the store
        may have opened an upload whose id never reached us.  Keys are the run's own, so every upload
        open on this exact key is this run's; abort them rather than leave parts to be billed."""
        try:
            found = [upload_id for key, upload_id in self.multipart.open_uploads(upload.bucket, upload.key)
                     if key == upload.key]
        except ObjperfError:
            self.left_open.append(f"s3://{upload.bucket}/{upload.key} (its CreateMultipartUpload was cut and the "
                                  "store's open uploads could not be listed: one may be open)")
            found = []
        if not found and count:
            self.cut_objects += 1
        for upload_id in found:
            upload.upload_id = upload_id
            self._abort(upload, failed=False, started=count)

    def _cancel_opening(self, grace_s: float) -> None:
        """CreateMultipartUpload calls still unanswered after ``grace_s`` are cut: the run is over, and a
        store trickling its answer would hold it up to the control timeout.  What such a call may have
        opened is found and aborted as for any lost answer."""
        if self._opening:
            wait(list(self._opening), timeout=grace_s, return_when=ALL_COMPLETED)
        if any(not f.done() for f in self._opening):
            self.client.cancel_calls()

    # -- internals ----------------------------------------------------------------

    def _move_to(self, state: State) -> None:
        """Every change of state goes through here: forward only."""
        self.state = max(self.state, state)

    def _time_is_up(self) -> bool:
        return bool(self.deadline) and time.monotonic() >= self.deadline

    def _budget_spent(self) -> bool:
        """The object budget (a time budget ends in _end_on_time)."""
        if self.workload.requests is not None:
            return self.objects_started >= self.workload.requests
        if not self.workload.duration:  # no budget given: each key once
            return self.objects_started >= len(self.targets)
        return False

    def _take(self, cols) -> None:
        if cols is None:
            return
        self.recorder.add(cols)
        ok = ok_requests(cols["curl_code"], cols["status"])
        cut = cut_requests(cols["curl_code"], cols["status"])
        self.acknowledged_bytes += int(cols["bytes"][ok & np.isin(cols["op"], DIRECTIONS["write"])].sum())
        for i in range(len(cols["offset"])):
            self.unfinished_jobs -= 1
            upload = self.open.get(int(cols["key_index"][i]))
            if upload is None:
                continue
            upload.in_flight -= 1
            if ok[i]:
                upload.etags[int(cols["offset"][i] // self.workload.part_size) + 1] = cols["etag"][i].decode()
            elif not cut[i]:  # a cut part leaves its object cut, not failed
                upload.failed = True

    def _settle(self) -> None:
        failed = []
        for upload in list(self.open.values()):
            if upload.in_flight or self.state >= State.UNANSWERED:  # the store stopped answering: aborted at the end
                continue
            if upload.failed:
                failed.append((upload, True, True))
            elif len(upload.etags) == upload.nparts:
                self._complete(upload)
        self._abort_all(failed)

    def _feed(self) -> None:
        while self.unfinished_jobs < self.depth and not self._time_is_up():  # a CREATE_MPU may take it past
            self._collect_opened()
            upload = next((u for u in self.open.values() if not u.all_submitted and not u.failed), None)
            if upload is None:
                if self.state is State.RUNNING and not self._budget_spent():
                    upload = self._begin()
                if upload is None:
                    if not self._opening:
                        if self._budget_spent():
                            self._move_to(State.STOPPING)
                        return
                    if not self._collect_opened(wait_s=STEP_S):  # nothing else to send meanwhile
                        return
                    continue
            self._submit_part(upload)

    def _parts_wanted(self) -> int:
        """Parts the queue could take now beyond those of uploads open or being opened."""
        ready = sum(u.nparts - u.submitted for u in self.open.values() if not u.failed)
        return self.depth - self.unfinished_jobs - ready - sum(u.nparts for u in self._opening.values())

    def _begin(self) -> Upload | None:
        """The next object, its size the next one drawn: a single PUT's upload at once; for a multipart one,
        CreateMultipartUpload calls sent ahead (up to OPEN_AHEAD at a time, as many as the queue wants parts,
        while the objects drawn are multipart), and None (not open yet)."""
        w = self.workload
        while self.state is State.RUNNING and not self._budget_spent():
            if self.sizes.peek() <= w.part_size:  # a single PUT
                upload = self._reserve()
                self.open[upload.index] = upload
                return upload
            if len(self._opening) >= OPEN_AHEAD or self._parts_wanted() <= 0:
                return None
            upload = self._reserve()
            # Bounded by the run's --duration as well as --timeout: an upload opened after the run is of no use
            future = self._opener.submit(self.client.attempt, "create_multipart_upload", Bucket=upload.bucket,
                                         Key=upload.key, **self.checksum.opening())
            self._opening[future] = upload
        return None

    def _reserve(self) -> Upload:
        bucket, key = self.targets[self.objects_started % len(self.targets)]
        index = len(self.recorder.labels["keys"])  # rows name objects by their place in the labels
        self.recorder.labels["buckets"].append(bucket)
        self.recorder.labels["keys"].append(key)
        size = self.sizes.take()
        self.recorder.labels["sizes"].append(size)
        self.objects_started += 1
        return Upload(index, bucket, key, size, self.workload.parts_of(size))

    def _collect_opened(self, *, wait_s: float = 0.0, wait_all: bool = False) -> int:
        """Take in the answers of CreateMultipartUpload calls (waiting up to ``wait_s`` for one, or for all);
        how many uploads opened."""
        if not self._opening:
            return 0
        if wait_all or wait_s:
            wait(list(self._opening), timeout=None if wait_all else wait_s,
                 return_when=ALL_COMPLETED if wait_all else FIRST_COMPLETED)
        opened = 0
        for future in [f for f in self._opening if f.done()]:
            upload = self._opening.pop(future)
            if future.exception() is not None:  # the answer was lost: an upload may be open on the store
                self._abort_unanswered_create(upload)
                continue
            outcome = future.result()
            self.recorder.add(control_row("CREATE_MPU", upload.index, outcome))
            if outcome.curl_code == CUT_CURL_CODE:  # cut by _cancel_opening: as if its answer were lost
                self._abort_unanswered_create(upload)
                continue
            if not outcome.ok:
                self.failed_objects += 1
                if outcome.status in (401, 403) or outcome.curl_code:
                    self._move_to(State.STOPPING)  # every further object would fail the same way
                if outcome.curl_code not in NOTHING_SENT:
                    self._abort_unanswered_create(upload, count=False)
                continue
            upload.upload_id = outcome.response["UploadId"]
            upload.part_url = self.client.part_url_signer(upload.bucket, upload.key, upload.upload_id,
                                                          expires=self.workload.url_lifetime)
            self.open[upload.index] = upload
            opened += 1
        return opened

    def _submit_part(self, upload: Upload) -> None:
        number = upload.submitted + 1
        offset = upload.submitted * self.workload.part_size
        length = min(self.workload.part_size, upload.size - offset) if upload.upload_id else upload.size
        payload_offset = offset % len(self.data)
        framed = self.checksum.request(self.data, payload_offset, length)
        if framed.value:
            upload.checksums[number] = framed.value
        if upload.upload_id:
            url = upload.part_url(number, headers=framed.headers or None)
            op = OP_UPLOAD_PART
        elif framed.headers:  # signed with its checksum: each PUT its own URL
            url = self.client.presign(upload.bucket, upload.key, method="put_object",
                                      expires=self.workload.url_lifetime, headers=framed.headers)
            op = OP_PUT
        else:
            url = self._put_url(upload.bucket, upload.key)
            op = OP_PUT
        self.engine.submit(url, op, upload.index, offset, length, payload_offset,
                           headers=[f"{name}: {value}" for name, value in framed.headers.items()],
                           before=framed.before, after=framed.after)
        upload.submitted += 1
        upload.in_flight += 1
        self.unfinished_jobs += 1

    def _put_url(self, bucket: str, key: str) -> str:
        # A presigned PUT URL serves every PUT of its key until a third of its life has passed.
        url, signed_at = self._put_urls.get((bucket, key), ("", -math.inf))
        if time.monotonic() - signed_at > self.workload.url_lifetime / 3:
            url = self.client.presign(bucket, key, method="put_object", expires=self.workload.url_lifetime)
            self._put_urls[bucket, key] = url, time.monotonic()
        return url

    def _complete(self, upload: Upload) -> None:
        del self.open[upload.index]
        if upload.upload_id is None:
            self.written.append(upload)
            return
        parts = [{"PartNumber": n, "ETag": upload.etags[n], **self.checksum.part(upload.checksums.get(n, ""))}
                 for n in sorted(upload.etags)]
        outcome = self.multipart.attempt("complete_multipart_upload", Bucket=upload.bucket, Key=upload.key,
                                      UploadId=upload.upload_id, MultipartUpload={"Parts": parts})
        self.recorder.add(control_row("COMPLETE_MPU", upload.index, outcome, length=upload.size))
        if outcome.ok:
            self.written.append(upload)
        elif outcome.curl_code:  # no answer: the store stopped answering; the run ends, its uploads aborted at once
            upload.failed = True
            self.open[upload.index] = upload
            self._move_to(State.UNANSWERED)
        else:
            self._abort(upload)

    def _abort(self, upload: Upload, *, failed: bool = True, started: bool = True) -> None:
        """Abort an upload; count its object failed, or cut (``started``: none of it moved, neither)."""
        self._abort_all([(upload, failed, started)])

    def _abort_all(self, aborts: list[tuple[Upload, bool, bool]]) -> None:
        """Abort uploads, given as (upload, failed, started), all at once: each call is bounded by the control
        timeout, so a store that stopped answering costs one timeout, not one per upload.  An abort the store
        did not take leaves its upload id in ``left_open``."""
        for upload, failed, started in aborts:
            self.open.pop(upload.index, None)
            if upload.upload_id is None and started:  # a store may keep a PUT it never answered, or failed late
                self.maybe_written.append(upload)
            if failed:
                self.failed_objects += 1
            elif started:
                self.cut_objects += 1
        sent = [upload for upload, _, _ in aborts if upload.upload_id is not None]
        if len(sent) > 1:
            with ThreadPoolExecutor(min(ABORTS_AT_ONCE, len(sent)), thread_name_prefix="objperf-abort") as pool:
                outcomes = list(pool.map(self._send_abort, sent))
        else:
            outcomes = [self._send_abort(upload) for upload in sent]
        for upload, outcome in zip(sent, outcomes):
            if not outcome.ok and outcome.status != 404:  # 404 NoSuchUpload: nothing is left open
                self.left_open.append(f"s3://{upload.bucket}/{upload.key} upload id {upload.upload_id}")
            self.recorder.add(control_row("ABORT_MPU", upload.index, outcome))

    def _sweep_own_keys(self) -> None:
        """The run is over and nothing of it is in flight: any upload still open on one of its own keys (they
        are the run's alone) is aborted.  A store may open an upload after the run cut its CreateMultipartUpload
        and listed the key, or write a cut part after it took the upload's abort, and so open it again (a
        busy SeaweedFS did both after a full disk ended a put, and every later write test found it open)."""
        if not self.workload.multipart:
            return  # single PUTs open no upload
        left = {entry.split(" upload id ")[-1] for entry in self.left_open}
        named = {place: i for i, place in enumerate(zip(self.recorder.labels["buckets"], self.recorder.labels["keys"]))}
        for bucket, prefix in itertools.product(self.workload.buckets,
                                                own_key_starts(self.workload, self.recorder.run_id)):
            try:
                listed = self.multipart.open_uploads(bucket, prefix)
            except ObjperfError:
                continue  # the aborts were sent and said; a listing that fails now tells nothing more
            for key, upload_id in listed:
                if upload_id in left:
                    continue  # already named as left open
                upload = Upload(index=named.get((bucket, key), -1), bucket=bucket, key=key, size=0, nparts=0,
                                upload_id=upload_id)
                outcome = self._send_abort(upload)
                if not outcome.ok and outcome.status != 404:
                    self.left_open.append(f"s3://{bucket}/{key} upload id {upload_id}")
                if upload.index >= 0:  # a row names its key by index: one the run never named has none
                    self.recorder.add(control_row("ABORT_MPU", upload.index, outcome))

    def _send_abort(self, upload: Upload) -> Attempt:
        return self.multipart.attempt("abort_multipart_upload", Bucket=upload.bucket, Key=upload.key,
                                   UploadId=upload.upload_id)

    # -- after the run ------------------------------------------------------------

    def summary(self) -> dict:
        return {"objects_written": len(self.written), "objects_failed": self.failed_objects,
                "objects_cut": self.cut_objects, "objects_unstarted": self.unstarted_objects,
                "uploads_left_open": self.left_open,
                "written": sorted({f"s3://{u.bucket}/{u.key}" for u in self.written})[:1000]}

    def verify(self) -> str:
        """Read every written key back (its last write) and compare it with the payload.  An object's bytes
        follow from its size alone; a key written at several sizes (``--sizes``), some at once, holds
        whichever upload the store took last, so it must read back as one of them, whole."""
        sizes: dict[tuple[str, str], set[int]] = {}
        for u in self.written:
            sizes.setdefault((u.bucket, u.key), set()).add(u.size)
        bad = []
        with phase(f"verifying {plural(len(sizes), 'object')}: reading each back…"):
            for (bucket, key), written in sizes.items():
                body = self.client.get_object(bucket, key, limit=max(written))
                if len(body) not in written or body != expected_bytes(self.data, len(body), 0, len(body)):
                    bad.append(f"s3://{bucket}/{key}")
        if bad:
            return f"FAILED: {len(bad)} of the {len(sizes)} keys written differ from their last upload " \
                   f"({', '.join(bad[:3])})"
        return f"ok: every key written ({len(sizes)}) reads back equal to its last upload"

    def cleanup(self) -> int:
        """Delete every key this run wrote to, or sent a PUT that was cut or failed to (and only those), up to
        ``DELETES_AT_ONCE`` at a time: a run of small objects writes thousands."""
        touched = sorted({(u.bucket, u.key) for u in (*self.written, *self.maybe_written)})
        if not touched:
            return 0
        with phase(f"deleting the {plural(len(touched), 'object')} written…"):
            pool = ThreadPoolExecutor(min(DELETES_AT_ONCE, len(touched)), thread_name_prefix="objperf-delete")
            try:
                for _ in pool.map(lambda place: self.client.delete_object(*place), touched):
                    pass
            finally:  # the first delete that fails ends the cleanup: the others not yet sent are not sent
                pool.shutdown(cancel_futures=True)
        return len(touched)

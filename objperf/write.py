"""Write runs: single PUTs and multipart uploads sent from one preallocated
payload, spread over keys and buckets, with every part (and every create,
complete and abort) a row.  Mixed runs read and write at the same time.

The engine sends the bytes; this module is the control plane around it: it
opens uploads, presigns each part, keeps the engine's queue about two
requests deep per slot, completes an upload when its last part is in and
aborts it when a part failed or the run ended.  No run leaves a multipart
upload of its own open behind it."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from objperf.errors import ObjperfError, UsageError
from objperf.limits import ensure_open_files
from objperf.payload import payload
from objperf.recorder import Recorder, RunResult
from objperf.run import abort_and_drain, drain_until_done
from objperf.s3client import URL_LIFETIME_S, Attempt, S3Client, S3Settings, check_url_lifetime
from objperf.schema import OPS
from objperf.summary import cut_requests
from objperf.workload import check_connect_to, check_interface, spread_entries

MIN_PART = 5 << 20
MAX_PART = 5 << 30
MAX_PARTS = 10_000
# Bodies longer than this repeat the payload.  16 MiB is past the window of the compressors stores
# use (S2, Snappy, gzip, zstd up to level 19) and cheap to make: fresh memory costs CPU to fault in
# (about 1 ms per MiB on a VM).  A longer period buys nothing: stores that dedupe do it per block.
PAYLOAD_PERIOD = 16 << 20
OP = {name: code for code, name in enumerate(OPS)}
# The control plane wakes when a job finishes, and at least this often (for the deadline, the
# progress line and a mixed run's reads).
STEP_S = 0.1

ProgressFn = Callable[[float, int, int, int], None]


@dataclass
class WriteWorkload:
    object_size: int = 64 << 20
    part_size: int = 32 << 20  # objects larger than this go up as multipart uploads
    concurrency: int = 16
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    keys: int = 1
    buckets: tuple[str, ...] = ()
    prefix: str = ""
    duration: float | None = None
    requests: int | None = None  # objects to write
    verify: bool = False
    cleanup: bool = False
    ip: str = "any"
    connect_to: tuple[str, ...] = ()
    spread_to: tuple[str, ...] = ()  # servers (ADDR:PORT) the slots are dealt to, round robin
    interface: str | None = None
    http_version: str = "1.1"
    timeout: float = 300.0
    connect_timeout: float = 10.0
    buffer_size: int = 1 << 20
    url_lifetime: int = URL_LIFETIME_S  # presigned URLs are signed afresh before a third of it has passed

    @property
    def multipart(self) -> bool:
        return self.object_size > self.part_size

    @property
    def parts_per_object(self) -> int:
        return max(1, -(-self.object_size // self.part_size)) if self.multipart else 1

    def validate(self) -> None:
        if self.concurrency < 1 or self.threads < 1 or self.keys < 1:
            raise UsageError("concurrency, threads and keys must be at least 1")
        if not self.buckets:
            raise UsageError("a write run needs at least one bucket")
        if self.object_size < 0:
            raise UsageError("object size must not be negative")
        if self.multipart:
            if not MIN_PART <= self.part_size <= MAX_PART:
                raise UsageError("part size must be between 5 MiB and 5 GiB (S3's limits)")
            if self.parts_per_object > MAX_PARTS:
                raise UsageError(f"{self.parts_per_object} parts per object: S3 allows at most {MAX_PARTS}")
        elif self.object_size > MAX_PART:
            raise UsageError("a single PUT carries at most 5 GiB: give a smaller --part-size to use multipart")
        for name in ("duration", "requests"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise UsageError(f"{name} must be positive")
        if self.ip not in ("any", "4", "6") or self.http_version not in ("1.1", "2"):
            raise UsageError("ip must be 4, 6 or any; http version 1.1 or 2")
        check_connect_to(self.connect_to)
        spread_entries(self.spread_to)
        check_interface(self.interface)
        check_url_lifetime(self.url_lifetime)

    def describe(self) -> dict:
        return {**asdict(self), "buckets": list(self.buckets), "connect_to": list(self.connect_to),
                "spread_to": list(self.spread_to)}


def object_key(prefix: str, run_id: str, index: int) -> str:
    """Keys are named after the run, so cleanup can never touch an object the run did not write."""
    return f"{prefix}objperf-{run_id[:8]}-{index:05d}"


def make_payload(workload: WriteWorkload) -> np.ndarray:
    """One incompressible payload per run: every object is it, repeated from its start, and
    every part the slice at ``offset % len`` (wrapping round past the end)."""
    return payload(max(min(workload.object_size, PAYLOAD_PERIOD), 1))


def expected_bytes(data: np.ndarray, size: int, start: int, length: int) -> memoryview:
    """Bytes ``start:start+length`` of an object that a run wrote from ``data``."""
    out = np.empty(length, dtype=np.uint8)
    done = 0
    while done < length:
        offset = (start + done) % len(data)
        n = min(length - done, len(data) - offset)
        out[done:done + n] = data[offset:offset + n]
        done += n
    return memoryview(out)


def control_row(op: str, key_index: int, outcome: Attempt, *, length: int = 0) -> dict[str, np.ndarray]:
    """A row for a request the control plane made (create, complete, abort), in the engine's columns."""
    from objperf.recorder import empty_columns

    row = {name: np.zeros(1, dtype=col.dtype) for name, col in empty_columns().items()}
    row["op"][0] = OP[op]
    row["key_index"][0] = key_index
    row["length"][0] = length
    row["status"][0] = outcome.status
    row["s3_error"][0] = outcome.s3_error.encode()[:32]
    row["curl_code"][0] = outcome.curl_code
    row["t_start"][0] = outcome.t_start
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
    failed: bool = False

    @property
    def all_submitted(self) -> bool:
        return self.submitted >= self.nparts


class Uploader:
    """Keeps an engine in queue mode fed with parts until the workload's budget or a stop."""

    def __init__(self, client: S3Client, workload: WriteWorkload, recorder: Recorder):
        from objperf._engine.core import Engine

        self.client = client
        self.workload = workload
        self.recorder = recorder
        self.data = make_payload(workload)
        self.targets = [(workload.buckets[i % len(workload.buckets)],
                         object_key(workload.prefix, recorder.run_id, i))
                        for i in range(max(workload.keys, len(workload.buckets)))]
        self.depth = 2 * workload.concurrency
        self.engine = Engine([], [], concurrency=workload.concurrency, threads=workload.threads,
                             queue_capacity=self.depth + workload.concurrency + 8, payload=self.data,
                             sink="discard", ip=workload.ip, connect_to=workload.connect_to,
                             spread_to=spread_entries(workload.spread_to),
                             interface=workload.interface, http_version=workload.http_version,
                             tls=client.endpoint.startswith("https://"), buffer_size=workload.buffer_size,
                             timeout=workload.timeout, connect_timeout=workload.connect_timeout,
                             **client.settings.engine_tls())
        self.open: dict[int, Upload] = {}
        self.unfinished_jobs = 0
        self.objects_started = 0
        self.written: list[Upload] = []
        self.failed_objects = 0
        self.cut_objects = 0  # aborted because the run's time was up, not because anything failed
        self.deadline = 0.0
        self.stopping = False
        self.ended_on_time = False  # the deadline cut the parts in flight
        self._put_urls: dict[tuple[str, str], tuple[str, float]] = {}  # URL, when it was signed
        self._creating: Upload | None = None  # its CreateMultipartUpload has been sent, no answer read yet

    # -- the loop ---------------------------------------------------------------

    def start(self) -> None:
        if self.workload.duration:
            self.deadline = time.monotonic() + self.workload.duration
        self.engine.start(self.workload.duration or 0.0)

    @property
    def done(self) -> bool:
        return self.stopping and not self.open and self.unfinished_jobs == 0

    def step(self) -> None:
        """Take finished parts in, complete or abort what can be, feed the engine."""
        self._take(self.engine.drain())
        if self._time_is_up() and not self.ended_on_time:
            self._end_on_time()
            return
        if not self.stopping and self._budget_spent():
            self.stopping = True
        self._settle()
        if not self.done:
            self._feed()

    def close(self, *, abort: bool = False) -> None:
        """End the engine; abort every upload still open (after an interrupt or an error)."""
        self.engine.stop(abort=abort)
        self.engine.close_queue()
        drain_until_done(self.engine, self._take)
        for upload in list(self.open.values()):
            upload.in_flight = 0
            self._abort(upload, failed=not abort)
        if self._creating is not None:
            self._abort_unanswered_create(self._creating)

    def _end_on_time(self) -> None:
        """The run's time is up: the engine cuts the parts in flight, as it cuts reads (here, if this
        comes first).  Take their rows, complete the objects whose every part had arrived, abort the
        rest.  The run's clock stops first: closing the uploads moves no data, and a run lasts its
        duration."""
        self.stopping = self.ended_on_time = True
        abort_and_drain(self.engine, self._take)
        self.recorder.stop_clock()
        self.unfinished_jobs = 0  # jobs queued but never started leave no row
        for upload in list(self.open.values()):
            upload.in_flight = 0
            if not upload.failed and len(upload.etags) == upload.nparts:
                self._complete(upload)
            else:
                self._abort(upload, failed=upload.failed)

    def _abort_unanswered_create(self, upload: Upload) -> None:
        """Ctrl-C landed while CreateMultipartUpload was on the wire: the store may have opened an
        upload whose id never reached us.  Keys are the run's own, so every upload open on this
        exact key is this run's; abort them rather than leave parts to be billed."""
        self._creating = None
        try:
            found = [upload_id for key, upload_id in self.client.open_uploads(upload.bucket, upload.key)
                     if key == upload.key]
        except ObjperfError:
            found = []
        if not found:
            self.cut_objects += 1
        for upload_id in found:
            upload.upload_id = upload_id
            self._abort(upload, failed=False)

    # -- internals ----------------------------------------------------------------

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
        ok = (cols["curl_code"] == 0) & (cols["status"] >= 200) & (cols["status"] < 300)
        cut = cut_requests(cols["curl_code"], cols["status"])
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
        for upload in list(self.open.values()):
            if upload.in_flight:
                continue
            if upload.failed:
                self._abort(upload)
            elif len(upload.etags) == upload.nparts:
                self._complete(upload)

    def _feed(self) -> None:
        while self.unfinished_jobs < self.depth and not self._time_is_up():  # a CREATE_MPU may take it past
            upload = next((u for u in self.open.values() if not u.all_submitted and not u.failed), None)
            if upload is None:
                if self.stopping or self._budget_spent():
                    self.stopping = True
                    return
                upload = self._begin()
                if upload is None:
                    return
            self._submit_part(upload)

    def _begin(self) -> Upload | None:
        bucket, key = self.targets[self.objects_started % len(self.targets)]
        index = len(self.recorder.labels["keys"])  # rows name objects by their place in the labels
        self.recorder.labels["buckets"].append(bucket)
        self.recorder.labels["keys"].append(key)
        self.objects_started += 1
        w = self.workload
        upload = Upload(index, bucket, key, w.object_size, w.parts_per_object)
        if w.multipart:
            self._creating = upload
            outcome = self.client.attempt("create_multipart_upload", Bucket=bucket, Key=key)
            self._creating = None
            self.recorder.add(control_row("CREATE_MPU", index, outcome))
            if not outcome.ok:
                self.failed_objects += 1
                if outcome.status in (401, 403) or outcome.curl_code:
                    self.stopping = True  # every further object would fail the same way
                return None
            upload.upload_id = outcome.response["UploadId"]
            upload.part_url = self.client.part_url_signer(bucket, key, upload.upload_id,
                                                          expires=self.workload.url_lifetime)
        self.open[index] = upload
        return upload

    def _submit_part(self, upload: Upload) -> None:
        from objperf._engine.core import OP_PUT, OP_UPLOAD_PART

        number = upload.submitted + 1
        offset = upload.submitted * self.workload.part_size
        length = min(self.workload.part_size, upload.size - offset) if upload.upload_id else upload.size
        payload_offset = offset % len(self.data)
        if upload.upload_id:
            url = upload.part_url(number)
            op = OP_UPLOAD_PART
        else:
            url = self._put_url(upload.bucket, upload.key)
            op = OP_PUT
        self.engine.submit(url, op, upload.index, offset, length, payload_offset)
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
        parts = [{"PartNumber": n, "ETag": upload.etags[n]} for n in sorted(upload.etags)]
        outcome = self.client.attempt("complete_multipart_upload", Bucket=upload.bucket, Key=upload.key,
                                      UploadId=upload.upload_id, MultipartUpload={"Parts": parts})
        self.recorder.add(control_row("COMPLETE_MPU", upload.index, outcome, length=upload.size))
        if outcome.ok:
            self.written.append(upload)
        else:
            self._abort(upload)

    def _abort(self, upload: Upload, *, failed: bool = True) -> None:
        self.open.pop(upload.index, None)
        if failed:
            self.failed_objects += 1
        else:
            self.cut_objects += 1
        if upload.upload_id is None:
            return
        outcome = self.client.attempt("abort_multipart_upload", Bucket=upload.bucket, Key=upload.key,
                                      UploadId=upload.upload_id)
        self.recorder.add(control_row("ABORT_MPU", upload.index, outcome))

    # -- after the run ------------------------------------------------------------

    def verify(self) -> str:
        """Read every written key back (its last write) and compare it with the payload."""
        latest = {(u.bucket, u.key): u for u in self.written}
        bad = []
        for (bucket, key), upload in latest.items():
            body = self.client.get_object(bucket, key)
            if len(body) != upload.size or body != expected_bytes(self.data, upload.size, 0, upload.size):
                bad.append(f"s3://{bucket}/{key}")
        if bad:
            return f"FAILED: {len(bad)} of {len(latest)} objects differ ({', '.join(bad[:3])})"
        return f"ok: {len(latest)} objects read back equal to what was sent"

    def cleanup(self) -> int:
        """Delete every key this run wrote to (and only those)."""
        touched = {(u.bucket, u.key) for u in self.written}
        for bucket, key in sorted(touched):
            self.client.delete_object(bucket, key)
        return len(touched)


def run_write(settings: S3Settings, workload: WriteWorkload, *, out: str | Path | None = None,
              on_progress: ProgressFn | None = None, create_buckets: bool = False) -> RunResult:
    workload.validate()
    client = S3Client(settings)
    for bucket in workload.buckets:
        if create_buckets:
            client.create_bucket(bucket)
        elif not client.bucket_exists(bucket):
            raise UsageError(f"bucket {bucket!r} does not exist at {client.endpoint} (create it first)")
    recorder = Recorder("write", target={"kind": "s3", **settings.describe(), "endpoint": client.endpoint,
                                         "buckets": list(workload.buckets)},
                        workload=workload.describe(), out=out, buckets=[], keys=[], engine_threads=workload.threads)
    uploader = Uploader(client, workload, recorder)
    status = _drive(recorder, uploader, None, on_progress)
    return _finish_write(recorder, uploader, status)


def _drive(recorder: Recorder, uploader: Uploader, reader, on_progress: ProgressFn | None,
           reader_duration: float = 0.0, renew_read_urls: Callable[[], None] = lambda: None) -> str:
    """Run the uploader (and a read engine, for mixed runs) until both are done; the status they ended with."""
    recorder.start_clock()
    status = "complete"
    try:
        uploader.start()
        if reader is not None:
            reader.start(reader_duration)
        last_progress = 0.0
        while True:
            if not uploader.done:
                uploader.step()
            reading = reader is not None and reader.running
            if uploader.done and not reading:
                break  # the clock stops now, not a wait later
            if uploader.done:
                reader.join(STEP_S)
            else:
                uploader.engine.wait_finished(STEP_S)
            if reader is not None:
                recorder.add(reader.drain())
                renew_read_urls()
            if on_progress and recorder.elapsed - last_progress >= 0.5:
                last_progress = recorder.elapsed
                engines = [uploader.engine] + ([reader] if reader is not None else [])
                totals = [sum(values) for values in zip(*(e.progress() for e in engines))]
                on_progress(last_progress, *totals)
        uploader.close()
    except KeyboardInterrupt:
        status = "interrupted"
        if reader is not None:
            abort_and_drain(reader, recorder.add)
        uploader.close(abort=True)
    except BaseException:
        uploader.close(abort=True)
        raise
    finally:
        if reader is not None:
            recorder.add(reader.drain())
    return status


def _finish_write(recorder: Recorder, uploader: Uploader, status: str) -> RunResult:
    recorder.stop_clock()
    extra = {"objects_written": len(uploader.written), "objects_failed": uploader.failed_objects,
             "objects_cut": uploader.cut_objects,
             "written": sorted({f"s3://{u.bucket}/{u.key}" for u in uploader.written})[:1000]}
    if uploader.workload.verify and status == "complete":
        extra["verified"] = uploader.verify()
    elif uploader.workload.verify:
        extra["verified"] = "not verified: the run was interrupted"
    else:
        extra["verified"] = "not verified (--verify reads every object back and compares)"
    if uploader.workload.cleanup:
        extra["cleaned_up"] = uploader.cleanup()
    return recorder.finish(status, extra=extra)


def run_mixed(read_target, read_workload, settings: S3Settings, write_workload: WriteWorkload, *,
              out: str | Path | None = None, on_progress: ProgressFn | None = None,
              create_buckets: bool = False) -> RunResult:
    """Reads and writes at the same time, each with its own engine and concurrency; rows of both
    directions in one dataset, a summary per direction."""
    from objperf.run import make_engine
    from objperf.target import UrlRenewal

    read_workload.validate()
    write_workload.validate()
    if not read_workload.duration and not read_workload.requests and not read_workload.bytes:
        raise UsageError("a mixed run needs --duration (or a request or byte budget for the reads)")
    # Each engine checks only its own sockets against the open-file limit; a mixed run holds both's.
    ensure_open_files(read_workload.concurrency + write_workload.concurrency,
                      extra=8 * (read_workload.threads + write_workload.threads),
                      what=f"reads and writes together ({read_workload.concurrency:,} + "
                           f"{write_workload.concurrency:,} in flight)")
    client = S3Client(settings)
    for bucket in write_workload.buckets:
        if create_buckets:
            client.create_bucket(bucket)
    recorder = Recorder("mixed", target={"read": read_target.describe(),
                                         "write": {"kind": "s3", **settings.describe(),
                                                   "buckets": list(write_workload.buckets)}},
                        workload={"read": read_workload.describe(), "write": write_workload.describe()}, out=out,
                        buckets=[o.bucket for o in read_target.objects], keys=[o.key for o in read_target.objects],
                        engine_threads=read_workload.threads + write_workload.threads)
    reader = make_engine(read_target, read_workload, None)
    uploader = Uploader(client, write_workload, recorder)
    status = _drive(recorder, uploader, reader, on_progress, read_workload.duration or 0.0,
                    UrlRenewal(read_target, [reader]))
    return _finish_write(recorder, uploader, status)

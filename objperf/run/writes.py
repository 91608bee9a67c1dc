"""Write runs and mixed runs: uploads (``objperf.run.uploader``) beside, for a mixed
run, a read engine, through the one drive loop (``objperf.run.drive``); after the
run, the objects written are verified and cleaned up as asked."""

from __future__ import annotations

from pathlib import Path

from objperf.core.errors import BucketNotFound, ObjperfError, UsageError
from objperf.dataset.destination import Destination
from objperf.plan.limits import ensure_open_files
from objperf.plan.reads import ReadWorkload
from objperf.plan.writes import WriteWorkload
from objperf.run.drive import ProgressFn, ReadPart, drive
from objperf.run.reads import make_engine, settled
from objperf.run.recorder import Recorder, RunResult
from objperf.run.uploader import Uploader, check_write_resources
from objperf.s3.client import S3Client, S3Settings
from objperf.s3.target import ResolvedTarget, UrlRenewal

__all__ = ["run_mixed", "run_write"]


def run_write(settings: S3Settings, workload: WriteWorkload, *, out: Destination | str | Path | None = None,
              on_progress: ProgressFn | None = None, create_buckets: bool = False,
              keep_rows: bool = True) -> RunResult:
    workload.validate()
    out = Destination.of(out)
    client = S3Client(settings)
    workload = workload.capped().with_threads(client.endpoint)
    check_write_resources(workload)
    for bucket in workload.buckets:
        client.check_region(bucket)
        if create_buckets:
            client.create_bucket(bucket)
        elif not client.bucket_exists(bucket):
            raise BucketNotFound(f"bucket {bucket!r} does not exist at {client.endpoint} (create it first)",
                                 s3_error="NoSuchBucket")
    recorder = Recorder("write", target={"kind": "s3", **settings.describe(), "endpoint": client.endpoint,
                                         "buckets": list(workload.buckets)},
                        workload=workload.describe(), out=out, buckets=[], keys=[], sizes=[],
                        engine_threads=workload.threads,
                        keep_rows=keep_rows)
    uploader = _uploader(client, workload, recorder)
    status = drive(recorder, [uploader], on_progress=on_progress)
    return _finish_write(recorder, uploader, status)


def _uploader(client: S3Client, workload: WriteWorkload, recorder: Recorder) -> Uploader:
    try:
        return Uploader(client, workload, recorder)
    except BaseException:  # refused before any traffic: leave no dataset behind
        recorder.discard()
        raise


def _finish_write(recorder: Recorder, uploader: Uploader, status: str) -> RunResult:
    recorder.stop_clock()
    extra = uploader.summary()
    if uploader.workload.verify and status == "complete":
        extra["verified"] = uploader.verify()
    elif uploader.workload.verify:
        extra["verified"] = f"not verified: the run {'failed' if status == 'failed' else 'was interrupted'}"
    else:
        extra["verified"] = "not verified (--verify reads every object back and compares)"
    if uploader.workload.cleanup:
        try:
            extra["cleaned_up"] = uploader.cleanup()
        except ObjperfError as exc:
            extra["cleaned_up"] = f"not cleaned up: {exc}"
    return recorder.finish(status, extra=extra)


def run_mixed(read_target: ResolvedTarget, read_workload: ReadWorkload, settings: S3Settings,
              write_workload: WriteWorkload, *, out: Destination | str | Path | None = None,
              on_progress: ProgressFn | None = None,
              create_buckets: bool = False, keep_rows: bool = True) -> RunResult:
    """Reads and writes at the same time, each with its own engine and concurrency; rows of both
    directions in one dataset, a summary per direction."""
    read_workload.validate()
    write_workload.validate()
    client = S3Client(settings)
    read_workload = settled(read_target, read_workload)
    write_workload = write_workload.with_threads(client.endpoint)
    out = Destination.of(out)
    if not read_workload.duration and not read_workload.requests and not read_workload.bytes:
        raise UsageError("a mixed run needs --duration (or a request or byte budget for the reads)")
    # Each engine's check counts only its own sockets; a mixed run holds both's.
    ensure_open_files(read_workload.concurrency + write_workload.concurrency,
                      extra=8 * (read_workload.threads + write_workload.threads),
                      what=f"reads and writes together ({read_workload.concurrency:,} + "
                           f"{write_workload.concurrency:,} in flight)")
    for bucket in write_workload.buckets:
        if create_buckets:
            client.create_bucket(bucket)
    recorder = Recorder("mixed", target={"read": read_target.describe(),
                                         "write": {"kind": "s3", **settings.describe(),
                                                   "buckets": list(write_workload.buckets)}},
                        workload={"read": read_workload.describe(), "write": write_workload.describe()}, out=out,
                        buckets=[o.bucket for o in read_target.objects], keys=[o.key for o in read_target.objects],
                        sizes=[o.size for o in read_target.objects],
                        engine_threads=read_workload.threads + write_workload.threads, keep_rows=keep_rows)
    try:
        reader = make_engine(read_target, read_workload, None)
    except BaseException:
        recorder.discard()
        raise
    try:
        uploader = _uploader(client, write_workload, recorder)
    except BaseException:
        reader.close()
        raise
    reads = ReadPart(reader, recorder, duration=read_workload.duration or 0.0,
                     renew_urls=UrlRenewal(read_target, [reader]))
    status = drive(recorder, [uploader, reads], on_progress=on_progress)
    return _finish_write(recorder, uploader, status)

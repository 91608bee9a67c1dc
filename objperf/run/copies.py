"""A copy run (``objperf copy``): the objects to copy found (a listing, or a HEAD a key named), the copies made
through the one drive loop (``objperf.run.copier.Copier``), then, with the clock stopped, each copy read back
against its source (``verify``) and the copies deleted (``cleanup``) when asked."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from objperf.core.errors import NotFound, ObjperfError, TargetError
from objperf.core.progress import phase
from objperf.dataset.destination import Destination
from objperf.plan.copies import CopyWorkload
from objperf.run.copier import Copier, Copy, Source
from objperf.run.drive import ProgressFn, drive
from objperf.run.recorder import Recorder, RunResult
from objperf.s3.client import S3Client, S3Settings
from objperf.s3.listing import LISTING_LIMIT

VERIFY_RANGE = 8 << 20  # a copy and its source are compared a range of this at a time
AFTER_RUN_AT_ONCE = 16  # reads (verify) and DELETEs (cleanup) in flight after the run, unmeasured


def copies_text(n: int) -> str:
    return f"{n:,} cop{'y' if n == 1 else 'ies'}"


def find_sources(client: S3Client, bucket: str, prefix: str, keys: list[str] | int | None = None
                 ) -> tuple[list[Source], dict]:
    """The objects to copy: every one under ``prefix`` (the first ``keys`` of them, for a number), the ``keys``
    named under it, or the one key ``prefix`` names; with what the summary says of the listing."""
    if isinstance(keys, list):
        return [Source(bucket, prefix + key, client.object_size(bucket, prefix + key)) for key in keys], {}
    if prefix and not prefix.endswith("/") and keys is None:
        return [Source(bucket, prefix, client.object_size(bucket, prefix))], {}
    listing = client.list_objects(bucket, prefix, limit=keys or LISTING_LIMIT)
    if not listing.keys:
        if not client.bucket_exists(bucket):
            raise client.missing_bucket(bucket)
        raise NotFound(f"no objects to copy under s3://{bucket}/{prefix}")
    if isinstance(keys, int) and len(listing.keys) < keys:
        raise TargetError(f"--keys {keys}: only {len(listing.keys)} objects under s3://{bucket}/{prefix}")
    notes = {"listing_capped": {"prefixes": [f"s3://{bucket}/{prefix}"], "keys": len(listing.keys)}} \
        if listing.capped and keys is None else {}
    return [Source(bucket, key, size) for key, size in listing.keys], notes


def run_copy(settings: S3Settings, workload: CopyWorkload, *, keys: list[str] | int | None = None,
             out: Destination | str | Path | None = None, on_progress: ProgressFn | None = None,
             create_bucket: bool = False, keep_rows: bool = True) -> RunResult:
    """Copy the objects ``workload`` names (and ``keys``: ``find_sources``) to its destination, server-side."""
    workload.validate()
    out = Destination.of(out)
    client = S3Client(settings)
    client.check_region(workload.bucket)
    to = workload.destination_bucket
    if to != workload.bucket:
        client.check_region(to)
    if create_bucket:
        client.create_bucket(to)
    elif to != workload.bucket and not client.bucket_exists(to):
        raise client.missing_bucket(to)
    with phase(f"listing s3://{workload.bucket}/{workload.prefix}…"):
        sources, notes = find_sources(client, workload.bucket, workload.prefix, keys)
    recorder = Recorder("copy", target={"kind": "s3", **settings.describe(), "endpoint": client.endpoint,
                                        "buckets": sorted({workload.bucket, to}),
                                        "source": f"s3://{workload.bucket}/{workload.prefix}",
                                        "objects": len(sources), "bytes": sum(s.size for s in sources)},
                        workload=workload.describe(), out=out, buckets=[], keys=[], sizes=[], keep_rows=keep_rows)
    recorder.manifest["workload"]["to_prefix"] = workload.destination_prefix(recorder.run_id)
    try:
        copier = Copier(client, workload, recorder, sources, own_keys=workload.to_prefix is None)
    except BaseException:
        recorder.discard()
        raise
    status = drive(recorder, [copier], on_progress=on_progress)
    recorder.stop_clock()
    extra = {**copier.summary(), **notes}
    if workload.verify and copier.copied:
        extra["verified"] = verify_copies(client, copier.copied)
    if workload.cleanup:
        extra["cleaned_up"] = delete_copies(client, copier.copied)
    return recorder.finish(status, extra=extra)


def _same(client: S3Client, copy: Copy) -> bool:
    """Whether ``copy`` reads back equal to its source, a range at a time."""
    size = copy.source.size
    if size == 0:
        return client.get_object(copy.bucket, copy.key, limit=0) == b""
    for offset in range(0, size, VERIFY_RANGE):
        span = f"bytes={offset}-{min(offset + VERIFY_RANGE, size) - 1}"
        length = min(VERIFY_RANGE, size - offset)
        mine = client.get_object(copy.bucket, copy.key, span, limit=length)
        if len(mine) != length or mine != client.get_object(copy.source.bucket, copy.source.key, span,
                                                            limit=length):
            return False
    return True


def verify_copies(client: S3Client, copies: list[Copy]) -> str:
    """Read every copy and its source back and compare them: ``ok: …`` or ``FAILED: …``."""
    bad: list[str] = []
    with phase(f"verifying {copies_text(len(copies))}: reading each and its source back…"):
        with ThreadPoolExecutor(AFTER_RUN_AT_ONCE, thread_name_prefix="objperf-verify") as pool:
            for copy, same in zip(copies, pool.map(lambda c: _checked(client, c), copies)):
                if same is not True:
                    bad.append(f"s3://{copy.bucket}/{copy.key}" + (f" ({same})" if same else ""))
    if bad:
        return f"FAILED: {len(bad)} of the {len(copies)} copies differ from their source ({', '.join(bad[:3])})"
    return f"ok: every copy ({len(copies)}) reads back equal to its source"


def _checked(client: S3Client, copy: Copy) -> bool | str:
    try:
        return _same(client, copy)
    except ObjperfError as exc:
        return str(exc)


def delete_copies(client: S3Client, copies: list[Copy]) -> int | str:
    """Delete the copies the run made (--cleanup), not measured: how many, or what stopped it."""
    places = sorted({(c.bucket, c.key) for c in copies})
    with phase(f"deleting the {copies_text(len(places))} made…"):
        with ThreadPoolExecutor(AFTER_RUN_AT_ONCE, thread_name_prefix="objperf-cleanup") as pool:
            failures = [f for f in pool.map(lambda place: _deleted(client, *place), places) if f]
    if failures:
        return f"{len(places) - len(failures):,} of the {len(places):,} copies deleted; the store refused the " \
               f"rest (the first: {failures[0]})"
    return len(places)


def _deleted(client: S3Client, bucket: str, key: str) -> str:
    try:
        client.delete_object(bucket, key)
    except ObjperfError as exc:
        return str(exc)
    return ""

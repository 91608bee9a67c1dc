"""The objects a run reads, written beforehand by objperf's own write path (many parts in flight),
not one part at a time through an SDK: seeding a 1 GiB object takes a fraction of the run it serves."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from objperf.errors import RunFailed
from objperf.plan.writes import MAX_PARTS, PAYLOAD_PERIOD, WriteWorkload, expected_bytes
from objperf.s3.client import S3Client
from objperf.s3.settings import S3Settings

SEED_PART = 16 << 20
SEED_CONCURRENCY = 16


def seed_objects(settings: S3Settings, buckets: Sequence[str], keys: Sequence[str], size: int, *,
                 create_buckets: bool = False, say: Callable[[str], None] | None = None, reseed: bool = False,
                 progress: Callable[[int], AbstractContextManager] | None = None) -> None:
    """Write ``keys`` of ``size`` bytes into every one of ``buckets``, unless all are there already with that
    size and objperf's content (a rerun, a server kept across runs; ``reseed`` writes them anyway); a seed
    that does not fully land raises (``KeyboardInterrupt`` if it was stopped).  ``progress(total_bytes)``
    makes the bar that shows the writing (``Invocation.seeding``)."""
    from objperf.run.writes import run_write
    from objperf.sizes import format_size

    if not reseed and all_there(settings, buckets, keys, size):
        if say:
            say(f"reusing {len(buckets) * len(keys)} object(s) of {format_size(size)} already seeded "
                "(same size and content; --reseed writes them again)")
        return
    part_size = max(SEED_PART, -(-size // MAX_PARTS))
    workload = WriteWorkload(object_size=size, part_size=part_size, concurrency=SEED_CONCURRENCY,
                             buckets=tuple(buckets), names=tuple(keys))
    t0 = time.monotonic()
    if say:
        say(f"seeding {len(buckets) * len(keys)} object(s) of {format_size(size)} ({size:,} bytes)")
    with progress(len(buckets) * len(keys) * size) if progress else contextlib.nullcontext() as bar:
        result = run_write(settings, workload, create_buckets=create_buckets, on_progress=bar)
    if result.status == "interrupted":
        raise KeyboardInterrupt
    written = result.summary.get("objects_written", 0)
    if result.status != "complete" or written != len(buckets) * len(keys):
        why = result.summary.get("error") or f"{written} of {len(buckets) * len(keys)} objects written"
        raise RunFailed(f"could not seed the objects to read: {why}")
    if say:
        say(f"seeded {written} object(s) of {format_size(size)} in {time.monotonic() - t0:.1f} s")


CONTENT_PROBE = 4096  # bytes compared at an object's start and end: objperf's payload, or not


def all_there(settings: S3Settings, buckets: Sequence[str], keys: Sequence[str], size: int) -> bool:
    """Every object there at ``size`` bytes, and holding what objperf's seed writes at its start and end (so
    another tool's object of the same size under the same name is written again, not measured)."""
    from objperf.errors import NotFound
    from objperf.plan.payload import payload

    client = S3Client(settings)
    period = max(min(size, PAYLOAD_PERIOD), 1)
    data = payload(period)
    try:
        for bucket in buckets:
            for key in keys:
                if client.object_size(bucket, key) != size:
                    return False
                for start in {0, max(0, size - CONTENT_PROBE)} if size else ():
                    length = min(CONTENT_PROBE, size - start)
                    got = client.get_object(bucket, key, f"bytes={start}-{start + length - 1}", limit=length)
                    if got != bytes(expected_bytes(data, size, start, length)):
                        return False
    except NotFound:
        return False
    return True

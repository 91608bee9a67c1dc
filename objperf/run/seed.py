"""The objects a run reads, written beforehand by objperf's own write path (many parts in flight),
not one part at a time through an SDK: seeding a 1 GiB object takes a fraction of the run it serves."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from objperf.errors import RunFailed
from objperf.plan.writes import MAX_PARTS, WriteWorkload
from objperf.s3.settings import S3Settings

SEED_PART = 16 << 20
SEED_CONCURRENCY = 16


def seed_objects(settings: S3Settings, buckets: Sequence[str], keys: Sequence[str], size: int, *,
                 create_buckets: bool = False, say: Callable[[str], None] | None = None) -> None:
    """Write ``keys`` of ``size`` bytes into every one of ``buckets``, unless all are there already at that
    size (a rerun, a server kept across runs); a seed that does not fully land raises
    (``KeyboardInterrupt`` if it was stopped)."""
    from objperf.run.writes import run_write
    from objperf.sizes import format_size

    if all_there(settings, buckets, keys, size):
        return
    part_size = max(SEED_PART, -(-size // MAX_PARTS))
    workload = WriteWorkload(object_size=size, part_size=part_size, concurrency=SEED_CONCURRENCY,
                             buckets=tuple(buckets), names=tuple(keys))
    t0 = time.monotonic()
    result = run_write(settings, workload, create_buckets=create_buckets)
    if result.status == "interrupted":
        raise KeyboardInterrupt
    written = result.summary.get("objects_written", 0)
    if result.status != "complete" or written != len(buckets) * len(keys):
        why = result.summary.get("error") or f"{written} of {len(buckets) * len(keys)} objects written"
        raise RunFailed(f"could not seed the objects to read: {why}")
    if say:
        say(f"seeded {written} object(s) of {format_size(size)} in {time.monotonic() - t0:.1f} s")


def all_there(settings: S3Settings, buckets: Sequence[str], keys: Sequence[str], size: int) -> bool:
    from objperf.errors import NotFound
    from objperf.s3.client import S3Client

    client = S3Client(settings)
    try:
        return all(client.object_size(bucket, key) == size for bucket in buckets for key in keys)
    except NotFound:
        return False

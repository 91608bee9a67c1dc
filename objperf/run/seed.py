"""The objects a run reads, written beforehand by objperf's own write path (many parts in flight),
not one part at a time through an SDK: seeding a 1 GiB object takes a fraction of the run it serves."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from objperf.core.errors import RunFailed, UsageError
from objperf.plan.writes import MAX_PARTS, PAYLOAD_PERIOD, WriteWorkload, expected_bytes
from objperf.s3.client import S3Client
from objperf.s3.settings import S3Settings

SEED_PART = 16 << 20
SEED_CONCURRENCY = 16


Place = tuple[str, str]  # (bucket, key)


def seed_objects(settings: S3Settings, buckets: Sequence[str], keys: Sequence[str], size: int, *,
                 create_buckets: bool = False, say: Callable[[str], None] | None = None, reseed: bool = False,
                 progress: Callable[[int], AbstractContextManager] | None = None, room: Path | None = None) -> None:
    """Write ``keys`` of ``size`` bytes into every one of ``buckets`` (``seed_places`` of each bucket × key)."""
    seed_places(settings, [(bucket, key) for bucket in buckets for key in keys], size, create_buckets=create_buckets,
                say=say, reseed=reseed, progress=progress, room=room)


def seed_places(settings: S3Settings, places: Sequence[Place], size: int, *, create_buckets: bool = False,
                say: Callable[[str], None] | None = None, reseed: bool = False,
                progress: Callable[[int], AbstractContextManager] | None = None, room: Path | None = None) -> None:
    """Write an object of ``size`` bytes at each of ``places`` (bucket, key), unless it is there already with that
    size and objperf's content (a rerun, a server kept across runs; ``reseed`` writes them anyway): one line
    and one bar (``progress(total_bytes)``, ``Invocation.seeding``) over all of them, however many.  A seed
    that does not fully land raises (``KeyboardInterrupt`` if it was stopped).  ``room``: where the store keeps
    what it is written (the embedded server's data), refused in one line first if its disk cannot hold it."""
    from objperf.core.sizes import format_size

    blocks = [] if not places else cartesian_blocks(places)
    todo = [block for block in blocks if reseed or not all_there(settings, *block, size)]
    reused = sum(len(b) * len(k) for b, k in blocks) - sum(len(b) * len(k) for b, k in todo)
    if reused and say:
        say(f"reusing {reused} object(s) of {format_size(size)} already seeded "
            "(same size and content; --reseed writes them again)")
    if not todo:
        return
    count = sum(len(buckets) * len(keys) for buckets, keys in todo)
    if room is not None:
        check_room(room, count * size, f"seeding {count} object(s) of {format_size(size)}")
    t0 = time.monotonic()
    if say:
        say(f"seeding {count} object(s) of {format_size(size)} ({size:,} bytes)")
    with progress(count * size) if progress else contextlib.nullcontext() as bar:
        done = Totals(bar)
        for buckets, keys in todo:
            summary = _seed_block(settings, buckets, keys, size, create_buckets=create_buckets,
                                  on_progress=done.step())
            done.ended(summary.get("wall_s") or 0.0, len(buckets) * len(keys) * size, summary.get("requests", 0))
    if say:
        say(f"seeded {count} object(s) of {format_size(size)} in {time.monotonic() - t0:.1f} s")


def cartesian_blocks(places: Sequence[Place]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """``places`` as few (buckets, keys) blocks as can be, each every bucket × every key (one write run each):
    the buckets that are to hold the same keys together, in the order they came."""
    keys_of: dict[str, list[str]] = {}
    for bucket, key in dict.fromkeys(places):  # each place once
        keys_of.setdefault(bucket, []).append(key)
    blocks: dict[tuple[str, ...], list[str]] = {}
    for bucket, keys in keys_of.items():
        blocks.setdefault(tuple(keys), []).append(bucket)
    return [(tuple(buckets), keys) for keys, buckets in blocks.items()]


class Totals:
    """One bar over several write runs: each run's progress (which starts again from 0) added to the runs before."""

    def __init__(self, bar):
        self.bar = bar
        self.before = (0.0, 0, 0, 0)
        self.last = self.before

    def step(self):
        self.before = self.last
        if self.bar is None:
            return None

        def on_progress(elapsed: float, nbytes: int, nrequests: int, nerrors: int) -> None:
            self.last = tuple(a + b for a, b in zip(self.before, (elapsed, nbytes, nrequests, nerrors)))
            self.bar(*self.last)

        return on_progress

    def ended(self, wall_s: float, nbytes: int, nrequests: int) -> None:
        """A run's last figures (its bar full, whenever its progress was last told)."""
        self.last = tuple(a + b for a, b in zip(self.before, (wall_s, nbytes, nrequests, 0)))
        if self.bar is not None:
            self.bar(*self.last)


def _seed_block(settings: S3Settings, buckets: Sequence[str], keys: Sequence[str], size: int, *,
                create_buckets: bool, on_progress) -> dict:
    from objperf.run.writes import run_write

    part_size = max(SEED_PART, -(-size // MAX_PARTS))
    workload = WriteWorkload(object_size=size, part_size=part_size, concurrency=SEED_CONCURRENCY,
                             buckets=tuple(buckets), names=tuple(keys))
    result = run_write(settings, workload, create_buckets=create_buckets, on_progress=on_progress)
    if result.status == "interrupted":
        raise KeyboardInterrupt
    written = result.summary.get("objects_written", 0)
    if result.status != "complete" or written != len(buckets) * len(keys):
        why = result.summary.get("error") or f"{written} of {len(buckets) * len(keys)} objects written"
        raise RunFailed(f"could not seed the objects to read: {why}")
    return result.summary


# SeaweedFS's volume servers stop taking writes when their disk's free space falls under 1 % of it (their
# -minFreeSpace); what they write besides the objects (indexes, logs) takes a little more.
MIN_FREE_SHARE = 0.01
OVERHEAD = 64 << 20


def check_room(where: str | Path, needed: int, what: str) -> None:
    """Refuse, in one line and before a byte is written, what the disk holding ``where`` cannot take."""
    import shutil

    from objperf.core.sizes import format_size

    usage = shutil.disk_usage(where)
    free = usage.free - int(usage.total * MIN_FREE_SHARE) - OVERHEAD
    if needed > free:
        raise UsageError(f"{what} needs {format_size(needed)} on the disk of {where} (the embedded server's data), "
                         f"which has {format_size(max(usage.free, 0))} free: give a smaller --object-size (or "
                         "fewer --keys), or the URL of a store")


def embedded_data_dir(server=None) -> Path:
    """Where the embedded server keeps its data: the given server's directory, else where a new one goes."""
    import tempfile

    return Path(server.workdir) if server is not None else Path(tempfile.gettempdir())


CONTENT_PROBE = 4096  # bytes compared at an object's start and end: objperf's payload, or not


def all_there(settings: S3Settings, buckets: Sequence[str], keys: Sequence[str], size: int) -> bool:
    """Every object there at ``size`` bytes, and holding what objperf's seed writes at its start and end (so
    another tool's object of the same size under the same name is written again, not measured)."""
    from objperf._engine.payload import payload
    from objperf.core.errors import NotFound

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

"""Write workloads: what a write run sends — object and part sizes, keys and
buckets, budget, connection — checked once; the keys it names; the one
incompressible payload every object is cut from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from objperf.core.errors import UsageError
from objperf.core.steady import CAP_S, TOLERANCE_PCT, WINDOW_S
from objperf.plan.bounds import MAX_KEYS, check_at_most, check_run_numbers
from objperf.plan.checksums import WriteChecksum
from objperf.plan.reads import check_connect_to, check_interface, spread_entries
from objperf.plan.sizes import DEFAULT_SEED, MAX_OBJECT, SizeDistribution, SizeStream
from objperf.plan.threads import engine_threads, server_is_local
from objperf.s3.client import URL_LIFETIME_S, check_url_lifetime

MIN_PART = 5 << 20
MAX_PART = 5 << 30
MAX_PARTS = 10_000
# Bodies longer than this repeat the payload.  16 MiB is past the window of the compressors stores
# use (S2, Snappy, gzip, zstd up to level 19) and cheap to make: fresh memory costs CPU to fault in
# (about 1 ms per MiB on a VM).  A longer period buys nothing: stores that dedupe do it per block.
PAYLOAD_PERIOD = 16 << 20


@dataclass
class WriteWorkload:
    object_size: int = 64 << 20  # every object's size, unless ``sizes`` draws them
    sizes: SizeDistribution | None = None  # each object's size drawn from this (--sizes)
    seed: int = DEFAULT_SEED  # of the sizes drawn
    stream: int = 0  # which of the seed's streams: a cluster's host draws its own (on_host)
    part_size: int = 32 << 20  # objects larger than this go up as multipart uploads
    concurrency: int = 16
    threads: int | None = None  # None: settled per run by plan.threads (with_threads)
    keys: int = 1
    buckets: tuple[str, ...] = ()
    prefix: str = ""
    names: tuple[str, ...] = ()  # write exactly these keys (under prefix), in every bucket, instead of run-named ones
    key_prefixes: tuple[str, ...] = ()  # run-named keys dealt round robin over these prefixes (under prefix)
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
    keepalive: bool = True  # False: a new connection (and TLS handshake) for every request
    url_lifetime: int = URL_LIFETIME_S  # presigned URLs are signed afresh before a third of it has passed
    max_rate: int | None = None  # bytes a second in all, shared by the slots
    until_steady: bool = False  # end once the throughput has held (objperf.analysis.steady); the budget still bounds
    steady_window: float = WINDOW_S  # steady: this long in a row, each sample within steady_tolerance % of the mean
    steady_tolerance: float = TOLERANCE_PCT
    checksum: str = "none"  # each request's checksum (objperf.core.checksums.NAMES)
    checksum_trailer: bool = False  # sent after the body (aws-chunked) rather than in a header up front

    def capped(self) -> WriteWorkload:
        """This workload, bounded: a run --until-steady with no duration or object budget (each key once would
        rarely settle) writes for ``core.steady.CAP_S`` at most, if its throughput never holds."""
        if self.until_steady and not (self.duration or self.requests):
            return replace(self, duration=CAP_S)
        return self

    @property
    def distribution(self) -> SizeDistribution:
        """What each object's size is drawn from: ``sizes``, else ``object_size`` every time."""
        return self.sizes or SizeDistribution.fixed(self.object_size)

    @property
    def largest(self) -> int:
        return self.distribution.largest

    @property
    def multipart(self) -> bool:
        """Whether an object may go up as a multipart upload (the largest one does)."""
        return self.largest > self.part_size

    def parts_of(self, size: int) -> int:
        """The requests an object of ``size`` bytes goes up in: its parts, or one PUT."""
        return max(1, -(-size // self.part_size)) if size > self.part_size else 1

    @property
    def parts_per_object(self) -> int:
        """The parts of the largest object."""
        return self.parts_of(self.largest)

    def size_stream(self) -> SizeStream:
        """The sizes of this workload's objects, in the order they are written: the same every time."""
        return SizeStream(self.distribution, self.seed, self.stream)

    def validate(self) -> None:
        if self.concurrency < 1 or (self.threads is not None and self.threads < 1) or self.keys < 1:
            raise UsageError("concurrency, threads and keys must be at least 1")
        check_run_numbers(self)
        check_at_most("keys", self.keys, MAX_KEYS)
        if not self.buckets:
            raise UsageError("a write run needs at least one bucket")
        if self.object_size < 0:
            raise UsageError("object size must not be negative")
        check_at_most("object size", self.largest, MAX_OBJECT)
        if not 0 <= self.seed < 1 << 63:
            raise UsageError("seed must be a whole number from 0 to 2**63 - 1")
        if self.multipart:
            if not MIN_PART <= self.part_size <= MAX_PART:
                raise UsageError("part size must be between 5 MiB and 5 GiB (S3's limits)")
            if self.parts_per_object > MAX_PARTS:
                raise UsageError(f"{self.parts_per_object} parts per object: S3 allows at most {MAX_PARTS}")
        elif self.largest > MAX_PART:
            raise UsageError("a single PUT carries at most 5 GiB: give a smaller --part-size to use multipart")
        for name in ("duration", "requests"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise UsageError(f"{name} must be positive")
        if any(not name or name.endswith("/") for name in self.names):
            raise UsageError("an object name must not be empty or end with '/'")
        if self.names and self.key_prefixes:
            raise UsageError("named keys are written where they are named: give names or key prefixes, not both")
        if self.ip not in ("any", "4", "6") or self.http_version not in ("1.1", "2"):
            raise UsageError("ip must be 4, 6 or any; http version 1.1 or 2")
        check_connect_to(self.connect_to)
        spread_entries(self.spread_to)
        check_interface(self.interface)
        check_url_lifetime(self.url_lifetime)
        WriteChecksum.of(self.checksum, self.checksum_trailer)  # an unknown or missing one, before any request

    def with_threads(self, endpoint: str) -> WriteWorkload:
        """This workload with its engine threads settled for the server at ``endpoint``: the ones asked for,
        else ``plan.threads.engine_threads``'s choice."""
        if self.threads:
            return self
        request = min(self.part_size, self.distribution.quantile(0.5))  # the typical request
        local = server_is_local([endpoint], self.connect_to, self.spread_to)
        return replace(self, threads=engine_threads(self.concurrency, request, local))

    def describe(self) -> dict:
        return {**asdict(self), "buckets": list(self.buckets), "connect_to": list(self.connect_to),
                "spread_to": list(self.spread_to), "names": list(self.names), "key_prefixes": list(self.key_prefixes),
                "sizes": str(self.sizes) if self.sizes else None}


def host_prefix(prefix: str, index: int) -> str:
    """Where host ``index`` of a cluster writes: under its own prefix, so no two hosts' keys can collide."""
    return f"{prefix}host{index:02d}/"


def on_host(workload: WriteWorkload, index: int | None) -> WriteWorkload:
    """``workload`` as host ``index`` runs it (unchanged on a single host)."""
    if index is None:
        return workload
    return replace(workload, prefix=host_prefix(workload.prefix, index), stream=index + 1)


def object_key(prefix: str, run_id: str, index: int) -> str:
    """Keys are named after the run, so cleanup can never touch an object the run did not write."""
    return f"{prefix}objperf-{run_id[:8]}-{index:05d}"


def own_key_starts(workload: WriteWorkload, run_id: str) -> list[str]:
    """What every key a run names of itself starts with (one per key prefix): the places to list for what it
    left.  Keys the workload names are not the run's alone, and have none."""
    if workload.names:
        return []
    start = object_key("", run_id, 0).removesuffix("00000")
    return [workload.prefix + sub + start for sub in workload.key_prefixes or ("",)]


class WriteTargets(Sequence):
    """The (bucket, key) pairs a run writes to, in turn: the named keys in every bucket, else run-named keys
    dealt round robin over the buckets (and, in each, over the key prefixes).  Each is named when asked for:
    ``--keys`` 10**8 holds none."""

    def __init__(self, workload: WriteWorkload, run_id: str):
        self.workload, self.run_id = workload, run_id
        buckets = len(workload.buckets)
        self._count = buckets * len(workload.names) if workload.names else max(workload.keys, buckets)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._count))]
        if not -self._count <= i < self._count:
            raise IndexError(i)
        i %= self._count
        w = self.workload
        if w.names:
            return w.buckets[i // len(w.names)], w.prefix + w.names[i % len(w.names)]
        sub = w.key_prefixes[i // len(w.buckets) % len(w.key_prefixes)] if w.key_prefixes else ""
        return w.buckets[i % len(w.buckets)], object_key(w.prefix + sub, self.run_id, i)


def write_targets(workload: WriteWorkload, run_id: str) -> WriteTargets:
    return WriteTargets(workload, run_id)


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



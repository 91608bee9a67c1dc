"""The published benchmark's experiments as named studies.  Each builds a list of
sweep steps from a ``StudyContext`` (where, how big, quick or full); the sweep
runs them and assembles one dataset per study."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from objperf.errors import UsageError
from objperf.plan.payload import payload_parts
from objperf.plan.reads import ReadWorkload
from objperf.plan.writes import WriteWorkload
from objperf.run.reads import run_read, run_reads_together
from objperf.run.writes import run_mixed, run_write
from objperf.s3.client import URL_LIFETIME_S, S3Client, S3Settings
from objperf.s3.target import ResolvedTarget, resolve_read_target
from objperf.studies.sweep import Step

MIB = 1 << 20


@dataclass
class StudyContext:
    """Where a study runs and at what size.  ``prefix`` is the study's workspace in ``bucket``."""

    settings: S3Settings
    bucket: str
    prefix: str
    quick: bool
    duration: float
    object_size: int
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    buckets: list[str] = field(default_factory=list)  # a second bucket for bucket-fanout
    other_url: str | None = None  # an unrelated HTTP stream for ceiling-proof
    replicas: int = 8
    replica_buckets: bool = False  # spread hot-object replicas over buckets (a per-bucket throttle)
    server: object | None = None  # the embedded LocalSeaweed, when there is one
    url_lifetime: int = URL_LIFETIME_S
    _client: S3Client | None = None

    @property
    def client(self) -> S3Client:
        if self._client is None:
            self._client = S3Client(self.settings)
        return self._client

    @property
    def range_size(self) -> int:
        return 1 * MIB if self.quick else 8 * MIB

    @property
    def part_size(self) -> int:
        return 5 * MIB if self.quick else 32 * MIB

    def key(self, *parts: str) -> str:
        return self.prefix + "/".join(parts)

    def ensure_object(self, bucket: str, key: str, size: int) -> None:
        """Seed ``key`` unless an object of that size is already there (reruns reuse it)."""
        try:
            if self.client.object_size(bucket, key) == size:
                return
        except Exception:
            pass
        self.client.put_large_object(bucket, key, payload_parts(size, part_size=max(self.part_size, 8 * MIB)))

    def reads(self, **kw) -> ReadWorkload:
        return ReadWorkload(**{"concurrency": 16, "threads": self.threads, "range_size": self.range_size,
                               "duration": self.duration, **kw})

    def writes(self, **kw) -> WriteWorkload:
        return WriteWorkload(**{"object_size": self.object_size, "part_size": self.part_size,
                                "url_lifetime": self.url_lifetime,
                                "concurrency": 16, "threads": self.threads, "buckets": (self.bucket,),
                                "duration": self.duration, **kw})

    def read_step(self, values: dict, target: Callable[[], ResolvedTarget], **workload) -> Step:
        return Step(values, lambda out: run_read(target(), self.reads(**workload), out=out))

    def write_step(self, values: dict, **workload) -> Step:
        return Step(values, lambda out: run_write(self.settings, self.writes(**workload), out=out))

    def target(self, keys: list[str] | int, *, prefix: str = "", buckets: list[str] | None = None,
               settings: S3Settings | None = None) -> Callable[[], ResolvedTarget]:
        return lambda: resolve_read_target(f"s3://{(buckets or [self.bucket])[0]}/{prefix}", settings or self.settings,
                                           keys=keys, buckets=buckets, url_lifetime=self.url_lifetime)


def _q(ctx: StudyContext, quick, full):
    return quick if ctx.quick else full


# -- the studies ---------------------------------------------------------------------------


def read_concurrency(ctx: StudyContext) -> list[Step]:
    """GET throughput against concurrency."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    grid = _q(ctx, [1, 4, 16], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
    return [ctx.read_step({"concurrency": c}, ctx.target([key]), concurrency=c) for c in grid]


def write_part_size(ctx: StudyContext) -> list[Step]:
    """PUT throughput against concurrency for several part sizes."""
    parts = _q(ctx, [5 * MIB, 8 * MIB], [8 * MIB, 32 * MIB, 128 * MIB])
    grid = _q(ctx, [2, 4], [16, 64, 128, 192, 256])
    size = _q(ctx, 16 * MIB, max(ctx.object_size, 1 << 30))
    return [ctx.write_step({"part_size": p, "concurrency": c}, object_size=size, part_size=p, concurrency=c,
                           prefix=ctx.key("write-part-size/"), cleanup=True)
            for p in parts for c in grid]


def key_fanout(ctx: StudyContext) -> list[Step]:
    """One key against many, for writes and reads."""
    steps = []
    size = _q(ctx, 8 * MIB, 256 * MIB)
    for keys in _q(ctx, [1, 4], [1, 32]):
        prefix = ctx.key(f"key-fanout/k{keys}/")
        steps.append(ctx.write_step({"direction": "write", "keys": keys}, keys=keys, object_size=size,
                                    prefix=prefix))

        def target(keys=keys, prefix=prefix):
            have = len(ctx.client.list_keys(ctx.bucket, prefix))
            for i in range(have, keys):  # writes cut short by the clock leave keys unwritten
                ctx.ensure_object(ctx.bucket, f"{prefix}fill-{i:05d}", size)
            return ctx.target(keys, prefix=prefix)()

        steps.append(ctx.read_step({"direction": "read", "keys": keys}, target))
    return steps


def bucket_fanout(ctx: StudyContext) -> list[Step]:
    """One bucket against two, for writes and reads."""
    if len(ctx.buckets) < 2:
        raise UsageError("bucket-fanout needs two buckets: --buckets b1,b2")
    key = ctx.key("bucket-fanout/read-object")
    size = _q(ctx, 8 * MIB, 256 * MIB)
    for bucket in ctx.buckets[:2]:
        ctx.ensure_object(bucket, key, size)
    steps = []
    for count in (1, 2):
        chosen = ctx.buckets[:count]
        steps.append(ctx.write_step({"direction": "write", "buckets": count}, buckets=tuple(chosen),
                                    keys=_q(ctx, 2, 32), object_size=size, prefix=ctx.key("bucket-fanout/w/"),
                                    cleanup=True))
        steps.append(ctx.read_step({"direction": "read", "buckets": count}, ctx.target([key], buckets=chosen)))
    return steps


def ip_family(ctx: StudyContext) -> list[Step]:
    """IPv4 against IPv6, once per address the endpoint's name resolves to."""
    endpoint = ctx.client.endpoint
    parts = urlsplit(endpoint)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    if host == "localhost":  # libcurl answers "localhost" itself, with both loopback addresses
        addresses = [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
    else:
        addresses = sorted({(info[0], info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                            if info[0] in (socket.AF_INET, socket.AF_INET6)})
    if not addresses:
        raise UsageError(f"{host} resolves to no IPv4 or IPv6 address")
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    steps = []
    for family, address in addresses:
        version = "6" if family == socket.AF_INET6 else "4"
        pinned = f"[{address}]" if version == "6" else address
        steps.append(ctx.read_step({"family": f"IPv{version}", "address": address}, ctx.target([key]),
                                   ip=version, connect_to=(f"{host}:{port}:{pinned}:{port}",)))
    return steps


def mixed(ctx: StudyContext) -> list[Step]:
    """Reads alone, writes alone, both together."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    writes = {"object_size": _q(ctx, 8 * MIB, 256 * MIB), "prefix": ctx.key("mixed/"), "cleanup": True}

    def both(out):
        return run_mixed(ctx.target([key])(), ctx.reads(), ctx.settings, ctx.writes(**writes), out=out)

    return [ctx.read_step({"mode": "reads"}, ctx.target([key])),
            ctx.write_step({"mode": "writes"}, **writes),
            Step({"mode": "both"}, both)]


def sustained(ctx: StudyContext) -> list[Step]:
    """Minutes of reads: throughput per second, drift and errors over time."""
    from objperf.analysis.stats import drift

    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    step = ctx.read_step({"minutes": round(ctx.duration / 60, 3)}, ctx.target([key]),
                         concurrency=_q(ctx, 8, 256))
    step.measure = lambda rows, summary: drift(rows)
    return [step]


def ttfb_size(ctx: StudyContext) -> list[Step]:
    """TTFB and throughput against object size: where a store is request-rate bound."""
    sizes = _q(ctx, [1 << 10, 64 << 10, 1 * MIB, 8 * MIB],
               [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB])
    steps = []
    for size in sizes:
        key = ctx.key(f"ttfb-size/{size}")
        ctx.ensure_object(ctx.bucket, key, size)
        steps.append(ctx.read_step({"object_size": size}, ctx.target([key]), range_size=size,
                                   concurrency=_q(ctx, 4, 64)))
    return steps


def hot_object(ctx: StudyContext) -> list[Step]:
    """Many concurrent requests on the same range of one object; then the same over K replicas."""
    size = _q(ctx, 256 << 10, 1 * MIB)
    key = ctx.key("hot-object/object")
    replicas = max(2, ctx.replicas)
    if ctx.replica_buckets:
        # A per-bucket throttle (the local server's) is cured by replicas in other buckets.
        buckets = [ctx.bucket] + [f"{ctx.bucket}-hot{i}" for i in range(1, replicas)]
        for bucket in buckets:
            ctx.client.create_bucket(bucket)
            ctx.ensure_object(bucket, key, size)
        spread = ctx.target([key], buckets=buckets)
    else:
        # A per-object throttle (R2's) is cured by replicas under other keys of the same bucket.
        names = [key] + [ctx.key(f"hot-object/replica-{i}") for i in range(1, replicas)]
        for name in names:
            ctx.ensure_object(ctx.bucket, name, size)
        spread = ctx.target(names)
    single = ctx.target([key])
    grid = _q(ctx, [16, 48], [16, 32, 64, 128, 256, 512, 1024, 2048])
    steps = []
    for variant, target in (("single", single), (f"{replicas} replicas", spread)):
        for c in grid:
            steps.append(ctx.read_step({"variant": variant, "concurrency": c}, target, concurrency=c,
                                       range_size=size, duration=_q(ctx, 1.5, ctx.duration)))
    return steps


def ceiling_proof(ctx: StudyContext) -> list[Step]:
    """The store read alone, then beside an unrelated HTTP stream: if the NIC carries more in the
    second step, the box could take more than the store gave."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    other_url = ctx.other_url
    if not other_url:
        other_key = ctx.key("ceiling-proof/other-stream")
        ctx.ensure_object(ctx.bucket, other_key, ctx.object_size)
        other_url = ctx.client.presign(ctx.bucket, other_key, expires=int(ctx.duration * 2 + 86400))

    def together(out):
        store = ctx.target([key])()
        other = resolve_read_target(other_url, ctx.settings)
        return run_reads_together([(store, ctx.reads()), (other, ctx.reads())], out=out)

    return [ctx.read_step({"streams": "store alone"}, ctx.target([key])),
            Step({"streams": "store + other HTTP"}, together)]


def client_cpu(ctx: StudyContext) -> list[Step]:
    """The same read at increasing engine thread counts: where the client stops being a limit."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    cores = os.cpu_count() or 1
    grid = _q(ctx, [1, 2], sorted({1, 2, 4, 8, 16, cores, 2 * cores}))
    return [ctx.read_step({"threads": t}, ctx.target([key]), threads=t, concurrency=_q(ctx, 8, 256))
            for t in grid]


STUDIES: dict[str, Callable[[StudyContext], list[Step]]] = {
    "read-concurrency": read_concurrency,
    "write-part-size": write_part_size,
    "key-fanout": key_fanout,
    "bucket-fanout": bucket_fanout,
    "ip-family": ip_family,
    "mixed": mixed,
    "sustained": sustained,
    "ttfb-size": ttfb_size,
    "hot-object": hot_object,
    "ceiling-proof": ceiling_proof,
    "client-cpu": client_cpu,
}

"""The published benchmark's experiments as named studies.  Each builds a list of
sweep steps from a ``StudyContext`` (where, how big, quick or full); the sweep
runs them and assembles one dataset per study."""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from urllib.parse import urlsplit

from objperf.cluster.writes import abort_lost
from objperf.core.errors import UsageError
from objperf.plan.bounds import MAX_KEYS
from objperf.run.jobs import ReadSource, mixed_job, read_job, reads_together_job, write_job
from objperf.run.seed import seed_places
from objperf.studies.context import StudyContext
from objperf.studies.sweep import Step

MIB = 1 << 20


def _q(ctx: StudyContext, quick, full):
    return quick if ctx.quick else full


# -- the studies ---------------------------------------------------------------------------


def read_concurrency(ctx: StudyContext) -> list[Step]:
    """How does GET throughput grow with the requests in flight?
    GET throughput against concurrency."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    grid = ctx.grid("read-concurrency", "concurrency")
    return [ctx.read_step({"concurrency": c}, ctx.target([key]), concurrency=c) for c in grid]


def write_part_size(ctx: StudyContext) -> list[Step]:
    """Which part size writes fastest, at which concurrency?
    PUT throughput against concurrency for the article's three part sizes (8, 32 and 128 MiB)."""
    parts = ctx.grid("write-part-size", "part_size")
    grid = ctx.grid("write-part-size", "concurrency")

    def size(part: int) -> int:  # objects of several parts each, whatever the part
        if ctx.object_size_given and ctx.object_size > part:
            return ctx.object_size
        return _q(ctx, 2 * part, max(ctx.object_size, 8 * part))

    return [ctx.write_step({"part_size": p, "concurrency": c}, object_size=size(p), part_size=p, concurrency=c,
                           prefix=ctx.key("write-part-size/"), cleanup=True)
            for p in parts for c in grid]


def key_fanout(ctx: StudyContext) -> list[Step]:
    """Does spreading the load over many keys beat one key?
    One key against many, for writes and reads."""
    steps = []
    size = _q(ctx, 8 * MIB, 256 * MIB)
    for keys in ctx.grid("key-fanout", "keys"):
        prefix = ctx.key(f"key-fanout/k{keys}/")
        steps.append(ctx.write_step({"direction": "write", "keys": keys}, keys=keys, object_size=size,
                                    prefix=prefix))

        def fill(keys=keys, prefix=prefix):  # writes cut short by the clock leave keys unwritten
            have = len(ctx.client.list_keys(ctx.bucket, prefix))
            for i in range(have, keys):
                ctx.ensure_object(ctx.bucket, f"{prefix}fill-{i:05d}", size)

        steps.append(ctx.read_step({"direction": "read", "keys": keys}, ctx.target(keys, prefix=prefix),
                                   prepare=fill))
    return steps


def bucket_fanout(ctx: StudyContext) -> list[Step]:
    """Does a second bucket add throughput?
    One bucket against two, for writes and reads.  Each bucket gets the full load, as the article ran a
    loader per bucket: with two buckets, twice the requests in flight (the steps table's concurrency)."""
    counts = ctx.grid("bucket-fanout", "buckets")
    if len(ctx.buckets) < max(counts):
        raise UsageError(f"bucket-fanout needs {max(counts)} buckets: --buckets b1,b2")
    key = ctx.key("bucket-fanout/read-object")
    size = _q(ctx, 8 * MIB, 256 * MIB)
    for bucket in ctx.buckets[:max(counts)]:
        ctx.ensure_object(bucket, key, size)
    steps = []
    for count in counts:
        chosen = ctx.buckets[:count]
        writers, readers = ctx.write_concurrency * count, ctx.read_concurrency * count
        steps.append(ctx.write_step({"direction": "write", "buckets": count, "concurrency": writers},
                                    buckets=tuple(chosen), keys=_q(ctx, 2, 32) * count, object_size=size,
                                    prefix=ctx.key("bucket-fanout/w/"), cleanup=True, concurrency=writers))
        steps.append(ctx.read_step({"direction": "read", "buckets": count, "concurrency": readers},
                                   ctx.target([key], buckets=chosen), concurrency=readers))
    return steps


def ip_family(ctx: StudyContext) -> list[Step]:
    """Is IPv4 faster than IPv6 to the same store?
    IPv4 against IPv6, once per address the endpoint's name resolves to."""
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
    """How much do reads and writes take from each other when they run together?
    Reads alone, writes alone, both together."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    writes = {"object_size": _q(ctx, 8 * MIB, 256 * MIB), "prefix": ctx.key("mixed/"), "cleanup": True,
              **_q(ctx, {"concurrency": 4}, {})}  # quick: few enough parts in flight that some are acknowledged

    both = ctx.step({"mode": "both"}, lambda: partial(mixed_job, ctx.target([key]), ctx.reads(),
                                                       ctx.writes(**writes), False),
                    kind="mixed", on_lost=lambda: partial(abort_lost, ctx.settings, ctx.writes(**writes)))
    return [ctx.read_step({"mode": "reads"}, ctx.target([key])), ctx.write_step({"mode": "writes"}, **writes), both]


def sustained(ctx: StudyContext) -> list[Step]:
    """Does throughput hold over minutes, or drift?
    Minutes of reads: throughput per second, drift and errors over time."""
    from objperf.analysis.stats import drift

    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    step = ctx.read_step({"minutes": round(ctx.duration / 60, 3)}, ctx.target([key]),
                         concurrency=_q(ctx, 8, 256))
    bin_s = min(1.0, ctx.duration / 40)  # a trend needs TREND_MIN_BINS full bins: a quick run's are short

    def measure(rows, summary):
        return {**drift(rows, bin_s=bin_s), "drift_bin_s": bin_s}

    step.measure = measure
    return [step]


def ttfb_size(ctx: StudyContext) -> list[Step]:
    """Below which object size is a store bound by requests, not bandwidth?
    TTFB and throughput against object size: where a store is request-rate bound."""
    sizes = ctx.grid("ttfb-size", "object_size")
    steps = []
    for size in sizes:
        key = ctx.key(f"ttfb-size/{size}")
        ctx.ensure_object(ctx.bucket, key, size)
        steps.append(ctx.read_step({"object_size": size}, ctx.target([key]), range_size=size,
                                   concurrency=_q(ctx, 4, 64)))
    return steps


def rate_sweep(ctx: StudyContext) -> list[Step]:
    """At which request rate does the store saturate?
    Requests started at fixed rates (open loop, ``--rate``) on a small object: the lowest rate at which the
    first failures come, the rate is no longer achieved, or latency from the schedule bends up is where the
    store (or the path to it) saturates (``objperf.analysis.stats.saturation_rate``)."""
    from objperf.analysis.stats import open_loop_step

    size = ctx.object_size if ctx.object_size_given else _q(ctx, 4 << 10, 64 << 10)
    key = ctx.key(f"rate-sweep/{size}")
    ctx.ensure_object(ctx.bucket, key, size)
    rates = ctx.grid("rate-sweep", "rate")
    return [ctx.read_step({"rate": r}, ctx.target([key]), range_size=size, rate=float(r), measure=open_loop_step)
            for r in rates]


REQUEST_RATE_OPS = ("GET", "HEAD", "PUT", "DELETE")
OBJECTS_A_PREFIX = 8  # small objects each prefix holds for the GETs and HEADs
SMALL_OBJECT_MAX = 1 << 20


def request_rate(ctx: StudyContext) -> list[Step]:
    """How many small-object requests a second does the store take, and where does it answer 503 SlowDown?
    GET, HEAD, PUT and DELETE of small objects (4 KiB) against concurrency and against the number of prefixes
    the keys are spread over, beside the per-prefix rates AWS publishes for S3 (5,500 GET/HEAD and 3,500
    PUT/COPY/POST/DELETE a second, each partitioned prefix).  GETs and HEADs take turns over 8 keys in each
    prefix for the step's duration; every PUT writes a new key, the prefixes taking turns, and the step deletes
    them when it ends; a DELETE step deletes, once each, objects
    seeded for it just before (25 a slot with --quick, 100 without), however long that takes."""
    from objperf.analysis.stats import request_rate_step

    size = ctx.object_size if ctx.object_size_given else 4 << 10
    if size > SMALL_OBJECT_MAX:
        raise UsageError(f"request-rate measures small objects: --object-size at most 1MiB (default 4KiB), not "
                         f"{ctx.object_size:,} bytes")
    concurrencies, prefix_counts = ctx.grid("request-rate", "concurrency"), ctx.grid("request-rate", "prefixes")
    base = ctx.key("request-rate/")
    room = getattr(ctx.server, "workdir", None)

    def names(prefixes: int, what: str) -> list[str]:
        return [f"p{i:02d}/{what}-{j}" for i in range(prefixes) for j in range(OBJECTS_A_PREFIX)]

    ctx.ensure_objects([(ctx.bucket, base + name) for name in names(max(prefix_counts), "obj")], size)
    steps = []
    for op in REQUEST_RATE_OPS:
        for prefixes in prefix_counts:
            for c in concurrencies:
                values = {"op": op, "prefixes": prefixes, "concurrency": c}
                if op in ("GET", "HEAD"):
                    steps.append(ctx.read_step(values, ctx.target(names(prefixes, "obj"), prefix=base),
                                               measure=request_rate_step, op=op.lower(), range_size=size,
                                               concurrency=c))
                elif op == "PUT":
                    # every PUT a new key, named as it is written, dealt over the prefixes; deleted after
                    steps.append(ctx.write_step(values, object_size=size, part_size=max(size, 5 << 20),
                                                concurrency=c, prefix=base + "put/", keys=MAX_KEYS,
                                                key_prefixes=tuple(f"p{i:02d}/" for i in range(prefixes)),
                                                requests=None, cleanup=True))
                    steps[-1].measure = request_rate_step
                else:
                    place = f"delete/c{c}-p{prefixes}/"
                    count = min(20_000, max(200, _q(ctx, 25, 100) * c))
                    doomed = [(ctx.bucket, f"{base}{place}p{i % prefixes:02d}/obj-{i:06d}") for i in range(count)]

                    def prepare(doomed=doomed) -> None:  # deleted by the step: seeded again for each run of it
                        seed_places(ctx.settings, doomed, size, reseed=True, progress=ctx.seeding, room=room)

                    steps.append(ctx.read_step(values, ctx.target(None, prefix=base + place), prepare=prepare,
                                               measure=request_rate_step, op="delete", concurrency=c,
                                               duration=None, requests=None))
    return steps


CHECKSUM_MODES = ("header", "trailer")


def checksums(ctx: StudyContext) -> list[Step]:
    """What does a checksum on every write cost, sent in a header or as a trailer?
    The same writes with no checksum first (the baseline), then with each of S3's checksums (CRC-32, CRC-32C,
    CRC-64/NVME, SHA-256) in its header and as the trailer of an aws-chunked body, as the SDKs stream an upload:
    each step's acknowledged write Gbps and the client's CPU-seconds per GiB acknowledged, each as a ratio to
    the baseline's, and the share of requests the store refused with their S3 codes.  Single PUTs of 8 MiB
    objects, 4 in flight, with --quick; of 64 MiB, 32 in flight, without (--object-size and --concurrency
    choose others); the client computes each checksum, on its own CPU, before the request goes.  The baseline
    comes after a few seconds of its own writes, not measured (2 s with --quick, 10 s without): a store's first
    writes are slower (SeaweedFS makes a new bucket's volumes), and would flatter every ratio.  A store that
    refuses a checksum or the trailer (Ceph RGW and Swift refuse aws-chunked trailers) gives failed steps with
    their codes, and the study goes on; an algorithm that is not installed (CRC-32C and CRC-64/NVME need the
    checksums extra) is said in one line before any request, and its steps are left out."""
    from objperf.analysis.stats import checksum_baseline, checksum_step
    from objperf.core.checksums import EXTRA, NAMES, algorithm
    from objperf.core.extras import MissingExtra
    from objperf.plan.writes import MAX_PART, MIN_PART

    missing: list[str] = []
    for name in NAMES[1:]:
        try:
            algorithm(name)
        except MissingExtra:
            missing.append(name)
    if missing:
        ctx.say(f"checksums: {', '.join(missing)} left out, not installed: they need the '{EXTRA}' extra: "
                f"pip install 'objperf[{EXTRA}]'")
    size = ctx.object_size if ctx.object_size_given else _q(ctx, 8 * MIB, 64 * MIB)
    concurrency = ctx.write_options.get("concurrency", _q(ctx, 4, 32))
    workload = {"object_size": size, "part_size": min(max(size, MIN_PART), MAX_PART), "concurrency": concurrency,
                "keys": 2 * concurrency, "prefix": ctx.key("checksums/"), "cleanup": True, "requests": None}
    baseline: dict = {}  # the latest baseline step's figures: the steps after it are measured beside them

    def measure(rows, summary, *, none: bool = False) -> dict:
        if none:
            baseline.clear()
            baseline.update(checksum_baseline(summary))
        return checksum_step(rows, summary, baseline or None)

    warm_s = _q(ctx, 2.0, 10.0)

    def warm_up() -> None:  # a store's first writes (a new bucket's volumes, its connections) are not the baseline
        ctx.say(f"checksums: warming the store up with {warm_s:g} s of the baseline's writes, not measured")
        write_job(ctx.settings, ctx.writes(**{**workload, "duration": warm_s}), False, None, keep_rows=False)

    steps = [ctx.write_step({"checksum": "none", "mode": "-"}, prepare=warm_up, checksum="none",
                            checksum_trailer=False, **workload)]
    steps[0].measure = partial(measure, none=True)
    for name in (n for n in NAMES[1:] if n not in missing):
        for mode in CHECKSUM_MODES:
            steps.append(ctx.write_step({"checksum": name, "mode": mode}, checksum=name,
                                        checksum_trailer=mode == "trailer", **workload))
            steps[-1].measure, steps[-1].refusal_measured = measure, True
    return steps


def replica_counts(cap: int) -> list[int]:
    """The replica counts a hot-object study sweeps: 2, 4, 8 … up to ``cap`` (``cap`` itself the last)."""
    counts, k = [], 2
    while k < cap:
        counts.append(k)
        k *= 2
    return counts + [max(2, cap)]


def hot_object(ctx: StudyContext) -> list[Step]:
    """When does one hot object start answering 503 SlowDown, and how many replicas cure it?
    Many concurrent requests on the same range of one object, at each concurrency; then, at the highest,
    the same load spread over 2, 4, 8 … replicas up to ``--replicas``: the curve of the cure, where the 503
    share falls under 1 % (``objperf.analysis.stats.replicas_that_cure``)."""
    size = _q(ctx, 256 << 10, 1 * MIB)
    key = ctx.key("hot-object/object")
    cap = max(2, ctx.replicas)
    if ctx.replica_buckets:
        # A per-bucket throttle (the local server's) is cured by replicas in other buckets.
        places = [(ctx.bucket if i == 0 else f"{ctx.bucket}-hot{i}", key) for i in range(cap)]
        for bucket in {b for b, _ in places}:
            ctx.client.create_bucket(bucket)
    else:
        # A per-object throttle (R2's) is cured by replicas under other keys of the same bucket.
        places = [(ctx.bucket, key if i == 0 else ctx.key(f"hot-object/replica-{i}")) for i in range(cap)]
    ctx.ensure_objects(places, size)

    def spread(count: int) -> ReadSource:
        chosen = places[:count]
        if ctx.replica_buckets:
            return ctx.target([key], buckets=[b for b, _ in chosen])
        return ctx.target([name for _, name in chosen])

    grid = ctx.grid("hot-object", "concurrency")
    duration = ctx.duration
    steps = [ctx.read_step({"variant": "single", "replicas": 1, "concurrency": c}, spread(1), concurrency=c,
                           range_size=size, duration=duration) for c in grid]
    hottest = max(grid)
    steps += [ctx.read_step({"variant": "replicas", "replicas": k, "concurrency": hottest}, spread(k),
                            concurrency=hottest, range_size=size, duration=duration) for k in replica_counts(cap)]
    return steps


def wan(ctx: StudyContext) -> list[Step]:
    """How many requests in flight does a throughput need as the store gets farther away?
    Distance: the same reads through a relay that holds every chunk a set one-way delay
    (``objperf.servers.delay``), at each concurrency: how many requests in flight a throughput needs as the
    store gets farther (the article's "TTFB is 70 times the RTT", measured).  The relay runs where the step
    runs, in front of the study's endpoint: a study of one machine, not of a cluster."""
    from objperf.servers.delay import DelayRelay

    if ctx.cluster is not None:
        raise UsageError("the wan study emulates distance on this machine: run it without --cluster")
    endpoint = urlsplit(ctx.settings.endpoint or ctx.client.endpoint)
    if endpoint.scheme == "https":
        raise UsageError("the wan study relays plain HTTP: over TLS the store's certificate names the store, not "
                         "the relay in front of it")
    key = ctx.key("wan/object")
    size = ctx.object_size
    ctx.ensure_object(ctx.bucket, key, size)
    upstream = (endpoint.hostname, endpoint.port or 80)  # plain HTTP: https was refused above
    delays_ms = ctx.grid("wan", "delay_ms")
    grid = ctx.grid("wan", "concurrency")
    steps = []
    for delay_ms in delays_ms:
        for c in grid:
            values = {"delay_ms": delay_ms, "concurrency": c}
            workload = {"concurrency": c, "duration": ctx.duration}

            def run(out, hosts=None, delay_ms=delay_ms, workload=workload):
                if not delay_ms:
                    return read_job(ctx.target([key]), ctx.reads(**workload), out)
                with DelayRelay(upstream, one_way_s=delay_ms / 1000) as relay:
                    settings = replace(ctx.settings, endpoint=f"{endpoint.scheme}://{relay.address[0]}:"
                                                             f"{relay.address[1]}")
                    source = ReadSource(f"s3://{ctx.bucket}/", settings, keys=[key], url_lifetime=ctx.url_lifetime)
                    return read_job(source, ctx.reads(**workload), out)

            steps.append(Step(values, run))
    return steps


def ceiling_proof(ctx: StudyContext) -> list[Step]:
    """Is the store the limit, or this machine's network?
    The store read alone, then beside an unrelated HTTP stream: if the NIC carries more in the
    second step, the box could take more than the store gave."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    other_url = ctx.other_url
    if not other_url:
        other_key = ctx.key("ceiling-proof/other-stream")
        ctx.ensure_object(ctx.bucket, other_key, ctx.object_size)
        other_url = ctx.client.presign(ctx.bucket, other_key, expires=int(ctx.duration * 2 + 86400))

    def together():
        return partial(reads_together_job, [(ctx.target([key]), ctx.reads()),
                                            (ReadSource(other_url, ctx.settings), ctx.reads())])

    other_stream = urlsplit(ctx.other_url).netloc if ctx.other_url else "the same store (no --other-url)"
    steps = [ctx.read_step({"streams": "store alone"}, ctx.target([key])),
             ctx.step({"streams": "store + other HTTP"}, together, kind="read")]
    for step in steps:
        step.measure = lambda rows, summary: stream_shares(rows, summary, other_stream)
    return steps


def stream_shares(rows, summary: dict, other_stream: str) -> dict:
    """The store's stream and the other stream apart, and their sum against the NIC's link speed (the
    article's "82.75 of 100 Gbps")."""
    from objperf.run.metadata import nic_speeds

    wall = max(summary["wall_s"], 1e-9)
    store = rows["bucket"].astype(str) != ""  # the other stream is read as a plain http(s) URL
    store_gbps = float(rows.loc[store, "bytes"].sum()) * 8 / wall / 1e9
    other_gbps = float(rows.loc[~store, "bytes"].sum()) * 8 / wall / 1e9
    nic = summary.get("evidence", {}).get("nic", "")
    link_mbps = nic_speeds().get(nic)
    link_gbps = link_mbps / 1000 if link_mbps else float("nan")
    return {"store_gbps": store_gbps, "other_gbps": other_gbps, "sum_gbps": store_gbps + other_gbps,
            "nic": nic, "nic_link_gbps": link_gbps, "of_link_pct": (store_gbps + other_gbps) / link_gbps * 100,
            "other_stream": other_stream}


def client_cpu(ctx: StudyContext) -> list[Step]:
    """How many engine threads does the client need before it stops being the limit?
    The same read at increasing engine thread counts: where the client stops being a limit."""
    key = ctx.key("read-object")
    ctx.ensure_object(ctx.bucket, key, ctx.object_size)
    grid = ctx.grid("client-cpu", "threads")
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
    "wan": wan,
    "rate-sweep": rate_sweep,
    "request-rate": request_rate,
    "checksums": checksums,
}

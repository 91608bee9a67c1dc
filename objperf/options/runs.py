"""The options of the three transfer runs: reads (``objperf fetch``), writes (``objperf put``) and both at
once (``objperf mixed``).  Each is defined here once; the commands' parsers, ``objperf.api``'s signatures and
docs/cli.md are made from these classes."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.core.checksums import NAMES as CHECKSUM_NAMES
from objperf.core.errors import UsageError
from objperf.options.groups import (
    OUTPUT,
    ClusterOptions,
    ConnectionOptions,
    OutputOptions,
    SeedOptions,
    SteadyOptions,
    TargetOptions,
)
from objperf.options.kinds import COUNT, DURATION, PATH, RATE, SEED, SIZE, SIZES, choice
from objperf.options.spec import flag, option
from objperf.plan.reads import ReadWorkload
from objperf.plan.sizes import DEFAULT_SEED, SizeDistribution

READ = ReadWorkload()  # the library's defaults, which the options keep


def keys_asked(text: str | None) -> list[str] | int | None:
    """``--keys``: the keys named (comma-separated), or how many of the prefix's to take."""
    if not text:
        return None
    if text.isdigit():
        if int(text) < 1:
            raise UsageError("--keys N needs N >= 1")
        return int(text)
    return [key for key in text.split(",") if key]
WORKLOAD = "workload"
WRITES = "writes"
PUT_OBJECT_SIZE = 64 << 20


@dataclass(kw_only=True)
class FetchOptions(TargetOptions, SeedOptions, ConnectionOptions, SteadyOptions, ClusterOptions, OutputOptions):
    """Concurrent ranged GETs against any S3-compatible endpoint or plain HTTP URL."""

    url: str | None = option(None, "s3://BUCKET/KEY, s3://BUCKET/PREFIX/, or http(s)://HOST/PATH; omit to use the "
                             "embedded local SeaweedFS", positional=True)
    keys: str | None = option(None, "keys to read round-robin: a comma-separated list, or N for the first N objects "
                              "under the URL's prefix", group=WORKLOAD)
    concurrency: int = option(READ.concurrency, "requests in flight", COUNT, flags=("-c",), group=WORKLOAD)
    range_size: int = option(READ.range_size, "bytes per ranged GET", SIZE, group=WORKLOAD)
    random: bool = flag("random ranges instead of sequential", group=WORKLOAD)
    op: str = option(READ.op, "what each request does: get (ranged GETs) or head (each key's headers, as a stat: "
                     "requests/s and latency, its size and ETag checked)", choice("get", "head"), group=WORKLOAD)
    duration: float | None = option(None, "run this long (30s, 2m); GETs still in flight are cut then (with "
                                    "--until-steady: at most this long)", DURATION,
                                    flags=("-d",), group=WORKLOAD)
    requests: int | None = option(None, "stop after this many requests", COUNT, flags=("-n",), group=WORKLOAD)
    bytes: int | None = option(None, "stop after this many bytes (10GiB)", SIZE, group=WORKLOAD)
    sink: str = option(READ.sink, "where bodies go", choice("ram", "discard", "file"), group=WORKLOAD)
    sink_dir: str | None = option(None, "directory for --sink file", PATH, group=WORKLOAD)
    verify: bool = flag("CRC32 every body (column crc32)", group=WORKLOAD)
    checksum_mode: bool = flag("ask the store for each object's checksum (x-amz-checksum-mode: ENABLED, as the SDKs "
                               "validate a download) and check every whole-object GET against its CRC-32; a "
                               "mismatch fails the row (implies --verify)", group=WORKLOAD)
    engine: str = option(READ.engine, "curl or the pure-Python reference engine", choice("curl", "requests"),
                         group=WORKLOAD)
    rate: float | None = option(None, "open loop: start N requests a second on a schedule, whatever the answers' "
                                "pace (wrk2's -R), in at most --concurrency slots; latency is also counted from each "
                                "request's intended start, so a backlog shows (coordinated omission corrected)",
                                RATE, group=WORKLOAD)

    def read_keys(self) -> list[str] | int | None:
        """``--keys``: the keys named, or how many of the prefix's to read."""
        return keys_asked(self.keys)

    def workload(self) -> ReadWorkload:
        workload = ReadWorkload(
            concurrency=self.concurrency, threads=self.threads, range_size=self.range_size,
            random_ranges=self.random, op=self.op, sink=self.sink, sink_dir=self.sink_dir, duration=self.duration,
            requests=self.requests, bytes=self.bytes, verify=self.verify, engine=self.engine, rate=self.rate,
            checksum_mode=self.checksum_mode,
            **self.connection_kwargs(), **self.steady_kwargs()).capped()
        workload.validate()
        return workload


@dataclass(kw_only=True)
class WriteOptions:
    """What every write run is given: its parts, its keys, and what is done with them after."""

    part_size: int = option(32 << 20, "objects larger than this go up as multipart uploads in parts of this size",
                            SIZE, group=WRITES)
    sizes: SizeDistribution | None = option(
        None, "draw each object's size, instead of --object-size: a size (64MiB), log-uniform between two "
        "(4KiB..64MiB: as many objects in each doubling), or weighted buckets (4KiB:50,1MiB:40,64MiB:10, each a "
        "size or a LO..HI range)", SIZES, group=WRITES)
    seed: int = option(DEFAULT_SEED, "seed of the sizes --sizes draws: the same seed draws the same sizes, in "
                       "the same order", SEED, group=WRITES)
    keys: int = option(1, "spread writes over N keys", COUNT, group=WRITES)
    verify: bool = flag("read every written object back and compare", group=WRITES)
    cleanup: bool = flag("delete what the run wrote when it ends", group=WRITES)
    checksum: str = option("none", "send each PUT and part with this checksum, as today's SDKs add one (crc32c and "
                           "crc64nvme need the checksums extra): the store checks it and refuses a mismatch",
                           choice(*CHECKSUM_NAMES), group=WRITES)
    checksum_trailer: bool = flag("send the checksum after the body, as the trailer of an aws-chunked body (how the "
                                  "SDKs stream an upload), not in a header before it", group=WRITES)

    def write_workload(self, concurrency: int, buckets: list[str], prefix: str, *, requests: int | None = None):
        from objperf.plan.writes import WriteWorkload

        workload = WriteWorkload(
            object_size=self.sizes.largest if self.sizes else self.object_size, sizes=self.sizes, seed=self.seed,
            part_size=self.part_size, concurrency=concurrency, threads=self.threads,
            keys=self.keys, buckets=tuple(buckets), prefix=prefix, duration=self.duration, requests=requests,
            verify=self.verify, cleanup=self.cleanup, url_lifetime=self.url_lifetime, checksum=self.checksum,
            checksum_trailer=self.checksum_trailer, **self.connection_kwargs(), **self.steady_kwargs()).capped()
        workload.validate()
        return workload


@dataclass(kw_only=True)
class PutOptions(TargetOptions, WriteOptions, ConnectionOptions, SteadyOptions, ClusterOptions, OutputOptions):
    """PUTs and multipart uploads, sent from one preallocated payload, across keys and buckets."""

    url: str | None = option(None, "s3://BUCKET/PREFIX (keys are PREFIX + objperf-RUN-NNNNN); omit to use the "
                             "embedded local SeaweedFS", positional=True)
    concurrency: int = option(16, "uploads (parts or PUTs) in flight", COUNT, flags=("-c",), group=WRITES)
    duration: float | None = option(None, "run this long; parts in flight are cut then and their objects aborted",
                                    DURATION, flags=("-d",), group="budget")
    requests: int | None = option(None, "write this many objects (default: each key once)", COUNT, flags=("-n",),
                                  group="budget")
    create_bucket: bool = flag("create the bucket(s) if missing", group=WRITES)
    object_size: int = option(PUT_OBJECT_SIZE, "object size", SIZE, group="output")

    def check_sizes(self) -> None:
        """--object-size and --sizes both say how large a put's objects are: one of them, not both."""
        if self.sizes is not None and self.object_size != PUT_OBJECT_SIZE:
            raise UsageError("--object-size and --sizes both size the objects written: give one (--sizes 64MiB "
                             "is one size)")


MIXED_CONCURRENCY = 16
MAX_KEYS = 1000  # a LIST page's keys unless --max-keys says otherwise: S3's most


@dataclass(kw_only=True)
class PageOptions:
    """What a LIST page asks for: objperf list's pages, and each LIST of a mix."""

    max_keys: int = option(MAX_KEYS, "keys (and common prefixes) a LIST page asks for: 1 to 1,000 (objperf mixed: "
                           "each LIST of a --mix with list=, the first page of its prefix)", COUNT, group=WORKLOAD)


@dataclass(kw_only=True)
class MixedOptions(TargetOptions, WriteOptions, SeedOptions, ConnectionOptions, SteadyOptions, ClusterOptions,
                   OutputOptions, PageOptions):
    """Reads and writes at the same time, each with its own engine and concurrency."""

    url: str | None = option(None, "what to read: s3://BUCKET/KEY or s3://BUCKET/PREFIX/; omit to use the "
                             "embedded local SeaweedFS", positional=True)
    write_to: str | None = option(None, "where to write: s3://BUCKET/PREFIX (default: the read URL's bucket)",
                                  group="target")
    concurrency: int | None = option(None, "requests in flight in each direction", COUNT, flags=("-c",),
                                     default_text=f"{MIXED_CONCURRENCY} reads, {MIXED_CONCURRENCY} writes",
                                     group=WORKLOAD)
    read_concurrency: int | None = option(None, "GETs in flight", COUNT, default_text="-c", group="reads")
    range_size: int = option(READ.range_size, "bytes per ranged GET", SIZE, group="reads")
    sink: str = option(READ.sink, "where read bodies go", choice("ram", "discard"), group="reads")
    write_concurrency: int | None = option(None, "uploads (parts or PUTs) in flight", COUNT, default_text="-c",
                                           group=WRITES)
    duration: float = option(30.0, "how long both run", DURATION, flags=("-d",), group=WORKLOAD)
    object_size: int = option(64 << 20, "object size", SIZE, group="output")
    mix: str | None = option(None, "one engine drawing each request from a weighted mix on whole objects and their "
                             "prefix, instead of a reader and a writer: get=60,put=20,head=10,list=5,delete=5 (the "
                             "objects seeded first under the URL's prefix, -c in flight, each op's rate and latency "
                             "apart; a LIST asks for the prefix's first page of --max-keys; copy= copies an object "
                             "of the pool to a new key, server-side)",
                             metavar="OP=WEIGHT,...", group=WORKLOAD)

    def mix_workload(self, bucket: str, prefix: str):
        """``--mix``'s workload, in ``bucket`` under ``prefix``; one line for an option that only a reader
        and a writer take."""
        from objperf.plan.mix import MixWorkload, parse_mix

        apart = [f"--{name.replace('_', '-')}" for name in ("read_concurrency", "write_concurrency", "write_to",
                                                            "verify", "reseed") if getattr(self, name)]
        apart += [f"--{name.replace('_', '-')}" for name, default in (("range_size", READ.range_size),
                                                                      ("sink", READ.sink), ("keys", 1),
                                                                      ("sizes", None), ("seed", DEFAULT_SEED),
                                                                      ("checksum", "none"),
                                                                      ("checksum_trailer", False))
                  if getattr(self, name) != default]
        if apart:
            raise UsageError(f"{', '.join(apart)} go with a reader and a writer, not with --mix")
        shares = parse_mix(self.mix)
        if self.max_keys != MAX_KEYS and "list" not in shares:
            raise UsageError("--max-keys is what each LIST of a mix asks for: give list= in --mix, or drop it")
        workload = MixWorkload(shares=shares, object_size=self.object_size,
                               concurrency=self.concurrency or MIXED_CONCURRENCY, threads=self.threads,
                               duration=self.duration, bucket=bucket, prefix=prefix, cleanup=self.cleanup,
                               max_keys=self.max_keys, **self.connection_kwargs(), **self.steady_kwargs())
        workload.validate()
        return workload

    def directions(self) -> tuple[int, int]:
        """Reads and writes in flight: each its own option, else ``-c``, else 16 (a reader and a writer only:
        ``--max-keys`` is for a mix's LISTs)."""
        if self.max_keys != MAX_KEYS:
            raise UsageError("--max-keys is what each LIST of a mix asks for: give --mix with list=, or drop it")
        return (self.read_concurrency or self.concurrency or MIXED_CONCURRENCY,
                self.write_concurrency or self.concurrency or MIXED_CONCURRENCY)


DELETE_SEEDED = 1000


@dataclass(kw_only=True)
class DeleteOptions(TargetOptions, ConnectionOptions, OutputOptions):
    """DELETE every object under a prefix (or the keys named) once, through the one engine: how fast the store
    deletes, one row a DELETE; with --batch, DeleteObjects of up to that many keys each, one row a batch, each
    answer held to the keys asked.  With no URL it seeds small objects on the embedded local SeaweedFS and
    deletes those."""

    url: str | None = option(None, "s3://BUCKET/PREFIX/ (every object under it) or s3://BUCKET/KEY; omit to use "
                             "the embedded local SeaweedFS", positional=True)
    keys: str | None = option(None, "keys to delete: a comma-separated list under the URL's prefix, or N for the "
                              "first N objects under it", group=WORKLOAD)
    concurrency: int = option(16, "DELETEs in flight", COUNT, flags=("-c",), group=WORKLOAD)
    duration: float | None = option(None, "stop after this long, the keys not yet deleted left as they are",
                                    DURATION, flags=("-d",), group=WORKLOAD)
    objects: int = option(DELETE_SEEDED, "embedded server only: objects seeded under delete/ to delete", COUNT,
                          group=OUTPUT)
    object_size: int = option(4 << 10, "embedded server only: the size of each object seeded", SIZE, group=OUTPUT)

    batch: int | None = option(None, "DeleteObjects of up to N keys each (1 to 1,000, S3's most), -c batches in "
                               "flight, one row a batch (its keys in length), instead of a DELETE a key: keys "
                               "deleted/s beside batches/s", COUNT, group=WORKLOAD)

    def workload(self) -> ReadWorkload:
        workload = ReadWorkload(concurrency=self.concurrency, threads=self.threads, op="delete", sink="discard",
                                duration=self.duration, **self.connection_kwargs())
        workload.validate()
        return workload

    def batch_workload(self):
        """``--batch``'s workload (``objperf.plan.batches``)."""
        from objperf.plan.batches import BatchWorkload

        workload = BatchWorkload(batch=self.batch, concurrency=self.concurrency, threads=self.threads,
                                 duration=self.duration, url_lifetime=self.url_lifetime, **self.connection_kwargs())
        workload.validate()
        return workload


LIST_SEEDED = 2000


@dataclass(kw_only=True)
class ListOptions(TargetOptions, ConnectionOptions, OutputOptions, PageOptions):
    """ListObjectsV2 of a prefix: listers paging through it with continuation tokens, each starting over after its
    last page, one row a page: pages/s, keys/s and each page's latency.  Every page is held to the S3 contract
    (names under the prefix, in order, at most --max-keys, a new token on each truncated page).  With no URL it
    seeds small objects on the embedded local SeaweedFS and lists them."""

    url: str | None = option(None, "s3://BUCKET/PREFIX (every key under it; s3://BUCKET/ for the whole bucket); "
                             "omit to use the embedded local SeaweedFS", positional=True)
    delimiter: str | None = option(None, "list as a directory: keys holding this after the prefix (/) are rolled "
                                   "into common prefixes, each counted as a key", group=WORKLOAD)
    concurrency: int = option(1, "listers, each paging through the prefix with one page in flight", COUNT,
                              flags=("-c",), group=WORKLOAD)
    duration: float | None = option(None, "list this long (30s, 2m), the pages in flight cut then", DURATION,
                                    flags=("-d",), group=WORKLOAD)
    requests: int | None = option(None, "stop after this many pages", COUNT, flags=("-n",), group=WORKLOAD)
    passes: int | None = option(None, "list the prefix this many times in all, each from its first page to its last",
                                COUNT, default_text="each lister once, without --duration or --requests",
                                group=WORKLOAD)
    objects: int = option(LIST_SEEDED, "embedded server only: objects seeded under list/ to list", COUNT,
                          group=OUTPUT)
    object_size: int = option(1 << 10, "embedded server only: the size of each object seeded", SIZE, group=OUTPUT)

    def workload(self, bucket: str, prefix: str):
        """The LIST run these options ask for, of ``prefix`` in ``bucket`` (``objperf.plan.lists``)."""
        from objperf.plan.lists import ListWorkload, check_max_keys

        check_max_keys(self.max_keys)
        passes = self.passes or (None if self.duration or self.requests else self.concurrency)
        workload = ListWorkload(bucket=bucket, prefix=prefix, delimiter=self.delimiter or "",
                                max_keys=self.max_keys, passes=passes, concurrency=self.concurrency,
                                threads=self.threads, duration=self.duration, requests=self.requests,
                                url_lifetime=self.url_lifetime, **self.connection_kwargs())
        workload.validate()
        return workload

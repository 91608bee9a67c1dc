"""``python -m objperf.fetch`` — concurrent ranged GETs against any S3-compatible
endpoint or plain HTTP URL; per-request rows to a dataset, a summary to the terminal.

With no URL it starts a local SeaweedFS, seeds an object and reads that."""

from __future__ import annotations

import contextlib
import functools

from objperf.cli import (
    Invocation,
    add_cluster_args,
    add_connection_args,
    add_output_args,
    add_target_args,
    check_target_flags,
    command_main,
    connection_kwargs,
    duration_arg,
    exit_now,
    new_parser,
    positive_int,
    report,
    resolve_out,
    rows_needed,
    s3_settings,
    size_arg,
    split_list,
    with_figures,
)
from objperf.errors import UsageError

PROG = "objperf fetch"
EMBEDDED_BUCKET = "objperf"

EXAMPLES = """examples:
  python -m objperf.fetch                                   # local SeaweedFS, 1 GiB object, read once
  python -m objperf.fetch s3://bucket/big.bin --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
      --region auto --profile r2-test --concurrency 64 --range-size 8MiB --duration 30s --out runs/r2-c64
  python -m objperf.fetch s3://bucket/shards/ --concurrency 256 --bytes 100GiB --sink discard
  python -m objperf.fetch s3://bucket/ --keys a.bin,b.bin --buckets b1,b2 --duration 1m
  python -m objperf.fetch https://example.test/file.bin --concurrency 8
"""


def build_parser():
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("url", nargs="?", help="s3://BUCKET/KEY, s3://BUCKET/PREFIX/, or http(s)://HOST/PATH; "
                                          "omit to use the embedded local SeaweedFS")
    add_target_args(p)
    p.add_argument("--keys", help="keys to read round-robin: a comma-separated list, or N for the first N "
                                  "objects under the URL's prefix")
    w = p.add_argument_group("workload")
    w.add_argument("--concurrency", "-c", type=positive_int, default=16, help="requests in flight (default 16)")
    w.add_argument("--range-size", type=size_arg, default=8 << 20, help="bytes per ranged GET (default 8MiB)")
    w.add_argument("--random", action="store_true", help="random ranges instead of sequential")
    w.add_argument("--duration", "-d", type=duration_arg,
                   help="run this long (30s, 2m); GETs still in flight are cut then")
    w.add_argument("--requests", "-n", type=positive_int, help="stop after this many requests")
    w.add_argument("--bytes", type=size_arg, help="stop after this many bytes (10GiB)")
    w.add_argument("--sink", choices=("ram", "discard", "file"), default="ram", help="where bodies go (default ram)")
    w.add_argument("--sink-dir", help="directory for --sink file")
    w.add_argument("--verify", action="store_true", help="CRC32 every body (column crc32)")
    w.add_argument("--engine", choices=("curl", "requests"), default="curl",
                   help="curl (default) or the pure-Python reference engine")
    add_connection_args(p)
    add_cluster_args(p)
    add_output_args(p, embedded_size=1 << 30)
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, transfers=True)


def read_workload(args):
    from objperf.plan.reads import ReadWorkload

    workload = ReadWorkload(
        concurrency=args.concurrency, threads=args.threads, range_size=args.range_size, random_ranges=args.random,
        sink=args.sink, sink_dir=args.sink_dir, duration=args.duration, requests=args.requests, bytes=args.bytes,
        verify=args.verify, engine=args.engine, **connection_kwargs(args))
    workload.validate()
    return workload


def parse_keys(text: str | None) -> list[str] | int | None:
    if not text:
        return None
    if text.isdigit():
        if int(text) < 1:
            raise UsageError("--keys N needs N >= 1")
        return int(text)
    return split_list(text)


def execute(args, invocation: Invocation):
    """The read run ``args`` describe (on ``invocation``'s local server when no URL is given, on every host of a
    cluster with ``--cluster``): a ``RunResult``."""
    from objperf.cluster.runner import check_cluster_args, cluster_asked, run_across
    from objperf.run.jobs import ReadSource, read_job

    check_cluster_args(args)
    check_target_flags(args)
    resolve_out(args, "fetch")
    workload = read_workload(args)
    keys = parse_keys(args.keys)
    buckets = split_list(args.buckets)
    with contextlib.ExitStack() as stack:
        if args.url:
            url, settings = args.url, s3_settings(args)
        else:
            server = stack.enter_context(invocation.local_server())
            url = seed_embedded(server, args.object_size, keys if isinstance(keys, list) else None, buckets,
                                invocation.say)
            settings = server.settings()
        job = functools.partial(read_job, ReadSource(url, settings, keys, buckets, args.url_lifetime), workload,
                                keep_rows=rows_needed(args))
        if cluster_asked(args):
            result = run_across(args, invocation, job, kind="read", target={"url": url, **settings.describe()},
                                workload=workload.describe())
        else:
            with invocation.progress(workload.duration) as progress:
                result = job(args.out, on_progress=progress)
    return with_figures(result, args, invocation)


def seed_embedded(server, size: int, keys: list[str] | None, buckets: list[str], say) -> str:
    """Create the bucket(s) and objects a run on the embedded server reads; the URL to read."""
    from objperf.run.seed import seed_objects

    buckets = buckets or [EMBEDDED_BUCKET]
    seed_objects(server.settings(), buckets, keys or [f"seed/object-{size}"], size, create_buckets=True, say=say)
    return f"s3://{buckets[0]}/" if keys else f"s3://{buckets[0]}/seed/object-{size}"


if __name__ == "__main__":
    exit_now(main())

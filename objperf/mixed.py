"""``python -m objperf.mixed`` — reads and writes at the same time, each with its
own engine and concurrency: one dataset with both directions, a summary per
direction, so "reads alone, writes alone, both together" can be compared.

With no URL it starts a local SeaweedFS, seeds the object to read and writes
beside it."""

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
    with_figures,
)
from objperf.cluster.writes import abort_lost
from objperf.fetch import seed_embedded
from objperf.put import add_write_args, write_destination, write_workload

PROG = "objperf mixed"
DEFAULT_CONCURRENCY = 16

EXAMPLES = """examples:
  python -m objperf.mixed --duration 20s                    # local SeaweedFS
  python -m objperf.mixed s3://bucket/big.bin --write-to s3://bucket/mixed/ --endpoint URL \\
      --read-concurrency 256 --write-concurrency 192 --part-size 32MiB --object-size 1GiB --duration 60s
"""


def build_parser():
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("url", nargs="?", help="what to read: s3://BUCKET/KEY or s3://BUCKET/PREFIX/; "
                                          "omit to use the embedded local SeaweedFS")
    p.add_argument("--write-to", help="where to write: s3://BUCKET/PREFIX (default: the read URL's bucket)")
    add_target_args(p)
    p.add_argument("--concurrency", "-c", type=positive_int, metavar="N",
                   help="requests in flight in each direction (default 16 reads, 16 writes)")
    r = p.add_argument_group("reads")
    r.add_argument("--read-concurrency", type=positive_int, metavar="N", help="GETs in flight (default: -c)")
    r.add_argument("--range-size", type=size_arg, default=8 << 20, help="bytes per ranged GET (default 8MiB)")
    r.add_argument("--sink", choices=("ram", "discard"), default="ram", help="where read bodies go (default ram)")
    add_write_args(p, concurrency_flags=("--write-concurrency",), concurrency_default=None)
    p.add_argument("--duration", "-d", type=duration_arg, default=30.0, help="how long both run (default 30s)")
    add_connection_args(p)
    add_cluster_args(p)
    add_output_args(p, embedded_size=64 << 20)
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, transfers=True)


def execute(args, invocation: Invocation):
    """The mixed run ``args`` describe (on ``invocation``'s local server when no URL is given, on every host of a
    cluster with ``--cluster``): a ``RunResult``."""
    from objperf.cluster.runner import check_cluster_args, cluster_asked, run_across
    from objperf.plan.reads import ReadWorkload
    from objperf.run.jobs import ReadSource, mixed_job
    from objperf.s3.target import split_s3_url

    check_cluster_args(args)
    check_target_flags(args)
    resolve_out(args, "mixed")
    args.read_concurrency = args.read_concurrency or args.concurrency or DEFAULT_CONCURRENCY
    args.write_concurrency = args.write_concurrency or args.concurrency or DEFAULT_CONCURRENCY
    reads = ReadWorkload(concurrency=args.read_concurrency, threads=args.threads, range_size=args.range_size,
                         sink=args.sink, duration=args.duration, **connection_kwargs(args))
    reads.validate()
    args.requests = None
    destination = args.write_to or (f"s3://{split_s3_url(args.url)[0]}/objperf-mixed/" if args.url else None)
    buckets, prefix = write_destination(destination, args.buckets)
    writes = write_workload(args, buckets, prefix)
    with contextlib.ExitStack() as stack:
        if args.url:
            url, settings, create = args.url, s3_settings(args), False
        else:
            server = stack.enter_context(invocation.local_server())
            url = seed_embedded(server, args.object_size, None, [], invocation.say)
            settings, create = server.settings(), True
        job = functools.partial(mixed_job, ReadSource(url, settings, url_lifetime=args.url_lifetime), reads, writes,
                                create, keep_rows=rows_needed(args))
        if cluster_asked(args):
            result = run_across(args, invocation, job, kind="mixed", target={"url": url, **settings.describe()},
                                workload={"read": reads.describe(), "write": writes.describe()},
                                on_lost=functools.partial(abort_lost, settings, writes))
        else:
            with invocation.progress(args.duration) as progress:
                result = job(args.out, on_progress=progress)
    return with_figures(result, args, invocation)


if __name__ == "__main__":
    exit_now(main())

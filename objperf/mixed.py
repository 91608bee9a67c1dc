"""``python -m objperf.mixed`` — reads and writes at the same time, each with its
own engine and concurrency: one dataset with both directions, a summary per
direction, so "reads alone, writes alone, both together" can be compared.

With no URL it starts a local SeaweedFS, seeds the object to read and writes
beside it."""

from __future__ import annotations

from objperf.cli import (
    ProgressLine,
    add_connection_args,
    add_output_args,
    add_target_args,
    collector_paused,
    connection_kwargs,
    duration_arg,
    embedded_server,
    exit_now,
    new_parser,
    positive_int,
    refuse_existing_out,
    report,
    run_main,
    s3_settings,
    sayer,
    size_arg,
    skip_aws_crt,
)
from objperf.fetch import seed_embedded
from objperf.put import add_write_args, write_destination, write_workload

PROG = "objperf.mixed"
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
    add_output_args(p, embedded_size=64 << 20)
    return p


_say = sayer(PROG)


def main(argv: list[str] | None = None) -> int:
    skip_aws_crt()
    args = build_parser().parse_args(argv)
    with collector_paused():
        return run_main(PROG, lambda: _mixed(args))


def _mixed(args) -> int:
    from objperf.plan.reads import ReadWorkload
    from objperf.run.writes import run_mixed
    from objperf.s3.target import resolve_read_target, split_s3_url

    refuse_existing_out(args)
    args.read_concurrency = args.read_concurrency or args.concurrency or DEFAULT_CONCURRENCY
    args.write_concurrency = args.write_concurrency or args.concurrency or DEFAULT_CONCURRENCY
    reads = ReadWorkload(concurrency=args.read_concurrency, threads=args.threads, range_size=args.range_size,
                         sink=args.sink, duration=args.duration, **connection_kwargs(args))
    reads.validate()
    args.requests = None
    destination = args.write_to or (f"s3://{split_s3_url(args.url)[0]}/objperf-mixed/" if args.url else None)
    buckets, prefix = write_destination(destination, args.buckets)
    writes = write_workload(args, buckets, prefix)
    progress = ProgressLine(total_s=args.duration)
    if args.url:
        settings = s3_settings(args)
        target = resolve_read_target(args.url, settings, url_lifetime=args.url_lifetime)
        result = run_mixed(target, reads, settings, writes, out=args.out, on_progress=progress)
    else:
        with embedded_server(_say) as server:
            url = seed_embedded(server, args.object_size, None, [], _say)
            target = resolve_read_target(url, server.settings(), url_lifetime=args.url_lifetime)
            result = run_mixed(target, reads, server.settings(), writes, out=args.out, on_progress=progress,
                               create_buckets=True)
    progress.done()
    return report(PROG, result, args, _say)


if __name__ == "__main__":
    exit_now(main())

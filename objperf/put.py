"""``python -m objperf.put`` — PUTs and multipart uploads, sent from one
preallocated payload, across keys and buckets; per-request rows to a dataset.

With no URL it starts a local SeaweedFS and writes to it."""

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
from objperf.cluster.writes import abort_lost
from objperf.run.jobs import write_job

PROG = "objperf put"
EMBEDDED_BUCKET = "objperf"

EXAMPLES = """examples:
  python -m objperf.put                                     # local SeaweedFS: one 64 MiB object in 32 MiB parts
  python -m objperf.put s3://bucket/bench/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com --region auto \\
      --profile r2-test --object-size 1GiB --part-size 32MiB --concurrency 192 --duration 60s --keys 32 --cleanup
  python -m objperf.put s3://b1/out/ --buckets b1,b2 --object-size 256MiB --requests 20 --verify
"""


def add_write_args(p, *, concurrency_flags: tuple[str, ...] = ("--concurrency", "-c"),
                   concurrency_default: int | None = 16) -> None:
    w = p.add_argument_group("writes")
    w.add_argument("--part-size", type=size_arg, default=32 << 20,
                   help="objects larger than this go up as multipart uploads in parts of this size (default 32MiB)")
    w.add_argument(*concurrency_flags, type=positive_int, default=concurrency_default, dest="write_concurrency",
                   metavar="N", help="uploads (parts or PUTs) in flight (default 16)")
    w.add_argument("--keys", type=positive_int, default=1, help="spread writes over N keys (default 1)")
    w.add_argument("--verify", action="store_true", help="read every written object back and compare")
    w.add_argument("--cleanup", action="store_true", help="delete what the run wrote when it ends")


def build_parser():
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("url", nargs="?", help="s3://BUCKET/PREFIX (keys are PREFIX + objperf-RUN-NNNNN); "
                                          "omit to use the embedded local SeaweedFS")
    add_target_args(p)
    add_write_args(p)
    b = p.add_argument_group("budget")
    b.add_argument("--duration", "-d", type=duration_arg,
                   help="run this long; parts in flight are cut then and their objects aborted")
    b.add_argument("--requests", "-n", type=positive_int, help="write this many objects (default: each key once)")
    p.add_argument("--create-bucket", action="store_true", help="create the bucket(s) if missing")
    add_connection_args(p)
    add_cluster_args(p)
    add_output_args(p, embedded_size=64 << 20)
    return p


def write_workload(args, buckets: list[str], prefix: str):
    from objperf.plan.writes import WriteWorkload

    workload = WriteWorkload(
        object_size=args.object_size, part_size=args.part_size, concurrency=args.write_concurrency,
        threads=args.threads, keys=args.keys, buckets=tuple(buckets), prefix=prefix, duration=args.duration,
        requests=args.requests, verify=args.verify, cleanup=args.cleanup, url_lifetime=args.url_lifetime,
        **connection_kwargs(args))
    workload.validate()
    return workload


def write_destination(url: str | None, buckets_flag: str | None) -> tuple[list[str], str]:
    from objperf.s3.target import split_s3_url

    bucket, prefix = split_s3_url(url) if url else (EMBEDDED_BUCKET, "")
    return split_list(buckets_flag) or [bucket], prefix


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, transfers=True)


def execute(args, invocation: Invocation):
    """The write run ``args`` describe (on ``invocation``'s local server when no URL is given, on every host of a
    cluster with ``--cluster``, each under its own ``hostNN/`` prefix): a ``RunResult``."""
    from objperf.cluster.runner import check_cluster_args, cluster_asked, run_across

    check_cluster_args(args)
    check_target_flags(args)
    resolve_out(args, "put")
    buckets, prefix = write_destination(args.url, args.buckets)
    workload = write_workload(args, buckets, prefix)
    with contextlib.ExitStack() as stack:
        if args.url:
            settings, create = s3_settings(args), args.create_bucket
        else:
            settings, create = stack.enter_context(invocation.local_server()).settings(), True
        job = functools.partial(write_job, settings, workload, create, keep_rows=rows_needed(args))
        if cluster_asked(args):
            result = run_across(args, invocation, job, kind="write",
                                target={"kind": "s3", **settings.describe(), "buckets": buckets},
                                workload=workload.describe(), on_lost=functools.partial(abort_lost, settings,
                                                                                         workload))
        else:
            with invocation.progress(workload.duration) as progress:
                result = job(args.out, on_progress=progress)
    return with_figures(result, args, invocation)


if __name__ == "__main__":
    exit_now(main())

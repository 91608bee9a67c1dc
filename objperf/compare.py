"""``python -m objperf.compare`` — download and upload the same object with every
available client (objperf, s5cmd, the AWS CLI as shipped and tuned, boto3, the AWS
CRT, the Ruby SDK, curl) against one or more targets, interleaved, N repetitions;
every run verified by hash, measured from outside, one row per client run in a
dataset.

The second article's experiment is ``--size 100MiB --repeat 5`` with two
targets: its per-run and mean table comes out shaped like the article's."""

from __future__ import annotations

import sys
from pathlib import Path

from objperf.cli import (
    OneLineParser,
    embedded_server,
    positive_int,
    run_main,
    sayer,
    size_arg,
    split_list,
)
from objperf.errors import UsageError
from objperf.peers.comparison import CLIENTS, PROG, Target, available, run_compare


def build_parser() -> OneLineParser:
    import argparse

    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0],
                      formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=100),
                      epilog="""examples:
  python -m objperf.compare --size 100MiB --repeat 5           # two buckets on the embedded SeaweedFS
  python -m objperf.compare --size 100MiB --repeat 5 --out runs/s3-vs-r2 --figures \\
      --target "S3 s3://s3-test/r2test/ profile=s3-test region=ap-northeast-1" \\
      --target "R2 s3://r2-test/test/ profile=r2-test region=auto endpoint=https://ACCOUNT.r2.cloudflarestorage.com"
""")
    p.add_argument("--target", action="append", default=[], metavar="'NAME s3://BUCKET/PREFIX/ [endpoint=URL] "
                   "[profile=P] [region=R] [ca_bundle=FILE]'",
                   help="a store to compare on (repeatable; default: the embedded one); ca_bundle: the CAs every "
                        "client trusts over TLS")
    p.add_argument("--clients", default=",".join(CLIENTS), help=f"which clients (default: {','.join(CLIENTS)})")
    p.add_argument("--size", type=size_arg, default=100 << 20, help="object size (default 100MiB)")
    p.add_argument("--repeat", type=positive_int, default=5, help="rounds (default 5)")
    p.add_argument("--concurrency", type=positive_int, default=16, help="concurrency for clients that take it")
    p.add_argument("--part-size", type=size_arg, default=8 << 20, help="part / range size (default 8MiB)")
    p.add_argument("--endpoint-for", action="append", default=[], metavar="CLIENT=URL",
                   help="send one client through another endpoint (a proxy, another host name)")
    p.add_argument("--out", "-o", help="write the dataset here")
    p.add_argument("--figures", action="store_true", help="draw the timing figure into --out")
    return p


_say = sayer(PROG)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(PROG, lambda: _compare(args))


def _compare(args) -> int:
    names = split_list(args.clients)
    unknown = set(names) - set(CLIENTS)
    if unknown or not names:
        raise UsageError(f"unknown client(s) {', '.join(sorted(unknown)) or '(none)'}: "
                         f"choose from {', '.join(CLIENTS)}")
    endpoint_for = dict(item.split("=", 1) for item in args.endpoint_for if "=" in item)
    if len(endpoint_for) != len(args.endpoint_for) or set(endpoint_for) - set(CLIENTS):
        raise UsageError("--endpoint-for takes CLIENT=URL with a known client")
    names = available(names, _say)
    if args.target:
        return _report(args, run_compare([Target.parse(t) for t in args.target], names, size=args.size,
                                         repeat=args.repeat, out=args.out, concurrency=args.concurrency,
                                         part_size=args.part_size, endpoint_for=endpoint_for, say=_say))
    with embedded_server(_say) as server:
        from objperf.s3.client import S3Client

        targets = []
        for name in ("local-a", "local-b"):
            S3Client(server.settings()).create_bucket(f"objperf-{name}")
            targets.append(Target(name, f"objperf-{name}", "", server.endpoint, "us-east-1", None,
                                  (server.access_key, server.secret_key)))
        frame = run_compare(targets, names, size=args.size, repeat=args.repeat, out=args.out,
                            concurrency=args.concurrency, part_size=args.part_size, endpoint_for=endpoint_for,
                            say=_say)
        return _report(args, frame)


def _report(args, frame) -> int:
    from objperf.analysis.stats import client_means, timing_table

    runs = frame.rename(columns={"target": "provider", "rep": "run", "wall_s": "seconds"})
    ok = runs[runs["ok"]]
    if len(ok):
        print(timing_table(ok).round(3).to_string())
        print()
        print(client_means(ok).round(3).to_string(index=False))
    failed = runs[~runs["ok"]]
    for row in failed.itertuples():
        print(f"FAILED {row.client} {row.operation} on {row.provider} run {row.run}: {row.detail}")
    if args.out and args.figures and len(ok):
        from objperf import plots

        ax = plots.timing_runs(ok, title=f"{args.size / (1 << 20):g} MiB, {args.repeat} runs per client and store")
        ax.figure.savefig(Path(args.out) / "compare.png", dpi=120)
        _say(f"figure {Path(args.out) / 'compare.png'}")
    if frame.attrs.get("status") == "interrupted":
        return 130
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())

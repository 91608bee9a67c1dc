"""``python -m objperf.compare`` — download and upload the same object with every
available client (objperf, s5cmd, the AWS CLI as shipped and tuned, boto3, the AWS
CRT, the Ruby SDK, curl) against one or more targets, interleaved, N repetitions;
every run verified by hash, measured from outside, one row per client run in a
dataset.

The second article's experiment is ``--size 100MiB --repeat 5`` with two
targets: its per-run and mean table comes out shaped like the article's."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from urllib.parse import urlsplit

from objperf.cli import (
    Invocation,
    OneLineParser,
    command_main,
    new_parser,
    positive_int,
    resolve_out,
    size_arg,
    split_list,
)
from objperf.errors import UsageError
from objperf.peers.comparison import CLIENTS, PROG, Target, available, run_compare

EXAMPLES = """examples:
  python -m objperf.compare --size 100MiB --repeat 5           # two buckets on the embedded SeaweedFS
  python -m objperf.compare s3://r2-test/test/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
      --region auto --profile r2-test --size 100MiB --repeat 5
  python -m objperf.compare --size 100MiB --repeat 5 --out runs/s3-vs-r2 --figures \\
      --target "S3 s3://s3-test/r2test/ profile=s3-test region=ap-northeast-1" \\
      --target "R2 s3://r2-test/test/ profile=r2-test region=auto endpoint=https://ACCOUNT.r2.cloudflarestorage.com"
"""


def build_parser() -> OneLineParser:
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("url", nargs="?", help="s3://BUCKET/PREFIX/ to compare on, with the target options below "
                                          "(several stores: --target, repeatable)")
    t = p.add_argument_group("target (one store)")
    t.add_argument("--endpoint", "--endpoint-url", help="S3 endpoint URL (default: AWS)")
    t.add_argument("--region", help="signing region (R2: auto; default us-east-1)")
    t.add_argument("--profile", help="credentials profile from ~/.aws")
    t.add_argument("--ca-bundle", metavar="FILE", help="the CAs every client trusts over TLS")
    p.add_argument("--target", action="append", default=[], metavar="'NAME s3://BUCKET/PREFIX/ [endpoint=URL] "
                   "[profile=P] [region=R] [ca_bundle=FILE]'",
                   help="a store to compare on (repeatable; default: the URL's, else two buckets of the embedded "
                        "server); ca_bundle: the CAs every client trusts over TLS")
    p.add_argument("--clients", default=",".join(CLIENTS), help=f"which clients (default: {','.join(CLIENTS)})")
    p.add_argument("--size", type=size_arg, default=100 << 20, help="object size (default 100MiB)")
    p.add_argument("--repeat", type=positive_int, default=5, help="rounds (default 5)")
    p.add_argument("--concurrency", "-c", type=positive_int, default=16,
                   help="requests in flight, for clients that take it (default 16)")
    p.add_argument("--part-size", type=size_arg, default=8 << 20, help="part / range size (default 8MiB)")
    p.add_argument("--endpoint-for", action="append", default=[], metavar="CLIENT=URL",
                   help="send one client through another endpoint (a proxy, another host name)")
    o = p.add_argument_group("output")
    o.add_argument("--out", "-o", help="write the dataset into this new directory (default: runs/<UTC time>-compare)")
    o.add_argument("--no-save", action="store_true", help="keep no dataset (the tables only)")
    o.add_argument("--figures", action="store_true", help="draw the timing figure into the dataset's directory")
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, pause_collector=False)


def execute(args, invocation: Invocation):
    """Every client's runs on the stores ``args`` name: a DataFrame, one row per client run."""
    names = split_list(args.clients)
    unknown = set(names) - set(CLIENTS)
    if unknown or not names:
        raise UsageError(f"unknown client(s) {', '.join(sorted(unknown)) or '(none)'}: "
                         f"choose from {', '.join(CLIENTS)}")
    endpoint_for = dict(item.split("=", 1) for item in args.endpoint_for if "=" in item)
    if len(endpoint_for) != len(args.endpoint_for) or set(endpoint_for) - set(CLIENTS):
        raise UsageError("--endpoint-for takes CLIENT=URL with a known client")
    targets = [Target.parse(t) for t in args.target] + ([single_target(args)] if args.url else [])
    if not targets and (args.endpoint or args.region or args.profile or args.ca_bundle):
        raise UsageError("the target options describe a store at a URL: give s3://BUCKET/PREFIX/")
    resolve_out(args, "compare")
    names = available(names, invocation.say)
    options = dict(size=args.size, repeat=args.repeat, out=args.out, concurrency=args.concurrency,
                   part_size=args.part_size, endpoint_for=endpoint_for, say=invocation.say)
    if targets:
        return _with_figure(run_compare(targets, names, **options), args, invocation)
    with invocation.local_server() as server:
        from objperf.s3.client import S3Client

        for name in ("local-a", "local-b"):
            S3Client(server.settings()).create_bucket(f"objperf-{name}")
            targets.append(Target(name, f"objperf-{name}", "", server.endpoint, "us-east-1", None,
                                  (server.access_key, server.secret_key)))
        return _with_figure(run_compare(targets, names, **options), args, invocation)


def _with_figure(frame, args, invocation: Invocation):
    """``frame``, its timing figure drawn into the dataset first when ``--figures`` asks."""
    ok = frame[frame["ok"]]
    if args.out and args.figures and len(ok):
        from objperf import plots

        runs = ok.rename(columns={"target": "provider", "rep": "run", "wall_s": "seconds"})
        ax = plots.timing_runs(runs, title=f"{args.size / (1 << 20):g} MiB, {args.repeat} runs per client and store")
        ax.figure.savefig(Path(args.out) / "compare.png", dpi=120)
        invocation.say(f"figure {Path(args.out) / 'compare.png'}")
    return frame


def single_target(args) -> Target:
    """The store of the URL and the target options, as the one ``--target`` it stands for."""
    words = [urlsplit(args.endpoint).hostname if args.endpoint else "s3", args.url]
    words += [f"{name}={value}" for name, value in (("endpoint", args.endpoint), ("profile", args.profile),
                                                     ("region", args.region), ("ca_bundle", args.ca_bundle)) if value]
    return Target.parse(shlex.join(words))


def report(frame, args, invocation: Invocation) -> int:
    from objperf.analysis.stats import client_means, timing_table
    from objperf.sanitize import printable

    runs = frame.rename(columns={"target": "provider", "rep": "run", "wall_s": "seconds"})
    ok = runs[runs["ok"]]
    if len(ok):
        print(timing_table(ok).round(3).to_string())
        print()
        print(client_means(ok).round(3).to_string(index=False))
    timed_inside = ok[ok["startup_s"].notna()] if "startup_s" in ok else ok.iloc[:0]
    for client, part in timed_inside.groupby("client"):
        print(f"{client}: timed inside its process around the transfer, as the S3-vs-R2 article timed it; starting "
              f"it took {part['startup_s'].mean():.2f} s more on average, not counted above")
    failed = runs[~runs["ok"]]
    for row in failed.itertuples():
        print(printable(f"FAILED {row.client} {row.operation} on {row.provider} run {row.run}: {row.detail}"))
    if args.out:
        invocation.say(f"dataset {args.out} ({len(frame)} client runs)")
    if frame.attrs.get("status") == "interrupted":
        return 130
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m objperf.study NAME`` — one experiment of the published benchmark,
run as a sweep against any endpoint (or the embedded SeaweedFS), one dataset
per study with the grid values as columns.

Studies: read-concurrency, write-part-size, key-fanout, bucket-fanout, ip-family,
mixed, sustained, ttfb-size, hot-object, ceiling-proof, client-cpu.
``--quick`` shrinks every grid and duration to a smoke test."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from objperf.cli import (
    EXIT_ERROR,
    Invocation,
    add_cluster_args,
    add_connection_args,
    add_target_args,
    check_target_flags,
    command_main,
    connection_kwargs,
    default_out,
    duration_arg,
    interrupted_exit,
    new_parser,
    positive_int,
    s3_settings,
    size_arg,
    split_list,
)
from objperf.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

PROG = "objperf study"
WORKSPACE = "objperf-study/"

EXAMPLES = """examples:
  python -m objperf.study read-concurrency --quick --out runs/rc-quick          # embedded SeaweedFS
  python -m objperf.study read-concurrency s3://bucket/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
      --region auto --profile r2-test --out runs/r2-read-concurrency
  python -m objperf.study hot-object s3://bucket/ --endpoint URL --replicas 8 --out runs/hot
  python -m objperf.study bucket-fanout s3://b1/ --buckets b1,b2 --endpoint URL --out runs/buckets
"""


def build_parser():
    from objperf.studies.catalog import STUDIES

    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("name", choices=sorted(STUDIES), metavar="NAME", help="the study: " + ", ".join(STUDIES))
    p.add_argument("url", nargs="?", help="s3://BUCKET/PREFIX/ the study may write under (objects go to "
                                          f"PREFIX{WORKSPACE}); omit to use the embedded local SeaweedFS")
    add_target_args(p)
    p.add_argument("--out", "-o", help="the study's directory; rerunning into it skips finished steps "
                                       "(default: runs/<UTC time>-study-NAME)")
    p.add_argument("--quick", action="store_true", help="small grids and short steps (a smoke test)")
    p.add_argument("--repeat", type=positive_int, default=1, help="repetitions of every step (default 1)")
    p.add_argument("--duration", "-d", type=duration_arg, help="seconds per step (default 20s, quick 1s; "
                                                               "sustained: 10m, quick 4s)")
    p.add_argument("--object-size", type=size_arg, help="size of the object read (default 1GiB, quick 32MiB)")
    w = p.add_argument_group("workload (each wins over the study's default, --quick's too)")
    w.add_argument("--concurrency", "-c", type=positive_int,
                   help="requests in flight, reads and writes (default: 256 reads, 192 parts; quick 16)")
    w.add_argument("--read-concurrency", type=positive_int, help="reads in flight (default: --concurrency)")
    w.add_argument("--write-concurrency", type=positive_int, help="parts in flight (default: --concurrency)")
    w.add_argument("--range-size", type=size_arg, help="bytes per ranged GET (default 8MiB, quick 1MiB)")
    w.add_argument("--part-size", type=size_arg, help="bytes per uploaded part (default 32MiB, quick 5MiB)")
    w.add_argument("--sink", choices=("ram", "discard"), help="where read bodies go (default ram)")
    w.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="the values a study sweeps, e.g. concurrency=16,64,256,1024 or part_size=8MiB,32MiB "
                        "(repeatable)")
    add_connection_args(p)
    p.add_argument("--other-url", help="ceiling-proof: an unrelated http(s) URL to read beside the store")
    p.add_argument("--replicas", type=positive_int, default=32,
                   help="hot-object: the most replicas the sweep of 2, 4, 8 … tries (default 32)")
    p.add_argument("--replica-buckets", action="store_true",
                   help="hot-object: put replicas in separate buckets (for a per-bucket throttle)")
    p.add_argument("--throttle", type=positive_int, default=8,
                   help="embedded server only, hot-object: reads in flight per bucket before it answers 503")
    p.add_argument("--cleanup", action="store_true", help=f"delete PREFIX{WORKSPACE} afterwards")
    add_cluster_args(p)
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, pause_collector=False, transfers=True)


@dataclass
class StudyOutcome:
    path: Path
    status: str  # complete | interrupted | failed: how the study's last step ended
    steps: pd.DataFrame


def execute(args, invocation: Invocation) -> StudyOutcome:
    """The study ``args`` name, against the URL's store or ``invocation``'s local server; every step on every
    host of a cluster with ``--cluster``."""
    from objperf.cluster.runner import check_cluster_args, cluster_asked

    check_cluster_args(args)
    check_target_flags(args)
    check_workload_options(args)  # before any server starts
    if not args.out:
        args.out = str(default_out(f"study-{args.name}"))
    if not cluster_asked(args):
        return run_target(args, invocation)
    from objperf.cluster.runner import cluster_of

    with cluster_of(args, invocation) as cluster:
        return run_target(args, invocation, cluster)


def run_target(args, invocation: Invocation, cluster=None) -> StudyOutcome:
    """The study against the URL's store or ``invocation``'s local server."""
    if args.url:
        from objperf.s3.target import split_s3_url

        bucket, prefix = split_s3_url(args.url)
        return run_named(args, s3_settings(args), bucket, prefix, invocation, cluster=cluster)
    with invocation.local_server(ipv6=True) as server:
        from objperf.s3.client import S3Client

        client = S3Client(server.settings())
        buckets = split_list(args.buckets) or ["objperf", "objperf-b2"]
        for bucket in buckets:
            client.create_bucket(bucket)
        args.buckets = ",".join(buckets)
        settings = server.settings()
        if args.name == "ip-family":  # "localhost" names both ::1 and 127.0.0.1 on the IPv6 gateway
            settings = dataclasses.replace(settings, endpoint=f"http://localhost:{server.s3_port6}")
        if args.name == "hot-object":
            args.replica_buckets = True
        return run_named(args, settings, buckets[0], "", invocation, server=server, cluster=cluster)


def report(outcome: StudyOutcome, args, invocation: Invocation) -> int:
    from objperf.sanitize import printable_lines

    table = outcome.steps
    print(printable_lines(step_table(table)))
    if args.name == "hot-object" and "replicas" in table:
        from objperf.analysis.stats import CURED_SHARE, replicas_that_cure

        cure = replicas_that_cure(table)
        tried = int(table["replicas"].max())
        invocation.say(f"hot object: fewer than {CURED_SHARE:.0%} of requests failed from {cure} replicas on"
                       if cure is not None else
                       f"hot object: not cured by {tried} replicas (--replicas raises the sweep's cap)")
    invocation.say(f"study dataset {outcome.path} ({outcome.status})")
    if outcome.status == "interrupted":
        return interrupted_exit()
    return 0 if outcome.status == "complete" else EXIT_ERROR


# The step results a study prints, under headers with their units; steps.parquet keeps all of them.
SHOWN_RESULTS = {"requests": "requests", "error_rate": "failed %", "steady_gbps": "steady read Gbps",
                 "read_gbps": "read Gbps", "write_acknowledged_gbps": "write Gbps (acked)",
                 "ttfb_ms_p50": "TTFB p50 ms", "ttfb_ms_p99": "TTFB p99 ms"}


def step_table(steps, width: int = 100) -> str:
    """The steps as a terminal shows them: the grid's values, then the results that were measured (a
    direction a study did not use is left out), units in the headers, ``width`` columns at most (the
    right-most results give way first)."""
    from objperf.sizes import format_size
    from objperf.studies.sweep import STEP_RESULTS

    grid = [c for c in steps.columns if c not in STEP_RESULTS and c not in ("step", "rep", "tags")]
    shown = steps[grid].copy()
    for name in ("part_size", "object_size", "range_size"):
        if name in shown:
            shown[name] = shown[name].map(format_size)
    for name, header in SHOWN_RESULTS.items():
        if name not in steps or (name in ("read_gbps", "write_acknowledged_gbps")
                                 and not (steps[name].fillna(0) > 0).any()):
            continue
        if name == "steady_gbps" and not (steps.get("read_gbps", 0) > 0).any():
            continue  # a study of writes: only acknowledged bytes count, and steady Gbps counts parts sent
        shown[header] = steps[name] * (100 if name == "error_rate" else 1)
        if name == "steady_gbps":  # counts every byte moved: a read rate only where a step only read
            shown[header] = shown[header].where((steps["read_gbps"] > 0) & (steps.get("write_gbps", 0) == 0))
    if "rep" in steps and steps["rep"].nunique() > 1:
        shown.insert(0, "rep", steps["rep"])
    while True:
        text = shown.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="-")  # not measured: "-"
        if max(map(len, text.splitlines())) <= width or len(shown.columns) <= len(grid) + 1:
            return text
        shown = shown.iloc[:, :-1]


QUICK_OBJECT_SIZE = 32 << 20


def quick_duration(name: str) -> float:
    """Seconds per step of a --quick study."""
    return 4.0 if name == "sustained" else 1.0


def run_named(args, settings, bucket: str, prefix: str, invocation: Invocation, *, server=None,
              cluster=None) -> StudyOutcome:
    from objperf.studies.catalog import FIXED, STUDIES, StudyContext
    from objperf.studies.sweep import expanded, load_steps, on_hosts, run_sweep

    if prefix and not prefix.endswith("/"):
        raise UsageError("the study URL names a prefix: end it with '/'")
    quick = args.quick
    default_duration = quick_duration(args.name) if quick else (600.0 if args.name == "sustained" else 20.0)
    ctx = StudyContext(settings=settings, bucket=bucket, prefix=prefix + WORKSPACE, quick=quick,
                       duration=args.duration or default_duration,
                       object_size=args.object_size or (QUICK_OBJECT_SIZE if quick else (1 << 30)),
                       buckets=split_list(args.buckets), other_url=args.other_url,
                       replicas=args.replicas,
                       replica_buckets=args.replica_buckets, server=server, url_lifetime=args.url_lifetime,
                       cluster=cluster, say=invocation.say)
    ctx.threads = args.threads
    ctx.read_options, ctx.write_options, ctx.grids = check_workload_options(args)
    hosts = ctx.grids.pop("hosts", None)
    if hosts and cluster is not None:
        cluster.first(max(hosts))  # too few workers: one line before any traffic
    sources = ctx.grids.pop("sources", None)
    if sources and max(sources) > len(split_list(args.interface)):
        raise UsageError(f"--grid sources={','.join(map(str, sources))} needs --interface with at least "
                         f"{max(sources)} source addresses or NICs")
    ctx.swept = FIXED.get(args.name, frozenset())
    ctx.object_size_given = args.object_size is not None
    steps = expanded(on_hosts(STUDIES[args.name](ctx), hosts), "sources", sources, ctx.with_sources)
    if server is not None and args.name == "hot-object":
        hot = [ctx.bucket] + [f"{ctx.bucket}-hot{i}" for i in range(1, max(2, ctx.replicas))]
        server.limit_concurrent_reads(hot, args.throttle)
        invocation.say(f"local server answers 503 beyond {args.throttle} reads in flight per bucket")
    parameters = {"quick": quick, "duration_s": ctx.duration, "object_size": ctx.object_size, "bucket": bucket,
                  "prefix": ctx.prefix, **settings.describe(), "endpoint": ctx.client.endpoint,
                  "repeat": args.repeat, "threads": ctx.threads}
    if cluster is not None:
        parameters["hosts"] = [host.label for host in cluster.hosts]
    if server is not None:  # a new embedded server each time, on fresh ports: the same target
        parameters["endpoint"] = "embedded SeaweedFS"
    out = run_sweep(args.name, steps, args.out, repeat=args.repeat, parameters=parameters, say=invocation.say)
    if args.cleanup:
        for b in {bucket, *ctx.buckets}:
            for key, _ in ctx.client.list_keys(b, ctx.prefix):
                ctx.client.delete_object(b, key)
    from objperf.dataset import read_manifest

    return StudyOutcome(Path(out), read_manifest(out)["status"], load_steps(out))


GRID_SIZES = frozenset({"part_size", "object_size", "range_size"})  # the others are counts


def parse_grids(texts: list[str], study: str, *, cluster: bool = False) -> dict[str, list[int]]:
    """``--grid NAME=V1,V2,...`` for what ``study`` sweeps (and the hosts of a cluster, or the first N of
    ``--interface``'s source addresses, every step runs from);
    anything else is one line and exit 2."""
    from objperf.studies.catalog import GRIDS

    grids: dict[str, list[int]] = {}
    allowed = GRIDS.get(study, frozenset())
    for text in texts:
        name, _, values = text.partition("=")
        name = name.strip().replace("-", "_")
        if name == "hosts" and not cluster:
            raise UsageError(f"bad --grid {text!r}: hosts are a cluster's; give --cluster or --local-cluster")
        if name not in allowed | {"hosts", "sources"}:
            sweeps = ", ".join(sorted(allowed)) or "nothing --grid can set"
            raise UsageError(f"bad --grid {text!r}: {study} sweeps {sweeps}")
        try:
            parsed = [size_arg(v) if name in GRID_SIZES else positive_int(v) for v in values.split(",") if v]
        except Exception as exc:  # argparse's type errors: one line either way
            raise UsageError(f"bad --grid {text!r}: {exc}") from None
        if not parsed or any(v < 1 for v in parsed):
            raise UsageError(f"bad --grid {text!r}: give one or more positive values")
        grids[name] = parsed
    return grids


def check_workload_options(args) -> tuple[dict, dict, dict]:
    """The read options, write options and grids given, checked against what the study sets itself."""
    from objperf.studies.catalog import GRIDS, REFUSED

    reads, writes = workload_options(args, parser_defaults())
    from objperf.cluster.runner import cluster_asked

    grids = parse_grids(args.grid, args.name, cluster=cluster_asked(args))
    refused = sorted((set(reads) | set(writes)) & REFUSED.get(args.name, frozenset()))
    if refused:
        hint = f"; give its values with --grid {refused[0]}=..." if refused[0] in GRIDS.get(args.name, ()) else ""
        raise UsageError(f"{args.name} sets {', '.join(refused)} itself in every step{hint}")
    return reads, writes, grids


def parser_defaults() -> dict:
    parser = build_parser()
    return {action.dest: action.default for action in parser._actions}


def workload_options(args, defaults: dict) -> tuple[dict, dict]:
    """The workload options given on the command line (not left at their defaults), for reads and for
    writes, as workload keywords."""
    def given(dest: str) -> bool:
        return getattr(args, dest) is not None and getattr(args, dest) != defaults.get(dest)

    common = {key: value for key, value in connection_kwargs(args).items()
              if given({"http_version": "http", "keepalive": "no_keepalive"}.get(key, key))}
    if given("threads"):
        common["threads"] = args.threads
    reads, writes = dict(common), dict(common)
    read_c, write_c = args.read_concurrency or args.concurrency, args.write_concurrency or args.concurrency
    if read_c:
        reads["concurrency"] = read_c
    if write_c:
        writes["concurrency"] = write_c
    for dest, target in (("range_size", reads), ("sink", reads), ("part_size", writes)):
        if getattr(args, dest) is not None:
            target[dest] = getattr(args, dest)
    return reads, writes


if __name__ == "__main__":
    sys.exit(main())

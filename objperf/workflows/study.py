"""A study: one experiment of the published benchmark run as a sweep of steps, against the URL's store or the
embedded server, on one host or every host of a cluster; one dataset per study with the grid values as
columns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from objperf.core.errors import UsageError
from objperf.dataset.destination import Destination
from objperf.dataset.layout import local_place
from objperf.options.kinds import COUNT, SIZE
from objperf.options.study import WORKSPACE, StudyOptions
from objperf.run.invocation import Invocation, default_out
from objperf.studies.grids import GRIDS, REFUSED, step_seconds

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class StudyOutcome:
    path: Path
    status: str  # complete | interrupted | failed: how the study's last step ended
    steps: pd.DataFrame
    figures: list[Path] = field(default_factory=list)  # --figures: the study's figures drawn


def study(options: StudyOptions, invocation: Invocation) -> StudyOutcome:
    """The study ``options`` name, against the URL's store or ``invocation``'s local server; every step on every
    host of a cluster with ``--cluster``."""
    options.check_cluster()
    options.check_target()
    check_workload_options(options)  # before any server starts
    if not options.out:
        options.out = str(default_out(f"study-{options.name}"))
    invocation.destination = Destination(directory=local_place(options.out))  # before any server starts
    if options.figures:
        from objperf.plots import studies  # noqa: F401 - a missing extra is said before any step runs
    if not options.cluster_asked():
        outcome = run_target(options, invocation)
    else:
        from objperf.cluster.runner import cluster_of

        with cluster_of(options, invocation) as cluster:
            outcome = run_target(options, invocation, cluster)
    if options.figures and len(outcome.steps):
        from objperf.plots.studies import draw_study_figures

        outcome.figures = draw_study_figures(outcome.path, options.figures)
    return outcome


def run_target(options: StudyOptions, invocation: Invocation, cluster=None) -> StudyOutcome:
    """The study against the URL's store or ``invocation``'s local server."""
    if options.url:
        from objperf.s3.target import split_s3_url

        bucket, prefix = split_s3_url(options.url)
        return run_named(options, options.s3_settings(), bucket, prefix, invocation, cluster=cluster)
    with invocation.local_server(ipv6=True) as server:
        from objperf.s3.client import S3Client

        client = S3Client(server.settings())
        buckets = list(options.buckets) or ["objperf", "objperf-b2"]
        for bucket in buckets:
            client.create_bucket(bucket)
        options.buckets = tuple(buckets)
        settings = server.settings()
        if options.name == "ip-family":  # "localhost" names both ::1 and 127.0.0.1 on the IPv6 gateway
            settings = dataclasses.replace(settings, endpoint=f"http://localhost:{server.s3_port6}")
        if options.name == "hot-object":
            options.replica_buckets = True
        return run_named(options, settings, buckets[0], "", invocation, server=server, cluster=cluster)



QUICK_OBJECT_SIZE = 32 << 20


def quick_duration(name: str) -> float:
    """Seconds per step of a --quick study."""
    return step_seconds(name, True)


def run_named(options: StudyOptions, settings, bucket: str, prefix: str, invocation: Invocation, *, server=None,
              cluster=None) -> StudyOutcome:
    from objperf.dataset.directory import load_steps
    from objperf.studies.catalog import STUDIES
    from objperf.studies.context import StudyContext
    from objperf.studies.grids import FIXED
    from objperf.studies.sweep import expanded, on_hosts, run_sweep

    if prefix and not prefix.endswith("/"):
        raise UsageError("the study URL names a prefix: end it with '/'")
    quick = options.quick
    default_duration = step_seconds(options.name, quick)
    ctx = StudyContext(settings=settings, bucket=bucket, prefix=prefix + WORKSPACE, quick=quick,
                       duration=options.duration or default_duration,
                       object_size=options.object_size or (QUICK_OBJECT_SIZE if quick else (1 << 30)),
                       buckets=list(options.buckets), other_url=options.other_url,
                       replicas=options.replicas,
                       replica_buckets=options.replica_buckets, server=server, url_lifetime=options.url_lifetime,
                       cluster=cluster, say=invocation.say, reseed=options.reseed, seeding=invocation.seeding)
    ctx.threads = options.threads
    ctx.read_options, ctx.write_options, ctx.grids = check_workload_options(options)
    hosts = ctx.grids.pop("hosts", None)
    if hosts and cluster is not None:
        cluster.first(max(hosts))  # too few workers: one line before any traffic
    sources = ctx.grids.pop("sources", None)
    if sources and max(sources) > len([s for s in (options.interface or "").split(",") if s]):
        raise UsageError(f"--grid sources={','.join(map(str, sources))} needs --interface with at least "
                         f"{max(sources)} source addresses or NICs")
    ctx.swept = FIXED.get(options.name, frozenset())
    ctx.object_size_given = options.object_size is not None
    ctx.duration_given = options.duration is not None
    steps = expanded(on_hosts(STUDIES[options.name](ctx), hosts), "sources", sources, ctx.with_sources)
    if server is not None and options.name == "hot-object":
        hot = [ctx.bucket] + [f"{ctx.bucket}-hot{i}" for i in range(1, max(2, ctx.replicas))]
        server.limit_concurrent_reads(hot, options.throttle)
        invocation.say(f"local server answers 503 beyond {options.throttle} reads in flight per bucket")
    parameters = {"quick": quick, "duration_s": ctx.duration, "object_size": ctx.object_size_used, "bucket": bucket,
                  "prefix": ctx.prefix, **settings.describe(), "endpoint": ctx.client.endpoint,
                  "repeat": options.repeat, "threads": ctx.threads}
    if cluster is not None:
        parameters["hosts"] = [host.label for host in cluster.hosts]
    if server is not None:  # a new embedded server each time, on fresh ports: the same target
        parameters["endpoint"] = "embedded SeaweedFS"
    out = run_sweep(options.name, steps, options.out, repeat=options.repeat, parameters=parameters, say=invocation.say)
    if options.cleanup:
        for b in {bucket, *ctx.buckets}:
            for key, _ in ctx.client.list_keys(b, ctx.prefix):
                ctx.client.delete_object(b, key)
    from objperf.dataset.directory import read_manifest

    return StudyOutcome(Path(out), read_manifest(out)["status"], load_steps(out))


GRID_SIZES = frozenset({"part_size", "object_size", "range_size"})  # the others are counts


def parse_grids(texts: list[str], study: str, *, cluster: bool = False) -> dict[str, list[int]]:
    """``--grid NAME=V1,V2,...`` for what ``study`` sweeps (and the hosts of a cluster, or the first N of
    ``--interface``'s source addresses, every step runs from);
    anything else is one line and exit 2."""
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
            parsed = [SIZE.parse(v) if name in GRID_SIZES else COUNT.parse(v) for v in values.split(",") if v]
        except Exception as exc:  # argparse's type errors: one line either way
            raise UsageError(f"bad --grid {text!r}: {exc}") from None
        if not parsed or any(v < 1 for v in parsed):
            raise UsageError(f"bad --grid {text!r}: give one or more positive values")
        grids[name] = parsed
    return grids


def check_workload_options(options: StudyOptions) -> tuple[dict, dict, dict]:
    """The read options, write options and grids given, checked against what the study sets itself."""
    reads, writes = workload_options(options)
    grids = parse_grids(options.grid, options.name, cluster=options.cluster_asked())
    refused = sorted((set(reads) | set(writes)) & REFUSED.get(options.name, frozenset()))
    if refused:
        hint = f"; give its values with --grid {refused[0]}=..." if refused[0] in GRIDS.get(options.name, ()) else ""
        raise UsageError(f"{options.name} sets {', '.join(refused)} itself in every step{hint}")
    return reads, writes, grids


def workload_options(options: StudyOptions) -> tuple[dict, dict]:
    """The workload options given (not left at their defaults), for reads and for writes, as workload
    keywords."""
    defaults = {field.name: field.default for field in dataclasses.fields(StudyOptions)}

    def given(dest: str) -> bool:
        return getattr(options, dest) is not None and getattr(options, dest) != defaults.get(dest)

    common = {key: value for key, value in options.connection_kwargs().items()
              if given({"http_version": "http", "keepalive": "no_keepalive"}.get(key, key))}
    if given("threads"):
        common["threads"] = options.threads
    reads, writes = dict(common), dict(common)
    read_c, write_c = options.read_concurrency or options.concurrency, options.write_concurrency or options.concurrency
    if read_c:
        reads["concurrency"] = read_c
    if write_c:
        writes["concurrency"] = write_c
    for dest, target in (("range_size", reads), ("sink", reads), ("part_size", writes)):
        if getattr(options, dest) is not None:
            target[dest] = getattr(options, dest)
    return reads, writes



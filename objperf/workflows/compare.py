"""objperf against other S3 clients (s5cmd, the AWS CLI, boto3, the AWS CRT, the Ruby SDK, curl) on the same
objects of one or more stores, interleaved, N repetitions: a DataFrame, one row per client run."""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import urlsplit

from objperf.core.errors import UsageError
from objperf.options.compare import CompareOptions
from objperf.options.names import CLIENTS
from objperf.peers.compare import Target, available, run_compare
from objperf.run.invocation import Invocation, resolve_out


def compare(options: CompareOptions, invocation: Invocation):
    """Every client's runs on the stores ``options`` name: a DataFrame, one row per client run."""
    names = list(options.clients)
    unknown = set(names) - set(CLIENTS)
    if unknown or not names:
        raise UsageError(f"unknown client(s) {', '.join(sorted(unknown)) or '(none)'}: "
                         f"choose from {', '.join(CLIENTS)}")
    endpoint_for = dict(item.split("=", 1) for item in options.endpoint_for if "=" in item)
    if len(endpoint_for) != len(options.endpoint_for) or set(endpoint_for) - set(CLIENTS):
        raise UsageError("--endpoint-for takes CLIENT=URL with a known client")
    targets = [Target.parse(t) for t in options.target] + ([single_target(options)] if options.url else [])
    if not targets and (options.endpoint or options.region or options.profile or options.ca_bundle):
        raise UsageError("the target options describe a store at a URL: give s3://BUCKET/PREFIX/")
    out = resolve_out(options, "compare", invocation).directory
    names = available(names, invocation.say)
    given = dict(size=options.size, repeat=options.repeat, out=out, concurrency=options.concurrency,
                 part_size=options.part_size, endpoint_for=endpoint_for, say=invocation.say)
    if targets:
        return _with_figure(run_compare(targets, names, **given), out, options, invocation)
    with invocation.local_server() as server:
        from objperf.s3.client import S3Client

        for name in ("local-a", "local-b"):
            S3Client(server.settings()).create_bucket(f"objperf-{name}")
            targets.append(Target(name, f"objperf-{name}", "", server.endpoint, "us-east-1", None,
                                  (server.access_key, server.secret_key)))
        return _with_figure(run_compare(targets, names, **given), out, options, invocation)


def _with_figure(frame, out: Path | None, options: CompareOptions, invocation: Invocation):
    """``frame``, its timing figure drawn into the dataset ``out`` first when ``--figures`` asks."""
    ok = frame[frame["ok"]]
    if out and options.figures and len(ok):
        from objperf.plots.steps import timing_runs

        runs = ok.rename(columns={"target": "provider", "rep": "run", "wall_s": "seconds"})
        title = f"{options.size / (1 << 20):g} MiB, {options.repeat} runs per client and store"
        ax = timing_runs(runs, title=title)
        ax.figure.savefig(out / "compare.png", dpi=120)
        invocation.say(f"figure {out / 'compare.png'}")
    return frame


def single_target(options: CompareOptions) -> Target:
    """The store of the URL and the target options, as the one ``--target`` it stands for."""
    words = [urlsplit(options.endpoint).hostname if options.endpoint else "s3", options.url]
    named = (("endpoint", options.endpoint), ("profile", options.profile), ("region", options.region),
             ("ca_bundle", options.ca_bundle))
    words += [f"{name}={value}" for name, value in named if value]
    return Target.parse(shlex.join(words))

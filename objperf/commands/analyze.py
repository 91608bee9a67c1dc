"""``objperf analyze DIR [DIR …]`` — a saved dataset (a run, a study, a bundle, several at once) summarised
again from its rows: filtered by operation, host and time window, grouped by any column or workload setting,
with figures, without Python."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from objperf.commands.common import command_main
from objperf.commands.parser import add_option, new_parser
from objperf.options.groups import OutputOptions, TargetOptions
from objperf.run.invocation import Invocation

PROG = "objperf analyze"

EXAMPLES = """examples:
  objperf analyze runs/20261201T101500Z-fetch                       # the summary the run printed
  objperf analyze runs/a runs/b --by run_id                         # several runs, one line each
  objperf analyze runs/r2-read --op GET --window 10s..50s --json   # the steady part of a run
  objperf analyze runs/fleet --by host --figures figures/            # per host, and its figures
  objperf analyze runs/put-sizes --by size --op PUT,UPLOAD_PART     # per object size (put --sizes)
  objperf analyze s3://team-results/fleet/ --endpoint https://… --by host  # a dataset kept in a store
"""


def add_store_options(p) -> None:
    """The options naming the store of s3://BUCKET/PREFIX/ datasets."""
    store = p.add_argument_group("the store of s3://BUCKET/PREFIX/ datasets (objperf push, --out s3://…)")
    for name in STORE_OPTIONS:
        add_option(store, TargetOptions, name)


def build_parser():
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("paths", nargs="+", metavar="DIR", help="dataset directories, bundles (objperf pack) or "
                                                           "s3://BUCKET/PREFIX/ datasets")
    p.add_argument("--op", help="only these operations, e.g. GET or UPLOAD_PART,PUT")
    p.add_argument("--host", help="only this host's rows (a cluster run)")
    p.add_argument("--window", metavar="START..END",
                   help="only requests started in this window, in seconds from the first request, e.g. 10s..50s")
    p.add_argument("--by", help="a line per value of this column or workload setting (concurrency, range_size, "
                                "part_size, host, run_id, op, remote_ip, …); size: a line per object size, or per "
                                "power of two of them when the objects take more than 16 sizes")
    p.add_argument("--figures", metavar="DIR", help="draw throughput and TTFB figures of the selection into DIR "
                                                     "(a study: its own figures, beside the published values)")
    p.add_argument("--json", action="store_true", help="print the summary (and groups) as JSON")
    p.add_argument("--json-sketches", action="store_true", help="--json with the latency sketches (hundreds of "
                                                                "buckets each; the dataset's manifest keeps them)")
    p.add_argument("--scan", action="store_true",
                   help="analyse the rows where they lie (DuckDB, objperf[scale]), for more rows than memory holds: "
                        "TTFB from mergeable sketches (within 0.5 %%); --by a row column, a workload setting or size "
                        f"(default: on past {SCAN_ABOVE // 1_000_000} M rows)")
    add_option(p, OutputOptions, "price")
    add_store_options(p)
    return p


STORE_OPTIONS = ("endpoint", "region", "profile", "anonymous", "addressing", "ca_bundle", "no_verify_ssl")


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv)


def execute(args, invocation: Invocation) -> dict:
    """Datasets in a store are brought into a scratch directory first (checked against their manifests), and
    analysed there as any other."""
    with local_paths(args, PROG) as args.paths:
        return analyze(args, invocation)


@contextlib.contextmanager
def local_paths(args, prog: str) -> Iterator[list[str]]:
    """``args.paths`` with each s3:// dataset brought into a scratch directory for as long as the block lasts,
    in the store ``args``' STORE_OPTIONS name (``objperf report`` reads its datasets so too)."""
    from objperf.dataset.store_reader import local_copies
    from objperf.options.groups import store_settings

    store = {name: getattr(args, name) for name in STORE_OPTIONS}
    with local_copies(list(args.paths), lambda: store_settings(store, prog)) as local:
        yield local


def analyze(args, invocation: Invocation) -> dict:
    from objperf.analysis.saved import grouped, parse_window, select, summary_of, whole_run
    from objperf.dataset.directory import load

    if args.figures:
        require_plots("--figures")
    if args.scan or _rows_said(args.paths) > SCAN_ABOVE:
        return scanned(args, invocation)
    window = parse_window(args.window)
    df = load(args.paths if len(args.paths) > 1 else args.paths[0])
    selection = select(df, op=args.op, host=args.host, window=window)
    if selection.empty:
        from objperf.core.errors import UsageError

        raise UsageError("no rows match the --op, --host and --window given")
    whole = len(args.paths) == 1 and len(selection) == len(df) and "manifest" in df.attrs \
        and df.attrs["manifest"].get("kind") != "study"
    summary = whole_run(df) if whole else summary_of(selection)
    if args.price:
        from objperf.analysis.cost import costs

        summary["cost"] = costs(selection, args.price)
    pooled = int(selection["run_id"].nunique()) if "run_id" in selection else 1
    if pooled > 1 and args.by != "run_id" and not whole:  # a cluster run's hosts each have a run of their own
        summary["pooled_runs"] = pooled  # said, never done quietly
    outcome = {"summary": summary, "rows": len(selection),
               "workload": shown_workload(df.attrs["manifest"].get("workload")) if whole else None}
    if args.by:
        outcome["groups"] = grouped(selection, args.by)
    if args.figures and len(args.paths) == 1 and len(selection) == len(df) \
            and df.attrs.get("manifest", {}).get("kind") == "study":
        from objperf.plots.studies import draw_study_figures  # a study's own figures, as its notebook draws them

        outcome["figures"] = draw_study_figures(args.paths[0], args.figures)
    elif args.figures:
        from objperf.plots.figures import draw_run_figures

        Path(args.figures).mkdir(parents=True, exist_ok=True)
        outcome["figures"] = draw_run_figures(selection, args.figures, df.attrs.get("manifest"))
    return outcome


SCAN_ABOVE = 50_000_000  # rows: more than this are analysed where they lie, not loaded


def _rows_said(paths: list[str]) -> int:
    """The rows the datasets' manifests say they hold (0 where one does not say)."""
    from objperf.core.errors import ObjperfError
    from objperf.dataset.directory import read_manifest

    total = 0
    for path in paths:
        try:
            rows = read_manifest(path).get("rows", 0)
        except ObjperfError:  # a damaged manifest: loading says what is wrong with it
            return 0
        total += rows if isinstance(rows, int) and rows > 0 else 0
    return total


def _steady_rule(paths: list[str]):
    """The steady-state rule one dataset's manifest names, as a loaded analysis judges by; the default for
    several datasets pooled, or a manifest that cannot be read (loading says what is wrong with it)."""
    from objperf.analysis.steady import SteadyRule, rule_of
    from objperf.core.errors import ObjperfError
    from objperf.dataset.directory import read_manifest

    if len(paths) != 1:
        return SteadyRule()
    try:
        return rule_of(read_manifest(paths[0]).get("workload"))
    except ObjperfError:
        return SteadyRule()


def scanned(args, invocation: Invocation) -> dict:
    """The analysis of rows left where they lie: a summary, and groups by a row column."""
    from objperf.analysis.scan import groups_table, scan_summary_by
    from objperf.core.errors import UsageError
    from objperf.core.extras import require

    require("duckdb", "--scan" if args.scan else f"analysing more than {SCAN_ABOVE:,} rows where they lie (--scan)")
    given = [flag for flag, value in (("--op", args.op), ("--host", args.host), ("--window", args.window),
                                      ("--price", args.price)) if value]
    if given:
        raise UsageError(f"{', '.join(given)} need the rows loaded; a scan summarises them where they lie")
    if not args.scan:
        invocation.say(f"more than {SCAN_ABOVE:,} rows: analysed where they lie (--scan)")
    summary, groups = scan_summary_by(args.paths, args.by,  # a --by that cannot be is said before any row is read
                                      steady=_steady_rule(args.paths))
    outcome = {"summary": summary, "rows": summary["requests"]}
    if args.by:
        outcome["groups"] = groups_table(groups, args.by)
    if args.figures:
        from objperf.analysis.scan import timeline
        from objperf.analysis.sketch import Sketch
        from objperf.plots.figures import draw_scanned_figures

        Path(args.figures).mkdir(parents=True, exist_ok=True)
        outcome["figures"] = draw_scanned_figures(args.figures, timeline=timeline(args.paths), rows=outcome["rows"],
                                                  ttfb=Sketch.from_json(summary["sketches"]["ttfb_ms"]),
                                                  groups=outcome.get("groups"), by=args.by)
    return outcome


def require_plots(what: str) -> None:
    from objperf.core.extras import require

    require("matplotlib", what)
    require("seaborn", what)


def report(outcome: dict, args, invocation: Invocation) -> int:
    from objperf.analysis.summary_text import format_summary
    from objperf.core.jsontext import summary_json
    from objperf.core.sanitize import printable_lines

    groups = outcome.get("groups")
    if args.json or args.json_sketches:
        data = {"summary": outcome["summary"]}
        if groups is not None:
            data["groups"] = json.loads(groups.to_json(orient="records"))
        print(summary_json(data, sketches=args.json_sketches))  # a figure not measured is null, not Python's NaN
    else:
        print(format_summary(outcome["summary"], title=f"objperf analyze ({outcome['rows']:,} rows)",
                             workload=outcome.get("workload")))
        if groups is not None:  # group values are a dataset's (keys, error codes): printed without control bytes
            print(printable_lines(groups.to_string(index=False, float_format=lambda v: f"{v:.3f}")))
    for path in outcome.get("figures", []):
        invocation.say(f"figure {path}")
    return 0


# What each side of a workload must record, and as what, for the summary to say it.
WORKLOAD_SIDES = {"read": {"concurrency": int, "range_size": int, "sink": str},
                  "write": {"concurrency": int, "object_size": int, "part_size": int}}


def shown_workload(workload: object) -> dict | None:
    """A manifest's workload, when it records each side the summary tells as objperf writes it; else None (a
    workload a file made up records no setting, as ``objperf.analysis.saved`` reads it too)."""
    if not isinstance(workload, dict):
        return None
    if workload.get("op") == "copy":  # a copy run's, one side of its own
        return workload if all(isinstance(workload.get(k), int) and not isinstance(workload.get(k), bool)
                               for k in ("concurrency", "part_size")) else None
    for side, needed in WORKLOAD_SIDES.items():
        value = workload.get(side, workload if ("range_size" if side == "read" else "part_size") in workload else None)
        if value and not (isinstance(value, dict) and all(
                isinstance(value.get(k), kind) and not isinstance(value.get(k), bool) for k, kind in needed.items())):
            return None
    return workload


if __name__ == "__main__":
    sys.exit(main())

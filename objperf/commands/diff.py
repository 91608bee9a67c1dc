"""``objperf diff BEFORE AFTER [MORE …]`` — saved runs side by side: per group, each run's throughput (whole
and steady), requests/s, TTFB p50/p90/p99, error rate and commonest errors, CPU-s/GiB, and the change in
percent; a throughput change larger than the runs' own per-second spread is marked as beyond noise, and
runs of different workloads are flagged."""

from __future__ import annotations

import sys
from pathlib import Path

from objperf.commands.common import command_main
from objperf.commands.parser import new_parser
from objperf.run.invocation import Invocation

PROG = "objperf diff"
NOT_MEASURED = "not measured"

EXAMPLES = """examples:
  objperf diff runs/before runs/after
  objperf diff runs/c16 runs/c64 runs/c256 --by op --figures figures/cmp
  objperf diff runs/a runs/b --json
"""


def build_parser():
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("paths", nargs="+", metavar="DIR", help="two or more datasets or bundles; the first is the "
                                                           "reference")
    p.add_argument("--by", help="compare per value of this column or setting (op, host, concurrency, …; size: "
                                "per object size, one grouping for every run)")
    p.add_argument("--figures", metavar="DIR", help="into DIR, one figure per kind holding every run: throughput "
                                                   "over time, time to first byte, what changed beyond the noise")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv)


def execute(args, invocation: Invocation):
    from objperf.analysis.diff import compare_runs, load_runs
    from objperf.core.errors import UsageError

    if len(args.paths) < 2:
        raise UsageError("diff needs two or more datasets: BEFORE AFTER [MORE ...]")
    runs = load_runs(*args.paths)
    table = compare_runs(runs, by=args.by)
    if args.figures:
        from objperf.plots.figures import draw_diff_figures

        table.attrs["figures"] = draw_diff_figures(runs, Path(args.figures), table=table)
    return table


def report(table, args, invocation: Invocation) -> int:
    from objperf.analysis.diff import NOISY, as_json
    from objperf.core.sanitize import printable_lines

    if args.json:
        print(as_json(table))
    else:
        runs = table.attrs["runs"]
        shown = table.copy()
        shown["change_pct"] = shown["change_pct"].map(lambda v: "" if v != v else f"{v:+.1f}%")
        noisy = shown["metric"].isin(NOISY)
        shown["beyond_noise"] = [{True: "yes", False: "within noise"}.get(v, "cannot say" if is_noisy else "")
                                 for v, is_noisy in zip(shown["beyond_noise"], noisy)]
        for run in runs:  # a figure that was not measured is shown as such, not as NaN or 0
            shown[run] = shown[run].map(lambda v: NOT_MEASURED if isinstance(v, float) and v != v else v)
        print(printable_lines(shown[["group", "metric", *runs, "change_pct", "beyond_noise"]].to_string(
            index=False, float_format=lambda v: f"{v:.3f}")))
    for line in table.attrs.get("mismatches", []):
        invocation.say(f"warning: {line}: the comparison mixes workloads")
    for path in table.attrs.get("figures", []):
        invocation.say(f"figure {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

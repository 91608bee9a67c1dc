"""``objperf report PATH… [-o FILE.html]`` — a run, a study, several runs (compared), a bundle or an s3://
dataset as one self-contained HTML page: the summary with its units, where and how it ran, breakdowns, errors
and interactive figures, every script inlined, to open from disk or mail."""

from __future__ import annotations

import sys

from objperf.commands.common import command_main
from objperf.commands.parser import new_parser
from objperf.run.invocation import Invocation

PROG = "objperf report"
DEFAULT_OUT = "report.html"

EXAMPLES = """examples:
  objperf report runs/20261201T101500Z-fetch                  # report.html beside you
  objperf report runs/read-concurrency -o read-concurrency.html
  objperf report runs/before runs/after -o before-after.html  # the comparison and its noise verdicts
  objperf report s3://team-results/fleet/ --endpoint https://… -o fleet.html
"""


def build_parser():
    from objperf.commands.analyze import add_store_options

    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("paths", nargs="+", metavar="PATH", help="a run, a study, several runs, a bundle (objperf pack) "
                                                            "or an s3://BUCKET/PREFIX/ dataset")
    p.add_argument("-o", "--out", metavar="FILE.html", default=DEFAULT_OUT,
                   help=f"where to write the page (default: {DEFAULT_OUT})")
    add_store_options(p)
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv)


def execute(args, invocation: Invocation):
    from objperf.commands.analyze import local_paths
    from objperf.core.extras import require
    from objperf.report import build_report
    from objperf.report.material import label_of
    from objperf.report.page import writable

    require("bokeh", PROG)  # said before any dataset is brought from a store
    writable(args.out)
    with local_paths(args, PROG) as paths:
        return build_report(paths, args.out, labels=[label_of(p) for p in args.paths])


def report(out, args, invocation: Invocation) -> int:
    from objperf.core.sanitize import printable

    size = out.stat().st_size
    invocation.say(f"report {printable(out)} ({size / (1 << 20):.1f} MiB): open it in a browser, no network needed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

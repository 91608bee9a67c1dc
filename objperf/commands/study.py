"""``objperf study NAME`` — one experiment of the published benchmark, run as a sweep against any endpoint
(or the embedded SeaweedFS), one dataset per study with the grid values as columns.

Studies: read-concurrency, write-part-size, key-fanout, bucket-fanout, ip-family, mixed, sustained,
ttfb-size, hot-object, ceiling-proof, client-cpu, wan, rate-sweep, request-rate, checksums.  ``--quick`` shrinks every
grid and duration to a smoke test."""

from __future__ import annotations

from objperf.commands.common import command_main, interrupted_exit
from objperf.commands.parser import options_parser
from objperf.core.exits import EXIT_ERROR
from objperf.options.study import StudyOptions
from objperf.run.invocation import Invocation

PROG = "objperf study"

EXAMPLES = """examples:
  objperf study --list                                               # the studies, their questions
  objperf study read-concurrency --quick --out runs/rc-quick          # embedded SeaweedFS
  objperf study write-part-size --quick --figures figures/            # and its figures
  objperf study read-concurrency s3://bucket/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
      --region auto --profile r2-test --out runs/r2-read-concurrency
  objperf study hot-object s3://bucket/ --endpoint URL --replicas 8 --out runs/hot
  objperf study bucket-fanout s3://b1/ --buckets b1,b2 --endpoint URL --out runs/buckets
"""


def build_parser():
    import argparse

    class ListStudies(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            from objperf.studies.listing import study_list

            try:
                print(study_list(), flush=True)
            except BrokenPipeError:  # `objperf study --list | head`: the reader has what it wanted
                import os
                import sys

                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            parser.exit()

    parser = options_parser(StudyOptions, PROG, __doc__, EXAMPLES)
    parser.add_argument("--list", action=ListStudies, nargs=0,
                        help="list the studies: each one's question, and how long it runs, quick and full")
    return parser


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.study import study

    return command_main(PROG, build_parser, study, report, argv, options=StudyOptions, pause_collector=False,
                        transfers=True)


def report(outcome, options: StudyOptions, invocation: Invocation) -> int:
    from objperf.core.sanitize import printable_lines
    from objperf.dataset.directory import read_manifest
    from objperf.studies.table import step_table, study_summary

    table = outcome.steps
    manifest = read_manifest(outcome.path)
    if len(table):
        print(printable_lines(step_table(table, grid=manifest.get("grid"))))
    if options.name == "hot-object" and "replicas" in table:
        from objperf.analysis.stats import CURED_SHARE, replicas_that_cure

        cure = replicas_that_cure(table)
        tried = int(table["replicas"].max())
        invocation.say(f"hot object: fewer than {CURED_SHARE:.0%} of requests failed from {cure} replicas on"
                       if cure is not None else
                       f"hot object: not cured by {tried} replicas (--replicas raises the sweep's cap)")
    if options.name == "rate-sweep" and "rate_achieved" in table:
        from objperf.analysis.stats import saturation_rate

        found = saturation_rate(table)
        invocation.say(f"saturation from {found[0]:g} requests/s: {found[1]}" if found else
                       f"no saturation up to {table['rate'].max():g} requests/s (--grid rate=... goes further)")
    for path in outcome.figures:
        invocation.say(f"figure {path}")
    invocation.say(f"{options.name}: {study_summary(table, manifest.get('steps_planned'), outcome.status)}; "
                   f"study dataset {outcome.path} ({outcome.status})")
    if outcome.status == "interrupted":
        return interrupted_exit()
    return 0 if outcome.status == "complete" else EXIT_ERROR


if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

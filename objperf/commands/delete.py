"""``objperf delete`` — DELETE every object under a prefix (or the keys named) once, as many in flight as asked:
how fast the store deletes, one row per DELETE, the rate and latency in the summary.  With --batch N, DeleteObjects
of up to N keys each instead: one row a batch, keys deleted/s beside batches/s.

With no URL it seeds small objects on the embedded local SeaweedFS and deletes those."""

from __future__ import annotations

from objperf.commands.common import command_main, report
from objperf.commands.parser import options_parser
from objperf.options.runs import DeleteOptions

PROG = "objperf delete"

EXAMPLES = """examples:
  objperf delete                                            # local SeaweedFS: 1,000 objects of 4 KiB
  objperf put s3://bucket/small/ --object-size 4KiB --keys 10000 --endpoint URL
  objperf delete s3://bucket/small/ --endpoint URL -c 64     # what put wrote there, each object once
  objperf delete s3://bucket/small/ --endpoint URL --batch 1000 -c 4   # the same, 1,000 keys a DeleteObjects
"""


def build_parser():
    return options_parser(DeleteOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.transfers import delete

    return command_main(PROG, build_parser, delete, report, argv, options=DeleteOptions, transfers=True)


if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

"""``objperf list`` — ListObjectsV2 of a prefix, paged through with continuation tokens over and over by -c
listers: pages/s, keys/s and each page's latency, one row a page (its keys in ``length``), each page held to the
S3 contract.

With no URL it seeds small objects on the embedded local SeaweedFS and lists them."""

from __future__ import annotations

from objperf.commands.common import command_main, report
from objperf.commands.parser import options_parser
from objperf.options.runs import ListOptions

PROG = "objperf list"

EXAMPLES = """examples:
  objperf list                                              # local SeaweedFS: 2,000 objects, listed once
  objperf list --delimiter / --max-keys 100 -c 4 --duration 10s
  objperf list s3://bucket/small/ --endpoint URL -c 8 --duration 30s     # 8 listers paging, over and over
  objperf list s3://bucket/ --endpoint URL --delimiter / --passes 10     # the bucket's top level, 10 times
"""


def build_parser():
    return options_parser(ListOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.listing import list_objects

    return command_main(PROG, build_parser, list_objects, report, argv, options=ListOptions, transfers=True)


if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

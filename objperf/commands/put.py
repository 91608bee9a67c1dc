"""``objperf put`` — PUTs and multipart uploads, sent from one preallocated payload, across keys and
buckets; per-request rows to a dataset.

With no URL it starts a local SeaweedFS and writes to it."""

from __future__ import annotations

from objperf.commands.common import command_main, report
from objperf.commands.parser import options_parser
from objperf.options.runs import PutOptions

PROG = "objperf put"

EXAMPLES = """examples:
  objperf put                                               # local SeaweedFS: one 64 MiB object in 32 MiB parts
  objperf put s3://bucket/bench/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com --region auto \\
      --profile r2-test --object-size 1GiB --part-size 32MiB --concurrency 192 --duration 60s --keys 32 --cleanup
  objperf put s3://b1/out/ --buckets b1,b2 --object-size 256MiB --requests 20 --verify
"""


def build_parser():
    return options_parser(PutOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.transfers import put

    return command_main(PROG, build_parser, put, report, argv, options=PutOptions, transfers=True)


if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

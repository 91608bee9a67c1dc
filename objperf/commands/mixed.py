"""``objperf mixed`` — reads and writes at the same time, each with its own engine and concurrency: one
dataset with both directions, a summary per direction, so "reads alone, writes alone, both together" can
be compared.

With no URL it starts a local SeaweedFS, seeds the object to read and writes beside it."""

from __future__ import annotations

from objperf.commands.common import command_main, report
from objperf.commands.parser import options_parser
from objperf.options.runs import MixedOptions

PROG = "objperf mixed"

EXAMPLES = """examples:
  objperf mixed --duration 20s                              # local SeaweedFS
  objperf mixed s3://bucket/big.bin --write-to s3://bucket/mixed/ --endpoint URL \\
      --read-concurrency 256 --write-concurrency 192 --part-size 32MiB --object-size 1GiB --duration 60s
"""


def build_parser():
    return options_parser(MixedOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.transfers import mixed

    return command_main(PROG, build_parser, mixed, report, argv, options=MixedOptions, transfers=True)


if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

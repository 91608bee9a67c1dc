"""``objperf push DIR s3://BUCKET/PREFIX/`` — a dataset kept in the store a team already uses, checked
against its manifest first, the manifest last; ``objperf.load("s3://BUCKET/PREFIX/", endpoint=...)`` and
``objperf analyze`` read it back, every file checked against its size and SHA-256."""

from __future__ import annotations

import sys

from objperf.commands.common import command_main
from objperf.commands.parser import options_parser
from objperf.options.push import PushOptions
from objperf.run.invocation import Invocation

PROG = "objperf push"

EXAMPLES = """examples:
  objperf push runs/20261201T101500Z-fetch s3://team-results/r2/read-c64/ --profile team
  python -c 'import objperf; print(objperf.load("s3://team-results/r2/read-c64/", profile="team").shape)'
"""


def build_parser():
    return options_parser(PushOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, options=PushOptions)


def execute(options: PushOptions, invocation: Invocation) -> int:
    from objperf.dataset.store_reader import push

    return push(options.path, options.url, options.s3_settings(), say=invocation.say)


def report(count: int, options: PushOptions, invocation: Invocation) -> int:
    invocation.say(f"{count} files of {options.path} under {options.url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

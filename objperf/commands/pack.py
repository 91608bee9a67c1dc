"""``objperf pack DIR -o NAME.tar`` — a dataset or a study, checked against its manifest, in one file to send
(``.tar``, ``.tar.gz`` or ``.zip``); ``objperf.load`` and every command that reads datasets take the file
as they take the directory."""

from __future__ import annotations

import sys
from pathlib import Path

from objperf.commands.common import command_main
from objperf.commands.parser import new_parser
from objperf.dataset.bundle import pack
from objperf.run.invocation import Invocation

PROG = "objperf pack"

EXAMPLES = """examples:
  objperf pack runs/20261201T101500Z-fetch -o r2-read.tar
  objperf pack runs/study-read-concurrency -o rc.zip
  python -c 'import objperf; print(objperf.load("r2-read.tar").shape)'
"""


def build_parser():
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("path", metavar="DIR", help="the dataset or study directory")
    p.add_argument("-o", "--out", required=True, help="the bundle to write: NAME.tar, NAME.tar.gz or NAME.zip")
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv)


def execute(args, invocation: Invocation) -> Path:
    return pack(args.path, args.out)


def report(out: Path, args, invocation: Invocation) -> int:
    invocation.say(f"bundle {out} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

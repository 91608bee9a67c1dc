"""``objperf import TOOL FILE --out DIR`` — another benchmark's results as an objperf dataset, to load, plot
and compare beside objperf's own runs.

  warp      MinIO warp's per-operation file (--benchdata/--full, .csv.zst or .csv): one row per request
  elbencho  elbencho's --csvfile (a phases table) or --livecsv (an intervals table)"""

from __future__ import annotations

import sys
from pathlib import Path

from objperf.commands.common import command_main
from objperf.commands.parser import new_parser
from objperf.run.invocation import Invocation, default_out

PROG = "objperf import"
TOOLS = ("warp", "elbencho")

EXAMPLES = """examples:
  objperf import warp warp-get-2026-12-01.csv.zst --out runs/warp-get
  objperf import elbencho results.csv --out runs/elbencho
  objperf diff runs/warp-get runs/20261201T101500Z-fetch      # warp's run beside objperf's
"""


def build_parser():
    p = new_parser(PROG, __doc__, EXAMPLES)
    p.add_argument("tool", choices=TOOLS, help="the tool that wrote FILE")
    p.add_argument("file", metavar="FILE", help="its result file")
    p.add_argument("--out", "-o", help="the dataset to write (default: runs/<UTC time>-import-TOOL)")
    return p


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv)


def execute(args, invocation: Invocation) -> Path:
    from objperf.core.errors import UsageError

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    out = args.out or str(default_out(f"import-{args.tool}"))
    return import_warp_file(path, out) if args.tool == "warp" else import_elbencho_file(path, out)


def import_warp_file(path: Path, out: str | Path) -> Path:
    from objperf.imports import warp
    from objperf.imports.dataset import write_import

    rows, command = warp.parse(path)
    return write_import(out, source="warp", file=path.name, command=command, rows=rows)


def import_elbencho_file(path: Path, out: str | Path) -> Path:
    from objperf.imports import elbencho
    from objperf.imports.dataset import write_import

    kind, table, command = elbencho.parse(path)
    return write_import(out, source="elbencho", file=path.name, command=command, tables={kind: table})


def report(out: Path, args, invocation: Invocation) -> int:
    from objperf.dataset.directory import read_manifest

    manifest = read_manifest(out)
    what = f"{manifest['rows']:,} rows" if manifest.get("rows") else ", ".join(manifest.get("tables", []))
    if manifest.get("rows"):  # what objperf analyze of the dataset will say
        from objperf.analysis.saved import whole_run
        from objperf.analysis.summary_text import format_summary
        from objperf.dataset.directory import load

        print(format_summary(whole_run(load(out)), title=f"{args.tool} results from {args.file}"))
    invocation.say(f"{args.tool} results from {args.file} as dataset {out} ({what})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

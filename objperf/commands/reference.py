"""``python -m objperf.commands.reference [DOCS_DIR]``: the command-line reference (docs/cli.md) and a page
per study (docs/studies/NAME.md), written from the commands' parsers, the option definitions in
``objperf.options``, the studies' own code and the published tables; a test holds docs/ to them."""

from __future__ import annotations

import csv
import importlib
import inspect
import sys
from pathlib import Path

from objperf.commands import COMMANDS

HEADER = """# objperf command-line reference

Written by `python -m objperf.commands.reference` from the option definitions (`objperf.options`); the
same definitions give `objperf.api`'s keywords (`--range-size` is `range_size=`). Sizes are binary whatever
their unit (`8MB` = `8MiB` = 8,388,608 bytes, as the AWS CLI reads them); durations take `ms`, `s`, `m`,
`h` (`1h30m`). Every study has its own page in [studies/](studies/).
"""
# The published figure family each study redraws (objperf/analysis/articles/r2_benchmark.csv's "figure").
FIGURE_OF = {"write-part-size": "part-size", "ttfb-size": "ttfb", "client-cpu": "load-generators"}


def cli_reference() -> str:
    parts = [HEADER]
    for name, (module, what) in COMMANDS.items():
        parser = importlib.import_module(f"objperf.commands.{module}").build_parser()
        parts.append(f"## objperf {name}\n\n{what}.\n\n```\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def study_page(name: str) -> str:
    from objperf.studies.catalog import STUDIES
    from objperf.studies.grids import FIXED, GRIDS

    question = inspect.cleandoc(STUDIES[name].__doc__ or "")
    lines = [f"# Study `{name}`", "", question, "", "## Run it", "", "```sh",
             f"objperf study {name} --quick                      # a smoke test on the embedded SeaweedFS",
             f"objperf study {name} s3://BUCKET/PREFIX/ --endpoint URL --out runs/{name}", "```", ""]
    swept = sorted(GRIDS.get(name, ()))
    lines += ["## What it sweeps and sets", ""]
    lines.append(f"`--grid` sets: {', '.join(f'`{v}`' for v in swept)} (and `hosts` on a cluster, `sources` with "
                 "`--interface`)." if swept else "It sweeps nothing `--grid` can set (beyond `hosts` and "
                 "`sources`).")
    fixed = sorted(set(FIXED.get(name, ())) - set(swept))
    if fixed:
        lines.append(f"Each step sets {', '.join(f'`{v}`' for v in fixed)} itself: those options are refused.")
    lines += ["", "Its dataset has one row per request in every step's `steps/NNN/`, and `steps.parquet` one row "
              "per step and repetition: the grid's values, then requests, failed share, read and steady Gbps, "
              "acknowledged write Gbps and TTFB percentiles.", ""]
    published = [row for row in _published() if row["figure"] == FIGURE_OF.get(name, name)]
    if published:
        lines += ["## What the article published", "", "| metric | condition | value | bound |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {r['metric']} | {r['condition']} | {r['value']} {r['unit']} | {r['bound']} |" for r in published]
        lines.append("")
    return "\n".join(lines)


def _published() -> list[dict]:
    from objperf.analysis import published

    path = Path(published.__file__).parent / "articles" / "r2_benchmark.csv"
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def pages() -> dict[str, str]:
    """Every generated page by its path under docs/."""
    from objperf.options.names import STUDY_NAMES

    written = {"cli.md": cli_reference()}
    written["studies/README.md"] = "# Studies\n\nOne page per study, written from its code:\n\n" + "".join(
        f"- [{name}]({name}.md)\n" for name in STUDY_NAMES)
    written.update({f"studies/{name}.md": study_page(name) for name in STUDY_NAMES})
    return written


def main(argv: list[str] | None = None) -> int:
    docs = Path((argv if argv is not None else sys.argv[1:] or ["docs"])[0])
    for relative, text in pages().items():
        (docs / relative).parent.mkdir(parents=True, exist_ok=True)
        (docs / relative).write_text(text)
        print(docs / relative)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

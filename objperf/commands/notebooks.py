"""``python -m objperf.commands.notebooks`` (``nox -s notebooks``): run every notebook headless and write each
figure it shows as PNG."""

from __future__ import annotations

import sys
from pathlib import Path

# The notebooks of a checkout: beside the package's folder, whatever directory the command runs from.
CHECKOUT_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def main(argv: list[str] | None = None) -> int:
    import argparse

    from objperf.commands.common import run_main
    from objperf.commands.parser import OneLineParser

    parser = OneLineParser(prog="python -m objperf.commands.notebooks",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           description="Run every notebook headless and write each figure it shows as PNG.")
    parser.add_argument("out_dir", nargs="?", default=None,
                        help="where the PNG files go (default: the notebooks' folder's figures/)")
    parser.add_argument("--notebooks", type=Path, default=CHECKOUT_NOTEBOOKS,
                        help=f"the folder of notebooks to run (default: {CHECKOUT_NOTEBOOKS})")
    args = parser.parse_args(argv)

    def body() -> int:
        from objperf.core.errors import UsageError
        from objperf.core.extras import require

        for module in ("nbformat", "nbclient", "ipykernel", "matplotlib", "seaborn"):
            require(module, "running the notebooks")
        from objperf.plots.notebooks import is_blank, render

        notebooks = sorted(args.notebooks.glob("*.ipynb"))
        if not notebooks:
            raise UsageError(f"no notebooks in {args.notebooks}; give their folder with --notebooks")
        out_dir = Path(args.out_dir) if args.out_dir else args.notebooks / "figures"
        for notebook in notebooks:
            for path in render(notebook, out_dir):
                print(f"{path}{'  (blank!)' if is_blank(path) else ''}")
        return 0

    return run_main("python -m objperf.commands.notebooks", body)


if __name__ == "__main__":
    sys.exit(main())

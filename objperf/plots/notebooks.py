"""Run notebooks headless and keep their figures as PNG files (``nox -s notebooks``)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path


def render(notebook: str | Path, out_dir: str | Path, *, timeout: int = 600) -> list[Path]:
    """Execute ``notebook`` in its own directory; write every figure it shows to ``out_dir``."""
    import nbformat
    from nbclient import NotebookClient

    notebook, out_dir = Path(notebook), Path(out_dir)
    book = nbformat.read(notebook, as_version=4)
    NotebookClient(book, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(notebook.parent)}}).execute()
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for cell in book.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                raise RuntimeError(f"{notebook.name}: {output.get('ename')}: {output.get('evalue')}")
            png = output.get("data", {}).get("image/png")
            if png:
                path = out_dir / f"{notebook.stem}-{len(written) + 1}.png"
                path.write_bytes(base64.b64decode(png))
                written.append(path)
    return written


def is_blank(png: str | Path) -> bool:
    """True for a figure with nothing drawn in it (one flat colour)."""
    import matplotlib.image

    pixels = matplotlib.image.imread(png)[..., :3]
    return float(pixels.std()) < 0.01


# The notebooks of a checkout: beside the package's folder, whatever directory the command runs from.
CHECKOUT_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def main(argv: list[str] | None = None) -> int:
    import argparse
    import importlib.util

    from objperf.cli import OneLineParser, run_main

    parser = OneLineParser(prog="objperf.plots.notebooks", formatter_class=argparse.RawDescriptionHelpFormatter,
                           description="Run every notebook headless and write each figure it shows as PNG.")
    parser.add_argument("out_dir", nargs="?", default=None,
                        help="where the PNG files go (default: the notebooks' folder's figures/)")
    parser.add_argument("--notebooks", type=Path, default=CHECKOUT_NOTEBOOKS,
                        help=f"the folder of notebooks to run (default: {CHECKOUT_NOTEBOOKS})")
    args = parser.parse_args(argv)

    def body() -> int:
        from objperf.errors import UsageError

        missing = [m for m in ("nbformat", "nbclient", "ipykernel") if importlib.util.find_spec(m) is None]
        if missing:
            raise UsageError(f"running notebooks needs {', '.join(missing)}: pip install 'objperf[lab]'")
        notebooks = sorted(args.notebooks.glob("*.ipynb"))
        if not notebooks:
            raise UsageError(f"no notebooks in {args.notebooks}; give their folder with --notebooks")
        out_dir = Path(args.out_dir) if args.out_dir else args.notebooks / "figures"
        for notebook in notebooks:
            for path in render(notebook, out_dir):
                print(f"{path}{'  (blank!)' if is_blank(path) else ''}")
        return 0

    return run_main("objperf.plots.notebooks", body)


if __name__ == "__main__":
    sys.exit(main())

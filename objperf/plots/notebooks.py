"""Run notebooks headless and keep their figures as PNG files (``objperf.commands.notebooks``)."""

from __future__ import annotations

import base64
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

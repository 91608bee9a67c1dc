"""Each notebook runs top to bottom, as in JupyterLab, and every figure has data in it: the figure
notebooks on the shipped data, the quick start on the embedded server through the API."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from objperf.plots.notebooks import is_blank, render

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
FIGURE_NOTEBOOKS = sorted(p for p in NOTEBOOK_DIR.glob("*.ipynb") if not p.name.startswith("00-"))


def test_there_is_a_notebook_per_figure_family():
    assert len(FIGURE_NOTEBOOKS) == 9


@pytest.mark.parametrize("path", FIGURE_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_and_draws(path, tmp_path):
    figures = render(path, tmp_path)
    assert figures
    assert not [f.name for f in figures if is_blank(f)]


def test_every_notebook_says_first_how_to_point_it_at_ones_own_store():
    for path in NOTEBOOK_DIR.glob("*.ipynb"):
        first = json.loads(path.read_text())["cells"][0]
        assert first["cell_type"] == "markdown" and "Your own store" in "".join(first["source"]), path.name


def test_the_quick_start_runs_under_jupyter_nbconvert(tmp_path):
    """``jupyter nbconvert --execute``, as a user would: two sweeps on the embedded server, two figures."""
    jupyter = Path(sys.executable).parent / "jupyter"
    proc = subprocess.run([str(jupyter), "nbconvert", "--to", "notebook", "--execute", "--output-dir", str(tmp_path),
                           "--ExecutePreprocessor.timeout=600", str(NOTEBOOK_DIR / "00-quickstart.ipynb")],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env={**os.environ, "OBJPERF_RUNS": str(tmp_path / "runs")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    book = json.loads((tmp_path / "00-quickstart.ipynb").read_text())
    outputs = [o for cell in book["cells"] if cell["cell_type"] == "code" for o in cell["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
    assert len(list((tmp_path / "runs").iterdir())) == 2  # each study kept its dataset

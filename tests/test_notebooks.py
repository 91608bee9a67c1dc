"""Each notebook runs top to bottom on the shipped data, as in JupyterLab, and every figure has data in it."""

from pathlib import Path

import pytest

from objperf.plots.notebooks import is_blank, render

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_is_a_notebook_per_figure_family():
    assert len(NOTEBOOKS) == 5


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_and_draws(path, tmp_path):
    figures = render(path, tmp_path)
    assert figures
    assert not [f.name for f in figures if is_blank(f)]

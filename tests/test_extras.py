"""A feature whose extra is missing says so in one line with the pip command, exit 2, no traceback — from
every entry point of every extra; and the README names every extra pyproject.toml defines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from objperf.core.extras import EXTRAS

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[1]

# A finder first on the meta path that refuses the modules OBJPERF_TEST_BLOCK names, as if not installed.
BLOCKER = '''
import os, sys
BLOCKED = set(filter(None, os.environ.get("OBJPERF_TEST_BLOCK", "").split(",")))
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Refuse())
'''

# Every entry point of each extra whose modules can be refused, as a command line ({data}: a saved dataset).
ENTRY_POINTS = {
    "scale": [["objperf", "analyze", "{data}", "--scan"], ["objperf", "analyze", "{data}", "--scan", "--by", "op"]],
    "plots": [["objperf", "analyze", "{data}", "--figures", "{tmp}/figures"],
              ["objperf", "diff", "{data}", "{data}", "--figures", "{tmp}/figures"],
              ["objperf", "fetch", "--figures", "--duration", "1s"],
              ["objperf", "put", "--figures", "--duration", "1s"],
              ["objperf", "mixed", "--figures", "--duration", "1s"]],
    "cluster": [["objperf", "fetch", "--local-cluster", "2", "--duration", "1s"],
                ["objperf", "put", "--local-cluster", "2", "--duration", "1s"],
                ["objperf", "mixed", "--local-cluster", "2", "--duration", "1s"],
                ["objperf", "study", "read-concurrency", "--quick", "--local-cluster", "2"]],
    "lab": [["objperf.commands.notebooks"]],
    "report": [["objperf", "report", "{data}", "-o", "{tmp}/report.html"]],
}
# Each extra's modules that objperf imports where these entry points run.
REFUSED = {"scale": ["duckdb"], "plots": ["matplotlib", "seaborn"], "cluster": ["distributed", "dask"],
           "lab": ["nbclient", "nbformat", "ipykernel"], "report": ["bokeh"]}
# Extras that no module refusal can hide (a binary next to Python; clients compare and bench skip with the pip
# command when absent): what they say is tested where they are used.
NOT_BY_MODULE = {"local", "peers"}
# Extras of library calls no command makes yet: what they say is tested where they are (test_checksums.py).
LIBRARY_ONLY = {"checksums"}


def pyproject_extras() -> set[str]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return set(extras) - {"all", "dev", "compat"}


def test_every_extra_of_pyproject_is_known_and_has_its_entry_points_tried():
    assert set(EXTRAS) == pyproject_extras()
    assert set(ENTRY_POINTS) | NOT_BY_MODULE | LIBRARY_ONLY == pyproject_extras()


def test_the_readme_names_every_extra():
    readme = (ROOT / "README.md").read_text()
    missing = [extra for extra in pyproject_extras() | {"all"} if not re.search(rf"`{extra}`", readme)]
    assert missing == []


@pytest.fixture(scope="module")
def blocked_env(tmp_path_factory):
    where = tmp_path_factory.mktemp("refuse")
    (where / "sitecustomize.py").write_text(BLOCKER)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture(scope="module")
def data(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("extras") / "run"
    done = subprocess.run([sys.executable, "-m", "objperf", "fetch", f"s3://{store.bucket}/data/small.bin",
                           "--endpoint", store.server.endpoint, "--requests", "2", "-c", "1", "--out", str(out)],
                          capture_output=True, text=True, env=store.env(), timeout=60)
    assert done.returncode == 0, done.stderr
    return out


CASES = [(extra, module, argv) for extra, argvs in ENTRY_POINTS.items() for module in REFUSED[extra]
         for argv in argvs]


@pytest.mark.integration
@pytest.mark.parametrize("extra, module, argv", CASES,
                         ids=[f"{m}-{'-'.join(a[1:3] if len(a) > 1 else a)}" for _, m, a in CASES])
def test_a_missing_extra_is_one_line_with_the_pip_command(extra, module, argv, blocked_env, data, tmp_path):
    args = [word.format(data=data, tmp=tmp_path) for word in argv]
    done = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=90,
                          env={**blocked_env, "OBJPERF_TEST_BLOCK": module, "OBJPERF_RUNS": str(tmp_path / "runs")},
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(f"pip install 'objperf[{extra}]'"), done.stderr
    assert f"the '{extra}' extra" in lines[0]
    assert not (tmp_path / "runs").exists()  # refused before any run: no dataset begun

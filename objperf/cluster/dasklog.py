"""dask's own log, out of the way: a run on a cluster writes what dask.distributed logs (the scheduler in
this process, the workers of a local cluster) to a file, not among objperf's lines, unless
``OBJPERF_DASK_LOG=1`` asks for it on stderr.  The file is said in one line when it holds anything, and
removed when it is empty."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from objperf.core import scratch

DASK_LOG_ENV = "OBJPERF_DASK_LOG"
LOGGERS = ("distributed", "tornado", "asyncio", "bokeh")


def shown() -> bool:
    return os.environ.get(DASK_LOG_ENV, "").strip().lower() not in ("", "0", "no", "false")


class DaskLog(logging.FileHandler):
    """dask's log file, made (in a scratch directory of its own) only once there is something to write, or a
    process to write it (``path()``): a run dask has nothing to say about, or a driver killed, leaves none."""

    def __init__(self):
        self.directory: Path | None = None
        super().__init__(os.devnull, delay=True)

    def path(self) -> Path:
        if self.directory is None:
            self.directory = scratch.make("dask")
            self.baseFilename = str(self.directory / "dask.log")
        return Path(self.baseFilename)

    def _open(self):
        self.path()
        return super()._open()


@contextlib.contextmanager
def dask_log(say: Callable[[str], None]) -> Iterator[DaskLog | None]:
    """Inside the block, dask logs to a file (the ``DaskLog``; None when the log goes to stderr)."""
    if shown():
        yield None
        return
    import distributed  # noqa: F401 - it adds its own handler as it is imported: replaced below

    handler = DaskLog()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    saved = []
    for name in LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers = [handler]
        logger.propagate = False
    try:
        yield handler
    finally:
        for logger, handlers, propagate in saved:
            logger.handlers, logger.propagate = handlers, propagate
        handler.close()
        if handler.directory is not None:
            path = handler.path()
            lines = _lines(path)
            if lines:
                say(f"dask's log ({lines} line{'s' if lines != 1 else ''}): {path} (kept until the next objperf "
                    f"run; {DASK_LOG_ENV}=1 shows it on stderr instead)")
            else:
                shutil.rmtree(handler.directory, ignore_errors=True)


def _lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


@contextlib.contextmanager
def stderr_into(log: DaskLog | None) -> Iterator[None]:
    """The standard error of processes started inside the block (a local cluster's workers, which log
    there) goes to ``log``'s file; this process's own is put back as the block ends."""
    if log is None:
        yield
        return
    import sys

    path = log.path()
    sys.stderr.flush()
    saved = os.dup(2)
    ours = sys.stderr
    try:
        # This process's own lines (a step said meanwhile) still reach its stderr, through a copy of it.
        sys.stderr = open(saved, "w", closefd=False, errors=getattr(ours, "errors", None) or "backslashreplace")
        with open(path, "ab") as log:
            os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        sys.stderr = ours
        os.dup2(saved, 2)
        os.close(saved)

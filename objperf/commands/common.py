"""What every objperf command shares: one-line errors, exit codes, signal handling, the run's report, and
how a command line becomes a call of the library (``objperf.workflows``) and a report."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from typing import NoReturn

from objperf.core.errors import ObjperfError
from objperf.core.exits import EXIT_ERROR, EXIT_USAGE
from objperf.core.sanitize import error_line
from objperf.run.invocation import Invocation, progress_mode
from objperf.run.signals import StopSignals, handled

# The commands do no linear algebra: OpenBLAS's thread pool would only cost start-up CPU.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

_stop = StopSignals()  # the stop signals of the command running in this process


def skip_aws_crt() -> None:
    """Where the AWS CRT is installed, botocore loads it on import and signs through it: about
    0.13 s more start-up for a command that needs none of it (objperf signs with botocore's own
    SigV4 and moves bytes with libcurl).  Marked absent, botocore does without it."""
    sys.modules.setdefault("awscrt", None)


# Arrow's allocator (mimalloc, committing as it goes: see objperf/__init__.py) keeps freed pages a while: a
# run's parquet part each second and its end (the summary read back, compaction) then held tens of MiB
# more than they used.  Handing freed pages back at once makes a bulk load of millions of rows slower, so
# only the commands that run transfers ask for it, before pyarrow is loaded: mimalloc reads its options
# once.  Local cluster workers inherit it; a value the user set is kept.
LEAN_ARROW_ALLOCATOR = {"MIMALLOC_PURGE_DELAY": "0"}


def lean_arrow_allocator() -> None:
    for name, value in LEAN_ARROW_ALLOCATOR.items():
        os.environ.setdefault(name, value)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Around a command that does one run.  Start-up builds a few hundred thousand objects that
    live as long as the process (botocore's models, NumPy), and the collector walks them again
    and again as they come: about 0.05 s of CPU.  The run's clock turns it back on over a frozen
    heap (``Recorder.start_clock``); leaving restores what the caller had."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def run_main(prog: str, body: Callable[[], int]) -> int:
    """Run a command body; any failure becomes one line on stderr and a non-zero exit, and any warning one
    line too."""
    global _stop
    _stop = StopSignals()
    with handled(_stop), warnings_in_a_line(prog):
        return _run_body(prog, body)


@contextlib.contextmanager
def warnings_in_a_line(prog: str) -> Iterator[None]:
    """A warning (a dataset whose run did not finish …) as ``PROG: warning: …``: not Python's two lines
    naming the source line that raised it, which say nothing to a user."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        for text in warning_lines(message):
            print(f"{prog}: warning: {text}", file=sys.stderr)

    before = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = before


def warning_lines(message) -> list[str]:
    """A warning's text as lines, each made printable (a line break is a new line, not a literal ``\\x0a``);
    blank lines dropped."""
    lines = [error_line(line.strip()) for line in str(message).splitlines()]
    return [line for line in lines if line] or [""]


def _run_body(prog: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except ObjperfError as exc:
        print(f"{prog}: error: {error_line(exc) or type(exc).__name__}", file=sys.stderr)  # never an empty line
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return interrupted_exit()
    except ImportError as exc:  # an extra's module, wherever it is imported: which extra to install, in one line
        from objperf.core.extras import extra_missing

        if os.environ.get("OBJPERF_DEBUG") or not extra_missing(exc):
            raise
        extra = extra_missing(exc)
        print(f"{prog}: error: {exc.name} is not installed; it comes with the '{extra}' extra: "
              f"pip install 'objperf[{extra}]'", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # the promise is one line, never a traceback
        if os.environ.get("OBJPERF_DEBUG"):
            raise
        said = error_line(exc) or ("out of memory" if isinstance(exc, MemoryError) else "no message")
        print(f"{prog}: error: {type(exc).__name__}: {said} (set OBJPERF_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_ERROR


def exit_now(code: int) -> NoReturn:
    """End a command's process: flush the standard streams and leave without tearing the
    interpreter down.  Unwinding every module botocore and NumPy brought in costs 0.1–0.3 s
    after the run is over, which a benchmark client should not spend.  For ``__main__`` only:
    by then the command has closed everything it opened (datasets, servers, files)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def interrupted_exit() -> int:
    """128 + the signal that stopped the run: 130 for Ctrl-C (SIGINT), 143 for SIGTERM."""
    return 128 + int(_stop.stopped_by)


def command_main(prog: str, build_parser: Callable, execute: Callable, report: Callable, argv: list[str] | None, *,
                 options: type | None = None, pause_collector: bool = True, transfers: bool = False) -> int:
    """A command on the command line: parse (into an ``options`` object when the command has an options class),
    run ``execute(options, invocation)``, ``report`` what it gave; the exit code.  ``transfers``: the command
    measures transfers (see ``lean_arrow_allocator``)."""
    from objperf.commands.parser import parse_options

    skip_aws_crt()
    if transfers:
        lean_arrow_allocator()
    parser = build_parser()
    args = parse_options(options, parser, argv) if options is not None else parser.parse_args(argv)
    invocation = Invocation(prog, show_progress=progress_mode(sys.stderr))
    with collector_paused() if pause_collector else contextlib.nullcontext(), invocation.telling():
        return run_main(prog, lambda: report(execute(args, invocation), args, invocation))


def report(result, args, invocation: Invocation) -> int:
    """Print a run's summary (text or JSON), draw its figures, name its dataset; the exit code."""
    from objperf.analysis.summary_text import format_summary
    from objperf.core.jsontext import summary_json
    from objperf.run.outcome import left_open_text

    prog, say = invocation.prog, invocation.say
    if getattr(args, "price", None):
        from objperf.analysis.cost import costs

        result.summary["cost"] = costs(result.rows, args.price)
    if args.json or args.json_sketches:
        print(summary_json({"run_id": result.run_id, "status": result.status, **result.summary},
                           sketches=args.json_sketches))
    else:
        print(format_summary(result.summary, title=f"{prog} {result.run_id} ({result.status})",
                             workload=(result.manifest or {}).get("workload")))
    if result.dataset:
        say(f"dataset {result.dataset} ({result.summary['requests']} rows)")
    s = result.summary
    left_open = s.get("uploads_left_open", [])
    error = s.get("error") or "the run failed"
    if left_open:  # every upload on a line of its own: the user aborts each by its id, none shortened away
        print(f"{prog}: error: {len(left_open)} multipart upload(s) left open, the store did not take the aborts; "
              "abort them yourself:", file=sys.stderr)
        for entry in left_open:
            print(f"  {error_line(entry)}", file=sys.stderr)
    if result.status == "interrupted":
        return interrupted_exit()
    if result.status == "failed":  # objperf.run.outcome decided it, for the manifest as for the exit status
        if not (left_open and error == left_open_text(left_open)):
            print(f"{prog}: error: {error_line(error)}", file=sys.stderr)
        return EXIT_ERROR
    return 0

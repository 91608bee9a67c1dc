"""objperf from Python — the commands as functions, for notebooks and scripts::

    from objperf import api

    run = api.fetch(concurrency=64, duration="10s")       # no URL: the embedded SeaweedFS
    run.summary["gbps"], run.df, run.dataset
    with api.local_server():                              # one server kept across several runs
        runs = [api.fetch(concurrency=c, duration="5s") for c in (8, 32, 128)]

Every keyword is the command-line option of the same name (``--range-size`` → ``range_size``), with the
same default, help and checks: each option is defined once, in its command's parser, and these
functions read it from there (``help(api.fetch)`` lists them).  Bad input raises ``UsageError`` with
the line the command would print.  Each run keeps its dataset under ``runs/`` unless given ``out`` or
``no_save=True``; the notebook's stop button (or Ctrl-C) stops a run cleanly and keeps its rows, as on
the command line.  ``background=True`` returns at once: ``run.wait()``, ``run.stop()``.

The functions live here, not as ``objperf.fetch``: that name is the module behind
``python -m objperf.fetch``, and importing it would rebind the package's attribute."""

from __future__ import annotations

import argparse
import contextlib
import html
import importlib
import inspect
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from objperf.cli import Invocation
from objperf.errors import ObjperfError, UsageError
from objperf.run.control import Control, controlled

__all__ = ["ObjperfError", "Run", "UsageError", "compare", "fetch", "local_server", "mixed", "put", "study"]

_servers: list = []  # the local servers of the ``local_server()`` blocks entered, innermost last


@contextlib.contextmanager
def local_server(*, ipv6: bool = True) -> Iterator:
    """A local SeaweedFS that every run given no URL uses while the block lasts (``with local_server()
    as s3:``; ``s3.endpoint``, ``s3.settings()``).  Stopped when the block ends."""
    from objperf.servers.seaweed import LocalSeaweed

    server = LocalSeaweed(ipv6=ipv6).start()
    _servers.append(server)
    try:
        yield server
    finally:
        _servers.remove(server)
        server.stop()


class Run:
    """One run of a command: its status, summary, dataset and rows.  A background run fills in as it goes
    (``elapsed_s``, ``bytes``, ``requests``, ``failed``) and ends with ``wait()`` or ``stop()``."""

    def __init__(self, command: str, argv: list[str]):
        self.command = command
        self.argv = argv
        self.status = "running"
        self.outcome: Any = None  # what the command gave: a RunResult, a study's steps, compare's runs
        self.error: BaseException | None = None
        self.elapsed_s, self.bytes, self.requests, self.failed = 0.0, 0, 0, 0
        self.dataset: Path | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- watching and ending -----------------------------------------------------

    def _progress(self, elapsed: float, nbytes: int, nrequests: int, nerrors: int) -> None:
        self.elapsed_s, self.bytes, self.requests, self.failed = elapsed, nbytes, nrequests, nerrors

    @property
    def done(self) -> bool:
        return self.status != "running"

    def wait(self, timeout: float | None = None) -> Run:
        """Until a background run ends (at most ``timeout`` s); raises what ended it, if it failed to run."""
        if self._thread is not None:
            self._thread.join(timeout)
        if self.error is not None and self.done:
            raise self.error
        return self

    def stop(self, timeout: float | None = None) -> Run:
        """Stop a background run as Ctrl-C stops one in front: in-flight requests are cut, rows kept."""
        self._stop.set()
        return self.wait(timeout)

    # -- what it gave ---------------------------------------------------------------

    @property
    def summary(self) -> dict:
        """The run's summary (``format_summary`` prints it); a study's has its steps' results."""
        outcome = self.outcome
        if hasattr(outcome, "summary"):
            return outcome.summary
        if hasattr(outcome, "steps"):
            return {"steps": outcome.steps.to_dict("records")}
        return {}

    @property
    def df(self):
        """The rows as a DataFrame: one per request (a study: of every step; compare: one per client run)."""
        outcome = self.outcome
        if hasattr(outcome, "rows"):
            return outcome.rows
        if hasattr(outcome, "steps"):
            from objperf.dataset import load

            return load(outcome.path)
        if outcome is None and self.dataset is not None:
            from objperf.dataset import load

            return load(self.dataset)
        return outcome

    @property
    def steps(self):
        """A study's steps: one row per step and repetition, its grid values and results."""
        return getattr(self.outcome, "steps", None)

    @property
    def samples(self) -> dict:
        """The NIC and CPU samples taken during the run (``objperf.dataset.load_samples``)."""
        from objperf.dataset import load_samples

        return load_samples(self.dataset) if self.dataset else {}

    def _repr_html_(self) -> str:
        head = f"<b>objperf {html.escape(self.command)}</b> — {html.escape(self.status)}"
        if self.dataset:
            head += f" — dataset <code>{html.escape(str(self.dataset))}</code>"
        if not self.done:
            head += f" — {self.elapsed_s:.0f} s, {self.requests} requests, {self.failed} failed"
        if self.steps is not None:
            return head + self.steps.to_html(index=False, float_format=lambda v: f"{v:.3f}")
        if hasattr(self.outcome, "summary"):
            from objperf.analysis.summary import summary_rows

            rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                           f"{html.escape(v)}</td></tr>" for k, v in summary_rows(self.summary))
            return f"{head}<table>{rows}</table>"
        if self.outcome is not None and hasattr(self.outcome, "to_html"):
            return head + self.outcome.to_html(index=False)
        return head

    def __repr__(self) -> str:
        s = self.summary
        what = f", {s['gbps']:.3f} Gbps, {s['requests']} requests" if "gbps" in s else ""
        return f"<objperf {self.command} run: {self.status}{what}{f', dataset {self.dataset}' if self.dataset else ''}>"


COMMAND_LINE_ONLY = {"json": "run.summary is the summary as a dict"}


def _run(command: str, positional: dict, options: dict) -> Run:
    background = options.pop("background", False)
    progress = options.pop("progress", True)
    for name, instead in COMMAND_LINE_ONLY.items():
        if options.get(name):
            raise UsageError(f"{name} is for the command line: {instead}")
    module = importlib.import_module(f"objperf.{command}")
    parser = module.build_parser()
    argv = _argv(parser, command, positional, options)
    parser.raises = True
    args = parser.parse_args(argv)
    run = Run(command, argv)
    invocation = Invocation(module.PROG, show_progress=bool(progress), server=_servers[-1] if _servers else None,
                            listener=run._progress)

    def body() -> None:
        try:
            with controlled(Control(stop=run._stop)):
                run.outcome = module.execute(args, invocation)
            run.status = getattr(run.outcome, "status", None) or _frame_status(run.outcome)
        except KeyboardInterrupt:
            run.status = "interrupted"
        except BaseException as exc:
            run.status, run.error = "failed", exc
        dataset = getattr(args, "out", None)
        run.dataset = Path(dataset) if dataset and Path(dataset).is_dir() else None

    if background:
        run._thread = threading.Thread(target=body, name=f"objperf-{command}", daemon=True)
        run._thread.start()
        return run
    body()
    if run.status == "interrupted":
        print(f"{module.PROG}: interrupted; the rows so far are kept"
              + (f" in {run.dataset}" if run.dataset else ""), file=sys.stderr)
    if run.error is not None:
        raise run.error
    return run


def _frame_status(outcome) -> str:
    return getattr(outcome, "attrs", {}).get("status", "complete")


def _argv(parser: argparse.ArgumentParser, command: str, positional: dict, options: dict) -> list[str]:
    """Keywords → the command line they stand for, so the parser checks them as it checks a shell's."""
    flags = _flags(parser)
    argv = [str(value) for value in positional.values() if value is not None]
    for name, value in options.items():
        if name not in flags:
            raise UsageError(f"{command}() has no option {name!r}; see help(objperf.api.{command})")
        flag, action = flags[name]
        if value is None or value is False:
            continue
        if action.nargs == 0:
            argv.append(flag)
            continue
        values = value if isinstance(action, argparse._AppendAction) and isinstance(value, list | tuple) else [value]
        if isinstance(value, dict):  # --grid concurrency=1,2 / --endpoint-for CLIENT=URL
            values = [f"{key}={_text(item)}" for key, item in value.items()]
        argv += [part for item in values for part in (flag, _text(item))]
    return argv


def _text(value) -> str:
    if isinstance(value, list | tuple | set):
        return ",".join(map(str, value))
    return str(value)


def _flags(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.Action]]:
    """Every long option by its Python name (``--range-size`` → ``range_size``), aliases included."""
    return {flag[2:].replace("-", "_"): (flag, action) for action in parser._actions for flag in action.option_strings
            if flag.startswith("--") and flag not in ("--help",)}


class Command:
    """``objperf.api.fetch`` and kin: a command as a function.  Its keywords, defaults and help come from
    the command's parser when someone asks (``help()``, Jupyter's ``?`` and tab completion), not at import."""

    def __init__(self, name: str, positionals: tuple[str, ...]):
        self.name = self.__name__ = self.__qualname__ = name
        self.positionals = positionals

    def __call__(self, *args, **options) -> Run:
        if len(args) > len(self.positionals):
            raise UsageError(f"{self.name}() takes at most {len(self.positionals)} positional argument(s): "
                             f"{', '.join(self.positionals)}")
        given = dict(zip(self.positionals, args))
        for name in self.positionals:
            if name in options:
                given[name] = options.pop(name)
        return _run(self.name, given, options)

    def _parser(self) -> argparse.ArgumentParser:
        return importlib.import_module(f"objperf.{self.name}").build_parser()

    @property
    def __doc__(self) -> str:  # type: ignore[override]  # help() and Jupyter's ? read it
        text = self._parser().format_help().replace(f"usage: objperf {self.name}",
                                                    f"objperf.api.{self.name}(...), as the command line: "
                                                    f"objperf {self.name}", 1)
        return (text + "\nKeywords are the long options with '_' for '-' (range_size='8MiB'); a flag takes True, a "
                "repeatable option a list; background=True returns at once; progress=False draws no bar.\n")

    @property
    def __signature__(self) -> inspect.Signature:
        kw = inspect.Parameter.KEYWORD_ONLY
        params = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
                  for name in self.positionals]
        seen = set(self.positionals)
        for action in self._parser()._actions:
            longs = [flag for flag in action.option_strings if flag.startswith("--") and flag != "--help"]
            name = longs[0][2:].replace("-", "_") if longs else None
            if name and name not in seen:
                seen.add(name)
                params.append(inspect.Parameter(name, kw, default=action.default))
        params += [inspect.Parameter("background", kw, default=False), inspect.Parameter("progress", kw, default=True)]
        return inspect.Signature(params, return_annotation=Run)

    def __repr__(self) -> str:
        return f"<objperf.api.{self.name}: help(objperf.api.{self.name}) lists its options>"


fetch = Command("fetch", ("url",))
put = Command("put", ("url",))
mixed = Command("mixed", ("url",))
study = Command("study", ("name", "url"))
compare = Command("compare", ("url",))

"""objperf from Python — the commands as functions, for notebooks and scripts::

    from objperf import api

    run = api.fetch(concurrency=64, duration="10s")       # no URL: the embedded SeaweedFS
    run.summary["gbps"], run.df, run.dataset
    with api.local_server():                              # one server kept across several runs
        runs = [api.fetch(concurrency=c, duration="5s") for c in (8, 32, 128)]

Every keyword is the command-line option of the same name (``--range-size`` → ``range_size``), with the same
default, help and checks: each option is defined once, as a field of its run kind's options class
(``objperf.options``), and both these functions and the commands' parsers are made from it
(``help(api.fetch)`` lists them; ``api.fetch(FetchOptions(...))`` takes a whole options object). Bad input
raises ``UsageError`` with the line the command would print. Each run keeps its dataset under ``runs/``
unless given ``out`` or ``no_save=True``; the notebook's stop button (or Ctrl-C) stops a run cleanly and
keeps its rows, as on the command line. ``background=True`` returns at once: ``run.wait()``, ``run.stop()``.

The functions live here, not as ``objperf.fetch``: that name is the module behind
``python -m objperf.fetch``, and importing it would rebind the package's attribute."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from objperf.core.errors import ObjperfError, UsageError
from objperf.dataset.destination import NOWHERE, Destination
from objperf.options import (
    CompareOptions,
    CopyOptions,
    DeleteOptions,
    FetchOptions,
    ListOptions,
    MixedOptions,
    PutOptions,
    StudyOptions,
)
from objperf.options.spec import build, help_text, options_of
from objperf.run.control import Control, controlled
from objperf.run.invocation import Invocation

if TYPE_CHECKING:
    from objperf.dataset.store_prefix import StorePrefix
    from objperf.plan.sizes import SizeDistribution

__all__ = ["CompareOptions", "CopyOptions", "DeleteOptions", "FetchOptions", "ListOptions", "MixedOptions",
           "ObjperfError", "PutOptions", "Run", "StudyOptions", "UsageError", "compare", "copy", "delete", "fetch",
           "list_objects", "local_server", "mixed", "put", "study", "study_figures"]

_servers: list = []  # the local servers of the ``local_server()`` blocks entered, innermost last


@contextlib.contextmanager
def local_server(*, ipv6: bool = True) -> Iterator:
    """A local SeaweedFS that every run given no URL uses while the block lasts (``with local_server()
    as s3:``; ``s3.endpoint``, ``s3.settings()``).  Stopped when the block ends, and when the process is
    sent SIGTERM inside it (a notebook kernel shut down, ``kill``): the server and its directory go too."""
    from objperf.servers.seaweed import LocalSeaweed

    server = LocalSeaweed(ipv6=ipv6).start()
    _servers.append(server)
    try:
        with _terminated_as_exit():
            yield server
    finally:
        _servers.remove(server)
        server.stop()


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """SIGTERM, where nobody handles it, ends Python without unwinding: here it raises ``SystemExit(143)``
    instead, so every ``finally`` runs.  In the main thread only (where signals arrive); another handler
    already in place is left alone."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def terminated(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Run:
    """One run of a command: its status, summary, dataset and rows.  A background run fills in as it goes
    (``elapsed_s``, ``bytes``, ``requests``, ``failed``) and ends with ``wait()`` or ``stop()``."""

    def __init__(self, command: str, options):
        self.command = command
        self.options = options  # what the run was given, every default filled in
        self.status = "running"
        self.outcome: Any = None  # what the command gave: a RunResult, a study's steps, compare's runs
        self.error: BaseException | None = None
        self.elapsed_s, self.bytes, self.requests, self.failed = 0.0, 0, 0, 0
        self.destination: Destination = NOWHERE  # where its dataset went, once it has begun one
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
            from objperf.dataset.directory import load

            return load(outcome.path)
        if outcome is None and self.dataset is not None:
            return self.destination.load(verify=True)
        return outcome

    @property
    def dataset(self) -> Path | StorePrefix | None:
        """The run's dataset: a directory, a store prefix (``out="s3://…"``), or None (none was begun)."""
        return self.destination.place

    @property
    def steps(self):
        """A study's steps: one row per step and repetition, its grid values and results."""
        return getattr(self.outcome, "steps", None)

    @property
    def figures(self) -> list[Path]:
        """The figures a study drew (``study(..., figures=DIR)``), as PNG paths."""
        return list(getattr(self.outcome, "figures", []) or [])

    @property
    def samples(self) -> dict:
        """The NIC and CPU samples taken during the run (``objperf.dataset.directory.load_samples``)."""
        return self.destination.load_samples()

    def _repr_html_(self) -> str:
        head = f"<b>objperf {html.escape(self.command)}</b> — {html.escape(self.status)}"
        if self.dataset:
            head += f" — dataset <code>{html.escape(str(self.dataset))}</code>"
        if not self.done:
            head += f" — {self.elapsed_s:.0f} s, {self.requests} requests, {self.failed} failed"
        if self.steps is not None:
            return head + self.steps.to_html(index=False, float_format=lambda v: f"{v:.3f}")
        if hasattr(self.outcome, "summary"):
            from objperf.analysis.summary_text import summary_rows

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
# Keywords a kind's Python value is also given as: a size as "8MiB", a duration as "30s".
ALSO_TEXT = {"size", "duration", "list", "percentage", "sizes"}


def _run(command: str, workflow: Callable, options, background: bool, progress: bool) -> Run:
    run = Run(command, options)
    invocation = Invocation(f"objperf {command}", show_progress=bool(progress),
                            server=_servers[-1] if _servers else None, listener=run._progress)

    def body() -> None:
        try:
            with controlled(Control(stop=run._stop)):
                run.outcome = workflow(options, invocation)
            run.status = getattr(run.outcome, "status", None) or _frame_status(run.outcome)
        except KeyboardInterrupt:
            run.status = "interrupted"
        except BaseException as exc:
            run.status, run.error = "failed", exc
        destination = getattr(run.outcome, "destination", None) or invocation.destination
        begun = destination.store is not None or destination.directory is not None and destination.directory.is_dir()
        run.destination = destination if begun else NOWHERE  # not when it was refused before it was made

    if background:
        run._thread = threading.Thread(target=body, name=f"objperf-{command}", daemon=True)
        run._thread.start()
        return run
    body()
    if run.status == "interrupted":
        print(f"objperf {command}: interrupted; the rows so far are kept"
              + (f" in {run.dataset}" if run.dataset else ""), file=sys.stderr)
    if run.error is not None:
        raise run.error
    return run


def _frame_status(outcome) -> str:
    return getattr(outcome, "attrs", {}).get("status", "complete")


def _call(name: str, cls: type, workflow: Callable, positionals: tuple[str, ...], given: dict[str, Any]) -> Run:
    """A run function's call: its keywords (those given a value other than their default) or a whole options
    object in its first place, checked as the command line's options are, then the run."""
    given = dict(given)
    unknown, background, progress = given.pop("unknown"), given.pop("background"), given.pop("progress")
    defaults = {field.name: field.default for field, _ in options_of(cls)}
    chosen = {key: value for key, value in given.items() if value is not defaults.get(key) and
              not (type(value) is type(defaults.get(key)) and value == defaults.get(key))}
    if isinstance(given.get(positionals[0]), cls):  # a whole options object, made or kept by the caller
        if len(chosen) > 1 or unknown:
            raise UsageError(f"{name}() takes an options object alone, or keywords")
        made = given[positionals[0]]
        # Checked as keywords are (a dataclass takes any value), and copied: the run fills in its dataset's
        # place, not in the caller's object.
        options = build(cls, {field.name: getattr(made, field.name) for field in dataclasses.fields(cls)
                              if getattr(made, field.name) != field.default}, what=f"{name}()")
    else:
        for flag, instead in COMMAND_LINE_ONLY.items():
            if unknown.pop(flag, None):
                raise UsageError(f"{flag} is for the command line: {instead}")
        options = build(cls, {**chosen, **unknown}, what=f"{name}()")
    return _run(name, workflow, options, background, progress)


def _doc(name: str, cls: type) -> str:
    lines = [(cls.__doc__ or "").strip(), "",
             f"The same run as ``objperf {name}`` on the command line; each keyword is its long option with '_' for "
             "'-'.  A size may be given as bytes or as text (range_size='8MiB'), a duration as seconds or text "
             "('30s'); background=True returns at once, progress=False draws no bar.  Bad values raise UsageError.",
             "", "Options:"]
    for field, spec in options_of(cls):
        if field.name not in COMMAND_LINE_ONLY:
            lines.append(f"    {field.name} (--{field.name.replace('_', '-')}, {spec.kind.name}): "
                         f"{help_text(field, spec)}")
    return "\n".join(lines) + "\n"


# -- begin: written by python -m objperf.commands.api_source from objperf.options; do not edit --


def fetch(url: str | None | FetchOptions = None, *, out: str | None = None, no_save: bool = False,
          figures: bool = False, json_sketches: bool = False, price: tuple[str, ...] | str = (),
          object_size: int | str = 1073741824, cluster: str | None = None, local_cluster: int | None = None,
          workers: int | None = None, wait_for: int | None = None, wait_timeout: float | str = 60.0,
          until_steady: bool = False, steady_window: float | str = 10.0, steady_tolerance: float | str = 7.5,
          threads: int | None = None, ip: str = 'any', connect_to: tuple[str, ...] = (),
          spread_to: tuple[str, ...] | str = (), interface: str | None = None, http: str = '1.1',
          timeout: float | str = 300.0, no_keepalive: bool = False, max_rate: int | None = None,
          buffer_size: int | None | str = None, reseed: bool = False, endpoint: str | None = None,
          region: str | None = None, profile: str | None = None, anonymous: bool = False, addressing: str = 'auto',
          ca_bundle: str | None = None, no_verify_ssl: bool = False, buckets: tuple[str, ...] | str = (),
          url_lifetime: int | str = 900, keys: str | None = None, concurrency: int = 16,
          range_size: int | str = 8388608, random: bool = False, op: str = 'get', duration: float | None | str = None,
          requests: int | None = None, bytes: int | None | str = None, sink: str = 'ram', sink_dir: str | None = None,
          verify: bool = False, checksum_mode: bool = False, engine: str = 'curl', rate: float | None = None,
          background: bool = False, progress: bool = True, **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.transfers import fetch as workflow

    return _call("fetch", FetchOptions, workflow, ('url',), given)


def put(url: str | None | PutOptions = None, *, out: str | None = None, no_save: bool = False, figures: bool = False,
        json_sketches: bool = False, price: tuple[str, ...] | str = (), object_size: int | str = 67108864,
        cluster: str | None = None, local_cluster: int | None = None, workers: int | None = None,
        wait_for: int | None = None, wait_timeout: float | str = 60.0, until_steady: bool = False,
        steady_window: float | str = 10.0, steady_tolerance: float | str = 7.5, threads: int | None = None,
        ip: str = 'any', connect_to: tuple[str, ...] = (), spread_to: tuple[str, ...] | str = (),
        interface: str | None = None, http: str = '1.1', timeout: float | str = 300.0, no_keepalive: bool = False,
        max_rate: int | None = None, buffer_size: int | None | str = None, part_size: int | str = 33554432,
        sizes: SizeDistribution | None | str = None, seed: int = 1, keys: int = 1, verify: bool = False,
        cleanup: bool = False, checksum: str = 'none', checksum_trailer: bool = False, endpoint: str | None = None,
        region: str | None = None, profile: str | None = None, anonymous: bool = False, addressing: str = 'auto',
        ca_bundle: str | None = None, no_verify_ssl: bool = False, buckets: tuple[str, ...] | str = (),
        url_lifetime: int | str = 900, concurrency: int = 16, duration: float | None | str = None,
        requests: int | None = None, create_bucket: bool = False, background: bool = False, progress: bool = True,
        **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.transfers import put as workflow

    return _call("put", PutOptions, workflow, ('url',), given)


def mixed(url: str | None | MixedOptions = None, *, max_keys: int = 1000, out: str | None = None, no_save: bool = False,
          figures: bool = False, json_sketches: bool = False, price: tuple[str, ...] | str = (),
          object_size: int | str = 67108864, cluster: str | None = None, local_cluster: int | None = None,
          workers: int | None = None, wait_for: int | None = None, wait_timeout: float | str = 60.0,
          until_steady: bool = False, steady_window: float | str = 10.0, steady_tolerance: float | str = 7.5,
          threads: int | None = None, ip: str = 'any', connect_to: tuple[str, ...] = (),
          spread_to: tuple[str, ...] | str = (), interface: str | None = None, http: str = '1.1',
          timeout: float | str = 300.0, no_keepalive: bool = False, max_rate: int | None = None,
          buffer_size: int | None | str = None, reseed: bool = False, part_size: int | str = 33554432,
          sizes: SizeDistribution | None | str = None, seed: int = 1, keys: int = 1, verify: bool = False,
          cleanup: bool = False, checksum: str = 'none', checksum_trailer: bool = False, endpoint: str | None = None,
          region: str | None = None, profile: str | None = None, anonymous: bool = False, addressing: str = 'auto',
          ca_bundle: str | None = None, no_verify_ssl: bool = False, buckets: tuple[str, ...] | str = (),
          url_lifetime: int | str = 900, write_to: str | None = None, concurrency: int | None = None,
          read_concurrency: int | None = None, range_size: int | str = 8388608, sink: str = 'ram',
          write_concurrency: int | None = None, duration: float | str = 30.0, mix: str | None = None,
          background: bool = False, progress: bool = True, **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.transfers import mixed as workflow

    return _call("mixed", MixedOptions, workflow, ('url',), given)


def delete(url: str | None | DeleteOptions = None, *, out: str | None = None, no_save: bool = False,
           figures: bool = False, json_sketches: bool = False, price: tuple[str, ...] | str = (),
           object_size: int | str = 4096, threads: int | None = None, ip: str = 'any', connect_to: tuple[str, ...] = (),
           spread_to: tuple[str, ...] | str = (), interface: str | None = None, http: str = '1.1',
           timeout: float | str = 300.0, no_keepalive: bool = False, max_rate: int | None = None,
           buffer_size: int | None | str = None, endpoint: str | None = None, region: str | None = None,
           profile: str | None = None, anonymous: bool = False, addressing: str = 'auto', ca_bundle: str | None = None,
           no_verify_ssl: bool = False, buckets: tuple[str, ...] | str = (), url_lifetime: int | str = 900,
           keys: str | None = None, concurrency: int = 16, duration: float | None | str = None, objects: int = 1000,
           batch: int | None = None, background: bool = False, progress: bool = True, **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.transfers import delete as workflow

    return _call("delete", DeleteOptions, workflow, ('url',), given)


def list_objects(url: str | None | ListOptions = None, *, max_keys: int = 1000, out: str | None = None,
                 no_save: bool = False, figures: bool = False, json_sketches: bool = False,
                 price: tuple[str, ...] | str = (), object_size: int | str = 1024, threads: int | None = None,
                 ip: str = 'any', connect_to: tuple[str, ...] = (), spread_to: tuple[str, ...] | str = (),
                 interface: str | None = None, http: str = '1.1', timeout: float | str = 300.0,
                 no_keepalive: bool = False, max_rate: int | None = None, buffer_size: int | None | str = None,
                 endpoint: str | None = None, region: str | None = None, profile: str | None = None,
                 anonymous: bool = False, addressing: str = 'auto', ca_bundle: str | None = None,
                 no_verify_ssl: bool = False, buckets: tuple[str, ...] | str = (), url_lifetime: int | str = 900,
                 delimiter: str | None = None, concurrency: int = 1, duration: float | None | str = None,
                 requests: int | None = None, passes: int | None = None, objects: int = 2000, background: bool = False,
                 progress: bool = True, **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.listing import list_objects as workflow

    return _call("list", ListOptions, workflow, ('url',), given)


def copy(url: str | None | CopyOptions = None, *, out: str | None = None, no_save: bool = False, figures: bool = False,
         json_sketches: bool = False, price: tuple[str, ...] | str = (), object_size: int | str = 1048576,
         threads: int | None = None, ip: str = 'any', connect_to: tuple[str, ...] = (),
         spread_to: tuple[str, ...] | str = (), interface: str | None = None, http: str = '1.1',
         timeout: float | str = 300.0, no_keepalive: bool = False, max_rate: int | None = None,
         buffer_size: int | None | str = None, endpoint: str | None = None, region: str | None = None,
         profile: str | None = None, anonymous: bool = False, addressing: str = 'auto', ca_bundle: str | None = None,
         no_verify_ssl: bool = False, buckets: tuple[str, ...] | str = (), url_lifetime: int | str = 900,
         to: str | None = None, keys: str | None = None, concurrency: int = 16, part_size: int | str = 33554432,
         duration: float | None | str = None, verify: bool = False, cleanup: bool = False, objects: int = 100,
         background: bool = False, progress: bool = True, **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.copies import copy as workflow

    return _call("copy", CopyOptions, workflow, ('url',), given)


def study(name: str | StudyOptions = None, url: str | None = None, *, cluster: str | None = None,
          local_cluster: int | None = None, workers: int | None = None, wait_for: int | None = None,
          wait_timeout: float | str = 60.0, threads: int | None = None, ip: str = 'any',
          connect_to: tuple[str, ...] = (), spread_to: tuple[str, ...] | str = (), interface: str | None = None,
          http: str = '1.1', timeout: float | str = 300.0, no_keepalive: bool = False, max_rate: int | None = None,
          buffer_size: int | None | str = None, reseed: bool = False, endpoint: str | None = None,
          region: str | None = None, profile: str | None = None, anonymous: bool = False, addressing: str = 'auto',
          ca_bundle: str | None = None, no_verify_ssl: bool = False, buckets: tuple[str, ...] | str = (),
          url_lifetime: int | str = 900, out: str | None = None, quick: bool = False, repeat: int = 1,
          duration: float | None | str = None, object_size: int | None | str = None, concurrency: int | None = None,
          read_concurrency: int | None = None, write_concurrency: int | None = None,
          range_size: int | None | str = None, part_size: int | None | str = None, sink: str | None = None,
          grid: tuple[str, ...] = (), other_url: str | None = None, replicas: int = 32, replica_buckets: bool = False,
          throttle: int = 8, cleanup: bool = False, figures: str | None = None, background: bool = False,
          progress: bool = True, **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.study import study as workflow

    return _call("study", StudyOptions, workflow, ('name', 'url'), given)


def compare(url: str | None | CompareOptions = None, *, endpoint: str | None = None, region: str | None = None,
            profile: str | None = None, ca_bundle: str | None = None, target: tuple[str, ...] = (),
            clients: tuple[str, ...] | str = CompareOptions.clients, size: int | str = 104857600, repeat: int = 5,
            concurrency: int = 16, part_size: int | str = 8388608, endpoint_for: tuple[str, ...] = (),
            out: str | None = None, no_save: bool = False, figures: bool = False, background: bool = False,
            progress: bool = True, **unknown: Any) -> Run:
    given = dict(locals())
    from objperf.workflows.compare import compare as workflow

    return _call("compare", CompareOptions, workflow, ('url',), given)


fetch.__doc__ = _doc('fetch', FetchOptions)
put.__doc__ = _doc('put', PutOptions)
mixed.__doc__ = _doc('mixed', MixedOptions)
delete.__doc__ = _doc('delete', DeleteOptions)
list_objects.__doc__ = _doc('list', ListOptions)
copy.__doc__ = _doc('copy', CopyOptions)
study.__doc__ = _doc('study', StudyOptions)
compare.__doc__ = _doc('compare', CompareOptions)
# -- end of what objperf.commands.api_source writes --


def study_figures(path: str | Path, out_dir: str | Path) -> list[Path]:
    """The figures of a saved study (``study(..., out=PATH)``, ``objperf study NAME --out PATH``, or a bundle of
    one) as PNG files in ``out_dir``: the ones its notebook draws, with the published values on the same axes.
    ``study(..., figures=DIR)`` draws them as the study ends; ``objperf analyze PATH --figures DIR`` too."""
    from objperf.plots.studies import draw_study_figures

    return draw_study_figures(path, out_dir)


def report(paths: str | Path | list[str | Path], out: str | Path = "report.html", *,
           store: dict | None = None) -> Path:
    """One self-contained HTML page (every script inlined, no network) of a run, a study, several runs (compared,
    with noise verdicts), bundles or ``s3://BUCKET/PREFIX/`` datasets (in the store ``store`` names: endpoint,
    region, profile, … as ``objperf.load`` takes them): the summary, environment, breakdowns, errors and
    interactive figures.  Written to ``out``; its path.  ``objperf report PATH… -o FILE.html`` calls it."""
    from objperf.core.extras import require
    from objperf.dataset.store_reader import local_copies
    from objperf.options.groups import store_settings
    from objperf.report import build_report
    from objperf.report.material import label_of

    require("bokeh", "report()")
    given = [str(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    with local_copies(given, lambda: store_settings(store or {}, "report()")) as local:
        return build_report(local, out, labels=[label_of(p) for p in given])

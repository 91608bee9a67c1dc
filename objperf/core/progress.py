"""A run's live progress — time, rate, requests, errors — and the lines that say what a run is doing
between its transfers.  Drawn by tqdm where someone watches a terminal (a bar) or a notebook (a widget,
``tqdm.auto`` picks); written as plain lines, one every few seconds, where the output is a log or a pipe
(CI, ``| tee``), as warp does; nothing where nobody watches."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar

Listener = Callable[[float, int, int, int], None]  # elapsed s, bytes, requests, errors so far
Say = Callable[[str], None]

MIB = 1 << 20
LINE_EVERY_S = 3.0  # a plain progress line this often: a log never goes 5 s without one
FIRST_LINE_S = 1.0  # the first one sooner: the run has started
PHASE_QUIET_S = 1.0  # a phase that ends sooner says nothing

BAR, LINES, NONE = "bar", "lines", "none"


def rates(nbytes: float, nrequests: float, seconds: float) -> str:
    """``13.8 Gbps  1650 MiB/s  205 req/s``: the units the summaries use."""
    seconds = max(seconds, 1e-9)
    return (f"{nbytes * 8 / seconds / 1e9:.3f} Gbps  {nbytes / seconds / MIB:.1f} MiB/s  "
            f"{nrequests / seconds:.0f} req/s")


def amounts(done: int, total: int) -> str:
    """``0.5/2.9 MiB``: bytes done of a total, in the total's unit, precise enough that the two agree with
    the share of it done (never ``0/3 MiB`` at 17 %)."""
    unit, factor = next(((unit, factor) for unit, factor in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10))
                         if total >= factor), ("B", 1))
    places = 0 if factor == 1 or total / factor >= 100 else 1
    return f"{done / factor:.{places}f}/{total / factor:.{places}f} {unit}"


def run_rates(moved: int, done: int, nbytes: float, nrequests: float, seconds: float) -> str:
    """What a run's progress says of ``nbytes`` and ``nrequests`` in ``seconds``: ``rates`` once the run has
    moved a byte of body (``moved``, every byte so far); until then, as for the whole of a run of HEADs or
    DELETEs, which move none, its requests a second and the requests done (``done``, so far):
    ``2388 req/s  9,224 requests``, never a rate of bytes that tells nothing."""
    if moved:
        return rates(nbytes, nrequests, seconds)
    return f"{nrequests / max(seconds, 1e-9):.0f} req/s  {done:,} requests"


class Progress:
    """The drive loop's ``on_progress``: draws (``mode`` ``bar`` or ``lines``) and tells ``listener`` (the
    API's live ``Run``).  ``say`` writes a line without breaking the bar.  ``close()`` ends it."""

    def __init__(self, *, total_s: float | None, shown: bool | str, listener: Listener | None = None,
                 total_bytes: int | None = None, label: str | None = None, say: Say | None = None):
        """The bar counts seconds of ``total_s`` (a run), or bytes of ``total_bytes`` (seeding, labelled).
        ``shown``: ``bar``, ``lines`` or ``none`` (True is a bar, False none)."""
        self.listener = listener
        self.total_s = total_s
        self.total_bytes = total_bytes
        self.label = label
        self.mode = BAR if shown is True else NONE if shown is False else shown
        self._say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self._last = (0.0, 0, 0)  # the bar's rate is over the last update
        self._last_line = (0.0, 0, 0)  # a line's rate is over the time since the line before
        self.bar = None
        if self.mode != BAR:
            return
        from tqdm.auto import tqdm

        # The counter shows what the percentage is computed from, to the same precision.
        if total_bytes:
            self.bar = tqdm(total=total_bytes, desc=label, unit="B", unit_scale=True, unit_divisor=1024,
                            file=sys.stderr, leave=True, dynamic_ncols=True)
            return
        # tqdm puts ", " before the postfix: "12.0/20 s, 13.812 Gbps …"
        fmt = "{l_bar}{bar}| {n:.1f}/{total:.0f} s{postfix}" if total_s else "{n:.1f} s{postfix}"
        self.bar = tqdm(total=total_s or None, desc=label, bar_format=fmt, file=sys.stderr, leave=True,
                        dynamic_ncols=True)

    def __call__(self, elapsed: float, nbytes: int, nrequests: int, nerrors: int) -> None:
        if self.listener:
            self.listener(elapsed, nbytes, nrequests, nerrors)
        if self.mode == LINES:
            self._line(elapsed, nbytes, nrequests, nerrors)
        if self.bar is None:
            return
        t_prev, b_prev, r_prev = self._last
        dt = max(elapsed - t_prev, 1e-9)
        self._last = (elapsed, nbytes, nrequests)
        if self.total_bytes:
            self.bar.n = min(nbytes, self.total_bytes)
        else:
            self.bar.n = min(elapsed, self.total_s) if self.total_s else elapsed
        rate = rates(nbytes - b_prev, nrequests - r_prev, dt) if self.total_bytes else \
            run_rates(nbytes, nrequests, nbytes - b_prev, nrequests - r_prev, dt)  # seeding moves bytes, a run may not
        self.bar.set_postfix_str(f"{rate}, {nerrors} failed", refresh=False)
        self.bar.refresh()

    def _line(self, elapsed: float, nbytes: int, nrequests: int, nerrors: int) -> None:
        t_prev, b_prev, r_prev = self._last_line
        if elapsed - t_prev < (LINE_EVERY_S if t_prev else FIRST_LINE_S):
            return
        self._last_line = (elapsed, nbytes, nrequests)
        label = f"{self.label} " if self.label else ""
        if self.total_bytes:  # bytes of a known total (seeding): how far, how fast
            rate = rates(nbytes - b_prev, nrequests - r_prev, elapsed - t_prev)  # req/s: small objects' pace
            self._say(f"  {label}{amounts(nbytes, self.total_bytes)} ({nbytes / self.total_bytes:.0%})  {rate}")
            return
        done = f"{elapsed:.1f}/{self.total_s:g} s" if self.total_s else f"{elapsed:.1f} s"
        rate = run_rates(nbytes, nrequests, nbytes - b_prev, nrequests - r_prev, elapsed - t_prev)
        self._say(f"  {label}{done}  {rate}  {nerrors} failed")

    def say(self, text: str) -> None:
        """A line between the bar's updates (the bar drawn again under it)."""
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        else:
            self._say(text)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


# -- what a run is doing between its transfers ---------------------------------------------------------

_sayer: ContextVar[Say | None] = ContextVar("objperf_phase_sayer", default=None)
_lines: ContextVar[bool] = ContextVar("objperf_progress_lines", default=False)


@contextlib.contextmanager
def telling(say: Say | None, *, lines: bool | None = None) -> Iterator[None]:
    """Phases inside the block are said through ``say``; with ``lines``, a run given no progress of its
    own (a study's step) writes plain progress lines through it too."""
    token = _sayer.set(say)
    token_lines = _lines.set(_lines.get() if lines is None else lines)
    try:
        yield
    finally:
        _lines.reset(token_lines)
        _sayer.reset(token)


def ambient_progress(total_s: float | None) -> Progress | None:
    """Plain progress lines for a run given no ``on_progress`` where the command writes to a log; else None."""
    say = _sayer.get()
    if not (_lines.get() and say):
        return None
    return Progress(total_s=total_s, shown=LINES, say=say)


@contextlib.contextmanager
def phase(text: str, *, quiet_s: float = PHASE_QUIET_S) -> Iterator[None]:
    """A step of a run that may take a while (completing uploads, verifying, stopping a server): said in
    one line (``text``) once it has lasted ``quiet_s``, and again every ``LINE_EVERY_S`` with its time so
    far, so that no step goes by in silence and a quick one adds no noise.  Nothing is said where no one
    is told (``telling``)."""
    say = _sayer.get()
    if say is None:
        yield
        return
    done = threading.Event()

    def tell_while_it_lasts() -> None:
        if done.wait(quiet_s):
            return
        t0 = time.monotonic() - quiet_s
        say(text)
        while not done.wait(LINE_EVERY_S):  # a log shows it is still going, not stuck
            say(f"{text} ({time.monotonic() - t0:.0f} s)")

    teller = threading.Thread(target=tell_while_it_lasts, name="objperf-phase", daemon=True)
    teller.start()
    try:
        yield
    finally:
        done.set()


def tell(text: str) -> bool:
    """Say ``text`` now to whoever is told (``telling``), if anyone; whether someone was."""
    say = _sayer.get()
    if say is not None:
        say(text)
    return say is not None

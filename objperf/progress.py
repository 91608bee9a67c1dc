"""A run's live progress — rate, requests, errors, time — drawn by tqdm: a bar on a terminal, a widget in
a notebook (``tqdm.auto`` picks), nothing when nobody is watching."""

from __future__ import annotations

import sys
from collections.abc import Callable

Listener = Callable[[float, int, int, int], None]  # elapsed s, bytes, requests, errors so far


class Progress:
    """The drive loop's ``on_progress``: draws (when ``shown``) and tells ``listener`` (the API's live
    ``Run``).  ``close()`` ends the bar."""

    def __init__(self, *, total_s: float | None, shown: bool, listener: Listener | None = None,
                 total_bytes: int | None = None, label: str | None = None):
        """The bar counts seconds of ``total_s`` (a run), or bytes of ``total_bytes`` (seeding, labelled)."""
        self.listener = listener
        self.total_s = total_s
        self.total_bytes = total_bytes
        self._last = (0.0, 0, 0)
        self.bar = None
        if shown:
            from tqdm.auto import tqdm

            # The counter shows what the percentage is computed from, to the same precision.
            if total_bytes:
                self.bar = tqdm(total=total_bytes, desc=label, unit="B", unit_scale=True, unit_divisor=1024,
                                file=sys.stderr, leave=True, dynamic_ncols=True)
                return
            fmt = "{l_bar}{bar}| {n:.1f}/{total:.0f} s  {postfix}" if total_s else "{n:.1f} s  {postfix}"
            self.bar = tqdm(total=total_s or None, desc=label, bar_format=fmt, file=sys.stderr, leave=True,
                            dynamic_ncols=True)

    def __call__(self, elapsed: float, nbytes: int, nrequests: int, nerrors: int) -> None:
        if self.listener:
            self.listener(elapsed, nbytes, nrequests, nerrors)
        if self.bar is None:
            return
        t_prev, b_prev, r_prev = self._last
        dt = max(elapsed - t_prev, 1e-9)
        self._last = (elapsed, nbytes, nrequests)
        if self.total_bytes:
            self.bar.n = min(nbytes, self.total_bytes)
        else:
            self.bar.n = min(elapsed, self.total_s) if self.total_s else elapsed
        self.bar.set_postfix_str(f"{(nbytes - b_prev) * 8 / dt / 1e9:.3f} Gbps, {(nrequests - r_prev) / dt:.0f} "
                                 f"req/s, {nerrors} failed", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

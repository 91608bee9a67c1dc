"""Steady state: when a run's throughput stopped climbing and held.

A run's rows give its throughput as a series of samples: the bytes of the requests that ended in each sample
(bytes received for reads, acknowledged for writes, as the summary counts them; a run that moved no bytes
counts its successful requests instead).  The samples lie on a grid of ``window / samples`` seconds from the
Unix epoch, so a run judging itself live and its dataset judged again later cut the same samples.  Throughput
is steady once ``samples`` consecutive samples (warp's ``--autoterm``: 7) each lie within ``tolerance`` of
their mean (warp's 7.5 %); the first such window is the steady window, and everything before its start is the
warm-up it leaves out.

``steady_at`` is the rule over a plain series; ``Samples`` gathers the series from rows as they come (the
summary's ``Tally`` and a live run's ``SteadyWatch`` both use it); ``steady_state`` says what the rows hold."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from objperf.core.schema import DIRECTIONS, cut_requests, ok_requests
from objperf.core.steady import SAMPLES, TOLERANCE_PCT, WINDOW_S

# A live run judges a sample once it ended this long ago: the rows of the requests that ended in it have been
# handed over by then (the drive loop drains every 0.1 s).
LAG_S = 0.3


@dataclass(frozen=True)
class SteadyRule:
    """Steady means ``samples`` samples in a row, ``window_s`` in all, each within ``tolerance_pct`` % of
    their mean."""

    window_s: float = WINDOW_S
    tolerance_pct: float = TOLERANCE_PCT
    samples: int = SAMPLES

    @property
    def sample_s(self) -> float:
        return self.window_s / self.samples


def rule_of(workload) -> SteadyRule:
    """The rule a run's manifest workload names (``steady_window``, ``steady_tolerance``; a mixed run's read
    or write side, several reads' first), else the default.  A manifest is outside input: what is not a
    positive number is not taken."""
    sides = [workload] if isinstance(workload, dict) else []
    if sides:
        sides += [workload.get("read"), workload.get("write"), *(workload.get("workloads") or [])]
    for side in sides:
        if not isinstance(side, dict):
            continue
        window, tolerance = side.get("steady_window"), side.get("steady_tolerance")
        if _positive(window) and _positive(tolerance) and tolerance < 100:
            return SteadyRule(window_s=float(window), tolerance_pct=float(tolerance))
    return SteadyRule()


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def steady_at(values: np.ndarray, rule: SteadyRule) -> int | None:
    """The index of the last sample of the first ``rule.samples`` samples in a row that each lie within
    ``rule.tolerance_pct`` % of their mean (a mean above zero), or None when no window holds."""
    n = rule.samples
    values = np.asarray(values, dtype=float)
    if len(values) < n:
        return None
    windows = np.lib.stride_tricks.sliding_window_view(values, n)
    mean = windows.mean(axis=1)
    spread = np.abs(windows - mean[:, None]).max(axis=1)
    held = (mean > 0) & (spread <= rule.tolerance_pct / 100 * mean)
    found = np.flatnonzero(held)
    return int(found[0]) + n - 1 if len(found) else None


class Samples:
    """Bytes done and requests that succeeded, per sample of ``sample_s`` by when each request ended, gathered a
    group of rows at a time; with the first start and the last end seen."""

    def __init__(self, sample_s: float):
        self.sample_s = sample_s
        self.base = 0  # the grid index of bytes[0]
        self.bytes = np.zeros(0)
        self.requests = np.zeros(0)
        self.first_start = math.inf
        self.last_end = -math.inf

    def add(self, cols: dict[str, np.ndarray]) -> None:
        if "t_start" not in cols or "total_s" not in cols or not len(cols["t_start"]):
            return
        start = np.asarray(cols["t_start"], dtype=float)
        end = start + np.asarray(cols["total_s"], dtype=float)
        known = np.isfinite(start) & np.isfinite(end)
        if not known.any():
            return
        ok = ok_requests(cols["curl_code"], cols["status"])
        cut = cut_requests(cols["curl_code"], cols["status"])
        writes = np.isin(cols["op"], DIRECTIONS["write"])
        done = np.where(ok | (cut & ~writes), cols["bytes"], 0)[known].astype(float)  # as the summary counts
        start, end, ok = start[known], end[known], ok[known]
        self.add_binned(np.floor(end / self.sample_s), done, ok.astype(float), first_start=float(start.min()),
                        last_end=float(end.max()))

    def add_binned(self, index: np.ndarray, nbytes: np.ndarray, requests: np.ndarray, *, first_start: float,
                   last_end: float) -> None:
        """Rows already counted by sample (a scan's groups): each sample's grid index (``floor(end / sample_s)``),
        bytes done and requests that succeeded, and the rows' first start and last end."""
        if not len(index):
            return
        index = np.asarray(index).astype(np.int64)
        self.first_start = min(self.first_start, first_start)
        self.last_end = max(self.last_end, last_end)
        low = min(int(index.min()), int(math.floor(self.first_start / self.sample_s)))
        self._cover(low, int(index.max()))
        self.bytes += np.bincount(index - self.base, weights=nbytes, minlength=len(self.bytes))
        self.requests += np.bincount(index - self.base, weights=requests, minlength=len(self.requests))

    def _cover(self, low: int, high: int) -> None:
        """Grow the samples to hold grid indexes ``low`` to ``high``."""
        if not len(self.bytes):
            self.base = low
            self.bytes, self.requests = np.zeros(high - low + 1), np.zeros(high - low + 1)
            return
        before, after = max(0, self.base - low), max(0, high - (self.base + len(self.bytes) - 1))
        if before or after:
            self.bytes = np.pad(self.bytes, (before, after))
            self.requests = np.pad(self.requests, (before, after))
            self.base -= before

    def complete(self, until: float) -> tuple[int, np.ndarray, np.ndarray]:
        """The samples from the one the first request started in up to the last that ended by ``until``: (grid
        index of the first, bytes, requests)."""
        if not len(self.bytes):
            return 0, np.zeros(0), np.zeros(0)
        first = int(math.floor(self.first_start / self.sample_s))
        last = int(math.floor(until / self.sample_s)) - 1  # the last sample whose end is at or before ``until``
        lo, hi = first - self.base, min(last - self.base + 1, len(self.bytes))
        if hi <= lo:
            return first, np.zeros(0), np.zeros(0)
        return first, self.bytes[lo:hi], self.requests[lo:hi]


def steady_state(samples: Samples, rule: SteadyRule, *, until: float | None = None) -> dict:
    """What the rows say of steady state, judged on the samples that ended by ``until`` (default: the last
    request's end): ``reached``, and then the steady window (``start_s``, ``end_s`` from the first request's
    start), the warm-up left out before it (``warmup_s``), the throughput within it; else how long the run was
    watched (``measured_s``)."""
    until = samples.last_end if until is None else until
    first, nbytes, requests = samples.complete(until)
    by = "bytes" if nbytes.sum() > 0 else "requests"
    values = nbytes if by == "bytes" else requests
    s = rule.sample_s
    found = {"window_s": rule.window_s, "samples": rule.samples, "sample_s": s, "tolerance_pct": rule.tolerance_pct,
             "by": by}
    at = steady_at(values, rule) if len(values) else None
    t0 = samples.first_start
    if at is None:
        measured = max(0.0, until - t0) if math.isfinite(t0) else 0.0
        return {**found, "reached": False, "measured_s": measured}
    window = values[at - rule.samples + 1:at + 1]
    mean = float(window.mean())
    start, end = (first + at - rule.samples + 1) * s, (first + at + 1) * s
    rate = {"gbps": float(nbytes[at - rule.samples + 1:at + 1].mean()) * 8 / s / 1e9,
            "mib_per_s": float(nbytes[at - rule.samples + 1:at + 1].mean()) / s / (1 << 20),
            "requests_per_s": float(requests[at - rule.samples + 1:at + 1].mean()) / s}
    return {**found, "reached": True, "warmup_s": max(0.0, start - t0), "start_s": max(0.0, start - t0),
            "end_s": end - t0, **rate, "spread_pct": float(np.abs(window - mean).max()) / mean * 100}


class SteadyWatch:
    """A live run's judge: fed the rows as they are drained, ``steady(now)`` says whether the throughput has
    held (``now``: the wall clock, as the rows' ``t_start``)."""

    def __init__(self, rule: SteadyRule):
        self.rule = rule
        self.samples = Samples(rule.sample_s)
        self._judged = -1  # samples judged so far

    def add(self, cols: dict[str, np.ndarray] | None) -> None:
        if cols is not None:
            self.samples.add(cols)

    def steady(self, now: float) -> bool:
        _, nbytes, requests = self.samples.complete(now - LAG_S)
        if len(nbytes) <= self._judged:
            return False
        self._judged = len(nbytes)
        return steady_at(nbytes if nbytes.sum() > 0 else requests, self.rule) is not None

"""Object size distributions: what sizes a write run's objects are drawn from, read from one option and checked
once.  ``--sizes`` takes

- ``64MiB``: every object that size (what ``--object-size`` says);
- ``4KiB..64MiB``: log-uniform between the two, both included: as many objects in each doubling of the size
  (4-8 KiB as 32-64 MiB), as warp's ``--obj.randsize`` draws them, but between the two sizes asked;
- ``4KiB:50,1MiB:40,64MiB:10``: weighted buckets, each a size (or a ``LO..HI`` log-uniform range) and its
  weight; a bucket's share of the objects is its weight over the sum of the weights.

Sizes are drawn with a NumPy Generator from the run's ``--seed`` (and, on a cluster, the host's index): the
same seed draws the same sizes, in the same order.  Each object's size is the inverse of the distribution's
CDF at one uniform draw, so the stream of sizes does not depend on how many are drawn at a time."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from objperf.core.errors import UsageError
from objperf.core.sizes import format_size, parse_size

MAX_OBJECT = 5 << 40  # S3's largest object
MAX_BUCKETS = 1000
DEFAULT_SEED = 1  # a run given no --seed draws the same sizes as every other run given none
if TYPE_CHECKING:
    import numpy as np

_WEIGHT_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*$")


def _shown(n: int) -> str:
    return format_size(n).replace(" ", "") if n % 1024 == 0 or n < 1024 else f"{n}B"


@dataclass(frozen=True)
class SizeRange:
    """Sizes from ``low`` to ``high``, both included, log-uniform; one size when they are equal."""

    low: int
    high: int

    @property
    def fixed(self) -> bool:
        return self.low == self.high

    def __str__(self) -> str:
        return _shown(self.low) if self.fixed else f"{_shown(self.low)}..{_shown(self.high)}"

    def sizes(self, v: np.ndarray) -> np.ndarray:
        """The sizes at ``v`` (uniform in [0, 1)) of this range's inverse CDF."""
        import numpy as np  # not at import: --help stays light

        if self.fixed:
            return np.full(len(v), self.low, dtype=np.int64)
        lo, hi = math.log(self.low), math.log(self.high + 1)  # size s has the share log((s+1)/s) of the range
        return np.clip(np.floor(np.exp(lo + v * (hi - lo))), self.low, self.high).astype(np.int64)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """The share of this range's sizes that are at most ``x``."""
        import numpy as np  # not at import: --help stays light

        x = np.asarray(x, dtype=np.float64)
        if self.fixed:
            return (x >= self.low).astype(np.float64)
        lo, hi = math.log(self.low), math.log(self.high + 1)
        inside = (np.log(np.floor(np.clip(x, self.low, self.high)) + 1) - lo) / (hi - lo)
        return np.where(x < self.low, 0.0, np.where(x >= self.high, 1.0, inside))

    def mean(self) -> float:
        if self.fixed:
            return float(self.low)
        # The continuous log-uniform on [low, high + 1), floored: about half a byte under its mean
        lo, hi = self.low, self.high + 1
        return (hi - lo) / math.log(hi / lo) - 0.5


@dataclass(frozen=True)
class SizeDistribution:
    """Weighted size ranges (one, for a fixed size or a plain ``LO..HI``); ``weights`` sum to 1."""

    ranges: tuple[SizeRange, ...]
    weights: tuple[float, ...]

    @classmethod
    def fixed(cls, size: int) -> SizeDistribution:
        return cls((SizeRange(size, size),), (1.0,))

    @classmethod
    def parse(cls, text: str) -> SizeDistribution:
        """``64MiB``, ``4KiB..64MiB`` or ``4KiB:50,1MiB:40,64MiB:10`` (each bucket a size or a range); a bad one
        is refused in one line naming what is wrong with it."""
        if not isinstance(text, str) or not text.strip():
            raise UsageError(f"bad sizes {text!r}: give a size (64MiB), a range (4KiB..64MiB) or weighted buckets "
                             "(4KiB:50,1MiB:40,64MiB:10)")
        entries = [entry.strip() for entry in text.split(",")]
        if len(entries) > MAX_BUCKETS:
            raise UsageError(f"bad sizes: {len(entries):,} buckets; objperf takes at most {MAX_BUCKETS:,}")
        weighted = [":" in entry for entry in entries]
        if len(entries) > 1 and not all(weighted):
            raise UsageError(f"bad sizes {text!r}: give every bucket a weight, as in 4KiB:50,1MiB:40,64MiB:10")
        ranges, weights = [], []
        for entry in entries:
            size_text, _, weight_text = entry.rpartition(":") if ":" in entry else (entry, "", "1")
            ranges.append(_range(size_text, text))
            weights.append(_weight(weight_text, entry, text))
        total = sum(weights)
        return cls(tuple(ranges), tuple(w / total for w in weights))

    def __str__(self) -> str:
        if len(self.ranges) == 1:
            return str(self.ranges[0])
        return ",".join(f"{r}:{w * 100:.6g}" for r, w in zip(self.ranges, self.weights))

    @property
    def is_fixed(self) -> bool:
        return all(r.fixed for r in self.ranges) and len({r.low for r in self.ranges}) == 1

    @property
    def smallest(self) -> int:
        return min(r.low for r in self.ranges)

    @property
    def largest(self) -> int:
        return max(r.high for r in self.ranges)

    def mean(self) -> float:
        return sum(w * r.mean() for r, w in zip(self.ranges, self.weights))

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` sizes (int64), one uniform draw of ``rng`` each."""
        return self.sizes_at(rng.random(n))

    def sizes_at(self, u: np.ndarray) -> np.ndarray:
        """The sizes at ``u`` (uniform in [0, 1)): the bucket whose share holds ``u``, then the size at ``u``'s
        place within that share."""
        import numpy as np  # not at import: --help stays light

        u = np.asarray(u, dtype=np.float64)
        starts = np.concatenate([[0.0], np.cumsum(self.weights)[:-1]])
        which = np.clip(np.searchsorted(starts, u, side="right") - 1, 0, len(self.ranges) - 1)
        out = np.empty(len(u), dtype=np.int64)
        for k, (r, w) in enumerate(zip(self.ranges, self.weights)):
            here = which == k
            if here.any():
                out[here] = r.sizes(np.clip((u[here] - starts[k]) / w, 0.0, np.nextafter(1.0, 0.0)))
        return out

    def cdf(self, x) -> np.ndarray:
        """The share of objects of at most ``x`` bytes."""
        import numpy as np  # not at import: --help stays light

        x = np.asarray(x, dtype=np.float64)
        return sum(w * r.cdf(x) for r, w in zip(self.ranges, self.weights))

    def quantile(self, q: float) -> int:
        """The smallest size whose CDF reaches ``q`` (0 < q <= 1): the distribution's own quantile, which the
        sizes drawn approach."""
        lo, hi = self.smallest, self.largest
        while lo < hi:
            mid = (lo + hi) // 2
            if float(self.cdf(mid)) >= q - 1e-12:
                hi = mid
            else:
                lo = mid + 1
        return lo


def _range(text: str, whole: str) -> SizeRange:
    low_text, sep, high_text = text.partition("..")
    low = _size(low_text, whole)
    high = _size(high_text, whole) if sep else low
    if sep and low < 1:
        raise UsageError(f"bad sizes {whole!r}: a range {text.strip()!r} starts at 1 byte or more (it is log-uniform)")
    if high < low:
        raise UsageError(f"bad sizes {whole!r}: the range {text.strip()!r} ends below its start")
    return SizeRange(low, high)


def _size(text: str, whole: str) -> int:
    try:
        size = parse_size(text.strip())
    except UsageError:
        raise UsageError(f"bad sizes {whole!r}: {text.strip()!r} is not a size of 0 bytes or more (such as 4KiB, "
                         "64MiB)") from None
    if size > MAX_OBJECT:
        raise UsageError(f"bad sizes {whole!r}: {text.strip()} is more than S3's largest object (5 TiB)")
    return size


def _weight(text: str, entry: str, whole: str) -> float:
    match = _WEIGHT_RE.match(text)
    weight = float(match.group(1)) if match else 0.0
    if not match or not 0 < weight < float("inf"):
        raise UsageError(f"bad sizes {whole!r}: the weight of {entry!r} must be a positive number")
    return weight


def parse_sizes(value) -> SizeDistribution:
    """An option's value: the text of ``--sizes``, a whole number of bytes, or a distribution already made."""
    if isinstance(value, SizeDistribution):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return SizeDistribution.parse(str(value))
    return SizeDistribution.parse(value)


class SizeStream:
    """The sizes of a run's objects, in order: drawn a block at a time from ``rng``; ``peek`` tells the next
    without taking it."""

    BLOCK = 4096

    def __init__(self, distribution: SizeDistribution, seed: int, stream: int = 0):
        import numpy as np

        self.distribution = distribution
        self.rng = np.random.default_rng([seed, stream]) if stream else np.random.default_rng(seed)
        self._block = np.empty(0, dtype=np.int64)
        self._next = 0

    def peek(self) -> int:
        if self._next >= len(self._block):
            self._block = self.distribution.draw(self.rng, self.BLOCK)
            self._next = 0
        return int(self._block[self._next])

    def take(self) -> int:
        size = self.peek()
        self._next += 1
        return size

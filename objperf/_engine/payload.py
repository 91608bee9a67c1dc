"""Deterministic, incompressible object contents: the same (size, seed) always
gives the same bytes, so a reader can check what it got without a copy of the
object, and a writer can make them a part at a time."""

from collections.abc import Iterator

import numpy as np

from objperf._engine.core import fill_payload, page_array
from objperf.plan.writes import PAYLOAD_PERIOD, WriteWorkload

DEFAULT_SEED = 20261130
DEFAULT_PART = 64 << 20


def payload(size: int, seed: int = DEFAULT_SEED, start: int = 0) -> np.ndarray:
    """Bytes ``start:start+size`` of the payload stream of ``seed``, as a uint8 array."""
    data = page_array(size)
    fill_payload(data, seed, start)
    return data


def payload_parts(size: int, seed: int = DEFAULT_SEED, part_size: int = DEFAULT_PART) -> Iterator[np.ndarray]:
    """The bytes of ``payload(size, seed)`` in consecutive parts, never more than one part in memory."""
    for start in range(0, size, part_size):
        yield payload(min(part_size, size - start), seed, start)


def make_payload(workload: WriteWorkload) -> np.ndarray:
    """One incompressible payload per run, as long as its largest object (up to PAYLOAD_PERIOD): every
    object is it, repeated from its start (a smaller one its first bytes), and every part the slice at
    ``offset % len`` (wrapping round past the end)."""
    return payload(max(min(workload.largest, PAYLOAD_PERIOD), 1))

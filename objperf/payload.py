"""Deterministic, incompressible object contents: the same (size, seed) always
gives the same bytes, so a reader can check what it got without a copy of the
object, and a writer can make them a part at a time."""

from collections.abc import Iterator

import numpy as np

DEFAULT_SEED = 20261130
DEFAULT_PART = 64 << 20


def payload(size: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``size`` pseudo-random bytes as a read-only uint8 array."""
    return np.frombuffer(np.random.Generator(np.random.PCG64(seed)).bytes(size), dtype=np.uint8)


def payload_parts(size: int, seed: int = DEFAULT_SEED, part_size: int = DEFAULT_PART) -> Iterator[bytes]:
    """The bytes of ``payload(size, seed)`` in consecutive parts, never more than one part in memory."""
    if part_size % 8:
        raise ValueError("part_size must be a multiple of 8 for the parts to join up into payload()")
    generator = np.random.Generator(np.random.PCG64(seed))
    for start in range(0, size, part_size):
        yield generator.bytes(min(part_size, size - start))

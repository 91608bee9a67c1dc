"""Deterministic, incompressible object contents: the same (size, seed) always
gives the same bytes, so a reader can check what it got without a copy of the
object."""

import numpy as np

DEFAULT_SEED = 20261130


def payload(size: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``size`` pseudo-random bytes as a read-only uint8 array."""
    data = np.frombuffer(np.random.Generator(np.random.PCG64(seed)).bytes(size), dtype=np.uint8)
    return data

"""Writes the engine's row ring (``ring.pxi``: the C struct and the function that points it into NumPy
columns) from ``objperf.core.schema.ENGINE_COLUMNS``, so the row layout is defined once.  ``setup.py`` runs it
before Cython compiles the engine; ``python objperf/_engine/ringgen.py`` does it by hand.  It reads
schema.py by path, with this checkout first on the import path, so a build needs nothing of objperf installed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA = HERE.parent / "core" / "schema.py"
RING = HERE / "ring.pxi"
C_TYPES = {"i1": "int8_t", "i2": "int16_t", "i4": "int32_t", "i8": "int64_t", "u1": "uint8_t", "u4": "uint32_t",
           "f8": "double", "b1": "uint8_t"}
C_NAMES = {"bytes": "nbytes"}  # Python's builtin name, kept off the C side


def engine_columns() -> dict:
    spec = importlib.util.spec_from_file_location("objperf_schema_for_build", SCHEMA)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(HERE.parents[1]))  # schema.py's own imports (objperf.core.curl_codes) from this checkout
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(HERE.parents[1]))
    return module.ENGINE_COLUMNS


def c_type(dtype) -> str:
    if dtype.kind == "S":
        return "char"  # fixed-width text: itemsize bytes a row
    return C_TYPES[f"{dtype.kind}{dtype.itemsize}"]


def ring_source(columns: dict) -> str:
    fields = [(C_NAMES.get(name, name), name, c_type(dtype)) for name, dtype in columns.items()]
    lines = ["# Generated from objperf/core/schema.py's ENGINE_COLUMNS by objperf/_engine/ringgen.py: do not edit.",
             "", "ctypedef struct Ring:", "    int64_t cap", "    int64_t head", "    int64_t tail"]
    lines += [f"    {ctype} *{c_name}" for c_name, _, ctype in fields]
    lines += ["", "", "cdef dict make_ring(Ring *r, int capacity):",
              '    """The ring\'s columns, preallocated; ``r`` points into them."""',
              "    cols = {name: np.zeros(capacity, dtype=dtype) for name, dtype in ENGINE_COLUMNS.items()}",
              "    r.cap = capacity"]
    lines += [f'    r.{c_name} = <{ctype} *>cnp.PyArray_DATA(cols["{name}"])' for c_name, name, ctype in fields]
    lines += ["    return cols", ""]
    return "\n".join(lines)


def write_ring() -> bool:
    """``ring.pxi`` made current; True if it changed."""
    text = ring_source(engine_columns())
    if RING.exists() and RING.read_text() == text:
        return False
    RING.write_text(text)
    return True


if __name__ == "__main__":
    print(f"{RING}: {'written' if write_ring() else 'current'}", file=sys.stderr)

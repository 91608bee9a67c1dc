"""Arrow arrays from NumPy columns and back, through their buffers.

``pa.array`` and ``pa.table`` on NumPy arrays or lists first ask whether the
values are pandas objects, and that question imports pandas: 0.2 s and 45 MiB
in every run that writes a dataset, which never needs pandas.  Built from
buffers, an array is the same Arrow array (zero-copy for numbers) with no
import."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-D NumPy column as Arrow: numbers and booleans as themselves, bytes (``S``, trailing NULs dropped
    as NumPy drops them) as binary, text (``U`` or Python strings) as strings."""
    values = np.asarray(values)
    if values.dtype.kind == "S":
        return _binary(values.tolist(), pa.binary())
    if values.dtype.kind in "UO":
        return strings([str(item) for item in values.tolist()])
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An Arrow column of numbers or booleans without nulls as NumPy, read from its buffers (``to_numpy``
    imports pandas and pyarrow.compute).  Numbers come zero-copy from a single array."""
    if isinstance(values, pa.ChunkedArray):
        chunks = [to_numpy(chunk) for chunk in values.chunks]
        return chunks[0] if len(chunks) == 1 else np.concatenate(chunks or [np.empty(0, values.type.to_pandas_dtype())])
    if values.null_count:
        raise ValueError(f"an Arrow column with {values.null_count} nulls has no NumPy form here")
    data = values.buffers()[1]
    if values.type == pa.bool_():
        bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")
        return bits[values.offset:values.offset + len(values)].astype(bool)
    dtype = np.dtype(values.type.to_pandas_dtype())
    return np.frombuffer(data, dtype, count=len(values), offset=values.offset * dtype.itemsize)


def strings(items: Sequence[str]) -> pa.Array:
    """Python strings as an Arrow string array."""
    return _binary([item.encode() for item in items], pa.string())


def _binary(items: list[bytes], kind: pa.DataType) -> pa.Array:
    offsets = np.zeros(len(items) + 1, dtype=np.int32)
    np.cumsum([len(item) for item in items], out=offsets[1:])
    return pa.Array.from_buffers(kind, len(items), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(items))])


def table(columns: Mapping[str, np.ndarray | pa.Array]) -> pa.Table:
    """A table of NumPy columns (or Arrow arrays, taken as they are)."""
    return pa.table({name: column if isinstance(column, pa.Array) else from_numpy(column)
                     for name, column in columns.items()})

"""Datasets: a directory with ``manifest.json`` and ``requests/*.parquet``.

Rows are written as numbered parquet parts while the run goes, so a run that
is killed keeps every row it flushed; a run that ends is compacted into one
part, and its manifest lists every file with its size and SHA-256, which
``load`` checks.  ``load`` reads either, a bundle made by ``objperf pack`` too,
and any mix of datasets (runs, studies, hosts, other tools' imports) as one
frame with one physical schema."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from objperf.core.errors import UsageError
from objperf.core.schema import COLUMNS, ENGINE_COLUMNS, HTTP_VERSIONS, OP, OPS, UNKNOWN_SIZE
from objperf.dataset import arrow
from objperf.dataset.layout import MANIFEST, ROWS_DIR, SAMPLES_DIR
from objperf.dataset.source import ROW_COLUMNS_NEEDED, DatasetError, Source, check_row_schema, check_rows
from objperf.dataset.writer import DATA_FILES

if TYPE_CHECKING:  # a run writes datasets without pandas: its import costs 0.2 s and 45 MiB at start-up
    import pandas as pd

def _dictionary(column: np.ndarray, name: Callable[[object], str]) -> pa.Array:
    """``column`` dictionary-encoded in NumPy, each distinct value named by ``name``.  Not Arrow's
    ``cast``/``dictionary_encode``: they load pyarrow.compute, 0.3 s of CPU and 50 MiB in every run."""
    unique, position = np.unique(column, return_inverse=True)
    return pa.DictionaryArray.from_arrays(arrow.from_numpy(position.astype(np.int32)),
                                          arrow.strings([name(value) for value in unique.tolist()]))


def _text(column: np.ndarray) -> pa.Array:
    """Fixed-width bytes from the engine (trailing NULs dropped) → dictionary-encoded strings."""
    return _dictionary(column, lambda raw: raw.decode("utf-8", "replace"))


def _labels(indexes: np.ndarray, labels: list[str]) -> pa.Array:
    """``labels[indexes]`` as a dictionary array (labels may repeat, a dictionary may not)."""
    unique, position = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
    return pa.DictionaryArray.from_arrays(arrow.from_numpy(position.astype(np.int32)[indexes]),
                                          arrow.strings(unique.tolist()))


def _constant(value: str, n: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(arrow.from_numpy(np.zeros(n, np.int32)), arrow.strings([value]))


TEXT_COLUMNS = ("s3_error", "remote_ip", "local_ip", "etag")


def rows_to_table(cols: dict[str, np.ndarray], *, run_id: str, host: str, buckets: list[str],
                  keys: list[str], sizes: list[int] | None = None) -> pa.Table:
    """Engine columns (``key_index`` into ``keys``/``buckets``/``sizes``) → the dataset's Arrow table; with no
    ``sizes``, every row's ``object_size`` is UNKNOWN_SIZE."""
    n = len(cols["offset"])
    if sizes is not None and len(sizes) == len(keys):
        object_size = np.asarray(sizes, dtype=np.int64)[cols["key_index"]] if n else np.empty(0, np.int64)
    else:
        object_size = np.full(n, UNKNOWN_SIZE, dtype=np.int64)
    data = {name: arrow.from_numpy(cols[name]) for name in COLUMNS if name in cols}
    data.update({name: _text(cols[name]) for name in TEXT_COLUMNS})
    data.update(run_id=_constant(run_id, n), host=_constant(host, n), op=_labels(cols["op"], list(OPS)),
                bucket=_labels(cols["key_index"], buckets), key=_labels(cols["key_index"], keys),
                object_size=arrow.from_numpy(object_size),
                http_version=_dictionary(cols["http_version"], lambda v: HTTP_VERSIONS.get(v, str(v))))
    return pa.table({name: data[name] for name in COLUMNS})


_HTTP_CODES = {label: code for code, label in HTTP_VERSIONS.items()}
_CODE_OF = {"op": OP.__getitem__, "http_version": lambda label: _HTTP_CODES.get(label, None) or int(label or 0)}


def engine_columns(table: pa.Table) -> dict[str, np.ndarray]:
    """``rows_to_table`` undone, for the engine's columns ``table`` holds: numbers as they were, text as
    bytes (as wide as its longest value, not the engine's fixed width: a million rows of ``remote_ip`` take
    9 MiB, not 44), ``op`` and ``http_version`` as their codes (labels ``run_id``, ``bucket`` and ``key``
    are left out)."""
    found = {}
    for name in table.column_names:
        dtype = ENGINE_COLUMNS.get(name)
        if dtype is None:
            continue
        column = table.column(name)
        if not pa.types.is_dictionary(column.type):
            found[name] = arrow.to_numpy(column).astype(dtype, copy=False)
            continue
        code = _CODE_OF.get(name, str.encode)
        width = bytes if dtype.kind == "S" else dtype
        chunks = [(np.array([code(label) for label in chunk.dictionary.to_pylist()], dtype=width),
                   arrow.to_numpy(chunk.indices)) for chunk in column.chunks]
        if dtype.kind == "S":  # one width for every chunk: the widest
            width = np.dtype(f"S{max([values.dtype.itemsize for values, _ in chunks] or [1])}")
        found[name] = np.concatenate([values.astype(width)[indices] for values, indices in chunks]
                                     or [np.empty(0, width)])
    return found


__all__ = ["MANIFEST", "DatasetError", "Source", "load", "load_samples", "load_steps", "load_table", "read_manifest"]


def read_manifest(path: str | Path) -> dict:
    source = Source(path)
    try:
        return source.manifest()
    finally:
        source.close()


TEXT = pa.dictionary(pa.int32(), pa.string())


def unified(table: pa.Table) -> pa.Table:
    """One physical schema for every dataset, whatever wrote it: text columns as dictionary-encoded strings
    (study parts and older datasets wrote some as plain or large strings)."""
    for i, field in enumerate(table.schema):
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if field.type == TEXT or not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            continue
        column = table.column(i)
        if pa.types.is_dictionary(field.type):
            column = column.cast(TEXT)
        else:
            column = column.cast(pa.string()).dictionary_encode().cast(TEXT)
        table = table.set_column(i, pa.field(field.name, TEXT), column)
    return table


class SharedManifest(dict):
    """A manifest (or manifests by run) as a frame carries it in ``attrs``: pandas copies a frame's attrs deeply
    on nearly every operation (a 9.3 MB manifest made a diff spend 31.8 of its 32.8 s in deepcopy), and this
    one every frame made from the rows shares, never copied.  Read it; change a copy of it."""

    def __deepcopy__(self, memo) -> SharedManifest:
        return self


def load(path: str | Path | Iterable[str | Path], columns: list[str] | None = None, *,
         verify: bool = True) -> pd.DataFrame:
    """The per-request rows of the dataset at ``path`` (a directory, or a bundle made by ``objperf pack``;
    only ``columns``, if given: much faster on large datasets); ``df.attrs["manifest"]`` holds its manifest.

    Several datasets (a list: runs shared by others, studies, other tools' imports) come back as one frame,
    their rows told apart by ``run_id`` and ``host``; ``df.attrs["manifests"]`` maps each ``run_id`` to its
    dataset's manifest (with ``path``).  ``verify`` checks every file against the sizes and SHA-256 sums the
    manifest lists; a run that never finished (killed) loads with a warning."""
    paths = [Path(path)] if isinstance(path, (str, os.PathLike)) else [Path(p) for p in path]
    if not paths:
        raise UsageError("load needs at least one dataset")
    tables, runs, sources, manifests = [], {}, [], []
    with contextlib.ExitStack() as stack:
        for p in paths:
            source = Source(p)
            stack.callback(source.close)
            sources.append(source)
            manifests.append(source.manifest())
        for source, manifest in zip(sources, manifests):
            if verify:
                source.verify(manifest)
            if manifest.get("status") == "running":
                warnings.warn(f"{source.path} did not finish (its run was killed or is still going): "
                              "these are the rows it flushed", stacklevel=2)
            names = source.parts(ROWS_DIR)
            check_rows(manifest, sum(source.part_rows(part) for part in names), source.path)
            mine = [unified(source.table(part, columns)) for part in names]
            for name, table in zip(names, mine):
                check_row_schema(table.schema, source.path, name)
                lacking = [c for c in ROW_COLUMNS_NEEDED if c not in table.column_names]
                if columns is None and table.num_rows and lacking:
                    raise DatasetError(f"{source.path}: {name} has no {', '.join(map(repr, lacking))} column: "
                                       "not objperf's rows")
            runs[str(source.path)] = {str(r) for t in mine if "run_id" in t.column_names
                                      for r in t.column("run_id").unique().to_pylist()}
            tables += mine
    if tables:
        df = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    else:
        import pandas as pd

        df = pd.DataFrame(columns=list(columns or COLUMNS))
    if columns is None or "object_size" in columns:  # datasets from before the column: recovered
        from objperf.dataset.object_sizes import recover_object_sizes

        df = recover_object_sizes(df, manifests, in_place=True)
    if len(paths) == 1:
        df.attrs["manifest"] = SharedManifest(manifests[0])
    else:
        df.attrs["manifests"] = SharedManifest(
            {run_id: {**manifest, "path": str(source.path)} for source, manifest in zip(sources, manifests)
             for run_id in sorted(runs[str(source.path)] or {manifest.get("run_id", "")})})
    return df


def load_samples(path: str | Path) -> dict[str, pd.DataFrame]:
    """The samples of a dataset: ``{"nic": rx/tx bytes per interface, "cpu": user/system/idle seconds
    for the process and each core}``, cumulative counters with ``t`` in Unix seconds."""
    source = Source(path)
    try:
        source.manifest()
        tables = {}
        for kind in ("nic", "cpu"):
            parts = source.parts(f"{SAMPLES_DIR}/{kind}")
            if parts:
                tables[kind] = pa.concat_tables([unified(source.table(p)) for p in parts],
                                                promote_options="permissive").to_pandas()
        return tables
    finally:
        source.close()


def load_steps(path: str | Path) -> pd.DataFrame:
    """One row per step and repetition of a study (a directory, or a bundle ``objperf pack`` made): its grid
    values and results, read as any dataset file is (``objperf.dataset.source``)."""
    return load_table(path, "steps")


def load_table(path: str | Path, name: str) -> pd.DataFrame:
    """A table kept beside a dataset's rows: a study's ``steps``, an import's ``phases`` or ``intervals``."""
    source = Source(path)
    try:
        manifest = source.manifest()
        if not source.exists(f"{name}.parquet"):
            have = [n[:-len(".parquet")] for n in DATA_FILES if source.exists(n)]
            raise DatasetError(f"{path} has no {name} table" + (f" (it has {', '.join(have)})" if have else ""))
        table = source.table(f"{name}.parquet").to_pandas()
    finally:
        source.close()
    table.attrs["manifest"] = SharedManifest(manifest)
    return table

"""Datasets: a directory with ``manifest.json`` and ``requests/*.parquet``.

Rows are written as numbered parquet parts while the run goes, so a run that
is killed keeps every row it flushed; a run that ends is compacted into one
part.  ``load`` reads either."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from objperf.errors import UsageError
from objperf.schema import COLUMNS, HTTP_VERSIONS, OPS

MANIFEST = "manifest.json"
ROWS_DIR = "requests"
SAMPLES_DIR = "samples"  # samples/nic/*.parquet, samples/cpu/*.parquet
FORMAT = "objperf-dataset/1"
# Room kept aside while a run writes, given back to write the final manifest on a full disk.
RESERVE = ".objperf-reserve"
RESERVE_BYTES = 64 << 10


def check_new_dataset(path: str | Path) -> Path:
    """``path`` as the place of a new dataset: refused in one line if it exists and is not an empty
    directory (another run's dataset, a killed run's parts, foreign files: nothing gets mixed)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path} is a file, not a directory; choose another --out")
    if path.is_dir() and any(path.iterdir()):
        what = "already holds a dataset" if (path / MANIFEST).exists() else "is not empty"
        raise UsageError(f"{path} {what}; choose another --out or remove it")
    return path


class DatasetWriter:
    """Writes one run's rows and manifest into ``path`` (which must not exist, or be an empty directory)."""

    def __init__(self, path: str | Path, manifest: dict):
        self.path = check_new_dataset(path)
        self._made = not self.path.exists()
        try:
            (self.path / ROWS_DIR).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write dataset to {self.path}: {exc.strerror}") from None
        self.manifest = {"format": FORMAT, "status": "running", **manifest}
        self._parts: dict[str, int] = {}
        self.rows = 0
        self._write_manifest()
        with contextlib.suppress(OSError):  # without it a full disk may leave the manifest "running"
            (self.path / RESERVE).write_bytes(b"\0" * RESERVE_BYTES)

    def _write_manifest(self) -> None:
        tmp = self.path / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(self.manifest, indent=2, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, self.path / MANIFEST)

    def discard(self) -> None:
        """Remove what this writer made, for a run refused before it sent anything: a refusal writes nothing."""
        (self.path / MANIFEST).unlink(missing_ok=True)
        (self.path / RESERVE).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            (self.path / ROWS_DIR).rmdir()
            if self._made:
                self.path.rmdir()

    def append(self, table: pa.Table, subdir: str = ROWS_DIR) -> None:
        """One more numbered part under ``subdir`` (rows by default, or ``samples/nic`` …)."""
        if table.num_rows == 0:
            return
        directory = self.path / subdir
        directory.mkdir(parents=True, exist_ok=True)
        number = self._parts.get(subdir, 0)
        tmp = directory / f".part-{number:05d}.tmp"
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, directory / f"part-{number:05d}.parquet")
        self._parts[subdir] = number + 1
        if subdir == ROWS_DIR:
            self.rows += table.num_rows

    def close(self, status: str, **extra) -> None:
        """Record how the run ended; compact each table's parts into one file."""
        for subdir, count in self._parts.items():
            if count > 1:
                try:
                    self._compact(self.path / subdir)
                except OSError:  # a full disk: the numbered parts stay, and load reads them as well
                    (self.path / subdir / ".compact.tmp").unlink(missing_ok=True)
                    continue
                self._parts[subdir] = 1
        self.manifest.update(status=status, rows=self.rows, **extra)
        (self.path / RESERVE).unlink(missing_ok=True)
        self._write_manifest()

    @staticmethod
    def _compact(directory: Path) -> None:
        parts = sorted(directory.glob("part-*.parquet"))
        table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="permissive")
        tmp = directory / ".compact.tmp"
        pq.write_table(table, tmp, compression="zstd")
        for part in parts:
            part.unlink()
        os.replace(tmp, directory / "part-00000.parquet")


def _text(column: np.ndarray) -> pa.Array:
    """Fixed-width bytes from the engine → dictionary-encoded strings."""
    return pa.array(column, type=pa.binary()).cast(pa.string()).dictionary_encode()


def _labels(indexes: np.ndarray, labels: list[str]) -> pa.Array:
    """``labels[indexes]`` as a dictionary array (labels may repeat, a dictionary may not)."""
    unique, position = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
    return pa.DictionaryArray.from_arrays(pa.array(position.astype(np.int32)[indexes]),
                                          pa.array(unique.tolist(), type=pa.string()))


def _constant(value: str, n: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([value]))


TEXT_COLUMNS = ("s3_error", "remote_ip", "local_ip", "etag")


def rows_to_table(cols: dict[str, np.ndarray], *, run_id: str, host: str, buckets: list[str],
                  keys: list[str]) -> pa.Table:
    """Engine columns (``key_index`` into ``keys``/``buckets``) → the dataset's Arrow table."""
    n = len(cols["offset"])
    versions = np.vectorize(lambda v: HTTP_VERSIONS.get(int(v), str(v)), otypes=[object])(cols["http_version"]) \
        if n else np.array([], dtype=object)
    data = {name: cols[name] for name in COLUMNS if name in cols}
    data.update({name: _text(cols[name]) for name in TEXT_COLUMNS})
    data.update(run_id=_constant(run_id, n), host=_constant(host, n), op=_labels(cols["op"], list(OPS)),
                bucket=_labels(cols["key_index"], buckets), key=_labels(cols["key_index"], keys),
                http_version=pa.array(versions, type=pa.string()).dictionary_encode())
    return pa.table({name: data[name] for name in COLUMNS})


def read_manifest(path: str | Path) -> dict:
    path = Path(path)
    try:
        return json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path} is not an objperf dataset (no {MANIFEST})") from None


def load(path: str | Path | Iterable[str | Path], columns: list[str] | None = None) -> pd.DataFrame:
    """The per-request rows of the dataset at ``path`` (only ``columns``, if given: much faster on
    large datasets); ``df.attrs["manifest"]`` holds its manifest.

    Several datasets (a list of paths: runs shared by others, or made on several hosts) come back as
    one frame, their rows told apart by ``run_id`` and ``host``; ``df.attrs["manifests"]`` maps each
    path to its manifest."""
    paths = [Path(path)] if isinstance(path, (str, os.PathLike)) else [Path(p) for p in path]
    if not paths:
        raise UsageError("load needs at least one dataset")
    manifests = {str(p): read_manifest(p) for p in paths}
    parts = [part for p in paths for part in sorted((p / ROWS_DIR).glob("part-*.parquet"))]
    if parts:
        table = pa.concat_tables([pq.read_table(p, columns=columns) for p in parts], promote_options="permissive")
        df = table.to_pandas()
    else:
        df = pd.DataFrame(columns=list(COLUMNS))
    if len(paths) == 1:
        df.attrs["manifest"] = manifests[str(paths[0])]
    else:
        df.attrs["manifests"] = manifests
    return df


def load_samples(path: str | Path) -> dict[str, pd.DataFrame]:
    """The samples of a dataset: ``{"nic": rx/tx bytes per interface, "cpu": user/system/idle seconds
    for the process and each core}``, cumulative counters with ``t`` in Unix seconds."""
    path = Path(path)
    read_manifest(path)
    tables = {}
    for kind in ("nic", "cpu"):
        parts = sorted((path / SAMPLES_DIR / kind).glob("part-*.parquet"))
        if parts:
            tables[kind] = pa.concat_tables([pq.read_table(p) for p in parts]).to_pandas()
    return tables


"""Datasets: a directory with ``manifest.json`` and ``requests/*.parquet``.

Rows are written as numbered parquet parts while the run goes, so a run that
is killed keeps every row it flushed; a run that ends is compacted into one
part.  ``load`` reads either."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from objperf.errors import UsageError

MANIFEST = "manifest.json"
ROWS_DIR = "requests"
FORMAT = "objperf-dataset/1"


class DatasetWriter:
    """Writes one run's rows and manifest into ``path`` (which must not hold a dataset yet)."""

    def __init__(self, path: str | Path, manifest: dict):
        self.path = Path(path)
        if (self.path / MANIFEST).exists():
            raise UsageError(f"{self.path} already holds a dataset; choose another --out or remove it")
        try:
            (self.path / ROWS_DIR).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write dataset to {self.path}: {exc.strerror}") from None
        self.manifest = {"format": FORMAT, "status": "running", **manifest}
        self._parts = 0
        self.rows = 0
        self._write_manifest()

    def _write_manifest(self) -> None:
        tmp = self.path / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(self.manifest, indent=2, default=str) + "\n")
        os.replace(tmp, self.path / MANIFEST)

    def append(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        tmp = self.path / ROWS_DIR / f".part-{self._parts:05d}.tmp"
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, self.path / ROWS_DIR / f"part-{self._parts:05d}.parquet")
        self._parts += 1
        self.rows += table.num_rows

    def close(self, status: str, **extra) -> None:
        """Record how the run ended; compact the parts into one file."""
        if self._parts > 1:
            self._compact()
        self.manifest.update(status=status, rows=self.rows, **extra)
        self._write_manifest()

    def _compact(self) -> None:
        rows_dir = self.path / ROWS_DIR
        parts = sorted(rows_dir.glob("part-*.parquet"))
        table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="permissive")
        tmp = rows_dir / ".compact.tmp"
        pq.write_table(table, tmp, compression="zstd")
        for part in parts:
            part.unlink()
        os.replace(tmp, rows_dir / "part-00000.parquet")
        self._parts = 1


def read_manifest(path: str | Path) -> dict:
    path = Path(path)
    try:
        return json.loads((path / MANIFEST).read_text())
    except FileNotFoundError:
        raise UsageError(f"{path} is not an objperf dataset (no {MANIFEST})") from None


def load(path: str | Path) -> pd.DataFrame:
    """The per-request rows of the dataset at ``path``; ``df.attrs["manifest"]`` holds its manifest."""
    path = Path(path)
    manifest = read_manifest(path)
    parts = sorted((path / ROWS_DIR).glob("part-*.parquet"))
    if parts:
        table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="permissive")
        df = table.to_pandas()
    else:
        df = pd.DataFrame(columns=list(_empty_columns()))
    df.attrs["manifest"] = manifest
    return df


def _empty_columns():
    from objperf.schema import COLUMNS

    return COLUMNS

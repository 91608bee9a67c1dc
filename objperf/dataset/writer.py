"""A dataset being written: ``DatasetWriter`` claims a new directory, writes the manifest and each flush's rows
as a numbered parquet part, and at the end compacts the parts and lists every file with its size and SHA-256.

pyarrow is imported at the first part written, not with this module: a run opens its dataset before its first
request, and the import (about 50 ms) then overlaps the transfer instead of delaying it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from objperf.core.errors import UsageError
from objperf.core.sanitize import redacted
from objperf.dataset.layout import MANIFEST, ROWS_DIR, SAMPLES_DIR, check_new_dataset

if TYPE_CHECKING:
    import pyarrow as pa

FORMAT = "objperf-dataset/1"
# Room kept aside while a run writes, given back to write the final manifest on a full disk.
RESERVE = ".objperf-reserve"
RESERVE_BYTES = 64 << 10
# Compaction holds one row group of rows (512 Ki rows: about 170 MiB) and the encoded group; Arrow's own
# length, 1 Mi rows, held 290 MiB, and 10 M rows in groups of this length load as fast (0.46 s).
ROW_GROUP_ROWS = 1 << 19


class DatasetWriter:
    """Writes one run's rows and manifest into ``path`` (which must not exist, or be an empty directory)."""

    def __init__(self, path: str | Path, manifest: dict):
        self.path = check_new_dataset(path)
        self._made = not self.path.exists()
        try:
            self.path.mkdir(parents=True, exist_ok=True)  # an empty directory may be there: the user's
            # The claim, made atomically: of two runs given the same new --out at once, which both found it free,
            # one makes requests/ and writes the dataset, the other is refused here (never the two in one).
            (self.path / ROWS_DIR).mkdir()
        except FileExistsError:
            raise UsageError(f"{self.path} is being written by another run started with the same --out; choose "
                             "another --out") from None
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
        # a URL's password never reaches a dataset, whatever put it into the manifest
        tmp.write_text(json.dumps(redacted(self.manifest), indent=2, default=str) + "\n", encoding="utf-8")
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
        import pyarrow.parquet as pq

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
        (self.path / RESERVE).unlink(missing_ok=True)
        self.manifest.update(status=status, rows=self.rows, **extra, files=file_digests(self.path))
        self._write_manifest()

    def row_groups(self, columns: list[str] | None = None) -> Iterator[pa.Table]:
        """The rows written so far (only ``columns``, if given), a part's row group at a time: an hour of
        rows read back never sits in Arrow's memory all at once."""
        import pyarrow.parquet as pq

        for part in sorted((self.path / ROWS_DIR).glob("part-*.parquet")):
            with pq.ParquetFile(part) as parquet:
                for group in range(parquet.num_row_groups):
                    yield parquet.read_row_group(group, columns=columns)

    @staticmethod
    def _compact(directory: Path) -> None:
        """Join the parts into one file, a row group at a time: at the end of a long run its rows are never
        all in memory at once.  Groups of ROW_GROUP_ROWS, not one per part: written a part (a second of rows)
        per group, the file took 7x as long to load."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        parts = sorted(directory.glob("part-*.parquet"))
        schema = pa.unify_schemas([pq.ParquetFile(p).schema_arrow for p in parts], promote_options="permissive")
        tmp = directory / ".compact.tmp"
        pending: list[pa.Table] = []
        held = 0
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for number, part in enumerate(parts, 1):
                table = pq.ParquetFile(part).read()  # not read_table: that loads pyarrow.dataset, 0.3 s of CPU
                # Every part in the one schema: a column a part lacks comes in as nulls.  (Not
                # schema.empty_table(): that imports pandas and pyarrow.compute.)
                pending.append(pa.concat_tables([pa.Table.from_batches([], schema=schema), table],
                                                promote_options="permissive"))
                held += table.num_rows
                while held >= ROW_GROUP_ROWS or (number == len(parts) and held):
                    joined = pa.concat_tables(pending)
                    writer.write_table(joined.slice(0, ROW_GROUP_ROWS), row_group_size=ROW_GROUP_ROWS)
                    pending = [joined.slice(ROW_GROUP_ROWS)]
                    held = pending[0].num_rows
        for part in parts:
            part.unlink()
        os.replace(tmp, directory / "part-00000.parquet")


DATA_DIRS = (ROWS_DIR, SAMPLES_DIR)
DATA_FILES = ("steps.parquet", "phases.parquet", "intervals.parquet")  # studies, imports


def file_digests(path: Path) -> dict[str, dict]:
    """Size and SHA-256 of every data file of the dataset at ``path``, by path inside it."""
    files = [f for d in DATA_DIRS for f in sorted((path / d).rglob("*.parquet"))]
    files += [path / name for name in DATA_FILES if (path / name).exists()]
    return {f.relative_to(path).as_posix(): {"bytes": f.stat().st_size, "sha256": _file_sha256(f)} for f in files}


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as f:  # streamed: a large dataset's parts are not read into memory whole
        return hashlib.file_digest(f, "sha256").hexdigest()



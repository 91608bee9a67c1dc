"""``DatasetWriter``'s counterpart for a dataset that lives in a store: each part goes up as one object the
moment the run flushes it (nothing is staged on local disk), and the manifest — "running" before the first
request, whole at the end — names every part with its size and SHA-256, as a directory's does.  A run that
dies keeps every part it sent; ``objperf.load`` reads such a dataset from its listing, with a warning."""

from __future__ import annotations

import errno
import hashlib
import io
import json
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from objperf.core.errors import ObjperfError, RunFailed
from objperf.core.sanitize import redacted
from objperf.dataset.layout import MANIFEST, ROWS_DIR, SAMPLES_DIR
from objperf.dataset.store_prefix import HOST_DIGITS, PART_DIGITS, StorePrefix


class StoreWriteError(ObjperfError, OSError):
    """The store refused or did not take a part: the run goes on with its rows in memory, as on a full disk."""

    def __init__(self, message: str):
        super().__init__(message)
        self.errno, self.strerror = errno.EIO, message


class StoreWriter:
    """Writes one run's rows (or one cluster host's) under ``out``; a host's writer leaves the manifest to
    the driver and hands its files' sizes and digests back instead."""

    def __init__(self, out: StorePrefix, manifest: dict):
        from objperf.dataset.writer import FORMAT
        from objperf.s3.client import S3Client

        self.out = self.path = out
        self.client = S3Client(out.settings)
        self.manifest = {"format": FORMAT, "status": "running", **manifest}
        self.files: dict[str, dict] = {}  # what this writer sent: name → bytes, sha256
        self._parts: dict[str, int] = {}
        self.rows = 0
        if out.host_index is None:
            try:
                self._write_manifest()
            except StoreWriteError as exc:
                raise RunFailed(f"cannot begin the dataset at {out.url}: {exc.strerror}") from None

    def _put(self, name: str, data: bytes) -> None:
        try:
            self.client.put_object(self.out.bucket, self.out.key(name), data)
        except ObjperfError as exc:
            raise StoreWriteError(f"{exc} (the store did not take {name})") from None

    def _write_manifest(self) -> None:
        self._put(MANIFEST, (json.dumps(redacted(self.manifest), indent=2, default=str) + "\n").encode())

    def discard(self) -> None:
        """A run refused before it sent anything leaves nothing behind."""
        if self.out.host_index is None:
            try:
                self.client.delete_object(self.out.bucket, self.out.key(MANIFEST))
            except ObjperfError:
                pass

    def remove_all(self) -> None:
        """A cluster run that failed to start: its manifest, and any part a host sent as it was stopped (the
        prefix was empty when the run began, so every file of the dataset's layout under it is the run's)."""
        from objperf.dataset.source import DATA_NAME

        try:
            for key, _ in self.client.list_keys(self.out.bucket, self.out.prefix):
                name = key[len(self.out.prefix):]
                if name == MANIFEST or DATA_NAME.fullmatch(name):
                    self.client.delete_object(self.out.bucket, key)
        except ObjperfError:
            pass  # what is left is named by no finished manifest; loading it says the run did not finish

    def append(self, table: pa.Table, subdir: str = ROWS_DIR) -> None:
        if table.num_rows == 0:
            return
        if self.out.host_label is not None and subdir.startswith(SAMPLES_DIR):  # the driver tells hosts apart
            table = table.append_column("host", pa.array([self.out.host_label] * table.num_rows, pa.string()))
        number = self._parts.get(subdir, 0)
        name = self.out.part_name(subdir, number)
        sink = io.BytesIO()
        pq.write_table(table, sink, compression="zstd")
        data = sink.getvalue()
        self._put(name, data)
        self.files[name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        self._parts[subdir] = number + 1
        if subdir == ROWS_DIR:
            self.rows += table.num_rows

    def row_groups(self, columns: list[str] | None = None) -> Iterator[pa.Table]:
        """The rows sent so far (only ``columns``), read back from the store a part at a time."""
        names = [name for name in sorted(self.files) if name.startswith(ROWS_DIR + "/")]
        yield from read_parts(self.client, self.out, {name: self.files[name] for name in names}, columns)

    def close(self, status: str, **extra) -> None:
        self.manifest.update(status=status, rows=self.rows, **extra, files=dict(sorted(self.files.items())))
        if self.out.host_index is None:
            self._write_manifest()


def read_parts(client, out: StorePrefix, files: dict[str, dict],
               columns: list[str] | None = None) -> Iterator[pa.Table]:
    """The parts ``files`` names (with the sizes and digests they were sent with), a row group at a time; a
    part that is not what was sent is refused, never read."""
    for name, expected in files.items():
        try:
            data = client.get_object(out.bucket, out.key(name), limit=expected["bytes"])
        except ObjperfError as exc:
            raise StoreWriteError(f"{exc} (reading back {name})") from None
        if len(data) != expected["bytes"] or hashlib.sha256(data).hexdigest() != expected["sha256"]:
            raise StoreWriteError(f"{out.url}{name} is not the part this run sent (its size or SHA-256 differs)")
        with pq.ParquetFile(pa.BufferReader(data)) as parquet:
            for group in range(parquet.num_row_groups):
                yield parquet.read_row_group(group, columns=columns)


def parts_left_by(client, host: StorePrefix) -> dict[str, dict]:
    """The parts a cluster host sent before it died (and so could not say what it sent), found by listing and
    each read back, no further than its listed size, to be named with its digest."""
    import re

    from objperf.dataset.store_reader import LISTED_PART_MAX_BYTES

    number = f"{host.host_index:0{HOST_DIGITS}d}" + rf"\d{{{PART_DIGITS}}}"
    mine = re.compile(rf"({ROWS_DIR}|{SAMPLES_DIR}/[a-z0-9_]+)/part-{number}\.parquet")
    found = {}
    for folder in (ROWS_DIR + "/", SAMPLES_DIR + "/"):
        for key, size in client.list_keys(host.bucket, host.key(folder)):
            name = key[len(host.prefix):]
            if not mine.fullmatch(name) or size > LISTED_PART_MAX_BYTES:
                continue
            data = client.get_object(host.bucket, key, limit=size)
            if len(data) == size:
                found[name] = {"bytes": size, "sha256": hashlib.sha256(data).hexdigest()}
    return found

"""Where a dataset's files are — a directory, or a bundle made by ``objperf pack`` (tar or zip) — read
as outside input: a dataset may come from anyone.

- A manifest names only data files of the dataset's own layout (``requests/part-*.parquet``,
  ``samples/…``, ``steps.parquet`` …), relative, with no ``..``: never ``/dev/zero`` or
  ``../../etc/passwd``.  Only regular files are read (no FIFO, device or symlink).
- A manifest is JSON of at most ``MANIFEST_MAX_BYTES``, with the types it must have.
- A bundle holds at most ``BUNDLE_MAX_MEMBERS`` members, counted before they are all read.
- A bundle's member is streamed into a private temporary file, at most the size its header declares
  and at most ``MEMBER_MAX_BYTES``: a bomb stops at the cap instead of taking the memory.
- A parquet part's footer is read before its data (``part_rows``): the rows and the expanded bytes it
  declares are bounded by its size on disk and by an absolute cap, and a dataset's parts together hold
  no more rows than its manifest says; a part that would expand past them is one line, never read."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import weakref
from pathlib import Path

from objperf.core import scratch
from objperf.core.errors import UsageError
from objperf.core.sanitize import printable
from objperf.core.schema import COLUMNS as ROW_COLUMN_NAMES
from objperf.dataset.layout import MANIFEST

MANIFEST_MAX_BYTES = 64 << 20
MEMBER_MAX_BYTES = 8 << 30  # a bundle member (a parquet part) expands to at most this much on disk
# A bundle's members: a dataset of a run killed after a day holds a part a second (86,400) and its samples'.
# Each member's header is held while the bundle is open (about 700 bytes): 1 M empty ones took 744 MiB.
BUNDLE_MAX_MEMBERS = 100_000
ZIP_ENTRY_MAX_BYTES = 46 + 210  # a zip's directory entry: 46 bytes and a name (a dataset's are under 100)
CHUNK = 1 << 20
# What a parquet part may declare in its footer.  objperf's densest parts hold 0.22 rows a byte on disk and
# expand 12 times when loaded; 85 KB of nulls can declare 50 M rows (19 GB loaded).  A part holds at most
# PART_ROWS_PER_BYTE rows a byte of its file (PART_ROWS_FLOOR for any file), and its rows (8 bytes a
# column) and uncompressed pages at most PART_EXPANSION times its file (PART_EXPANDED_FLOOR for any file)
# nor PART_EXPANDED_MAX in all: past that a part is scanned where it lies (analyze --scan), not loaded.
PART_ROWS_PER_BYTE = 1
PART_ROWS_FLOOR = 1 << 18
PART_EXPANSION = 64
PART_EXPANDED_FLOOR = 256 << 20
PART_EXPANDED_MAX = 16 << 30
PART_ROW_GROUPS_MAX = 1 << 16  # objperf writes 2^19 rows a group: 32 G rows
# The files a dataset may hold: its manifest, parquet parts under requests/ and samples/KIND/, and the
# tables of studies and imports.
DATA_NAME = re.compile(r"(requests|samples/[a-z0-9_]+)/part-\d{1,9}\.parquet|[a-z_]+\.parquet")


class DatasetError(UsageError):
    """A dataset that is not there, not whole, or not what its manifest says."""


# The fields of a manifest that objperf reads, and what each must be when it is there.  (A workload that is
# no JSON object is taken as one that records no setting.)
MANIFEST_TYPES: dict[str, tuple[type, ...]] = {
    "target": (dict,), "summary": (dict,), "status": (str,), "kind": (str,), "run_id": (str,),
    "started_utc": (str,), "ended_utc": (str,), "rows": (int,), "hosts": (list,), "tables": (list,),
    "steps": (list,)}
JSON_NAMES = {dict: "a JSON object", list: "a list", str: "text", int: "a whole number"}
# A request row's columns as objperf writes them: text (plain or dictionary-encoded), or numbers.
TEXT_COLUMNS = frozenset({"run_id", "host", "op", "bucket", "key", "s3_error", "remote_ip", "local_ip",
                          "http_version", "etag"})
ROW_COLUMNS_NEEDED = ("op", "t_start", "total_s", "bytes")  # what every summary of rows reads


def check_manifest_types(manifest: dict, where: Path) -> None:
    for name, kinds in MANIFEST_TYPES.items():
        value = manifest.get(name)
        if value is None:
            continue
        if not isinstance(value, kinds) or isinstance(value, bool) or (name == "rows" and value < 0):
            raise DatasetError(f"{where}/{MANIFEST}: its {name!r} is {printable(type(value).__name__)}, not "
                               f"{JSON_NAMES[kinds[0]]}" + (" from 0" if name == "rows" else "")
                               + ": not an objperf manifest")


def row_schema_problem(schema, name: str) -> str | None:
    """What is wrong with a part of request rows (``name``), if anything: objperf's columns are held as objperf
    writes them, text as text and numbers as numbers."""
    import pyarrow as pa

    for field in schema:
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_null(kind):
            continue
        if field.name in TEXT_COLUMNS:
            ok, want = pa.types.is_string(kind) or pa.types.is_large_string(kind), "text"
        elif field.name in ROW_COLUMN_NAMES:
            ok, want = pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind), "a number"
        else:
            continue
        if not ok:
            return (f"{printable(name)} holds column {printable(field.name)!r} as {printable(str(field.type))[:60]}, "
                    f"not {want}")
    return None


def check_row_schema(schema, where: Path, name: str) -> None:
    if problem := row_schema_problem(schema, name):
        raise DatasetError(f"{where}: {problem}: not objperf's rows")


def checked_name(name: object, where: Path) -> str:
    """A file name a manifest gives, if it is one a dataset can hold; ``DatasetError`` otherwise."""
    if not isinstance(name, str) or not DATA_NAME.fullmatch(name):
        raise DatasetError(f"{where}: its manifest names {printable(repr(name))[:120]}, which is no file of an "
                           "objperf dataset")
    return name


def own_directory(directory: Path, where: Path) -> None:
    """``directory`` (inside the dataset ``where``) and every directory above it up to ``where`` are the dataset's
    own, not symlinks: a ``requests/`` that leads elsewhere would have files read from there."""
    inner = where
    for name in directory.relative_to(where).parts:
        inner = inner / name
        if os.path.islink(inner):
            raise DatasetError(f"{where}: {printable(inner.relative_to(where))} is a symlink, not a directory of the "
                               "dataset's own: refusing to read through it")


def regular_file(path: Path, where: Path) -> os.stat_result:
    """``path``'s status, if it is a regular file inside the dataset (not a symlink, FIFO or device, nor below a
    symlinked directory)."""
    own_directory(path.parent, where)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise DatasetError(f"{where}: cannot read {path.name} ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise DatasetError(f"{where}: {printable(path.relative_to(where))} is not a regular file")
    return info


def part_rows(path: Path, where: Path, name: str, *, loaded: bool = True) -> int:
    """The rows the parquet part at ``path`` declares, read from its footer alone, if they are within the
    bounds a part is held to (``loaded``: it is to be loaded whole, so the absolute cap holds too)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    size = os.stat(path).st_size
    try:
        with pq.ParquetFile(path) as parquet:
            meta = parquet.metadata
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"{where}: {printable(name)} is not a readable parquet file "
                           f"({printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)})") from None
    rows, columns = meta.num_rows, max(meta.num_columns, 1)
    if meta.num_row_groups > PART_ROW_GROUPS_MAX:
        raise DatasetError(f"{where}: {printable(name)} declares {meta.num_row_groups:,} row groups, more than "
                           f"a part holds ({PART_ROW_GROUPS_MAX:,})")
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    if rows < 0 or sum(g.num_rows for g in groups) != rows or any(g.total_byte_size < 0 for g in groups):
        raise DatasetError(f"{where}: {printable(name)} is not a readable parquet file (its footer's row counts "
                           "do not add up)")
    row_cap = max(PART_ROWS_FLOOR, size * PART_ROWS_PER_BYTE)
    if rows > row_cap:
        raise DatasetError(f"{where}: {printable(name)} declares {rows:,} rows in {size:,} bytes, more than a part "
                           f"of its size holds ({row_cap:,} at most): refusing to expand it")
    expanded = rows * columns * 8 + sum(g.total_byte_size for g in groups)
    byte_cap = max(PART_EXPANDED_FLOOR, size * PART_EXPANSION)
    if loaded:
        byte_cap = min(byte_cap, PART_EXPANDED_MAX)
    if expanded > byte_cap:
        raise DatasetError(f"{where}: {printable(name)} would expand to {expanded / (1 << 30):,.1f} GiB from "
                           f"{size:,} bytes, more than the {byte_cap / (1 << 30):,.2f} GiB a part of its size may"
                           + (" (objperf analyze --scan reads it where it lies)" if size * PART_EXPANSION > byte_cap
                              else ""))
    return rows


def check_rows(manifest: dict, declared: int, where: Path) -> None:
    """The rows a dataset's parts declare, no more than its manifest says it holds."""
    rows = manifest.get("rows")
    if isinstance(rows, int) and not isinstance(rows, bool) and declared > rows:
        raise DatasetError(f"{where}: its parts declare {declared:,} rows, more than the {rows:,} its manifest "
                           "says: the dataset is damaged")


class Source:
    """The files of one dataset, by their path inside it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._names: dict[str, object] | None = None
        self._archive = None
        self._scratch: Path | None = None
        self._extracted: dict[str, Path] = {}
        self._rows: dict[str, int] = {}
        if self.path.is_file():
            self._open_bundle()

    # -- bundles ------------------------------------------------------------------------------------

    def _open_bundle(self) -> None:
        import tarfile
        import zipfile

        try:
            if zipfile.is_zipfile(self.path):
                self._check_zip_directory()
                self._archive = zipfile.ZipFile(self.path)
                members = {m.filename: m for m in self._archive.infolist() if not m.is_dir()}
            elif tarfile.is_tarfile(self.path):
                self._archive = tarfile.open(self.path)
                members = {m.name: m for m in self._tar_members() if m.isfile()}
            else:
                raise DatasetError(f"{self.path} is neither an objperf dataset directory nor a bundle (tar or zip)")
        except DatasetError:
            self.close()
            raise
        except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, ValueError) as exc:
            self.close()
            raise DatasetError(f"{self.path}: a damaged bundle ({printable(exc)})") from None
        roots = [name[:-len(MANIFEST)] for name in members if name.endswith(MANIFEST) and
                 name.count("/") <= 1]
        if not roots:
            raise DatasetError(f"{self.path} holds no objperf dataset (no {MANIFEST})")
        root = min(roots, key=len)
        self._names = {name[len(root):]: m for name, m in members.items() if name.startswith(root)}
        self._scratch = scratch.make("bundle")
        weakref.finalize(self, shutil.rmtree, self._scratch, True)

    def _too_many(self, count: str) -> DatasetError:
        return DatasetError(f"{self.path}: a bundle of {count} members, more than the {BUNDLE_MAX_MEMBERS:,} a "
                            "dataset's bundle holds: refusing to open it")

    def _tar_members(self) -> list:
        """The tar's members, read a header at a time and no further than ``BUNDLE_MAX_MEMBERS``."""
        members = []
        while (member := self._archive.next()) is not None:
            members.append(member)
            if len(members) > BUNDLE_MAX_MEMBERS:
                raise self._too_many(f"more than {BUNDLE_MAX_MEMBERS:,}")
        return members

    def _check_zip_directory(self) -> None:
        """A zip's central directory, as its end record declares it, no larger than ``BUNDLE_MAX_MEMBERS`` members
        take: ``zipfile`` reads the whole directory when it opens, however many members it holds."""
        import struct

        with open(self.path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - (1 << 16) - 22))
            tail = f.read()
            end = tail.rfind(b"PK\x05\x06")
            if end < 0 or len(tail) < end + 22:
                return  # zipfile says what is wrong
            entries, directory = struct.unpack("<HI", tail[end + 10:end + 16])
            locator = tail.rfind(b"PK\x06\x07", 0, end)
            if locator >= 0 and len(tail) >= locator + 20:  # zip64: the counts are in its own end record
                f.seek(struct.unpack("<Q", tail[locator + 8:locator + 16])[0])
                record = f.read(56)
                if record[:4] == b"PK\x06\x06" and len(record) == 56:
                    entries, directory = struct.unpack("<QQ", record[32:48])
        if entries > BUNDLE_MAX_MEMBERS or directory > BUNDLE_MAX_MEMBERS * ZIP_ENTRY_MAX_BYTES:
            raise self._too_many(f"{entries:,}" if entries > BUNDLE_MAX_MEMBERS else f"a {directory:,}-byte list of")

    def _declared_size(self, member) -> int:
        return member.size if hasattr(member, "size") else member.file_size

    def _extract(self, name: str) -> Path:
        """The member ``name`` as a file of its own: streamed, never past its declared size or the cap."""
        if name in self._extracted:
            return self._extracted[name]
        member = self._names.get(name)
        if member is None:
            raise FileNotFoundError(name)
        declared = self._declared_size(member)
        cap = MANIFEST_MAX_BYTES if name == MANIFEST else MEMBER_MAX_BYTES
        if declared > cap:
            raise DatasetError(f"{self.path}: {printable(name)} would expand to {declared:,} bytes, more than "
                               f"the {cap:,} a dataset file may")
        target = self._scratch / f"{len(self._extracted):06d}"
        written = 0
        try:
            stream = self._archive.extractfile(member) if hasattr(self._archive, "extractfile") \
                else self._archive.open(member)
            with stream, open(target, "wb") as out:
                while chunk := stream.read(CHUNK):
                    written += len(chunk)
                    if written > declared:
                        raise DatasetError(f"{self.path}: {printable(name)} expands past the size its header "
                                           "declares")
                    out.write(chunk)
        except DatasetError:
            target.unlink(missing_ok=True)
            raise
        except (OSError, EOFError, ValueError, RuntimeError) as exc:  # zipfile's bad CRC is a BadZipFile (OSError)
            target.unlink(missing_ok=True)
            raise DatasetError(f"{self.path}: {printable(name)} cannot be read from the bundle "
                               f"({printable(exc)})") from None
        self._extracted[name] = target
        return target

    # -- files --------------------------------------------------------------------------------------

    def file(self, name: str) -> Path:
        """A regular file holding ``name``: the dataset's own, or the bundle member extracted."""
        if self._names is not None:
            return self._extract(name)
        path = self.path / name
        regular_file(path, self.path)
        return path

    def read(self, name: str) -> bytes:
        path = self.file(name)
        if os.stat(path).st_size > MANIFEST_MAX_BYTES:
            raise DatasetError(f"{self.path}: {printable(name)} is larger than {MANIFEST_MAX_BYTES:,} bytes")
        return path.read_bytes()

    def exists(self, name: str) -> bool:
        if self._names is not None:
            return name in self._names
        try:
            regular_file(self.path / name, self.path)
        except FileNotFoundError:
            return False
        return True

    def size(self, name: str) -> int:
        if self._names is not None:
            return self._declared_size(self._names[name])
        return regular_file(self.path / name, self.path).st_size

    def sha256(self, name: str) -> str:
        with open(self.file(name), "rb") as f:  # streamed: a large dataset's parts are not read into memory whole
            return hashlib.file_digest(f, "sha256").hexdigest()

    def parts(self, subdir: str) -> list[str]:
        """The parquet parts under ``subdir``, in order (regular files only)."""
        if self._names is None:
            own_directory(self.path / subdir, self.path)
            found = sorted((self.path / subdir).glob("part-*.parquet"))
            return [p.relative_to(self.path).as_posix() for p in found if p.is_file() and not p.is_symlink()]
        return sorted(n for n in self._names if n.startswith(subdir + "/") and n.count("/") == subdir.count("/") + 1
                      and Path(n).name.startswith("part-") and n.endswith(".parquet"))

    def part_rows(self, name: str) -> int:
        """The rows the part ``name`` declares, held to the bounds of ``part_rows`` (read from its footer)."""
        if name not in self._rows:
            self._rows[name] = part_rows(self.file(name), self.path, name)
        return self._rows[name]

    def table(self, name: str, columns: list[str] | None = None):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.part_rows(name)  # its footer first: a part that would expand past its bounds is never read
        try:
            return pq.read_table(self.file(name), columns=columns)
        except (pa.ArrowException, OSError) as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise DatasetError(f"{self.path}: {printable(name)} is not a readable parquet file "
                               f"({printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)})") from None

    def manifest(self) -> dict:
        try:
            manifest = json.loads(self.read(MANIFEST).decode("utf-8"))
        except FileNotFoundError:
            raise DatasetError(f"{self.path} is not an objperf dataset (no {MANIFEST})") from None
        except (ValueError, RecursionError):
            raise DatasetError(f"{self.path}/{MANIFEST} is not valid JSON: the dataset is damaged") from None
        if not isinstance(manifest, dict):
            raise DatasetError(f"{self.path}/{MANIFEST} is not an objperf manifest (not a JSON object)")
        files = manifest.get("files", {})
        if not isinstance(files, dict) or not all(
                isinstance(v, dict) and isinstance(v.get("bytes"), int) and not isinstance(v.get("bytes"), bool)
                and v["bytes"] >= 0 and isinstance(v.get("sha256"), str) for v in files.values()):
            raise DatasetError(f"{self.path}/{MANIFEST}: its 'files' are not names with a byte count and a SHA-256")
        for name in files:
            checked_name(name, self.path)
        check_manifest_types(manifest, self.path)
        return manifest

    def verify(self, manifest: dict) -> None:
        """Every file the manifest lists is here, whole and unaltered; one line naming the first that is not."""
        for name, expected in manifest.get("files", {}).items():
            checked_name(name, self.path)
            if not self.exists(name):
                raise DatasetError(f"{self.path}: {name} is missing")
            size = self.size(name)
            if size != expected["bytes"]:
                raise DatasetError(f"{self.path}: {name} is truncated or grown ({size:,} bytes, the manifest "
                                   f"says {expected['bytes']:,})")
            if self.sha256(name) != expected["sha256"]:
                raise DatasetError(f"{self.path}: {name} was altered (its SHA-256 is not the manifest's)")

    def close(self) -> None:
        if self._archive is not None:
            with contextlib.suppress(Exception):
                self._archive.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

"""Another tool's result file, read as outside input: streamed (zstd or plain), never more than
``MAX_TEXT_BYTES`` of text, no field longer than ``MAX_FIELD_BYTES``; numbers checked to be byte counts;
secrets on a recorded command line blanked before they reach a manifest."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from objperf.core.errors import UsageError
from objperf.core.sanitize import printable, without_userinfo

MAX_TEXT_BYTES = 4 << 30  # a warp file of about 20 M operations
MAX_FIELD_BYTES = 1 << 20
MAX_COUNT = 1 << 53  # the largest byte count a float64 holds exactly: far past any object (5 TiB)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class _Capped(io.RawIOBase):
    """A binary stream that fails once more than ``cap`` bytes have come out of it."""

    def __init__(self, stream: BinaryIO, cap: int, path: Path):
        self.stream, self.cap, self.path, self.count = stream, cap, path, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.stream.read(len(buffer))
        self.count += len(data)
        if self.count > self.cap:
            raise UsageError(f"{self.path}: expands past {self.cap >> 20:,} MiB of text, more than objperf imports "
                             "from one file (a compression bomb, or split the file)")
        buffer[:len(data)] = data
        return len(data)


def open_text(path: Path, cap: int | None = None) -> io.TextIOWrapper:
    """``path``'s text as a stream, zstd-decompressed as it is read when the file is compressed."""
    raw = open(path, "rb")  # noqa: SIM115 - handed to the wrapper, closed with it
    if raw.read(4) == ZSTD_MAGIC:
        import pyarrow as pa

        raw.seek(0)
        raw = pa.input_stream(raw, compression="zstd")
    else:
        raw.seek(0)
    capped = io.BufferedReader(_Capped(raw, MAX_TEXT_BYTES if cap is None else cap, path), 1 << 20)
    return io.TextIOWrapper(capped, encoding="utf-8", newline="")


def records(path: Path, delimiter: str, cap: int | None = None) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of a delimited file; quoted fields may span lines (warp quotes a multi-line
    error).  Every failure to read is one ``UsageError`` naming the file and line."""
    csv.field_size_limit(MAX_FIELD_BYTES)
    stream = open_text(path, cap)
    reader = csv.reader(stream, delimiter=delimiter)
    try:
        with stream:
            for fields in reader:
                yield reader.line_num, fields
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not text (line {reader.line_num + 1})") from None
    except csv.Error as exc:
        raise UsageError(f"{path} line {reader.line_num}: {printable(exc)}") from None
    except OSError as exc:  # a damaged zstd frame
        raise UsageError(f"{path}: not a readable file ({printable(exc)})") from None


def byte_counts(values: pd.Series, column: str, lines: list[int], path: Path) -> np.ndarray:
    """A column of byte counts as int64: whole numbers from 0 to 2**53, or one line naming the first that
    is not."""
    text = values.astype(str).str.strip()
    numbers = pd.to_numeric(text, errors="coerce")
    bad = numbers.isna() | (numbers < 0) | (numbers > MAX_COUNT) | (numbers != np.floor(numbers))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise UsageError(f"{path} line {lines[i]}: bad {column} {printable(text.iloc[i])[:40]!r} (a byte count is "
                         "a whole number from 0 to 2**53)")
    return numbers.to_numpy(np.int64)


_SECRET_FLAG = re.compile(r"(?i)(--?[a-z0-9-]*(?:secret|password|passwd|token|access-?key|s3key)[a-z0-9-]*)"
                          r"(=|\s+)(\"[^\"]*\"|'[^']*'|\S+)")

def redact_command(command: str) -> str:
    """A recorded command line with every credential blanked: values of flags naming a secret, a key or a
    token, and the user:password of URLs."""
    command = _SECRET_FLAG.sub(lambda m: f"{m.group(1)}{m.group(2)}REDACTED", command)
    return without_userinfo(command)

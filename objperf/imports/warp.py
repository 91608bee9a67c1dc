"""MinIO warp's per-operation results (``--benchdata`` / ``--full``): zstd-compressed (or plain),
tab-separated, one line per operation, ``# `` trailer lines holding the command line.  Columns are matched
by name, so the files of every warp version read: since v1 ``idx thread op client_id n_objects bytes endpoint
file error start first_byte last_byte end duration_ns cat``, before that without ``client_id``, ``endpoint``,
``last_byte`` and ``cat``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from objperf.core.errors import UsageError
from objperf.core.sanitize import printable
from objperf.imports import bounded
from objperf.imports.dataset import rows_frame

REQUIRED = ("op", "bytes", "error", "start", "end")
OPS = {"STAT": "HEAD"}  # warp's names where objperf has its own; the others keep warp's


CHUNK_ROWS = 200_000  # operations parsed into rows at a time: the raw text of one chunk is all that is held


def parse(path: str | Path, *, cap: int | None = None) -> tuple[pd.DataFrame, str]:
    """warp's operations as objperf rows, and the command line from the trailer (credentials blanked).
    Streamed: never more than ``cap`` bytes of text (``bounded.MAX_TEXT_BYTES``) nor one chunk's raw fields."""
    path = Path(path)
    header: list[str] | None = None
    commands: list[str] = []
    chunks: list[pd.DataFrame] = []
    records, numbers = [], []
    for number, fields in bounded.records(path, "\t", cap):
        if fields and fields[0].startswith("#"):
            commands.append("\t".join(fields).lstrip("#").strip())
            continue
        if not any(f.strip() for f in fields):
            continue
        if header is None:
            header = fields
            missing = [name for name in REQUIRED if name not in header]
            if missing:
                raise UsageError(f"{path} line {number}: not a warp header (no {', '.join(missing)} column)")
            continue
        if len(fields) != len(header):
            raise UsageError(f"{path} line {number}: {len(fields)} fields where the header has {len(header)}")
        records.append(fields)
        numbers.append(number)
        if len(records) == CHUNK_ROWS:
            chunks.append(_rows(pd.DataFrame(records, columns=header), numbers, path))
            records, numbers = [], []
    if header is None:
        raise UsageError(f"{path}: empty, no warp header")
    if records or not chunks:
        chunks.append(_rows(pd.DataFrame(records, columns=header), numbers, path))
    rows = pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]
    return rows, bounded.redact_command(" ".join(c for c in commands if c))


def _times(raw: pd.DataFrame, column: str, numbers: list[int], path: Path, *, optional: bool = False) -> np.ndarray:
    """RFC 3339 times with nanoseconds as Unix seconds; empty → NaN where ``optional``."""
    text = raw[column] if column in raw.columns else pd.Series([""] * len(raw))
    empty = text.str.strip() == ""
    parsed = pd.to_datetime(text.where(~empty, None), utc=True, format="ISO8601", errors="coerce")
    bad = parsed.isna() & (~empty | (not optional))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise UsageError(f"{path} line {numbers[i]}: bad {column} time {printable(text.iloc[i])[:40]!r}")
    nanos = parsed.astype("int64").to_numpy()  # NaT reads as the minimum int64
    seconds = nanos // 1_000_000_000 + (nanos % 1_000_000_000) / 1e9
    return np.where(parsed.isna().to_numpy(), np.nan, seconds)


MAX_REQUEST_S = 7 * 24 * 3600.0  # no request of a benchmark lasts a week


def _check_order(start: np.ndarray, first_byte: np.ndarray, end: np.ndarray, numbers: list[int], path: Path) -> None:
    """A request starts, has its first byte, and ends, in that order, within a week; one line naming the first
    line whose times do not (an end before its start made "50331648 Gbps")."""
    with np.errstate(invalid="ignore"):
        bad = ~(end >= start) | (end - start > MAX_REQUEST_S) | (first_byte < start) | (first_byte > end)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise UsageError(f"{path} line {numbers[i]}: its times are not a request's (start, first byte and end in "
                         "that order, within a week)")


def _ints(raw: pd.DataFrame, column: str, numbers: list[int], path: Path, default: int = 0) -> np.ndarray:
    """Whole numbers from 0 to 2**53 (byte counts, thread numbers), or one line naming the first that is not."""
    if column not in raw.columns:
        return np.full(len(raw), default, dtype=np.int64)
    return bounded.byte_counts(raw[column], column, numbers, path)


def _rows(raw: pd.DataFrame, numbers: list[int], path: Path) -> pd.DataFrame:
    n = len(raw)
    start = _times(raw, "start", numbers, path)
    end = _times(raw, "end", numbers, path)
    first_byte = _times(raw, "first_byte", numbers, path, optional=True)
    _check_order(start, first_byte, end, numbers, path)
    error = raw["error"].fillna("").str.strip()
    endpoint = raw["endpoint"] if "endpoint" in raw.columns else pd.Series([""] * n)
    host_port = endpoint.str.replace(r"^[a-z]+://", "", regex=True).str.rsplit(":", n=1)
    client = raw["client_id"] if "client_id" in raw.columns else pd.Series([""] * n)
    thread = _ints(raw, "thread", numbers, path)
    data = {
        "host": client.where(client != "", "warp").tolist(),
        "thread": thread, "slot": thread,
        "op": raw["op"].str.strip().map(lambda op: OPS.get(op, op)).tolist(),
        "key": raw["file"].tolist() if "file" in raw.columns else [""] * n,
        "bytes": _ints(raw, "bytes", numbers, path),
        "length": _ints(raw, "bytes", numbers, path),
        "object_size": _ints(raw, "bytes", numbers, path),  # warp's size of the operation, as its analyze splits
        "status": np.where(error == "", 200, 0),
        "s3_error": error.tolist(),  # warp keeps the message only: it stands where a code would
        "t_start": start,
        "ttfb_s": first_byte - start,
        "total_s": end - start,
        "remote_ip": host_port.map(lambda parts: parts[0] if len(parts) == 2 else "").tolist(),
        "remote_port": host_port.map(lambda parts: int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else 0)
                                .to_numpy(np.int32),
    }
    return rows_frame(data, n)

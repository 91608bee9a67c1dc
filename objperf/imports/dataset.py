"""An imported result written as an objperf dataset: its rows in the dataset's columns, its tables beside
them, a manifest naming the tool it came from."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from objperf.core.schema import COLUMNS, ENGINE_COLUMNS, UNKNOWN_SIZE, UNSAID
from objperf.dataset.directory import unified
from objperf.dataset.writer import DatasetWriter
from objperf.run.metadata import utc_now

TEXT = ("run_id", "host", "op", "bucket", "key", "s3_error", "remote_ip", "local_ip", "http_version", "etag")


def rows_frame(data: dict[str, object], n: int) -> pd.DataFrame:
    """``n`` rows in the dataset's columns: ``data``'s, the rest zero or ``UNSAID``'s (numbers) or empty (text)."""
    columns = {}
    for name in COLUMNS:
        if name in data:
            columns[name] = data[name]
        elif name in TEXT:
            columns[name] = [""] * n
        elif name == "object_size":
            columns[name] = np.full(n, UNKNOWN_SIZE, dtype=np.int64)
        else:
            columns[name] = np.full(n, UNSAID.get(name, 0), dtype=ENGINE_COLUMNS.get(name, np.dtype("float64")))
    frame = pd.DataFrame(columns)
    for name, dtype in ENGINE_COLUMNS.items():
        if name in frame.columns and name not in TEXT:
            frame[name] = frame[name].astype(dtype)
    return frame


def write_import(out: str | Path, *, source: str, file: str, command: str, rows: pd.DataFrame | None = None,
                 tables: dict[str, pd.DataFrame] | None = None, extra: dict | None = None) -> Path:
    """The imported result as a dataset at ``out``; its summary from the rows (when there are rows)."""
    from objperf.analysis.saved import summary_of

    run_id = uuid.uuid4().hex[:16]
    manifest = {"run_id": run_id, "kind": "import", "source": source, "file": str(file), "command": command,
                "started_utc": utc_now(), **(extra or {})}
    writer = DatasetWriter(out, manifest)
    summary = {}
    if rows is not None and len(rows):
        rows = rows.assign(run_id=run_id)
        writer.append(unified(pa.Table.from_pandas(rows[list(COLUMNS)], preserve_index=False)))
        summary = summary_of(rows)
    for name, table in (tables or {}).items():
        table.to_parquet(writer.path / f"{name}.parquet", index=False)
    writer.close("complete", summary=summary, tables=sorted(tables or {}))
    return writer.path

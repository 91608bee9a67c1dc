"""The driver's side of a cluster run's results: every host's dataset into one (rows of all hosts, each
host's samples with a ``host`` column, one manifest naming every host).  Their summary is
``objperf.analysis.cluster_summary``'s."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from objperf.dataset.directory import MANIFEST, ROWS_DIR, SAMPLES_DIR, load
from objperf.dataset.writer import DatasetWriter


def write_hosts(writer: DatasetWriter, label: str, files: dict[str, bytes]) -> dict:
    """One host's dataset files into the cluster's dataset; that host's manifest."""
    for name, data in sorted(files.items()):
        if not name.endswith(".parquet"):
            continue
        table = pq.ParquetFile(io.BytesIO(data)).read()
        subdir = str(Path(name).parent)
        if subdir.startswith(SAMPLES_DIR):
            table = table.append_column("host", pa.array([label] * table.num_rows, pa.string()))
        if subdir == ROWS_DIR or subdir.startswith(SAMPLES_DIR):
            writer.append(table, subdir)
    return json.loads(files[MANIFEST]) if MANIFEST in files else {}


SUMMARY_COLUMNS = ["host", "op", "status", "curl_code", "bytes", "t_start", "ttfb_s", "total_s"]


def cluster_rows(writer):
    """The columns the cluster's summary needs, of every host's rows in the dataset ``writer`` is still writing
    (a directory's ``DatasetWriter``, or a store's ``StoreWriter``: read back from the store)."""
    if isinstance(writer, DatasetWriter):
        with warnings.catch_warnings():  # the driver reads the dataset it is still writing: "did not finish" is moot
            warnings.simplefilter("ignore", UserWarning)
            return load(writer.path, columns=SUMMARY_COLUMNS)
    from objperf.dataset.directory import unified
    from objperf.dataset.store_writer import read_parts

    names = {name: d for name, d in sorted(writer.files.items()) if name.startswith(ROWS_DIR + "/")}
    tables = [unified(table) for table in read_parts(writer.client, writer.out, names, SUMMARY_COLUMNS)]
    if not tables:
        import pandas as pd

        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    return pa.concat_tables(tables, promote_options="permissive").to_pandas()

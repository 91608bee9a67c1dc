"""The per-request row: column names and types shared by every dataset.

The engines fill NumPy columns (``objperf._engine.core.ENGINE_COLUMNS``); this
module turns them into an Arrow table with names instead of indexes.

Phase times (``dns_s`` … ``total_s``) are libcurl's, cumulative from the start
of the request: ``ttfb_s`` includes ``pretransfer_s``; ``connect_s`` and
``tls_s`` are 0 when the request reused a connection (``new_conn`` False).
``t_start`` is wall-clock seconds since the Unix epoch, so runs from several
hosts line up.  ``bytes`` counts body bytes of successful responses only (bytes
received for GET, bytes sent for PUT and UPLOAD_PART).  A GET still in flight when a
run's time is up (or at Ctrl-C) is cut: its row has ``curl_code`` 42 and the
bytes that had arrived, and counts as neither a success nor a failure.  ``ttfb_s`` is libcurl's
start-transfer time: the first byte of the body for a GET, the start of the
upload for a PUT (use ``total_s`` for uploads).  Rows the control plane makes
(CREATE_MPU, COMPLETE_MPU, ABORT_MPU) have ``thread``/``slot`` -1 and only
``t_start``, ``ttfb_s`` = ``total_s``, status and error codes.  ``etag`` is the
ETag of the final response, where there was one."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

COLUMNS = (
    "run_id", "host", "thread", "slot", "op", "bucket", "key", "offset", "length", "attempt", "status", "s3_error",
    "curl_code", "bytes", "t_start", "dns_s", "connect_s", "tls_s", "pretransfer_s", "ttfb_s", "total_s",
    "remote_ip", "remote_port", "local_ip", "local_port", "ip_family", "http_version", "new_conn", "crc32", "etag",
)
OPS = ("GET", "PUT", "UPLOAD_PART", "CREATE_MPU", "COMPLETE_MPU", "ABORT_MPU", "HEAD", "DELETE")
HTTP_VERSIONS = {0: "", 10: "1.0", 11: "1.1", 20: "2", 30: "3"}


def _text(column: np.ndarray) -> pa.Array:
    """Fixed-width bytes from the engine → dictionary-encoded strings."""
    return pa.array(column, type=pa.binary()).cast(pa.string()).dictionary_encode()


def _labels(indexes: np.ndarray, labels: list[str]) -> pa.Array:
    """``labels[indexes]`` as a dictionary array (labels may repeat, a dictionary may not)."""
    unique, position = np.unique(np.asarray(labels, dtype=object), return_inverse=True)
    return pa.DictionaryArray.from_arrays(pa.array(position.astype(np.int32)[indexes]),
                                          pa.array(unique.tolist(), type=pa.string()))


def rows_to_table(cols: dict[str, np.ndarray], *, run_id: str, host: str, buckets: list[str],
                  keys: list[str]) -> pa.Table:
    """Engine columns (``key_index`` into ``keys``/``buckets``) → the dataset's Arrow table."""
    n = len(cols["offset"])
    versions = np.vectorize(lambda v: HTTP_VERSIONS.get(int(v), str(v)), otypes=[object])(cols["http_version"]) \
        if n else np.array([], dtype=object)
    data = {
        "run_id": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([run_id])),
        "host": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([host])),
        "thread": cols["thread"],
        "slot": cols["slot"],
        "op": _labels(cols["op"], list(OPS)),
        "bucket": _labels(cols["key_index"], buckets),
        "key": _labels(cols["key_index"], keys),
        "offset": cols["offset"],
        "length": cols["length"],
        "attempt": cols["attempt"],
        "status": cols["status"],
        "s3_error": _text(cols["s3_error"]),
        "curl_code": cols["curl_code"],
        "bytes": cols["bytes"],
        "t_start": cols["t_start"],
        "dns_s": cols["dns_s"],
        "connect_s": cols["connect_s"],
        "tls_s": cols["tls_s"],
        "pretransfer_s": cols["pretransfer_s"],
        "ttfb_s": cols["ttfb_s"],
        "total_s": cols["total_s"],
        "remote_ip": _text(cols["remote_ip"]),
        "remote_port": cols["remote_port"],
        "local_ip": _text(cols["local_ip"]),
        "local_port": cols["local_port"],
        "ip_family": cols["ip_family"],
        "http_version": pa.array(versions, type=pa.string()).dictionary_encode(),
        "new_conn": cols["new_conn"],
        "crc32": cols["crc32"],
        "etag": _text(cols["etag"]),
    }
    return pa.table({name: data[name] for name in COLUMNS})

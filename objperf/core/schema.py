"""The per-request row, defined once: column names and types, op codes, the curl
code of a cut request, and which rows succeeded, were cut or failed.  The
engine, the reference engine, the control plane, the summary, the analysis and
the dataset writer all take them from here.  NumPy only: no compiled code, no
pyarrow (``objperf.dataset.directory.rows_to_table`` makes the Arrow table).

Phase times (``dns_s`` … ``total_s``) are libcurl's, cumulative from the start
of the request: ``ttfb_s`` includes ``pretransfer_s``; ``connect_s`` and
``tls_s`` are 0 when the request reused a connection (``new_conn`` False).
``tls_resumed`` says how the TLS connection a request opened began: 1 by resuming
an earlier session, 0 with a full handshake, -1 when the request opened no TLS
connection (it reused one, spoke cleartext, or the TLS library cannot tell).
``object_size`` is the size of the object a request is of, as the run knew it: a read's object as listed, a
write's object as drawn (a multipart upload's whole object, on each of its parts' rows); -1 where the run did
not know it (datasets written before objperf kept it, imported ones that do not say).  The engine does not
fill it: like ``bucket`` and ``key``, it is named from ``key_index`` when the rows are written.
``offset`` and ``length`` are the bytes a request is of (a GET's range, a part's place in its object); a LIST's
and a DELETE_OBJECTS' ``length`` counts keys instead (``KEYED_OPS``), set from the answer's document before the
row is recorded, and a LIST's ``offset`` is its page's number in its pass through the listing.
``t_start`` is wall-clock seconds since the Unix epoch, so runs from several
hosts line up.  ``bytes`` counts body bytes of successful responses only (bytes
received for GET, bytes sent for PUT and UPLOAD_PART).  A GET still in flight when a
run's time is up (or at Ctrl-C) is cut: its row has ``curl_code`` 42 and the
bytes that had arrived, and counts as neither a success nor a failure.  ``ttfb_s`` is libcurl's
start-transfer time (NaN, missing, when no byte of an answer came): the first byte of the body for a
GET, the start of the upload for a PUT (use ``total_s`` for uploads).  Rows the control plane makes
(CREATE_MPU, COMPLETE_MPU, ABORT_MPU) have ``thread``/``slot`` -1 and only
``t_start``, ``ttfb_s`` = ``total_s``, status and error codes.  ``etag`` is the
ETag of the final response, where there was one."""

from __future__ import annotations

import numpy as np

from objperf.core.curl_codes import CURLE_ABORTED_BY_CALLBACK

COLUMNS = (
    "run_id", "host", "thread", "slot", "op", "bucket", "key", "object_size", "offset", "length", "attempt", "status",
    "s3_error",
    "curl_code", "bytes", "t_start", "dns_s", "connect_s", "tls_s", "pretransfer_s", "ttfb_s", "total_s",
    "t_intended", "remote_ip", "remote_port", "local_ip", "local_port", "ip_family", "http_version", "new_conn",
    "tls_resumed", "crc32", "etag",
)
UNKNOWN_SIZE = -1  # object_size where the run did not know it
S3_ERROR_BYTES = 64  # AWS documents codes of up to 34 characters: room to spare
IP_BYTES = 46
ETAG_BYTES = 48

# The columns an engine fills, in this order; the dataset adds run_id and host, and names
# bucket and key from ``key_index``.  The engine checks its C ring against these at import.
ENGINE_COLUMNS: dict[str, np.dtype] = {name: np.dtype(dtype) for name, dtype in (
    ("thread", np.int16),
    ("slot", np.int32),
    ("op", np.int8),
    ("key_index", np.int32),
    ("offset", np.int64),
    ("length", np.int64),
    ("attempt", np.int16),
    ("status", np.int16),
    ("s3_error", f"S{S3_ERROR_BYTES}"),
    ("curl_code", np.int32),
    ("bytes", np.int64),
    ("t_start", np.float64),
    ("dns_s", np.float64),
    ("connect_s", np.float64),
    ("tls_s", np.float64),
    ("pretransfer_s", np.float64),
    ("ttfb_s", np.float64),
    ("total_s", np.float64),
    ("t_intended", np.float64),  # when the request was due (open loop, --rate); its start otherwise
    ("remote_ip", f"S{IP_BYTES}"),
    ("remote_port", np.int32),
    ("local_ip", f"S{IP_BYTES}"),
    ("local_port", np.int32),
    ("ip_family", np.int8),
    ("http_version", np.int8),
    ("new_conn", np.bool_),
    ("tls_resumed", np.int8),
    ("crc32", np.uint32),
    ("etag", f"S{ETAG_BYTES}"),
)}

OPS = ("GET", "PUT", "UPLOAD_PART", "CREATE_MPU", "COMPLETE_MPU", "ABORT_MPU", "HEAD", "DELETE", "LIST",
       "DELETE_OBJECTS", "COPY", "UPLOAD_PART_COPY")
OP = {name: code for code, name in enumerate(OPS)}
OP_GET, OP_PUT, OP_UPLOAD_PART, OP_HEAD, OP_DELETE = OP["GET"], OP["PUT"], OP["UPLOAD_PART"], OP["HEAD"], OP["DELETE"]
OP_LIST, OP_DELETE_OBJECTS, OP_COPY, OP_UPLOAD_PART_COPY = (OP["LIST"], OP["DELETE_OBJECTS"], OP["COPY"],
                                                            OP["UPLOAD_PART_COPY"])
# Requests that move no object's body through the client, each reported apart: its rate, latency and errors
# (the summary's "ops").  A LIST's row counts its page's bytes, a copy's the bytes the store copied; a
# DeleteObjects' counts none (its document, like a PUT's framing, is no object's body).
METADATA_OPS = ("HEAD", "DELETE", "LIST", "DELETE_OBJECTS", "COPY", "UPLOAD_PART_COPY")
# Ops whose row's ``length`` counts keys, not bytes: a LIST's the keys and common prefixes its page lists
# (its ``offset`` the page's number in its pass through the listing, 0 for the first), a DELETE_OBJECTS' the
# keys its batch names.  The summary gives each such op's keys and keys/s beside its requests/s, counting
# the rows that succeeded, as it counts bytes.
KEYED_OPS = ("LIST", "DELETE_OBJECTS")
# Ops whose row's ``bytes`` are what the store copied, server-side: no byte of them passed through the client.
# The summary gives each such op's bytes and their rate beside its requests/s.
COPY_OPS = ("COPY", "UPLOAD_PART_COPY")
# Op codes by direction of the body.
DIRECTIONS = {"read": (OP_GET,), "write": (OP_PUT, OP_UPLOAD_PART)}
HTTP_VERSIONS = {0: "", 10: "1.0", 11: "1.1", 20: "2", 30: "3"}

# A request still in flight when the run's time was up (or at Ctrl-C): the engine cut it and recorded
# the bytes moved until then.  libcurl's "aborted by an application callback", which objperf raises no
# other way.  Cut before an error status arrived, it is neither a success nor a failure; an error
# status that had arrived (a 503 cut mid-body) still makes it a failure.
CUT_CURL_CODE = CURLE_ABORTED_BY_CALLBACK

# libcurl's own words for the codes an HTTP transfer can end with (curl_easy_strerror), so the summary
# names errors without loading the engine.
CURL_ERRORS = {
    # libcurl says "Unsupported protocol" too of an answer with no HTTP status line (it refuses HTTP/0.9)
    1: "Unsupported protocol, or an answer that was not HTTP (no status line)", 2: "Failed initialization",
    3: "URL using bad/illegal format or missing URL",
    5: "Couldn't resolve proxy name", 6: "Couldn't resolve host name", 7: "Couldn't connect to server",
    # objperf gives 8, 18 and 33 to answers that break the S3 contract (objperf._engine's held_to_contract)
    8: "Weird server reply (not an answer S3 gives: a part with no ETag, an upload with no UploadId)",
    16: "Error in the HTTP2 framing layer",
    18: "Transferred a partial file (fewer bytes than the range asked)",
    22: "HTTP response code said error (or a 200 refused keys of a batch delete, each an <Error>)",
    23: "Failed writing received data to disk/application",
    25: "Upload failed (at start/before it took off)", 26: "Failed to open/read local data from file/application",
    27: "Out of memory", 28: "Timeout was reached",
    33: "Requested range was not delivered by the server (another range, or more bytes than asked)",
    35: "SSL connect error", 42: "Operation was aborted by an application callback",
    43: "A libcurl function was given a bad argument", 45: "Failed binding local connection end",
    47: "Number of redirects hit maximum amount", 52: "Server returned nothing (no headers, no data)",
    55: "Failed sending data to the peer", 56: "Failure when receiving data from the peer",
    58: "Problem with the local SSL certificate", 59: "Couldn't use specified SSL cipher",
    60: "SSL peer certificate or SSH remote key was not OK",
    63: "Maximum file size exceeded (an answer's document longer than objperf reads of it)",
    61: "Unrecognized or bad HTTP Content or Transfer-Encoding",
    65: "Send failed since rewinding of the data stream failed",
    77: "Problem with the SSL CA cert (path? access rights?)", 80: "Failed to shut down the SSL connection",
    83: "Issuer check against peer certificate failed", 89: "The max connection limit is reached",
    90: "SSL public key does not match pinned public key", 91: "SSL server certificate status verification FAILED",
    92: "Stream error in the HTTP/2 framing layer", 95: "HTTP/3 error", 97: "proxy handshake error",
    98: "SSL Client Certificate required",
}


def curl_error_text(code: int) -> str:
    return CURL_ERRORS.get(int(code), f"curl error {int(code)}")


# What a row that says nothing of a column holds there (zero elsewhere).
UNSAID = {"tls_resumed": -1, "t_intended": float("nan")}


def empty_columns(n: int = 0) -> dict[str, np.ndarray]:
    """``n`` rows in the engine's columns that say nothing: empty text, zero, or ``UNSAID``'s value."""
    return {name: np.full(n, b"" if dtype.kind == "S" else UNSAID.get(name, 0), dtype=dtype)  # not b"0"
            for name, dtype in ENGINE_COLUMNS.items()}


# Which rows are which: each takes NumPy arrays or pandas Series alike.

def ok_requests(curl_code, status):
    """The request succeeded: no curl error and a 2xx status."""
    return (curl_code == 0) & (status >= 200) & (status < 300)


def cut_requests(curl_code, status):
    """The request was cut in flight when the run ended, before an error status arrived."""
    return (curl_code == CUT_CURL_CODE) & (status < 300)


def failed_requests(curl_code, status):
    """Neither a success nor cut."""
    return ~ok_requests(curl_code, status) & ~cut_requests(curl_code, status)


def first_byte_requests(curl_code, status, ttfb_s):
    """A success's body, or a cut one's, had begun to arrive: TTFB is known."""
    return ((curl_code == 0) | (curl_code == CUT_CURL_CODE)) & (status >= 200) & (status < 300) & (ttfb_s > 0)

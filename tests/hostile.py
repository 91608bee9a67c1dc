"""A hostile S3 server for the tests: stdlib only, one misbehaviour per mode.

``HostileS3(mode, ...)`` speaks just enough S3 (HEAD and ranged GET of objects, ListObjectsV2, PUT,
and the multipart calls) to be a store objperf would use, and breaks the S3 contract in the one way
its mode names.  It checks no signature: objperf signs, the server ignores it.  ``calls`` counts the
requests by kind, so a test can say what objperf sent; ``stop`` ends every trickle and stream at once.

Modes (``MODES`` holds them all):

- ``well-behaved``: none of the below; the control case.
- ``listing-keys``: the listing returns ``keys`` as given (``../x``, absolute paths, outside the prefix).
- ``listing-endless-body``: the listing's body never ends.
- ``listing-forever-same-token``: every page is truncated and names the same continuation token.
- ``listing-forever-new-token``: every page is truncated and names a new token, each with ``page_keys`` keys.
- ``listing-repeats``: every page is truncated, names a new token and lists the same ``page_keys`` keys.
- ``listing-long-key``: every page is truncated, names a new token and lists one key of ``key_bytes`` bytes.
- ``listing-long-token``: every page is truncated and names a new token of ``token_bytes`` bytes.
- ``listing-max-keys``: every page is truncated, names a new token and lists ``page_keys`` new keys of
  ``key_bytes`` bytes (1,024 by default: S3's longest), in order.
- ``listing-bad-size``: a listed size that is no number, or negative, or 1e99.
- ``listing-not-xml``: the listing's body is not XML.
- ``head-endless-body``: a HEAD answer followed by an endless body (a broken server, or a hostile one).
- ``create-endless-body``: CreateMultipartUpload answers 200 and a body that never ends.
- ``create-trickle``: CreateMultipartUpload answers 200 and then 2 bytes a second.
- ``create-no-upload-id``: CreateMultipartUpload answers 200 without an UploadId.
- ``part-no-etag``: every UploadPart and PUT answers 200 without an ETag.
- ``part-500``: every UploadPart and PUT answers 500.
- ``complete-200-error``: CompleteMultipartUpload answers 200 with an ``<Error>`` body.
- ``wrong-content-range``: every 206 says ``bytes 0-…`` whatever range was asked, and sends those bytes.
- ``short-body``: a 206 names the range asked and sends half of it, with a Content-Length that says so.
- ``head-says-zero``: HEAD says 0 bytes; GET sends ``size`` bytes.
- ``head-says-huge``: HEAD says 2^63 - 1 bytes, past the 5 TiB an S3 object can hold.
- ``head-bad-length``: HEAD answers a Content-Length that is no number.
- ``ansi-error``: every GET and HEAD is refused with ANSI escapes and control bytes in the S3 error code.
- ``get-stall``: every GET is taken and never answered (until the server stops).
- ``not-http``: every GET is answered with bytes and no HTTP status line (HTTP/0.9, or no HTTP at all).
- ``write-acked-early``: every PUT and UploadPart is answered 200 with an ETag once 1/4 of its body came, and
  the connection closed.
- ``get-body-cut``: every GET's answer says its whole length, sends half of it, and the connection closes.
- ``redirect``: every GET is answered 302 to ``redirect_to`` (another server's URL of the same key).
- ``copy-200-error``: every CopyObject and UploadPartCopy answers 200 with an ``<Error>`` body (S3 may, when a
  copy fails after its 200 went out).
- ``copy-no-etag``: every CopyObject and UploadPartCopy answers 200 with a result that names no ETag.
- ``copy-long-document``: every CopyObject and UploadPartCopy answers 200 with 256 KiB of spaces before its
  result (S3 keeps a long copy's connection alive with spaces, never so many).
- ``copy-stall``: every CopyObject and UploadPartCopy is taken and never answered (until the server stops).
- ``reopened-after-abort``: an upload aborted once is listed open again (a late part re-opened it), until it
  is aborted a second time.
- ``checksum-wrong``: a GET that asks for the checksum (``x-amz-checksum-mode``) is answered with the CRC-32 of
  other bytes than those sent (any mode answers a whole GET that asks with the right one).
- ``checksum-on-range``: a ranged GET that asks for the checksum is answered with the whole object's.
- ``delete-names-unasked``: every DeleteObjects is answered 200, each key asked deleted, and one more key named
  deleted that was not asked for.
- ``delete-refuses``: every DeleteObjects is answered 200 with an ``<Error>`` (AccessDenied) for every second key
  asked, the others deleted.
- ``CALL-endless-body``, ``CALL-endless-error``, ``CALL-trickle`` for CALL ``uploads`` (ListMultipartUploads),
  ``get`` (GetObject) and ``put`` (PutObject and UploadPart): that call is answered 200 and a body that
  never ends, a 500 and an error body that never ends, or 200 and its answer 1 byte every 2 seconds.

``files`` are objects served with the bytes given (a dataset's files), beside ``objects`` served made up.
"""

from __future__ import annotations

import base64
import http.server
import re
import threading
import time
import zlib
from urllib.parse import parse_qs, unquote, urlsplit

MODES = (
    "well-behaved", "listing-keys", "listing-endless-body", "listing-forever-same-token",
    "listing-forever-new-token", "listing-repeats", "listing-long-key", "listing-long-token", "listing-max-keys",
    "listing-bad-size", "listing-not-xml", "head-endless-body",
    "create-endless-body", "create-trickle", "create-no-upload-id", "part-no-etag", "part-500",
    "complete-200-error", "wrong-content-range", "short-body", "head-says-zero", "ansi-error", "get-stall",
    "not-http", "write-acked-early", "get-body-cut", "redirect", "reopened-after-abort", "head-says-huge",
    "head-bad-length", "checksum-wrong", "checksum-on-range", "delete-names-unasked", "delete-refuses",
    "head-bad-length", "copy-200-error", "copy-no-etag", "copy-long-document", "copy-stall",
    *(f"{call}-{how}" for call in ("uploads", "get", "put") for how in ("endless-body", "endless-error", "trickle")),
)
ANSI_CODE = "\x1b[31;1mSlow\x1b]0;pwned\x07Down\r\x1b[2K"


def content(size: int) -> bytes:
    return bytes((i * 7 + 3) % 251 for i in range(min(size, 251))) * (size // 251 + 1)


class HostileS3:
    def __init__(self, mode: str, *, objects: dict[str, int] | None = None, keys: list[str] | None = None,
                 bucket: str = "hostile", bad_size: str = "-5", page_keys: int = 1000,
                 key_bytes: int | None = None, token_bytes: int = 1 << 20, tls: tuple[str, str] | None = None,
                 redirect_to: str = "", files: dict[str, bytes] | None = None,
                 uploads: list[tuple[str, str]] | None = None):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        self.redirect_to = redirect_to
        self.bucket = bucket
        self.files = dict(files or {})
        self.objects = {**dict(objects or {"data/obj.bin": 4 << 20}), **{k: len(v) for k, v in self.files.items()}}
        self.uploads = list(uploads or [])  # (key, upload id) the uploads listing names
        self.put_bodies: dict[str, bytes] = {}
        self.keys = list(keys or [])
        self.bad_size = bad_size
        self.page_keys = page_keys
        self.key_bytes = key_bytes or (1024 if mode == "listing-max-keys" else 1 << 20)
        self.token_bytes = token_bytes
        self.tls = tls  # (certificate, key) PEM files: speak HTTPS
        self.calls: dict[str, int] = {}
        self.aborts: dict[str, int] = {}  # by key
        self.paths: list[str] = []  # every HEAD's and GET's path as it came, unresolved
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self._server: http.server.ThreadingHTTPServer | None = None

    # -- life -----------------------------------------------------------------------------------------

    def __enter__(self) -> HostileS3:
        owner = self

        class Handler(_Handler):
            hostile = owner

        self._server = _Server(("127.0.0.1", 0), Handler)
        if self.tls:
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True, name=f"hostile-{self.mode}").start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def endpoint(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self._server.server_port}"

    def count(self, call: str) -> None:
        with self.lock:
            self.calls[call] = self.calls.get(call, 0) + 1


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024  # the default backlog of 5 resets a client's 16 connections made at once
    def handle_error(self, request, client_address) -> None:
        pass  # a client that hangs up on a hostile answer is what the tests expect


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hostile: HostileS3

    def log_message(self, *args) -> None:
        pass

    # -- helpers --------------------------------------------------------------------------------------

    def _where(self) -> tuple[str, str, dict[str, list[str]]]:
        parts = urlsplit(self.path)
        path = unquote(parts.path).lstrip("/")
        bucket, _, key = path.partition("/")
        return bucket, key, parse_qs(parts.query, keep_blank_values=True)

    def _answer(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self._write(body)

    def _write(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _endless(self, status: int = 200, first: bytes = b"<?xml version='1.0'?><R>") -> None:
        """Chunked, never ending: what a server streaming garbage sends."""
        self.send_response(status)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = first + b"<X>" + b"A" * 65536 + b"</X>"
        frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        while not self.hostile.stopping.is_set() and self._write(frame):
            chunk = b"A" * 65536
            frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        self.close_connection = True

    def _trickle(self, body: bytes, *, step: int = 2, every: float = 1.0, headers: dict | None = None) -> None:
        """200, headers at once, then ``step`` bytes every ``every`` seconds (2 a second)."""
        self.send_response(200)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for at in range(0, len(body), step):
            if self.hostile.stopping.wait(every) or not self._write(body[at:at + step]):
                break
        self.close_connection = True

    def _misbehaves(self, call: str, answer: bytes, headers: dict | None = None) -> bool:
        """Whether this mode breaks ``call``; then its broken answer has gone out (``answer``: the right one)."""
        mode = self.hostile.mode
        if mode == f"{call}-endless-body":
            self._endless()
        elif mode == f"{call}-endless-error":
            self._endless(500, b"<?xml version='1.0'?><Error><Code>InternalError</Code><Message>")
        elif mode == f"{call}-trickle":
            self._trickle(answer or b" " * 200, step=1, every=2.0, headers=headers)
        else:
            return False
        return True

    def _error(self, status: int, code: str) -> None:
        body = f"<?xml version='1.0'?><Error><Code>{code}</Code><Message>{code}</Message></Error>".encode()
        self._answer(status, body, {"Content-Type": "application/xml"})

    def _drain_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # -- S3 -------------------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        h = self.hostile
        bucket, key, _ = self._where()
        h.count("HEAD")
        h.paths.append(urlsplit(self.path).path)
        if h.mode == "ansi-error" and key:
            self.send_response(403)
            self.send_header("x-amz-error-code", ANSI_CODE)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if not key:
            self._answer(200 if bucket == h.bucket else 404)
            return
        if h.mode == "head-endless-body":
            self._endless()
            return
        if key not in h.objects:
            self._answer(404)
            return
        if h.mode == "head-bad-length" and key:
            self.send_response(200)
            self.send_header("Content-Length", "twelve")
            self.end_headers()
            self.close_connection = True
            return
        size = 0 if h.mode == "head-says-zero" else (1 << 63) - 1 if h.mode == "head-says-huge" else h.objects[key]
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.send_header("ETag", '"hostile"')
        self.end_headers()

    def do_GET(self) -> None:
        h = self.hostile
        bucket, key, query = self._where()
        if not key and "list-type" in query:
            self._list(query)
            return
        if not key and "uploads" in query:
            self._list_uploads(query)
            return
        h.count("GET")
        h.paths.append(urlsplit(self.path).path)
        if h.mode == "get-stall":
            h.stopping.wait()
            return
        if h.mode == "not-http":
            self._write(b"this is not an HTTP answer\r\n")
            self.close_connection = True
            return
        if h.mode == "ansi-error":
            self._error(503, ANSI_CODE)
            return
        if h.mode == "redirect":
            self._answer(302, headers={"Location": f"{h.redirect_to}/{bucket}/{key}"})
            return
        if key not in h.objects:
            self._error(404, "NoSuchKey")
            return
        data = h.files[key] if key in h.files else content(h.objects[key])[:h.objects[key]]
        if self._misbehaves("get", data, {"ETag": '"hostile"'}):
            return
        asked = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range") or "")
        told = {}
        if (self.headers.get("x-amz-checksum-mode") or "").upper() == "ENABLED" and (
                not asked or h.mode == "checksum-on-range"):
            crc = zlib.crc32(data + (b"x" if h.mode == "checksum-wrong" else b""))
            told = {"x-amz-checksum-crc32": base64.b64encode(crc.to_bytes(4, "big")).decode()}
        if not asked:
            self._answer(200, data, told)
            return
        first, last = int(asked[1]), min(int(asked[2]), len(data) - 1)
        if h.mode == "wrong-content-range":
            first, last = 0, last - first
        body = data[first:last + 1]
        if h.mode == "short-body":  # the range asked in Content-Range, half of it in Content-Length
            body = body[:len(body) // 2]
        if h.mode == "get-body-cut":  # the whole range promised, half of it sent
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self._write(body[:len(body) // 2])
            self.close_connection = True
            return
        self._answer(206, body, {"Content-Range": f"bytes {first}-{last}/{len(data)}", **told})

    def _list_uploads(self, query: dict[str, list[str]]) -> None:
        h = self.hostile
        h.count("LIST_UPLOADS")
        prefix = query.get("prefix", [""])[0]
        with h.lock:
            open_again = sorted(k for k, n in h.aborts.items() if n == 1 and k.startswith(prefix)) \
                if h.mode == "reopened-after-abort" else []
        listed = [(k, "up-1") for k in open_again] + [(k, u) for k, u in h.uploads if k.startswith(prefix)]
        uploads = "".join(f"<Upload><Key>{_xml(k)}</Key><UploadId>{_xml(u)}</UploadId></Upload>" for k, u in listed)
        body = (f"<?xml version='1.0'?><ListMultipartUploadsResult><Bucket>{h.bucket}</Bucket>"
                f"<IsTruncated>false</IsTruncated>{uploads}</ListMultipartUploadsResult>").encode()
        if not self._misbehaves("uploads", body):
            self._answer(200, body, {"Content-Type": "application/xml"})

    def _list(self, query: dict[str, list[str]]) -> None:
        h = self.hostile
        h.count("LIST")
        prefix = query.get("prefix", [""])[0]
        token = query.get("continuation-token", [""])[0]
        if h.mode == "listing-endless-body":
            self._endless()
            return
        if h.mode == "listing-not-xml":
            self._answer(200, b"this is not <xml")
            return
        keys = h.keys if h.mode == "listing-keys" else sorted(k for k in h.objects if k.startswith(prefix))
        items = [(k, h.objects.get(k, 1 << 20)) for k in keys]
        truncated, next_token = False, ""
        page = int(token.partition("-")[0]) + 1 if token[:1].isdigit() else 1
        if h.mode == "listing-forever-same-token":
            truncated, next_token = True, "same"
        elif h.mode in ("listing-forever-new-token", "listing-repeats"):
            numbered = 1 if h.mode == "listing-repeats" else page
            items = [(f"{prefix}page{numbered:09d}-{i:06d}", 1 << 20) for i in range(h.page_keys)]
            truncated, next_token = True, str(page)
        elif h.mode == "listing-long-key":
            items = [(f"{prefix}{page:09d}-".ljust(h.key_bytes, "k"), 1 << 20)]
            truncated, next_token = True, str(page)
        elif h.mode == "listing-long-token":
            items, truncated, next_token = [], True, f"{page}-".ljust(h.token_bytes, "t")
        elif h.mode == "listing-max-keys":
            items = [(f"{prefix}{page:09d}-{i:06d}-".ljust(h.key_bytes, "k"), 1 << 20) for i in range(h.page_keys)]
            truncated, next_token = True, str(page)
        contents = "".join(
            f"<Contents><Key>{_xml(k)}</Key><Size>{h.bad_size if h.mode == 'listing-bad-size' else size}</Size>"
            "</Contents>" for k, size in items)
        body = ("<?xml version='1.0' encoding='UTF-8'?><ListBucketResult>"
                f"<Name>{h.bucket}</Name><Prefix>{_xml(prefix)}</Prefix><KeyCount>{len(items)}</KeyCount>"
                f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"
                + (f"<NextContinuationToken>{next_token}</NextContinuationToken>" if next_token else "")
                + contents + "</ListBucketResult>").encode()
        self._answer(200, body, {"Content-Type": "application/xml"})

    def do_PUT(self) -> None:
        h = self.hostile
        bucket, key, query = self._where()
        if self.headers.get("x-amz-copy-source"):
            self._copy(query)
            return
        h.count("UPLOAD_PART" if "uploadId" in query else "PUT")
        if h.mode == "write-acked-early":
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length // 4)
            self.close_connection = True
            self._answer(200, headers={"ETag": '"early"', "Connection": "close"})
            return
        body = self._drain_body()
        if self._misbehaves("put", b"", {"ETag": '"part"'}):
            return
        if "uploadId" not in query:
            with h.lock:
                h.put_bodies[key] = body
        if h.mode == "part-500":
            self._error(500, "InternalError")
        elif h.mode == "part-no-etag":
            self._answer(200)
        else:
            self._answer(200, headers={"ETag": '"part"'})

    def _copy(self, query: dict[str, list[str]]) -> None:
        """CopyObject, or UploadPartCopy with an uploadId: the source must be an object served, the range within it."""
        h = self.hostile
        self._drain_body()
        part = "uploadId" in query
        h.count("UPLOAD_PART_COPY" if part else "COPY")
        source = unquote(self.headers["x-amz-copy-source"]).lstrip("/").partition("/")[2]
        if source not in h.objects:
            self._error(404, "NoSuchKey")
            return
        result = "CopyPartResult" if part else "CopyObjectResult"
        ok = f"<?xml version='1.0'?><{result}><ETag>\"copy\"</ETag></{result}>".encode()
        if h.mode == "copy-stall":
            h.stopping.wait()
        elif h.mode == "copy-200-error":
            self._answer(200, b"<?xml version='1.0'?><Error><Code>InternalError</Code>"
                         b"<Message>We encountered an internal error.</Message></Error>")
        elif h.mode == "copy-no-etag":
            self._answer(200, f"<?xml version='1.0'?><{result}><LastModified>2024-01-01T00:00:00Z</LastModified>"
                         f"</{result}>".encode())
        elif h.mode == "copy-long-document":
            self._answer(200, b" " * (256 << 10) + ok)
        else:
            self._answer(200, ok)

    def do_POST(self) -> None:
        h = self.hostile
        bucket, key, query = self._where()
        body = self._drain_body()
        if "delete" in query and not key:
            self._delete_objects(body)
            return
        if "uploads" in query:
            h.count("CREATE_MPU")
            ok = (f"<?xml version='1.0'?><InitiateMultipartUploadResult><Bucket>{bucket}</Bucket>"
                  f"<Key>{_xml(key)}</Key><UploadId>up-1</UploadId></InitiateMultipartUploadResult>").encode()
            if h.mode == "create-endless-body":
                self._endless()
            elif h.mode == "create-trickle":
                self._trickle(ok)
            elif h.mode == "create-no-upload-id":
                self._answer(200, b"<?xml version='1.0'?><InitiateMultipartUploadResult><Bucket>"
                             + bucket.encode() + b"</Bucket></InitiateMultipartUploadResult>")
            else:
                self._answer(200, ok)
        elif "uploadId" in query:
            h.count("COMPLETE_MPU")
            if h.mode == "complete-200-error":
                self._answer(200, b"<?xml version='1.0'?><Error><Code>InternalError</Code>"
                             b"<Message>We encountered an internal error.</Message></Error>")
            else:
                self._answer(200, b"<?xml version='1.0'?><CompleteMultipartUploadResult><ETag>\"x-2\"</ETag>"
                             b"</CompleteMultipartUploadResult>")
        else:
            self._error(400, "InvalidRequest")

    def _delete_objects(self, body: bytes) -> None:
        """DeleteObjects: each key asked deleted (as this mode has it), in a <DeleteResult>."""
        from defusedxml.ElementTree import fromstring

        h = self.hostile
        h.count("DELETE_OBJECTS")
        asked = [el.text or "" for el in fromstring(body).iter() if el.tag.rpartition("}")[2] == "Key"]
        named = []
        for i, key in enumerate(asked):
            if h.mode == "delete-refuses" and i % 2:
                named.append(f"<Error><Key>{_xml(key)}</Key><Code>AccessDenied</Code><Message>no</Message></Error>")
                continue
            with h.lock:
                h.objects.pop(key, None)
            named.append(f"<Deleted><Key>{_xml(key)}</Key></Deleted>")
        if h.mode == "delete-names-unasked":
            named.append("<Deleted><Key>elsewhere/not-asked</Key></Deleted>")
        self._answer(200, ("<?xml version='1.0'?><DeleteResult>" + "".join(named) + "</DeleteResult>").encode(),
                     {"Content-Type": "application/xml"})

    def do_DELETE(self) -> None:
        h = self.hostile
        _, key, query = self._where()
        h.count("ABORT_MPU" if "uploadId" in query else "DELETE")
        if "uploadId" in query:
            with h.lock:
                h.aborts[key] = h.aborts.get(key, 0) + 1
        self._answer(204)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def wait_for(predicate, timeout: float = 30.0, every: float = 0.05) -> bool:
    """Whether ``predicate()`` came true within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return bool(predicate())

"""botocore's own calls, bounded as the libcurl plane bounds its calls: every answer's body read by objperf
(botocore's sender is asked for the stream, never the whole body) and capped at ``CONTROL_BODY_CAP`` —
error bodies too, before botocore's parser sees them — and every call's whole time held to a deadline,
however slowly its answer comes.

``BoundedSender`` goes between a botocore client and its HTTP session (its ``before-send`` event, whose
handler may answer instead of botocore's sender): each call runs in a thread of its own while the caller
waits at most the deadline; the socket of a call given up on is shut, so nothing more is read of it.
Reading a GetObject's body is a call's too: ``answers_up_to(n)`` lets the calls in its block take in
``n`` bytes of such a body (the caller's own limit: the bytes past it are never read)."""

from __future__ import annotations

import contextlib
import contextvars
import io
import socket
import threading
from collections.abc import Iterator

from objperf.core.curl_codes import CURLE_FILESIZE_EXCEEDED, CURLE_OPERATION_TIMEDOUT
from objperf.core.errors import TransferFailed
from objperf.s3.settings import CONTROL_BODY_CAP

CHUNK = 64 << 10
_stream_limit: contextvars.ContextVar[int | None] = contextvars.ContextVar("objperf_stream_limit", default=None)


@contextlib.contextmanager
def answers_up_to(limit: int) -> Iterator[None]:
    """In this block, a streamed body (GetObject's) is read up to ``limit`` bytes, and no further."""
    token = _stream_limit.set(limit)
    try:
        yield
    finally:
        _stream_limit.reset(token)


def too_long(cap: int = CONTROL_BODY_CAP) -> TransferFailed:
    return TransferFailed(CURLE_FILESIZE_EXCEEDED, f"an answer longer than {cap >> 20} MiB, more than any S3 "
                          "control call sends", True)


class _Body(io.BytesIO):
    """An answer's body read whole, as botocore's response reads its raw stream (``stream``) or hands it on
    (``StreamingBody`` reads it)."""

    def stream(self, amt: int = CHUNK, decode_content: bool = False) -> Iterator[bytes]:
        while chunk := self.read(amt):
            yield chunk


class _Call:
    def __init__(self, session, request, stream_limit: int | None):
        self.session, self.request, self.stream_limit = session, request, stream_limit
        self.done = threading.Event()
        self.response = None
        self.error: BaseException | None = None
        self.abandoned = False
        self._raw = None

    def run(self) -> None:
        from botocore.awsrequest import AWSResponse

        streaming = self.request.stream_output
        try:
            self.request.stream_output = True  # botocore's sender reads the whole body unless told so
            answer = self.session.send(self.request)
            self._raw = answer.raw
            if self.abandoned:
                self._drop()
                return
            ok_stream = streaming and answer.status_code < 300
            body = self._read(answer.raw, self.stream_limit if ok_stream and self.stream_limit is not None
                              else CONTROL_BODY_CAP, cut=ok_stream and self.stream_limit is not None)
            self.response = AWSResponse(answer.url, answer.status_code, answer.headers, _Body(body))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
            self.error = exc
        finally:
            self.request.stream_output = streaming
            self.done.set()

    def _read(self, raw, cap: int, *, cut: bool) -> bytes:
        """The body, ``cap`` bytes at most: past them, the bytes read (``cut``) or a failure."""
        from botocore.exceptions import ConnectionClosedError, ReadTimeoutError
        from urllib3.exceptions import ProtocolError
        from urllib3.exceptions import ReadTimeoutError as URLLib3ReadTimeoutError

        chunks, got = [], 0
        try:
            while not self.abandoned:
                chunk = raw.read(min(CHUNK, cap + 1 - got))
                if not chunk:
                    raw.release_conn()
                    return b"".join(chunks)
                chunks.append(chunk)
                got += len(chunk)
                if got >= cap and cut:
                    self._drop()  # the rest is not wanted: the connection goes, not back to the pool
                    return b"".join(chunks)[:cap]
                if got > cap:
                    self._drop()
                    raise too_long(cap)
        except URLLib3ReadTimeoutError as exc:
            raise ReadTimeoutError(endpoint_url=self.request.url, error=exc) from None
        except ProtocolError as exc:
            raise ConnectionClosedError(endpoint_url=self.request.url, request=self.request, error=exc) from None
        self._drop()
        raise TransferFailed(CURLE_OPERATION_TIMEDOUT, "the call was given up", True)

    def abandon(self) -> None:
        """Give the call up (from any thread): its socket is shut, so a read waiting on it ends now."""
        self.abandoned = True
        connection = getattr(self._raw, "connection", None)
        sock = getattr(connection, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _drop(self) -> None:
        with contextlib.suppress(Exception):
            self._raw.close()


class BoundedSender:
    """Sends every call of one botocore client (``install``), each within ``deadline`` seconds whole."""

    def __init__(self, session, deadline: float):
        self.session = session  # botocore's URLLib3Session: proxies, TLS, pools, as the client set them up
        self.deadline = deadline
        self._calls: set[_Call] = set()
        self._lock = threading.Lock()

    @classmethod
    def install(cls, client, deadline: float) -> BoundedSender:
        sender = cls(client._endpoint.http_session, deadline)  # botocore keeps no public handle on it
        client.meta.events.register_first("before-send.s3", sender.send)
        return sender

    def send(self, request, **_):
        call = _Call(self.session, request, _stream_limit.get())
        with self._lock:
            self._calls.add(call)
        try:
            threading.Thread(target=call.run, daemon=True, name="objperf-botocore-call").start()
            if not call.done.wait(self.deadline):
                call.abandon()
                raise TransferFailed(CURLE_OPERATION_TIMEDOUT, f"no whole answer within {self.deadline:g}s", True)
        finally:
            with self._lock:
                self._calls.discard(call)
        if call.abandoned:
            raise TransferFailed(CURLE_OPERATION_TIMEDOUT, "the call was cancelled", True)
        if call.error is not None:
            raise call.error
        return call.response

    def cancel(self) -> None:
        """End every call now on the wire (from any thread): each fails at once."""
        with self._lock:
            calls = list(self._calls)
        for call in calls:
            call.abandon()
            call.done.set()

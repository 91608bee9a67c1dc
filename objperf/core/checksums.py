"""S3's additional checksums of what a write sends: the algorithms as S3 names them, each value as its
``x-amz-checksum-*`` header carries it (base64 of the big-endian digest), and the framing of an aws-chunked
upload whose checksum trails its body.

Each algorithm is a maintained implementation, fed a buffer at a time and never a copy: CRC-32 is zlib's,
SHA-256 hashlib's, CRC-32C and CRC-64/NVME the AWS CRT's (``awscrt.checksums``, the ``checksums`` extra; asked for
without it, ``algorithm`` says so in one line, before anything is sent).  A write run's body repeats its payload
(byte ``i`` is ``payload[(payload_offset + i) % len(payload)]``): ``value_over`` walks that range a slice at a
time, each slice continuing the running value of the one before."""

from __future__ import annotations

import base64
import hashlib
import importlib
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from objperf.core.errors import UsageError
from objperf.core.extras import MissingExtra

if TYPE_CHECKING:
    import numpy as np

    BytesLike = bytes | bytearray | memoryview | np.ndarray  # any C-contiguous buffer

NAMES = ("none", "crc32", "crc32c", "crc64nvme", "sha256")
EXTRA = "checksums"
STREAMING_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"  # x-amz-content-sha256 of an unsigned body, checksum after


def _crt() -> ModuleType:
    """``awscrt.checksums``; objperf's commands mark the CRT absent so that botocore signs without it
    (``objperf.commands.common.skip_aws_crt``): imported past that mark, which is put back after."""
    blocked = "awscrt" in sys.modules and sys.modules["awscrt"] is None
    if blocked:
        del sys.modules["awscrt"]
    try:
        return importlib.import_module("awscrt.checksums")
    finally:
        if blocked:
            sys.modules["awscrt"] = None


@dataclass(frozen=True)
class Running:
    """One implementation as a running value: ``start()``, ``update(state, chunk) -> state``,
    ``finish(state) -> digest``."""

    start: Callable[[], Any]
    update: Callable[[Any, memoryview], Any]
    finish: Callable[[Any], bytes]


def _sha256_update(state, chunk: memoryview):
    state.update(chunk)
    return state


def _running(name: str) -> Running:
    if name == "crc32":
        return Running(lambda: 0, lambda state, chunk: zlib.crc32(chunk, state), lambda state: state.to_bytes(4, "big"))
    if name == "sha256":
        return Running(hashlib.sha256, _sha256_update, lambda state: state.digest())
    try:
        crt = _crt()
    except ImportError:
        raise MissingExtra(f"the {name} checksum", EXTRA) from None
    if name == "crc32c":
        return Running(lambda: 0, lambda state, chunk: crt.crc32c(chunk, state), lambda state: state.to_bytes(4, "big"))
    return Running(lambda: 0, lambda state, chunk: crt.crc64nvme(chunk, state), lambda state: state.to_bytes(8, "big"))


def byte_view(data: BytesLike) -> memoryview:
    """``data`` (bytes, a bytearray, a NumPy array, any C-contiguous buffer) as one flat run of bytes, not copied."""
    view = memoryview(data)
    if not view.c_contiguous:
        raise UsageError("a checksum is taken over one contiguous buffer")
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


@dataclass(frozen=True)
class AwsChunked:
    """One aws-chunked body: ``prefix``, the ``length`` bytes of the object, ``suffix`` (its end and the trailing
    checksum); the headers its request sends (and signs), and its Content-Length."""

    prefix: bytes
    suffix: bytes
    headers: dict[str, str]
    length: int

    @property
    def content_length(self) -> int:
        return len(self.prefix) + self.length + len(self.suffix)


@dataclass(frozen=True)
class Algorithm:
    """One of S3's checksum algorithms (``name`` lower case, as ``NAMES`` has it)."""

    name: str
    running: Running = field(repr=False, compare=False)

    @property
    def header(self) -> str:
        """The header that carries a value: ``x-amz-checksum-crc32c``."""
        return f"x-amz-checksum-{self.name}"

    @property
    def sdk_name(self) -> str:
        """The algorithm as ``x-amz-sdk-checksum-algorithm`` names it: ``CRC32C``."""
        return self.name.upper()

    def value(self, data: BytesLike) -> str:
        """The base64 value of ``data`` (any C-contiguous buffer, read where it lies)."""
        run = self.running
        return base64.b64encode(run.finish(run.update(run.start(), byte_view(data)))).decode()

    def value_over(self, payload: BytesLike, payload_offset: int, length: int) -> str:
        """The value of ``length`` bytes of ``payload`` repeated, from ``payload_offset`` on: byte ``i`` is
        ``payload[(payload_offset + i) % len(payload)]``.  Each slice continues the running value of the last;
        nothing is joined or copied."""
        view = byte_view(payload)
        if length < 0 or payload_offset < 0:
            raise UsageError(f"a range of {length} bytes from {payload_offset}: neither may be negative")
        if length and not len(view):
            raise UsageError("an empty payload repeats into nothing")
        run = self.running
        state = run.start()
        at, left = (payload_offset % len(view) if len(view) else 0), length
        while left:
            take = min(len(view) - at, left)
            state = run.update(state, view[at:at + take])
            left -= take
            at = 0
        return base64.b64encode(run.finish(state)).decode()

    def headers(self, value: str) -> dict[str, str]:
        """What a request sends (and signs) to have its body checked against ``value`` up front."""
        return {self.header: value}

    def aws_chunked(self, length: int, value: str) -> AwsChunked:
        """The framing of a body of ``length`` bytes sent as one aws-chunked chunk whose checksum ``value`` trails
        it (``STREAMING-UNSIGNED-PAYLOAD-TRAILER``): ``hex(length)\\r\\n``, the bytes, ``\\r\\n0\\r\\n``, the
        trailer and an empty line.  An empty body is the last chunk alone."""
        if length < 0:
            raise UsageError(f"a body of {length} bytes")
        trailer = self.header.encode() + b":" + value.encode() + b"\r\n\r\n"
        prefix, suffix = (b"%x\r\n" % length, b"\r\n0\r\n" + trailer) if length else (b"", b"0\r\n" + trailer)
        headers = {"Content-Encoding": "aws-chunked", "x-amz-content-sha256": STREAMING_TRAILER,
                   "x-amz-trailer": self.header, "x-amz-decoded-content-length": str(length),
                   "x-amz-sdk-checksum-algorithm": self.sdk_name}
        return AwsChunked(prefix, suffix, headers, length)


def algorithm(name: str) -> Algorithm | None:
    """The algorithm S3 calls ``name`` (any case), None for ``none``; an unknown one, or one whose implementation
    is not installed, is refused in one line."""
    lower = name.lower() if isinstance(name, str) else name
    if lower not in NAMES:
        raise UsageError(f"no checksum algorithm {name!r}: choose one of {', '.join(NAMES)}")
    return None if lower == "none" else Algorithm(lower, _running(lower))

"""The checksum each write request carries (``--checksum``), as today's SDKs send it: its value taken over the
request's bytes of the payload, sent up front in its ``x-amz-checksum-*`` header or, with ``--checksum-trailer``,
after the body as the trailer of an aws-chunked body.  The headers are signed in the request's presigned URL
(S3 refuses an x-amz header that is not); a multipart upload names the algorithm when it opens and each part's
value when it completes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from objperf.core.checksums import Algorithm, algorithm
from objperf.core.errors import UsageError

if TYPE_CHECKING:
    from objperf.core.checksums import BytesLike


@dataclass(frozen=True)
class Framed:
    """What one write request sends besides its payload range: headers (signed and sent), the body's bytes
    before and after the range, and the value a multipart upload's completion names."""

    headers: dict[str, str]
    before: bytes = b""
    after: bytes = b""
    value: str = ""


NONE = Framed({})


@dataclass(frozen=True)
class WriteChecksum:
    """``--checksum`` and ``--checksum-trailer`` of a write run."""

    algorithm: Algorithm | None
    trailer: bool = False

    @classmethod
    def of(cls, name: str, trailer: bool = False) -> WriteChecksum:
        """The run's checksum; an unknown algorithm, one not installed, or a trailer with none, in one line."""
        chosen = algorithm(name)
        if trailer and chosen is None:
            raise UsageError("--checksum-trailer sends a checksum after the body: choose one with --checksum")
        return cls(chosen, trailer)

    def request(self, payload: BytesLike, payload_offset: int, length: int) -> Framed:
        """The checksum of ``length`` bytes of the repeating payload from ``payload_offset``, framed as sent."""
        if self.algorithm is None:
            return NONE
        value = self.algorithm.value_over(payload, payload_offset, length)
        if self.trailer:
            chunked = self.algorithm.aws_chunked(length, value)
            return Framed(chunked.headers, chunked.prefix, chunked.suffix, value)
        return Framed({**self.algorithm.headers(value), "x-amz-sdk-checksum-algorithm": self.algorithm.sdk_name},
                      value=value)

    def opening(self) -> dict[str, str]:
        """What CreateMultipartUpload is given (botocore's parameters): the algorithm every part carries."""
        return {"ChecksumAlgorithm": self.algorithm.sdk_name} if self.algorithm else {}

    def part(self, value: str) -> dict[str, str]:
        """What a part of CompleteMultipartUpload names besides its number and ETag: its checksum."""
        return {f"Checksum{self.algorithm.sdk_name}": value} if self.algorithm else {}

    @property
    def name(self) -> str:
        return self.algorithm.name if self.algorithm else "none"

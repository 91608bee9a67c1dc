"""Server-side copies (``objperf copy``): which objects, to where, in which requests — one CopyObject an object
up to the part size, a multipart copy (UploadPartCopy, a byte range a part) above it — how many in flight and
for how long; checked once, before anything is sent."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from urllib.parse import quote

from objperf.core.errors import UsageError
from objperf.plan.queued import QueuedRun
from objperf.plan.writes import MAX_PART, MAX_PARTS, MIN_PART
from objperf.s3.client import URL_LIFETIME_S, check_url_lifetime

COPY_PART = 32 << 20  # objperf put's own --part-size: a copy of what put wrote is split as it was written
# A copy's answer is a short document (CopyObjectResult, CopyPartResult; an S3 copy that takes long keeps its
# connection alive with spaces before it): longer than this, it is no copy's answer and fails its row.
DOCUMENT_BOUND = 64 << 10
MIB = 1 << 20


def copy_run_prefix(run_id: str) -> str:
    """Where a run's copies go when no ``--to`` names a place: a prefix of the run's own, in the source bucket."""
    return f"objperf-copy-{run_id[:8]}/"


def copy_source(bucket: str, key: str) -> str:
    """The ``x-amz-copy-source`` header's value, URL-encoded as botocore encodes it (every server takes that)."""
    return quote(f"{bucket}/{key}", safe="/~")


@dataclass(kw_only=True)
class CopyWorkload(QueuedRun):
    bucket: str = ""  # the source's
    prefix: str = ""  # the source's: every object under it, or the one key it names
    to_bucket: str = ""  # the copies': "" for the source's bucket
    to_prefix: str | None = None  # the copies' prefix; None: the run's own (copy_run_prefix)
    part_size: int = COPY_PART  # objects up to it: one CopyObject; above it: UploadPartCopy parts of it
    concurrency: int = 16
    verify: bool = False
    cleanup: bool = False
    url_lifetime: int = URL_LIFETIME_S

    @property
    def destination_bucket(self) -> str:
        return self.to_bucket or self.bucket

    def destination_prefix(self, run_id: str) -> str:
        return copy_run_prefix(run_id) if self.to_prefix is None else self.to_prefix

    def destination_key(self, source_key: str, run_id: str) -> str:
        """Where the copy of ``source_key`` goes: under the destination prefix, at its key relative to the
        source's prefix (a single key named: its last name)."""
        relative = source_key[len(self.prefix):] if self.prefix.endswith("/") or not self.prefix else \
            source_key.rpartition("/")[2]
        return self.destination_prefix(run_id) + relative

    def part_size_of(self, size: int) -> int:
        """The part size an object of ``size`` bytes is copied in: 0 for one CopyObject; else ``part_size``, or
        larger (whole MiB) when S3's 10,000 parts would not hold the object in parts of it."""
        if size <= self.part_size:
            return 0
        least = -(-size // MAX_PARTS)
        return max(self.part_size, -(-least // MIB) * MIB)

    def ranges_of(self, size: int) -> list[tuple[int, int]]:
        """(offset, length) of each part of a multipart copy of ``size`` bytes, the last one what is left."""
        part = self.part_size_of(size)
        return [(offset, min(part, size - offset)) for offset in range(0, size, part)] if part else [(0, size)]

    def _overlaps(self) -> bool:
        """Whether the copies would land among the objects copied (``to_prefix`` given, in the same bucket)."""
        if self.prefix and not self.prefix.endswith("/"):  # one key: its copy must not be itself
            return self.destination_key(self.prefix, "") == self.prefix
        return self.to_prefix.startswith(self.prefix) or self.prefix.startswith(self.to_prefix)

    def validate(self) -> None:
        self.check_run()
        if not MIN_PART <= self.part_size <= MAX_PART:
            raise UsageError("--part-size must be from 5MiB to 5GiB: S3's smallest part of a multipart copy, and "
                             "its largest CopyObject")
        if self.to_prefix and not self.to_prefix.endswith("/"):
            raise UsageError(f"--to names a prefix the copies go under: end it with / "
                             f"(s3://{self.destination_bucket}/{self.to_prefix}/)")
        if self.to_prefix is not None and self.destination_bucket == self.bucket and self._overlaps():
            raise UsageError(f"--to s3://{self.destination_bucket}/{self.to_prefix} and the objects copied, "
                             f"s3://{self.bucket}/{self.prefix}, overlap: copy to a prefix apart from them")
        check_url_lifetime(self.url_lifetime)

    def describe(self, run_id: str = "") -> dict:
        """What a manifest keeps of it (``op`` names the run kind for the summary's words)."""
        return {"op": "copy", **asdict(self), "connect_to": list(self.connect_to), "spread_to": list(self.spread_to),
                "to_bucket": self.destination_bucket,
                "to_prefix": self.destination_prefix(run_id) if run_id or self.to_prefix is not None else None}

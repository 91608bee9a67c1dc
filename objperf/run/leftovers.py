"""What a killed or failed run of objperf can leave behind, found and removed: multipart uploads it opened
in a store (its keys are named ``…objperf-RUN-NNNNN``, ``objperf.plan.writes.object_key``) and scratch
directories on this machine (``objperf.core.scratch``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from objperf.core.errors import ObjperfError
from objperf.s3.client import S3Client, S3Settings

OBJPERF_KEY = re.compile(r"(^|/)objperf-[0-9a-f]{8}-\d{5}$")
UPLOADS_LIMIT = 100_000


@dataclass
class Leftovers:
    uploads: list[tuple[str, str, str]] = field(default_factory=list)  # bucket, key, upload id
    aborted: int = 0
    not_aborted: list[str] = field(default_factory=list)  # what the store did not take, and why
    scratch_removed: list[Path] = field(default_factory=list)


def find_uploads(settings: S3Settings, bucket: str, prefix: str, *, every_upload: bool = False) -> Leftovers:
    """The multipart uploads open under ``prefix``: objperf's own (by key name), or every one."""
    client = S3Client(settings)
    found = Leftovers()
    for key, upload_id in client.open_uploads(bucket, prefix, limit=UPLOADS_LIMIT):
        if every_upload or OBJPERF_KEY.search(key):
            found.uploads.append((bucket, key, upload_id))
    return found


def abort_uploads(settings: S3Settings, found: Leftovers) -> Leftovers:
    client = S3Client(settings.for_multipart())
    for bucket, key, upload_id in found.uploads:
        try:
            client.abort_upload(bucket, key, upload_id)
            found.aborted += 1
        except ObjperfError as exc:
            found.not_aborted.append(f"s3://{bucket}/{key} upload id {upload_id}: {exc}")
    return found

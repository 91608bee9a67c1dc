"""The options of ``objperf cleanup``: the store whose open multipart uploads to abort, and how."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.options.groups import TargetOptions
from objperf.options.spec import flag, option


@dataclass(kw_only=True)
class CleanupOptions(TargetOptions):
    url: str | None = option(None, "s3://BUCKET/PREFIX whose open multipart uploads to abort", positional=True)
    dry_run: bool = flag("list what would be aborted, abort nothing")
    every_upload: bool = flag("every open upload under the prefix, not only those of objperf's keys "
                              "(objperf-RUN-NNNNN)")

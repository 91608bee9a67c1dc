"""The options of ``objperf serve``: which bucket the local store starts with, its port, where it keeps its data."""

from __future__ import annotations

import re
from dataclasses import dataclass

from objperf.core.errors import UsageError
from objperf.options.kinds import COUNT, PATH
from objperf.options.spec import option

# S3's rules for a bucket name (what the AWS CLI, s5cmd and objperf's own URLs accept alike).
BUCKET_NAME = re.compile(r"^(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
HIGHEST_PORT = 65535 - 10000  # SeaweedFS's gateway takes PORT + 10000 too (its gRPC port)


@dataclass(kw_only=True)
class ServeOptions:
    bucket: str = option("objperf", "the bucket to create (it is kept when --dir already holds it)",
                         metavar="NAME")
    port: int | None = option(None, f"the S3 port on 127.0.0.1, 1 to {HIGHEST_PORT} (PORT + 10000 is taken too)",
                              COUNT, default_text="a free one")
    dir: str | None = option(None, "keep the store's data (and its keys) in DIR, to serve it again later",
                             PATH, metavar="DIR", default_text="a scratch directory, removed at exit")

    def check(self) -> None:
        """A bucket name S3 refuses, or a port that cannot be, in one line before anything starts."""
        if not BUCKET_NAME.match(self.bucket) or ".." in self.bucket:
            raise UsageError(f"bad --bucket {self.bucket!r}: 3 to 63 lowercase letters, digits, dots and hyphens, "
                             "starting and ending with a letter or digit")
        if self.port is not None and not 1 <= self.port <= HIGHEST_PORT:
            raise UsageError(f"bad --port {self.port}: 1 to {HIGHEST_PORT} (SeaweedFS takes PORT + 10000 too)")

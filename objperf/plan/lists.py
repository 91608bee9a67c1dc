"""A LIST run (``objperf list``): listers paging through a prefix with ListObjectsV2, each page asked for
``max_keys`` keys (and common prefixes, with a delimiter), for how long or how many pages or passes; checked
once, before anything is sent."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from objperf.core.errors import UsageError
from objperf.plan.bounds import MAX_COUNT, check_at_most
from objperf.plan.queued import QueuedRun

PAGE_KEYS_MAX = 1000  # what S3 lists a page at most
# A page's bytes the engine keeps for its parse: 1,000 keys of 1 KiB and their XML are under 2 MiB; a longer
# answer fails its row (libcurl's code 63), never grows a buffer.
PAGE_BOUND = 8 << 20
DELIMITER_BYTES = 1024  # a delimiter longer than a key could never match one


def check_max_keys(max_keys: int) -> None:
    if not 1 <= max_keys <= PAGE_KEYS_MAX:
        raise UsageError(f"--max-keys must be from 1 to {PAGE_KEYS_MAX:,} (what S3 lists a page at most), "
                         f"not {max_keys:,}")


@dataclass(kw_only=True)
class ListWorkload(QueuedRun):
    bucket: str = ""
    prefix: str = ""
    delimiter: str = ""
    max_keys: int = PAGE_KEYS_MAX
    passes: int | None = None  # passes through the listing in all, the listers sharing them
    url_lifetime: int = 900  # how long each page's URL is valid: it is signed just before it is asked for

    def validate(self) -> None:
        self.check_run()
        check_max_keys(self.max_keys)
        check_at_most("passes", self.passes, MAX_COUNT)
        if self.passes is not None and self.passes < 1:
            raise UsageError(f"--passes must be at least 1, not {self.passes}")
        if len(self.delimiter.encode("utf-8", "surrogatepass")) > DELIMITER_BYTES:
            raise UsageError(f"--delimiter is longer than any key ({DELIMITER_BYTES:,} bytes)")
        if not (self.duration or self.requests or self.passes):
            raise UsageError("a LIST run needs --duration, --requests or --passes to end")

    def describe(self) -> dict:
        return {"op": "list", **asdict(self)}

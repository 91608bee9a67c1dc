"""A batch delete (``objperf delete --batch N``): DeleteObjects of up to N keys each, the keys in the
listing's order; checked once, before anything is sent."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from objperf.core.errors import UsageError
from objperf.plan.queued import QueuedRun
from objperf.s3.deletes import MAX_BATCH

# An answer's bytes the engine keeps for its parse: 1,000 keys of 1 KiB each named once more, with the XML
# around them, or an <Error> each with its message, are well under it; a longer one fails its row (code 63).
ANSWER_BOUND = 8 << 20


def check_batch(batch: int) -> None:
    if not 1 <= batch <= MAX_BATCH:
        raise UsageError(f"--batch must be from 1 to {MAX_BATCH:,} keys (what one DeleteObjects names at most), "
                         f"not {batch:,}")


@dataclass(kw_only=True)
class BatchWorkload(QueuedRun):
    batch: int = MAX_BATCH
    url_lifetime: int = 900  # how long each bucket's DeleteObjects URL is valid: signed afresh every third of it

    def validate(self) -> None:
        self.check_run()
        check_batch(self.batch)

    def describe(self) -> dict:
        return {"op": "delete_objects", **asdict(self)}

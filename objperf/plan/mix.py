"""A weighted mix of requests on whole objects and on their prefix (``objperf mixed --mix
get=60,put=20,head=10,list=5,delete=5``): which ops, in which shares, on objects of which size, for how long;
checked once.  A LIST asks for the first page of the mix's prefix, ``max_keys`` keys."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from objperf.core.errors import UsageError
from objperf.core.steady import TOLERANCE_PCT, WINDOW_S
from objperf.plan.lists import PAGE_KEYS_MAX, check_max_keys
from objperf.plan.queued import QueuedRun

MIX_OPS = ("get", "head", "put", "list", "copy", "delete")
SINGLE_PUT_MAX = 5 << 30  # S3's largest single PUT: a mix's objects go up whole


def parse_mix(text: str) -> dict[str, float]:
    """``get=60,put=20,head=10,list=5,delete=5`` as each op's share of the requests (the weights need not add to
    100); one line for anything else."""
    weights: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        op, _, weight = item.partition("=")
        op = op.strip().lower()
        if op not in MIX_OPS:
            raise UsageError(f"bad --mix {text!r}: {op or item!r} is not one of {', '.join(MIX_OPS)} "
                             "(give OP=WEIGHT,...)")
        if op in weights:
            raise UsageError(f"bad --mix {text!r}: {op} is given twice")
        try:
            value = float(weight)
        except ValueError:
            raise UsageError(f"bad --mix {text!r}: {op}'s weight {weight!r} is not a number") from None
        if not (math.isfinite(value) and value > 0):
            raise UsageError(f"bad --mix {text!r}: {op}'s weight must be a positive number")
        weights[op] = value
    total = sum(weights.values())
    return {op: weights[op] / total for op in MIX_OPS if op in weights}


@dataclass(kw_only=True)
class MixWorkload(QueuedRun):
    shares: dict[str, float] = field(default_factory=lambda: {"get": 1.0})
    object_size: int = 4 << 10
    concurrency: int = 16
    bucket: str = ""
    prefix: str = ""
    seed: int = 0x9E3779B97F4A7C15
    pool: int = 0  # objects seeded for the GETs, HEADs and DELETEs to start on; 0: four a slot, 32 at least
    cleanup: bool = False
    max_keys: int = PAGE_KEYS_MAX  # what each LIST asks for of the prefix: its first page
    until_steady: bool = False  # end once the throughput has held (objperf.analysis.steady); the budget still bounds
    steady_window: float = WINDOW_S
    steady_tolerance: float = TOLERANCE_PCT

    @property
    def objects_seeded(self) -> int:
        return self.pool or max(32, 4 * self.concurrency)

    def validate(self) -> None:
        self.check_run()
        if not self.shares or any(op not in MIX_OPS or not share > 0 for op, share in self.shares.items()):
            raise UsageError(f"a mix's ops are {', '.join(MIX_OPS)}, each with a positive share")
        if not 0 < self.object_size <= SINGLE_PUT_MAX:
            raise UsageError("a mix's objects go up in one PUT: --object-size from 1 byte to 5GiB")
        if not (self.duration or self.requests):
            raise UsageError("a mix needs --duration or a request budget to end")
        if self.pool < 0:
            raise UsageError("a mix's pool of objects must not be negative")
        check_max_keys(self.max_keys)

    def describe(self) -> dict:
        return {**asdict(self), "mix": {op: round(share, 6) for op, share in self.shares.items()},
                "objects_seeded": self.objects_seeded}

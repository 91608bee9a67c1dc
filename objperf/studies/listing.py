"""``objperf study --list``: each study's question (its catalog entry, as its docs page gives it) and how long
it runs, --quick and full."""

from __future__ import annotations

import inspect
import textwrap

from objperf.options.names import STUDY_NAMES
from objperf.studies.grids import DEFAULTS, QUICK_WRITE_CAP_S, default_grid, step_seconds

# Steps a study runs beside its grid's: per direction, per address, per mode, its replica sweep.
_EXTRA = {"key-fanout": 2, "bucket-fanout": 2, "request-rate": 4}  # request-rate: GET, HEAD, PUT, DELETE
WRITES = frozenset({"key-fanout", "bucket-fanout", "mixed", "request-rate"})  # studies with write steps beside reads
# ... whose write steps set their own requests (the catalog passes requests=): --quick runs them for their
# duration, as the other steps, not until one part per slot is acknowledged (StudyContext.write_step)
PINNED_WRITES = frozenset({"request-rate"})
# checksums: none, then each of its four algorithms in a header and as a trailer
_FIXED_STEPS = {"ip-family": 2, "mixed": 3, "sustained": 1, "ceiling-proof": 2, "checksums": 9}


def planned_steps(name: str, quick: bool, *, replicas: int = 32) -> int:
    """How many steps ``name`` runs by default (ip-family: one per address, two on the embedded server)."""
    if name in _FIXED_STEPS:
        return _FIXED_STEPS[name]
    count = 1
    for key in DEFAULTS[name]:
        count *= len(default_grid(name, key, quick))
    if name == "hot-object":
        from objperf.studies.catalog import replica_counts

        count += len(replica_counts(max(2, replicas)))
    return count * _EXTRA.get(name, 1)


def question(name: str) -> str:
    """The study's question: the first line of its catalog entry, which opens its docs page."""
    from objperf.studies.catalog import STUDIES

    return inspect.cleandoc(STUDIES[name].__doc__ or "").splitlines()[0]


def _span(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def durations(name: str) -> str:
    """"quick 3 steps of 1 s (3 s of load); full 11 steps of 20 s (4 min)"."""
    said = []
    for quick in (True, False):
        steps, seconds = planned_steps(name, quick), step_seconds(name, quick)
        what = f"{'quick' if quick else 'full'} {steps} step{'s' if steps != 1 else ''}"
        if quick and name == "write-part-size":
            said.append(f"{what}, each until one part per slot is acknowledged "
                        f"(at most {QUICK_WRITE_CAP_S:g} s)")
        elif quick and name in WRITES - PINNED_WRITES:
            said.append(f"{what} of {seconds:g} s, writes until one part per slot is acknowledged")
        else:
            said.append(f"{what} of {seconds:g} s ({_span(steps * seconds)} of load)")
    return "; ".join(said)


def study_list(width: int = 100) -> str:
    """Every study: its name, its question, its durations (and seeding on top: objects are written once and
    reused by later runs)."""
    pad = max(map(len, STUDY_NAMES)) + 2
    lines = []
    for name in STUDY_NAMES:
        body = textwrap.wrap(question(name), width - pad) + textwrap.wrap(durations(name), width - pad)
        lines.append(name.ljust(pad) + body[0])
        lines += [" " * pad + line for line in body[1:]]
    lines.append("")
    lines.append("Durations are of load; seeding the objects a study reads comes first, once (reruns reuse them).")
    return "\n".join(lines)

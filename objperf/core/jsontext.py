"""JSON that every JSON reader takes: a value that was not measured (NaN) or has no bound (infinity) is
``null``, never Python's ``NaN`` token, which ``jq`` and browsers refuse."""

from __future__ import annotations

import json
import math


def finite(value):
    """``value`` with every NaN or infinite float, however deep, as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):  # a NumPy scalar
        return finite(value.item())
    return value


def dumps(data, **kw) -> str:
    return json.dumps(finite(data), allow_nan=False, default=str, **kw)


SKETCHES = "sketches"  # a summary's latency sketches: hundreds of buckets, kept in the dataset's manifest


def without_sketches(value):
    """``value`` with every ``sketches`` entry, however deep (a cluster's hosts, a study's steps), left out:
    what a person reads of a summary.  The sketches stay in the dataset; ``--json-sketches`` prints them."""
    if isinstance(value, dict):
        return {k: without_sketches(v) for k, v in value.items() if k != SKETCHES}
    if isinstance(value, (list, tuple)):
        return [without_sketches(v) for v in value]
    return value


def summary_json(data, *, sketches: bool = False) -> str:
    """A summary as the commands print it with ``--json``: indented, NaN as null, without the latency sketches
    unless ``sketches`` (``--json-sketches``) asks for them."""
    return dumps(data if sketches else without_sketches(data), indent=2)

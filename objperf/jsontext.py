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

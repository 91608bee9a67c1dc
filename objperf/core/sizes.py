"""Human sizes and durations: ``8MiB``, ``1.5GB``, ``4k``, ``30s``, ``2m``, ``1h30m``."""

import re

from objperf.core.errors import UsageError

# KB, MB, GB and TB are binary, as the AWS CLI reads them (its multipart_chunksize "8MB" is 8 MiB): a user
# copying a size from an AWS config gets the same bytes.
_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
    "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
    "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
    "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}
SIZE_MAX = float(1 << 62)
_DURATION_UNITS = {"ms": 0.001, "s": 1, "": 1, "m": 60, "min": 60, "h": 3600}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*$")
_DURATION_PART_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|min|h|m|s|)")


def parse_size(text: str | int) -> int:
    """Bytes in ``text``, every unit binary: ``8M``, ``8MB`` and ``8MiB`` are all 8 MiB, as the AWS CLI reads them."""
    if isinstance(text, int):
        if text < 0:
            raise UsageError(f"size must not be negative: {text}")
        if text >= SIZE_MAX:
            raise UsageError(f"bad size {text}: too large")
        return text
    match = _SIZE_RE.match(str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _SIZE_UNITS:
        raise UsageError(f"bad size {text!r}: use a number with an optional unit such as 512KiB, 8MiB, 1.5GB")
    value = float(match.group(1)) * _SIZE_UNITS[unit]
    if value != value or value >= SIZE_MAX:  # NaN never; and no size objperf handles reaches 2**62 bytes
        raise UsageError(f"bad size {text!r}: too large")
    if value != int(value):
        raise UsageError(f"bad size {text!r}: not a whole number of bytes")
    return int(value)


def parse_duration(text: str | float) -> float:
    """Seconds in ``text``: ``30s``, ``2m``, ``1h30m``, ``500ms``, or a bare number of seconds."""
    if isinstance(text, (int, float)):
        if not 0 < float(text) < float("inf"):  # NaN fails this too
            raise UsageError(f"bad duration {text!r}: must be a positive number of seconds")
        return float(text)
    stripped = str(text).strip().lower()
    pos, total = 0, 0.0
    while pos < len(stripped):
        match = _DURATION_PART_RE.match(stripped, pos)
        if not match or match.end() == pos:
            raise UsageError(f"bad duration {text!r}: use a number with s, m or h, such as 30s, 2m, 1h30m")
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
        while pos < len(stripped) and stripped[pos] == " ":
            pos += 1
    if not stripped or total <= 0:
        raise UsageError(f"bad duration {text!r}: must be positive")
    return total


def format_size(n: float) -> str:
    """``1073741824`` → ``1 GiB``."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= factor:
            return f"{n / factor:.4g} {unit}"
    return f"{int(n)} B"

"""The one way an object key becomes a file path: below the sink directory, or refused.

Keys come from a server's listing, so they are outside input: ``../x``, ``a/../../x``, ``/etc/x``,
a NUL, or a key the listing had no business returning (outside the prefix asked for) would write
wherever the user can.  Each is refused with one line naming the key."""

from __future__ import annotations

from pathlib import Path

from objperf.core.errors import TargetError
from objperf.core.sanitize import printable


def confined_path(base: str | Path, bucket: str, key: str, prefix: str = "") -> Path:
    """``base/bucket/key`` as a path that stays below ``base``; ``TargetError`` for any key that would not,
    or that is not under ``prefix``."""
    shown = printable(key)
    if not key.startswith(prefix):
        raise TargetError(f"refusing key {shown!r}: the listing returned it for prefix {printable(prefix)!r}, "
                          "which it is not under")
    for part in (bucket or "http", key):
        if "\0" in part:
            raise TargetError(f"refusing key {shown!r}: it holds a NUL byte, which no file name can")
        if part.startswith("/") or part.startswith("\\"):
            raise TargetError(f"refusing key {shown!r}: an absolute path would write outside the sink directory")
        segments = part.replace("\\", "/").split("/")
        if ".." in segments:
            raise TargetError(f"refusing key {shown!r}: a '..' segment would write outside the sink directory")
        if part in ("", ".") or all(s in ("", ".") for s in segments):
            raise TargetError(f"refusing key {shown!r}: it names no file")
    root = Path(base).resolve()
    path = (root / (bucket or "http") / key).resolve()
    if root != path and root not in path.parents:  # a symlink below the sink directory pointing out of it
        raise TargetError(f"refusing key {shown!r}: its path leaves the sink directory")
    return path

"""Text made safe to show: no control byte reaches a terminal, no URL password reaches a dataset,
a figure, a log or an error message.

An S3 error code, a key, an imported file's field can hold ANSI escapes (colours, cursor moves, a
new window title, an OSC 52 write to the clipboard) or a carriage return that overwrites what was
printed before.  Each such character is shown as a visible escape instead: ``\\x1b``, ``\\r``.
A URL's ``user:password@`` is shown as ``REDACTED@``."""

from __future__ import annotations

import re

# C0 controls but tab, DEL, the C1 controls, and the Unicode controls that reorder or hide text
# (bidirectional overrides and isolates, zero-width marks, line and paragraph separators).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]+@")


def without_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` of every URL in it replaced by ``REDACTED@``."""
    return _USERINFO.sub(r"\1REDACTED@", text) if "@" in text else text


def redacted(value):
    """``value`` (a manifest: dicts, lists, strings) with every URL's userinfo redacted."""
    if isinstance(value, str):
        return without_userinfo(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redacted(v) for v in value)
    return value


def printable(text: object) -> str:
    """``text`` with every control character replaced by a visible escape, and no URL password."""
    text = text if isinstance(text, str) else str(text)
    return without_userinfo(_UNSAFE.sub(_escape, text))



ERROR_LINE_CHARS = 1000  # an error or a warning a user reads: a 70 KB key from a listing is not read whole


def error_line(text: object, limit: int = ERROR_LINE_CHARS) -> str:
    """``printable(text)``, its middle left out past ``limit`` characters (saying how many)."""
    line = printable(text)
    if len(line) <= limit:
        return line
    head, tail = line[:limit * 3 // 4], line[-(limit // 4):]
    return f"{head} … [{len(line) - len(head) - len(tail):,} characters left out] … {tail}"


def printable_lines(text: str) -> str:
    """A table or a block of lines made printable line by line: its newlines kept, any other control byte in
    it (a key's, an error code's) escaped."""
    return "\n".join(printable(line) for line in text.split("\n"))

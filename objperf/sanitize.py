"""Text from a server or a file, made safe to print: no control byte reaches a terminal.

An S3 error code, a key, an imported file's field can hold ANSI escapes (colours, cursor moves, a
new window title, an OSC 52 write to the clipboard) or a carriage return that overwrites what was
printed before.  Each such character is shown as a visible escape instead: ``\\x1b``, ``\\r``."""

from __future__ import annotations

import re

# C0 controls but tab, DEL, the C1 controls, and the Unicode controls that reorder or hide text
# (bidirectional overrides and isolates, zero-width marks, line and paragraph separators).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``text`` with every control character replaced by a visible escape."""
    text = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, text)


def printable_bytes(data: bytes) -> str:
    """Bytes from a server (an error code, a header) as printable text: undecodable bytes escaped too."""
    return printable(data.decode("utf-8", errors="backslashreplace"))

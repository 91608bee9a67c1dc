"""DeleteObjects: the request's document, and its answer read as outside input.

A request names up to 1,000 keys (S3's limit) with ``<Quiet>false</Quiet>``, so the store accounts for each:
a ``<Deleted>`` or an ``<Error>`` (with its S3 code) per key.  An answer that is no ``<DeleteResult>``, names a
key that was not asked for, names one twice, or leaves one asked for unaccounted is not S3's: the caller fails
its row with S3-contract code 8, as objperf does with every answer S3 would not give."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from defusedxml import ElementTree

from objperf.core.errors import TargetError
from objperf.core.sanitize import printable

MAX_BATCH = 1000  # keys a DeleteObjects names at most (S3's limit)
# What XML 1.0 can carry: a key holding anything else cannot go in a DeleteObjects document.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def fits_a_document(key: str) -> bool:
    """Whether ``key`` can be named in a DeleteObjects document (XML 1.0 has no way to write most control
    characters)."""
    return _NOT_XML.search(key) is None


def _escaped(key: str) -> str:
    # A carriage return as a character reference: written raw, XML parsers read it as a line feed.
    return key.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")


def delete_request(keys: Sequence[str]) -> tuple[bytes, list[str]]:
    """The body of a DeleteObjects of ``keys`` and the header lines it goes with (Content-MD5, which S3
    requires of it, and its type)."""
    body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>false</Quiet>"
            + "".join(f"<Object><Key>{_escaped(key)}</Key></Object>" for key in keys) + "</Delete>").encode()
    md5 = base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode()
    return body, [f"Content-MD5: {md5}", "Content-Type: application/xml"]


@dataclass(frozen=True)
class DeleteAnswer:
    """What a DeleteObjects answer says of the keys asked: how many were deleted, how many the store refused
    (each an ``<Error>``), and the S3 code of the first refusal."""

    deleted: int
    refused: int
    first_code: str


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def read_delete_answer(body: bytes, asked: Sequence[str], where: str) -> DeleteAnswer:
    """A DeleteObjects answer held to the keys ``asked``; ``TargetError`` for one S3 would not give."""
    try:
        root = ElementTree.fromstring(body)
    except (ElementTree.ParseError, ValueError) as exc:
        raise TargetError(f"{where}: the answer is not XML ({printable(exc)})") from None
    if _local(root.tag) != "DeleteResult":
        raise TargetError(f"{where}: the answer is <{printable(_local(root.tag))[:40]}>, not <DeleteResult>")
    pending = set(asked)
    deleted = refused = 0
    first_code = ""
    for child in root:
        name = _local(child.tag)
        if name not in ("Deleted", "Error"):
            continue
        fields = {_local(c.tag): (c.text or "") for c in child}
        key = fields.get("Key")
        if key is None:
            raise TargetError(f"{where}: a <{name}> names no <Key>")
        if key not in pending:
            shown = printable(key[:60]) + ("…" if len(key) > 60 else "")
            said = "twice" if key in asked else "though it was not asked for"
            raise TargetError(f"{where}: the answer names key {shown!r} {said}")
        pending.discard(key)
        if name == "Deleted":
            deleted += 1
        else:
            refused += 1
            first_code = first_code or fields.get("Code", "") or "Error"
    if pending:
        raise TargetError(f"{where}: the answer accounts for {len(asked) - len(pending):,} of the {len(asked):,} keys "
                          "asked, neither deleted nor refused")
    return DeleteAnswer(deleted, refused, first_code)

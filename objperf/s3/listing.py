"""ListObjectsV2, read as outside input: every page bounded (``objperf.s3.light.Wire``), parsed with a
real XML parser, checked against the S3 contract, and the whole listing bounded in keys, pages and time.

A listing ends when the store says it is complete, at ``limit`` keys (``Listing.capped`` says so), or
fails with one line when a page is no listing, names a size that is no byte count, returns a key outside
the prefix asked for, repeats a continuation token (a loop) or when its deadline passes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from defusedxml import ElementTree

from objperf.errors import TargetError
from objperf.sanitize import printable

LISTING_LIMIT = 100_000  # keys a read run takes from one prefix unless --keys N says otherwise
PAGE_KEYS = 1000
MAX_OBJECT_BYTES = 5 << 40  # S3's largest object: 5 TiB


def held_to_object_size(size: int, what: str) -> int:
    """``size``, the length a server gave an object, if an object can be that long (0 to 5 TiB)."""
    if not 0 <= size <= MAX_OBJECT_BYTES:
        raise TargetError(f"{what}: the server says the object holds {size:,} bytes, not a size an S3 object "
                          "can have (0 to 5 TiB)")
    return size


@dataclass
class Page:
    keys: list[tuple[str, int]]
    truncated: bool
    token: str | None


@dataclass
class Listing:
    """(key, size) pairs; ``capped``: ``limit`` cut the listing short, more keys were there."""

    keys: list[tuple[str, int]] = field(default_factory=list)
    capped: bool = False
    pages: int = 0


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def parse_page(body: bytes, where: str) -> Page:
    """One ListObjectsV2 page; ``TargetError`` for anything that is not one."""
    try:
        root = ElementTree.fromstring(body)
    except (ElementTree.ParseError, ValueError) as exc:
        raise TargetError(f"{where}: the listing is not XML ({printable(exc)})") from None
    if _local(root.tag) != "ListBucketResult":
        raise TargetError(f"{where}: the listing's answer is <{printable(_local(root.tag))[:40]}>, "
                          "not <ListBucketResult>")
    keys: list[tuple[str, int]] = []
    truncated, token = False, None
    for child in root:
        name = _local(child.tag)
        if name == "Contents":
            fields = {_local(c.tag): (c.text or "") for c in child}
            if "Key" not in fields:
                raise TargetError(f"{where}: a listed object has no <Key>")
            keys.append((fields["Key"], _size(fields.get("Size"), fields["Key"], where)))
        elif name == "IsTruncated":
            text = (child.text or "").strip().lower()
            if text not in ("true", "false"):
                raise TargetError(f"{where}: <IsTruncated> is {printable(text)[:20]!r}, not true or false")
            truncated = text == "true"
        elif name == "NextContinuationToken":
            token = child.text or ""
    return Page(keys, truncated, token)


def _size(text: str | None, key: str, where: str) -> int:
    text = (text or "").strip()
    if not text.isdigit() or len(text) > 16 or int(text) > MAX_OBJECT_BYTES:
        raise TargetError(f"{where}: key {printable(key)!r} is listed with size {printable(text)[:24]!r}, "
                          "not a byte count S3 allows (0 to 5 TiB)")
    return int(text)


def list_all(fetch_page: Callable[[str | None], bytes], where: str, prefix: str, *, limit: int,
             deadline_s: float) -> Listing:
    """Page through a listing: ``fetch_page(token)`` returns one page's body (``None``: the first page)."""
    listing = Listing()
    seen_tokens: set[str] = set()
    token: str | None = None
    ends = time.monotonic() + deadline_s
    while True:
        page = parse_page(fetch_page(token), where)
        listing.pages += 1
        for key, _ in page.keys:
            if not key.startswith(prefix):
                raise TargetError(f"{where}: the store listed key {printable(key)!r}, which is not under the prefix "
                                  f"{printable(prefix)!r} asked for")
        listing.keys += page.keys
        if len(listing.keys) >= limit:
            listing.capped = page.truncated or len(listing.keys) > limit
            del listing.keys[limit:]
            return listing
        if not page.truncated:
            return listing
        if not page.token:
            raise TargetError(f"{where}: a truncated listing page names no continuation token")
        if page.token in seen_tokens:
            raise TargetError(f"{where}: the store repeated continuation token {printable(page.token)[:40]!r} "
                              f"after {listing.pages} pages: its listing loops")
        seen_tokens.add(page.token)
        token = page.token
        if time.monotonic() >= ends:
            raise TargetError(f"{where}: the listing did not end within {deadline_s:g}s ({listing.pages} pages, "
                              f"{len(listing.keys)} keys)")

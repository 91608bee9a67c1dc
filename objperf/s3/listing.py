"""ListObjectsV2, read as outside input: every page bounded (``objperf.s3.light.Wire``, or the engine's
document bound), parsed with a real XML parser, checked against the S3 contract, and the whole listing
bounded in keys, in the bytes of the keys it holds, and in time; what it remembers of the pages it has seen
is a digest of each token.  ``PageWalk`` holds one pass through a listing, a page at a time, to the contract:
the control plane's ``list_all`` and a LIST run's listers (``objperf.run.listers``) walk with it.

A listing ends when the store says it is complete, at ``limit`` keys (``Listing.capped`` says so), or
fails with one line when a page is no listing, names a size that is no byte count, a key S3 cannot hold
(empty, or over 1,024 bytes of UTF-8) or a continuation token over ``MAX_TOKEN_BYTES``, returns a key
outside the prefix asked for or a key not after the one before it (S3 lists in ascending UTF-8 binary
order across pages, a file-backed store as a directory walk: anything else repeats or reorders keys),
repeats a continuation token (a loop), when the keys held pass ``LISTING_KEY_BYTES`` or when its
deadline passes.  A page asked with a delimiter lists common prefixes too: each under the prefix, ending
at the first delimiter after it, in order with the keys; a key under the prefix then holds no delimiter
after it.  A page holds at most the max-keys asked for, keys and common prefixes together.  A store that
was asked for URL-encoded names (``<EncodingType>url``, as botocore asks) has them decoded."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote_plus

from defusedxml import ElementTree

from objperf.core.errors import TargetError
from objperf.core.sanitize import printable

LISTING_LIMIT = 100_000  # keys a read run takes from one prefix unless --keys N says otherwise
PAGE_KEYS = 1000
MAX_OBJECT_BYTES = 5 << 40  # S3's largest object: 5 TiB
MAX_KEY_BYTES = 1024  # S3's longest key, in bytes of UTF-8
# S3's continuation tokens are about 100 characters; stores that carry the last key in the token (base64,
# or percent-encoded) reach 4/3 to 3 times a 1,024-byte key.  Past this, no store's token: a hostile one.
MAX_TOKEN_BYTES = 4096
# The bytes of key names one listing holds: the default key limit of keys of S3's longest (100,000 x
# 1,024 bytes, 98 MiB) fits; past it, a --keys N of long names fails in one line, not at the memory's end.
LISTING_KEY_BYTES = 128 << 20


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
    prefixes: list[str] = field(default_factory=list)  # the common prefixes of a page asked with a delimiter

    @property
    def count(self) -> int:
        """What the page lists: its keys and its common prefixes."""
        return len(self.keys) + len(self.prefixes)


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
    children = [(_local(child.tag), child) for child in root]
    encoded = any(name == "EncodingType" and (child.text or "").strip().lower() == "url" for name, child in children)
    namespace = root.tag[:-len("ListBucketResult")]  # S3's, or none: an object's fields are found in it first
    key_tag, size_tag = f"{namespace}Key", f"{namespace}Size"
    keys: list[tuple[str, int]] = []
    prefixes: list[str] = []
    truncated, token = False, None
    for name, child in children:
        if name == "Contents":
            found, size = child.findtext(key_tag), child.findtext(size_tag)
            if found is None:  # its fields in another namespace than the listing's
                fields = {_local(c.tag): (c.text or "") for c in child}
                found, size = fields.get("Key"), fields.get("Size")
            if found is None:
                raise TargetError(f"{where}: a listed object has no <Key>")
            key = unquote_plus(found) if encoded else found
            _check_key(key, where)
            keys.append((key, _size(size, key, where)))
        elif name == "CommonPrefixes":
            named = [c.text or "" for c in child if _local(c.tag) == "Prefix"]
            if len(named) != 1:
                raise TargetError(f"{where}: a common prefix names {len(named)} <Prefix>es, not one")
            common = unquote_plus(named[0]) if encoded else named[0]
            _check_key(common, where)
            prefixes.append(common)
        elif name == "IsTruncated":
            text = (child.text or "").strip().lower()
            if text not in ("true", "false"):
                raise TargetError(f"{where}: <IsTruncated> is {printable(text)[:20]!r}, not true or false")
            truncated = text == "true"
        elif name == "NextContinuationToken":
            token = child.text or ""
            if len(token.encode("utf-8", "surrogatepass")) > MAX_TOKEN_BYTES:
                raise TargetError(f"{where}: the store's continuation token is {_amount(len(token.encode()))} long, "
                                  f"more than the {MAX_TOKEN_BYTES:,} bytes any store's token takes")
    return Page(keys, truncated, token, prefixes)


def _amount(n: int) -> str:
    return f"{n:,} bytes" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def _check_key(key: str, where: str) -> None:
    size = len(key.encode("utf-8", "surrogatepass"))
    if not 1 <= size <= MAX_KEY_BYTES:
        shown = repr(printable(key[:60])) + ("…" if len(key) > 60 else "")
        raise TargetError(f"{where}: the store listed a key of {_amount(size)} ({shown}), not a key S3 holds "
                          f"(1 to {MAX_KEY_BYTES:,} bytes of UTF-8)")


def _size(text: str | None, key: str, where: str) -> int:
    text = (text or "").strip()
    if not text.isdigit() or len(text) > 16 or int(text) > MAX_OBJECT_BYTES:
        raise TargetError(f"{where}: key {printable(key)!r} is listed with size {printable(text)[:24]!r}, "
                          "not a byte count S3 allows (0 to 5 TiB)")
    return int(text)


# The orders a listing's keys may come in, each strictly ascending across all its pages: S3's (the binary
# order of the keys' UTF-8), and a directory walk's (by /-separated segments: 'a/b' before 'a-c'), which
# SeaweedFS and file-backed stores give.  Under either a key comes once.
ORDERS: tuple[Callable[[bytes], object], ...] = (lambda key: key, lambda key: key.split(b"/"))


class PageWalk:
    """One pass through a listing, a page at a time: ``take`` parses a page and holds it to the contract
    against the pages before it (``TargetError`` in one line otherwise).  ``delimiter`` and ``max_keys``: what
    the pages were asked with (0: not said)."""

    def __init__(self, where: str, prefix: str, *, delimiter: str = "", max_keys: int = 0):
        self.where, self.prefix, self.delimiter, self.max_keys = where, prefix, delimiter, max_keys
        self.pages = 0
        self.seen_tokens: set[bytes] = set()  # digests: a token is up to MAX_TOKEN_BYTES, a digest 32 bytes
        self.lasts: dict[int, bytes] = {}  # by order (ORDERS' index) every name so far came in: the last name
        self.orders = list(range(len(ORDERS)))

    def take(self, body: bytes) -> Page:
        page = parse_page(body, self.where)
        self.pages += 1
        where = self.where
        if self.max_keys and page.count > self.max_keys:
            raise TargetError(f"{where}: page {self.pages} lists {page.count:,} keys and common prefixes, more than "
                              f"the max-keys {self.max_keys:,} it was asked for")
        if page.truncated and page.token:  # a loop is named as one before its keys are found again
            digest = hashlib.sha256(page.token.encode("utf-8", "surrogatepass")).digest()
            if digest in self.seen_tokens:
                raise TargetError(f"{where}: the store repeated continuation token {printable(page.token)[:40]!r} "
                                  f"after {self.pages} pages: its listing loops")
            self.seen_tokens.add(digest)
        names = [key for key, _ in page.keys]
        for key in names:
            self._under_prefix(key, "key")
            if self.delimiter and self.delimiter in key[len(self.prefix):]:
                raise TargetError(f"{where}: the store listed key {printable(key)!r}, which holds the delimiter "
                                  f"{printable(self.delimiter)!r} after the prefix: it belongs in a common prefix")
        for common in page.prefixes:
            self._under_prefix(common, "common prefix")
            rest = common[len(self.prefix):]
            if not self.delimiter or rest.find(self.delimiter) != len(rest) - len(self.delimiter):
                raise TargetError(f"{where}: the store listed common prefix {printable(common)!r}, which does not end "
                                  f"at the first delimiter {printable(self.delimiter)!r} after the prefix")
        self._in_order(names, page.prefixes)
        if page.truncated and not page.token:
            raise TargetError(f"{where}: a truncated listing page names no continuation token")
        return page

    def _under_prefix(self, name: str, what: str) -> None:
        if not name.startswith(self.prefix):
            raise TargetError(f"{self.where}: the store listed {what} {printable(name)!r}, which is not under the "
                              f"prefix {printable(self.prefix)!r} asked for")

    def _in_order(self, keys: list[str], prefixes: list[str]) -> None:
        """Keys, and common prefixes, each ascending within the page and all after the pages before, in one of
        the orders stores list in."""
        encoded = [[name.encode("utf-8", "surrogatepass") for name in names] for names in (keys, prefixes)]
        kept = []
        failed_at: tuple[str, bool] | None = None
        for order_index in self.orders:
            order = ORDERS[order_index]
            last = self.lasts.get(order_index)
            fine, page_last = True, last
            for names, raw in zip((keys, prefixes), encoded):
                before = last
                for name, value in zip(names, raw):
                    if before is not None and not order(value) > order(before):
                        fine = False
                        failed_at = failed_at or (name, value == before)
                        break
                    before = value
                if not fine:
                    break
                if raw and (page_last is None or order(raw[-1]) > order(page_last)):
                    page_last = raw[-1]
            if fine:
                kept.append(order_index)
                if page_last is not None:
                    self.lasts[order_index] = page_last
        if not kept:
            name, same = failed_at or ("", False)
            again = "again" if same else "after a key that comes later"
            raise TargetError(f"{self.where}: the store listed key {printable(name)!r} {again} (page {self.pages}): "
                              "a store lists each key once, in ascending order, so the listing is broken")
        self.orders = kept


def list_all(fetch_page: Callable[[str | None], bytes], where: str, prefix: str, *, limit: int,
             deadline_s: float) -> Listing:
    """Page through a listing: ``fetch_page(token)`` returns one page's body (``None``: the first page)."""
    listing = Listing()
    walk = PageWalk(where, prefix)
    held = 0  # bytes of the key names kept
    ends = time.monotonic() + deadline_s
    token: str | None = None
    while True:
        page = walk.take(fetch_page(token))
        listing.pages = walk.pages
        held += sum(len(key.encode("utf-8", "surrogatepass")) for key, _ in page.keys)
        if held > LISTING_KEY_BYTES:
            raise TargetError(f"{where}: the listing's key names passed {LISTING_KEY_BYTES >> 20} MiB "
                              f"({len(listing.keys) + len(page.keys):,} keys): list a narrower prefix, or fewer --keys")
        listing.keys += page.keys
        if len(listing.keys) >= limit:
            listing.capped = page.truncated or len(listing.keys) > limit
            del listing.keys[limit:]
            return listing
        if not page.truncated:
            return listing
        token = page.token
        if time.monotonic() >= ends:
            raise TargetError(f"{where}: the listing did not end within {deadline_s:g}s ({listing.pages} pages, "
                              f"{len(listing.keys)} keys)")

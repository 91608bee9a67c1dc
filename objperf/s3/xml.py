"""S3's XML answers (error bodies, CreateMultipartUpload's UploadId), read with a real XML parser:
defusedxml, which refuses entity expansion and external references from a server."""

from __future__ import annotations

from defusedxml import ElementTree


def element_text(body: bytes, name: str) -> str | None:
    """The text of the first ``<name>`` element, whatever its namespace; None for a body that is not XML
    or has no such element."""
    try:
        root = ElementTree.fromstring(body)
    except (ElementTree.ParseError, ValueError):
        return None
    for element in root.iter():
        if element.tag == name or element.tag.endswith("}" + name):
            return element.text or ""
    return None


ETAG_MAX = 1024  # S3's are 34 characters, a multipart object's a few more


def copy_result(body: bytes) -> tuple[str | None, str | None]:
    """A CopyObject's or an UploadPartCopy's answer: (the copy's ETag, None); (None, its S3 error code) for an
    ``<Error>``, which S3 may send after a 200 when the copy fails on the way; (None, None) for anything else (no
    document, not XML, no ETag that S3 would give).  S3 keeps a long copy's connection alive with spaces before
    its document: they are not part of it."""
    try:
        root = ElementTree.fromstring(body.strip())
    except (ElementTree.ParseError, ValueError):
        return None, None
    name = root.tag.rpartition("}")[2]
    if name == "Error":
        code = next((el.text or "" for el in root if el.tag.rpartition("}")[2] == "Code"), "")
        return None, code.strip()
    if name not in ("CopyObjectResult", "CopyPartResult"):
        return None, None
    etag = next(((el.text or "").strip() for el in root if el.tag.rpartition("}")[2] == "ETag"), "")
    if not etag or len(etag) > ETAG_MAX or not etag.isascii() or not etag.isprintable():
        return None, None
    return etag, None

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

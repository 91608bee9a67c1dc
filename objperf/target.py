"""Targets: what a run reads — S3 objects (``s3://BUCKET/KEY``, a prefix, or
``--keys``) or plain ``http(s)://`` URLs — resolved to sizes and to the URLs the
engine fetches.  Presigned URLs live only in ``ResolvedTarget.urls`` and are
never put into a manifest, a log or an error message."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests

from objperf.errors import TargetError, UsageError
from objperf.s3client import S3Client, S3Settings


@dataclass(frozen=True)
class ObjectRef:
    bucket: str
    key: str
    size: int


@dataclass
class ResolvedTarget:
    kind: str  # "s3" or "http"
    objects: list[ObjectRef]
    endpoint: str
    settings: S3Settings | None = None
    urls: list[str] = field(default_factory=list, repr=False)

    @property
    def tls(self) -> bool:
        return self.endpoint.startswith("https://")

    def describe(self) -> dict:
        """What a manifest may say about the target (no credentials, no signatures)."""
        info = {"kind": self.kind, "endpoint": self.endpoint,
                "objects": [{"bucket": o.bucket, "key": o.key, "size": o.size} for o in self.objects]}
        if self.settings is not None:
            info.update({k: v for k, v in self.settings.describe().items() if k != "endpoint"})
        return info


def split_s3_url(url: str) -> tuple[str, str]:
    """``s3://bucket/some/key`` → (``bucket``, ``some/key``)."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise UsageError(f"bad URL {url!r}: expected s3://BUCKET/KEY, s3://BUCKET/PREFIX/ or http(s)://HOST/PATH")
    return parts.netloc, parts.path.lstrip("/")


def resolve_read_target(url: str, settings: S3Settings, *, keys: list[str] | None = None,
                        presign_seconds: int = 24 * 3600) -> ResolvedTarget:
    """Look up sizes (HEAD or LIST) and presign one GET URL per object."""
    scheme = urlsplit(url).scheme
    if scheme in ("http", "https"):
        return _resolve_http(url)
    bucket, key = split_s3_url(url)
    client = S3Client(settings)
    if keys and key and not key.endswith("/"):
        raise UsageError("give either a key in the URL or --keys, not both")
    if keys:
        prefix = key
        objects = [ObjectRef(bucket, prefix + k, client.object_size(bucket, prefix + k)) for k in keys]
    elif not key or key.endswith("/"):
        listed = client.list_keys(bucket, key)
        if not listed:
            if not client.bucket_exists(bucket):
                raise TargetError(f"bucket {bucket!r} does not exist at {client.endpoint}")
            raise TargetError(f"no objects under s3://{bucket}/{key}")
        objects = [ObjectRef(bucket, k, size) for k, size in listed]
    else:
        objects = [ObjectRef(bucket, key, client.object_size(bucket, key))]
    urls = [client.presign(o.bucket, o.key, expires=presign_seconds) for o in objects]
    return ResolvedTarget("s3", objects, client.endpoint, settings, urls)


def _resolve_http(url: str) -> ResolvedTarget:
    parts = urlsplit(url)
    if not parts.netloc:
        raise UsageError(f"bad URL {url!r}: no host")
    safe = f"{parts.scheme}://{parts.netloc}{parts.path}"
    try:
        head = requests.head(url, timeout=10, allow_redirects=False)
    except requests.RequestException as exc:
        raise TargetError(f"cannot reach {safe} ({type(exc).__name__})") from None
    if head.status_code != 200:
        raise TargetError(f"HEAD {safe} answered {head.status_code}")
    length = head.headers.get("Content-Length")
    if length is None:
        raise TargetError(f"HEAD {safe} gave no Content-Length; objperf needs the size to plan ranges")
    obj = ObjectRef("", parts.path.lstrip("/"), int(length))
    return ResolvedTarget("http", [obj], f"{parts.scheme}://{parts.netloc}", None, [url])

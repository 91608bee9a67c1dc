"""Targets: what a run reads — S3 objects (``s3://BUCKET/KEY``, a prefix, or
``--keys``) or plain ``http(s)://`` URLs — resolved to sizes and to the URLs the
engine fetches.  Presigned URLs live only in ``ResolvedTarget.urls`` (and the
engine) and are never put into a manifest, a log or an error message."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from objperf.core.errors import (
    TLS_HINT,
    UNTRUSTED,
    NotFound,
    ObjperfError,
    TargetError,
    TransferFailed,
    Unreachable,
    UsageError,
)
from objperf.core.sanitize import without_userinfo
from objperf.s3.client import URL_LIFETIME_S, S3Client, S3Settings, check_url_lifetime
from objperf.s3.listing import LISTING_LIMIT, held_to_object_size


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
    client: S3Client | None = field(default=None, repr=False)
    url_lifetime: int = URL_LIFETIME_S
    skipped: int = 0  # empty objects and directory markers under a prefix, which a read run leaves out
    capped: list[str] = field(default_factory=list)  # the prefixes whose listing the key limit cut short
    method: str = "get_object"  # the S3 call the URLs are signed for
    signed_headers: dict[str, str] = field(default_factory=dict)  # headers each URL is signed with, and sent

    @property
    def tls(self) -> bool:
        return self.endpoint.startswith("https://")

    def describe(self) -> dict:
        """What a manifest may say about the target (no credentials, no signatures)."""
        info = {"kind": self.kind, "endpoint": self.endpoint,
                "objects": [{"bucket": o.bucket, "key": o.key, "size": o.size} for o in self.objects]}
        if self.settings is not None:
            described = self.settings.describe() if self.kind == "s3" else self.settings.describe_tls()
            info.update({k: v for k, v in described.items() if k != "endpoint"})
        if self.renews_urls:
            info["url_lifetime_s"] = self.url_lifetime
        if self.skipped:
            info["skipped_objects"] = self.skipped
        if self.capped:
            info["listing_capped"] = self.capped
        return info

    def notes(self) -> dict:
        """What a run's summary says of how its objects were found."""
        notes: dict = {}
        if self.skipped:
            notes["skipped_objects"] = self.skipped
        if self.capped:
            notes["listing_capped"] = {"prefixes": self.capped, "keys": len(self.objects)}
        return notes

    def engine_tls(self) -> dict:
        return self.settings.engine_tls() if self.settings is not None else {}

    @property
    def renews_urls(self) -> bool:
        return self.kind == "s3" and self.client is not None

    def sign_urls(self) -> list[str]:
        """A URL per object for ``method``, presigned now (plain http(s) URLs stay as they were given)."""
        if not self.renews_urls:
            return list(self.urls)
        self.urls = [self.client.presign(o.bucket, o.key, method=self.method, expires=self.url_lifetime,
                                         headers=self.signed_headers or None) for o in self.objects]
        return self.urls

    def sign_for(self, op: str, headers: dict[str, str] | None = None) -> None:
        """The URLs signed for what a run asks of each object (``get`` or ``head``), with the ``headers`` each
        request sends."""
        if f"{op}_object" != self.method or (headers or {}) != self.signed_headers:
            self.method, self.signed_headers = f"{op}_object", dict(headers or {})
            self.sign_urls()


class UrlRenewal:
    """Call it as a run goes: every third of the URLs' lifetime it has URLs signed afresh and hands them
    to the engines.  Signing runs on a thread of its own: renewing temporary credentials is a network
    call, and many keys take a while, and the run's loop must keep draining rows meanwhile.  Should
    signing fail (an expired SSO session), the run goes on with the URLs it has, says so once on
    stderr, and tries again a third of a lifetime later."""

    def __init__(self, target: ResolvedTarget, engines: Iterable):
        self.target = target
        self.engines = list(engines)
        self.every_s = target.url_lifetime / 3
        self.due = time.monotonic() + self.every_s if target.renews_urls else float("inf")
        self.reported = False
        self._signing: threading.Thread | None = None
        self._signed: list[str] | None = None
        self._failure: ObjperfError | None = None

    def __call__(self) -> None:
        if self._signing is not None:
            if self._signing.is_alive():
                return
            self._signing = None
            self._hand_over()
        if time.monotonic() >= self.due:
            self.due = time.monotonic() + self.every_s
            self._signing = threading.Thread(target=self._sign, name="objperf-url-renewal", daemon=True)
            self._signing.start()

    def _sign(self) -> None:
        try:
            self._signed = self.target.sign_urls()
        except ObjperfError as exc:
            self._failure = exc

    def _hand_over(self) -> None:
        urls, self._signed = self._signed, None
        failure, self._failure = self._failure, None
        if urls is not None:
            for engine in self.engines:
                engine.set_urls(urls)
        elif failure is not None and not self.reported:
            below_progress = "\n" if sys.stderr.isatty() else ""  # a progress line may be on the terminal
            print(f"{below_progress}objperf: cannot sign fresh URLs ({failure}); going on with the ones signed before",
                  file=sys.stderr)
            self.reported = True


def split_s3_url(url: str) -> tuple[str, str]:
    """``s3://bucket/some/key`` → (``bucket``, ``some/key``)."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise UsageError(f"bad URL {url!r}: expected s3://BUCKET/KEY, s3://BUCKET/PREFIX/ or http(s)://HOST/PATH")
    return parts.netloc, parts.path.lstrip("/")


def resolve_read_target(url: str, settings: S3Settings, *, keys: list[str] | int | None = None,
                        buckets: list[str] | None = None, url_lifetime: int = URL_LIFETIME_S,
                        sign: bool = True) -> ResolvedTarget:
    """Look up sizes (HEAD or LIST) and presign one GET URL per object, valid ``url_lifetime`` seconds
    (``sign`` False: none, for a run that names its objects in requests of its own, a batch delete's).

    ``keys``: a list of keys (relative to the URL's prefix), or N for the first N objects under
    it.  ``buckets``: read the same keys from each of these buckets instead of the URL's."""
    check_url_lifetime(url_lifetime)
    scheme = urlsplit(url).scheme
    if scheme in ("http", "https"):
        if keys or buckets:
            raise UsageError("--keys and --buckets apply to s3:// URLs only")
        return _resolve_http(url, settings)
    url_bucket, key = split_s3_url(url)
    client = S3Client(settings)
    if isinstance(keys, list) and key and not key.endswith("/"):
        raise UsageError("give either a key in the URL or a list of --keys, not both")
    objects: list[ObjectRef] = []
    skipped = 0
    capped: list[str] = []
    for bucket in buckets or [url_bucket]:
        client.check_region(bucket)
        if isinstance(keys, list):
            objects += [ObjectRef(bucket, key + k, client.object_size(bucket, key + k)) for k in keys]
        elif not key or key.endswith("/") or isinstance(keys, int):
            listing = client.list_objects(bucket, key, limit=keys if isinstance(keys, int) else LISTING_LIMIT)
            listed = listing.keys
            if listing.capped and not isinstance(keys, int):
                capped.append(f"s3://{bucket}/{key}")
            if not listed:
                if not client.bucket_exists(bucket):
                    raise client.missing_bucket(bucket)
                raise NotFound(f"no objects under s3://{bucket}/{key}")
            with_data = [(k, size) for k, size in listed if size > 0 and not k.endswith("/")]
            skipped += len(listed) - len(with_data)
            if not with_data:
                raise NotFound(f"nothing to read under s3://{bucket}/{key}: only empty objects or directory "
                               "markers (keys ending in /)")
            if isinstance(keys, int) and len(listed) < keys:
                raise TargetError(f"--keys {keys}: only {len(listed)} objects under s3://{bucket}/{key}")
            objects += [ObjectRef(bucket, k, size) for k, size in with_data]
        else:
            objects.append(ObjectRef(bucket, key, client.object_size(bucket, key)))
    target = ResolvedTarget("s3", objects, client.endpoint, settings, client=client, url_lifetime=url_lifetime,
                            skipped=skipped, capped=capped)
    if sign:
        target.sign_urls()
    return target


def _resolve_http(url: str, settings: S3Settings) -> ResolvedTarget:
    parts = urlsplit(url)
    # never echo a query (it may hold a signature) nor a user:password
    safe = without_userinfo(f"{parts.scheme}://{parts.netloc}{parts.path}")
    if not parts.netloc:
        raise UsageError(f"bad URL {safe!r}: no host")
    size = _http_size(url, safe, settings)
    obj = ObjectRef("", parts.path.lstrip("/"), size)
    return ResolvedTarget("http", [obj], without_userinfo(f"{parts.scheme}://{parts.netloc}"), settings, [url])


def _http_size(url: str, safe: str, settings: S3Settings) -> int:
    """Content-Length from HEAD, else the total of ``Content-Range`` from a one-byte GET (a presigned
    GET URL cannot be HEADed).  Over libcurl, as the engine will fetch it: the same proxy, the same
    trust, and no HTTP library to import."""
    from objperf._curl.exchange import Exchange

    timeout = min(10.0, settings.timeout)
    exchange = Exchange(settings.trusted_cas, settings.verify_tls, settings.connect_timeout, timeout,
                        proxy_from_env=True)
    try:
        status, length, _ = exchange.request("HEAD", url, deadline=timeout)
        if status == 200 and length >= 0:
            return held_to_object_size(length, f"HEAD {safe}")
        status, length, _ = exchange.request("GET", url, byte_range="0-0", body_limit=1, deadline=timeout)
    except TransferFailed as exc:
        if exc.untrusted:
            raise Unreachable(f"{safe}: {UNTRUSTED}; {TLS_HINT}", code=exc.code) from None
        if exc.timed_out:
            raise Unreachable(f"{safe} did not answer in time", code=exc.code) from None
        raise Unreachable(f"cannot reach {safe} ({exc.detail})", code=exc.code) from None
    total = exchange.content_range.rpartition("/")[2]
    if status == 206 and total.isdigit() and len(total) < 20:
        return held_to_object_size(int(total), f"GET {safe}")
    if status == 200 and length >= 0:
        return held_to_object_size(length, f"GET {safe}")
    raise TargetError(f"GET {safe} answered {status}; objperf needs the object's size to plan ranges")

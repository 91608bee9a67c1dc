"""The S3 control plane of a run without botocore, for the common case.

A run needs little from S3: each object's size (HEAD), presigned GET, PUT and
UploadPart URLs, and a write run's Create/Complete/AbortMultipartUpload.  When
the answer cannot depend on anything botocore would look up — an explicit
``--endpoint`` with path-style addressing (what botocore's ``auto`` picks for
any custom endpoint), keys from the environment or the embedded server or none
at all, the region given, no proxy — this module does them with the standard
library and one kept libcurl handle (``objperf._engine.exchange``),
and a command starts about 0.4 s sooner.  Anything else (profiles,
AWS's own endpoints, virtual hosts, config files, listing, bucket set-up,
verification) goes through botocore, as before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

from defusedxml import ElementTree

from objperf import sigv4
from objperf._engine.exchange import Exchange

CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 120.0  # as botocore is configured: completing a large upload can take a while
DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class Answer:
    status: int
    length: int | None  # Content-Length
    body: bytes

    def element(self, name: str) -> str | None:
        """The text of the first ``<name>`` element of the XML body, whatever its namespace; None for a
        body that is not XML (defusedxml: no entity expansion, no external references)."""
        try:
            root = ElementTree.fromstring(self.body)
        except (ElementTree.ParseError, ValueError):
            return None
        for element in root.iter():
            if element.tag == name or element.tag.endswith("}" + name):
                return element.text or ""
        return None


def env_keys(environ: Mapping[str, str]) -> sigv4.Keys | None:
    """botocore's first link of the credential chain (its ``EnvProvider``), when it gives a
    complete, non-expiring key pair; otherwise None and botocore walks the chain itself."""
    access, secret = environ.get("AWS_ACCESS_KEY_ID", ""), environ.get("AWS_SECRET_ACCESS_KEY", "")
    if not access or not secret or environ.get("AWS_CREDENTIAL_EXPIRATION"):
        return None
    token = environ.get("AWS_SECURITY_TOKEN") or environ.get("AWS_SESSION_TOKEN") or None
    return sigv4.Keys(access, secret, token)


def known_region(region: str | None, environ: Mapping[str, str]) -> str | None:
    """The region botocore would sign for, when no config file can change it."""
    if region or environ.get("AWS_DEFAULT_REGION"):
        return region or environ["AWS_DEFAULT_REGION"]
    config = environ.get("AWS_CONFIG_FILE") or "~/.aws/config"
    return None if Path(config).expanduser().exists() else DEFAULT_REGION


class LightS3:
    """Path-style URLs under one endpoint, presigned with ``objperf.sigv4``; requests over libcurl."""

    def __init__(self, endpoint: str, region: str, keys: sigv4.Keys | None, *, ca_bundle: str | None = None,
                 verify_tls: bool = True):
        self.endpoint = endpoint.rstrip("/")
        self.region = region
        self.keys = keys  # None: anonymous, nothing is signed
        self.ca_bundle, self.verify_tls = ca_bundle, verify_tls
        self._lock = threading.Lock()
        self._exchange = Exchange(ca_bundle, verify_tls, CONNECT_TIMEOUT_S, READ_TIMEOUT_S)

    @classmethod
    def for_settings(cls, settings, environ: Mapping[str, str] = os.environ) -> LightS3 | None:
        """A LightS3 when ``settings`` fall in the common case, else None."""
        if not settings.endpoint or settings.profile or settings.addressing not in ("auto", "path"):
            return None
        try:
            parts = urlsplit(settings.endpoint)
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            return None
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            return None
        if environ.get(f"{parts.scheme}_proxy") or environ.get(f"{parts.scheme.upper()}_PROXY"):
            return None  # botocore goes through the proxy (and knows NO_PROXY); objperf's light path does not
        region = known_region(settings.region, environ)
        if region is None:
            return None
        if settings.anonymous:
            keys = None
        elif settings.credentials:
            keys = sigv4.Keys(*settings.credentials)
        else:
            keys = env_keys(environ)
            if keys is None:
                return None
        return cls(settings.endpoint, region, keys, ca_bundle=settings.trusted_cas, verify_tls=settings.verify_tls)

    def url(self, bucket: str, key: str = "") -> str:
        """The unsigned path-style URL of a bucket or an object, encoded as botocore encodes it."""
        path = f"/{bucket}/{quote(key, safe='/~')}" if key else f"/{bucket}"
        return self.endpoint + path

    def presign(self, method: str, bucket: str, key: str, expires: int,
                params: Sequence[tuple[str, str]] = ()) -> str:
        url = self.url(bucket, key)
        if self.keys is None:
            return f"{url}?{sigv4.encode_query(params)}" if params else url
        return sigv4.presign(method, url, self.keys, self.region, expires, params=params)

    def send(self, method: str, bucket: str, key: str = "", params: Sequence[tuple[str, str]] = (),
             body: bytes = b"") -> Answer:
        """One presigned request; the endpoint's answer, whatever its status (``TransferFailed`` for none).
        The connection is kept for the next request (over TLS a write run's multipart calls would otherwise
        pay a handshake each), opened again when the server has closed it."""
        url = self.presign(method, bucket, key, 300, params)
        with self._lock:
            status, length, content = self._exchange.request(method, url, body)
        return Answer(status, length if length >= 0 else None, content)

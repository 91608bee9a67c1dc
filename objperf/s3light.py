"""The S3 control plane of a run without botocore, for the common case.

A run needs little from S3: each object's size (HEAD), presigned GET, PUT and
UploadPart URLs, and a write run's Create/Complete/AbortMultipartUpload.  When
the answer cannot depend on anything botocore would look up — an explicit
``--endpoint`` with path-style addressing (what botocore's ``auto`` picks for
any custom endpoint), keys from the environment or the embedded server or none
at all, the region given, no proxy — this module does them with the standard
library, and a command starts about 0.4 s sooner.  Anything else (profiles,
AWS's own endpoints, virtual hosts, config files, listing, bucket set-up,
verification) goes through botocore, as before.
"""

from __future__ import annotations

import html
import http.client
import os
import re
import select
import ssl
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

from objperf import sigv4

CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 120.0  # as botocore is configured: completing a large upload can take a while
UNTRUSTED = "TLS certificate not trusted"  # how a failed certificate check begins its reason
TLS_HINT = "give its CA with --ca-bundle (or AWS_CA_BUNDLE), or pass --no-verify-ssl"
DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class Answer:
    status: int
    length: int | None  # Content-Length
    body: bytes

    def element(self, name: str) -> str | None:
        """The text of the first ``<name>`` element of an XML body (S3's answers are flat enough)."""
        found = re.search(rf"<{name}>([^<]*)</{name}>".encode(), self.body)
        return html.unescape(found.group(1).decode()) if found else None


class Unreachable(Exception):
    """No answer: ``reason`` names the failure (never a URL: it would carry a signature);
    ``connected`` says whether it came before or after the connection was up."""

    def __init__(self, reason: str, *, connected: bool):
        super().__init__(reason)
        self.reason = reason
        self.connected = connected

    @property
    def timed_out(self) -> bool:
        return self.reason == "timed out"


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
    """Path-style URLs under one endpoint, presigned with ``objperf.sigv4``; requests over http.client."""

    def __init__(self, endpoint: str, region: str, keys: sigv4.Keys | None, *, ca_bundle: str | None = None,
                 verify_tls: bool = True):
        self.endpoint = endpoint.rstrip("/")
        self.region = region
        self.keys = keys  # None: anonymous, nothing is signed
        self.ca_bundle, self.verify_tls = ca_bundle, verify_tls
        parts = urlsplit(self.endpoint)
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._lock = threading.Lock()
        # A one-element list, so the finalizer can close whatever connection is open at the end.
        self._connection: list[http.client.HTTPConnection | None] = [None]
        weakref.finalize(self, _close_connection, self._connection)

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
            return None  # botocore goes through the proxy (and knows NO_PROXY); http.client would not
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
        """One presigned request; the endpoint's answer, whatever its status.  One connection
        is kept for the next request (over TLS a write run's multipart calls would otherwise pay
        a handshake each), opened again when the server has closed it."""
        signed = urlsplit(self.presign(method, bucket, key, 300, params))
        target = signed.path + (f"?{signed.query}" if signed.query else "")
        with self._lock:
            connection = self._open_connection()
            try:
                connection.request(method, target, body=body)
                response = connection.getresponse()
                content = response.read()
            except (OSError, http.client.HTTPException) as exc:
                self._drop_connection()
                raise Unreachable(_reason(exc), connected=True) from None
            except BaseException:
                # Ctrl-C mid-call leaves a request half sent or an answer unread: the next call
                # on this connection (the run's aborts) would be garbled or read the wrong answer.
                self._drop_connection()
                raise
            if response.will_close:
                self._drop_connection()
        length = response.getheader("Content-Length")
        return Answer(response.status, int(length) if length and length.isdigit() else None, content)

    def _open_connection(self) -> http.client.HTTPConnection:
        connection = self._connection[0]
        if connection is not None and connection.sock is not None and not _readable(connection.sock):
            return connection
        self._drop_connection()  # never used, or closed by the server while idle
        if self._scheme == "https":
            connection = http.client.HTTPSConnection(self._host, self._port, timeout=CONNECT_TIMEOUT_S,
                                                     context=self._tls_context())
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=CONNECT_TIMEOUT_S)
        try:
            connection.connect()
        except OSError as exc:
            connection.close()
            raise Unreachable(_reason(exc), connected=False) from None
        connection.sock.settimeout(READ_TIMEOUT_S)
        self._connection[0] = connection
        return connection

    def _tls_context(self) -> ssl.SSLContext:
        """The trust botocore would use: the CA bundle given, else the system's."""
        context = ssl.create_default_context(cafile=self.ca_bundle)
        if not self.verify_tls:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    def _drop_connection(self) -> None:
        _close_connection(self._connection)


def _close_connection(holder: list) -> None:
    if holder[0] is not None:
        holder[0].close()
        holder[0] = None


def _readable(sock) -> bool:
    """An idle keep-alive socket with something to read has been closed by the server."""
    return bool(select.select([sock], [], [], 0)[0])


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"{UNTRUSTED}: {exc.verify_message}"
    return "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__

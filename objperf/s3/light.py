"""The S3 control plane of a run without botocore, for the common case.

A run needs little from S3: each object's size (HEAD), presigned GET, PUT and
UploadPart URLs, and a write run's Create/Complete/AbortMultipartUpload.  When
the answer cannot depend on anything botocore would look up — an explicit
``--endpoint`` with path-style addressing (what botocore's ``auto`` picks for
any custom endpoint), keys from the environment or the embedded server or none
at all, the region given, no proxy — this module does them with the standard
library and kept libcurl handles (``objperf._curl.exchange``; one more for each call made
at the same time, as a write run opens uploads ahead),
and a command starts about 0.4 s sooner.  Anything else (profiles,
AWS's own endpoints, virtual hosts, config files, listing, bucket set-up,
verification) goes through botocore, as before.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from html import escape
from pathlib import Path
from urllib.parse import quote, urlsplit

from objperf._curl.exchange import Exchange
from objperf.core.curl_codes import CURLE_FILESIZE_EXCEEDED, CURLE_WEIRD_SERVER_REPLY
from objperf.core.errors import TransferFailed, refused, unreachable
from objperf.core.sanitize import printable
from objperf.core.schema import ok_requests
from objperf.s3 import sigv4
from objperf.s3.settings import CONNECT_TIMEOUT_S, CONTROL_BODY_CAP, CONTROL_TIMEOUT_S
from objperf.s3.xml import element_text

DEFAULT_REGION = "us-east-1"
UPLOAD_ID_MAX = 1024  # AWS's are about 150 characters


# What this plane does without botocore, by botocore's method name.  Presigning: (HTTP method, the
# extra parameters it carries); a write run's multipart calls: HTTP method.
LIGHT_PRESIGNS = {"get_object": ("GET", frozenset()), "head_object": ("HEAD", frozenset()),
                  "delete_object": ("DELETE", frozenset()), "put_object": ("PUT", frozenset()),
                  "upload_part": ("PUT", frozenset({"UploadId", "PartNumber"}))}
LIGHT_ATTEMPTS = {"create_multipart_upload": "POST", "complete_multipart_upload": "POST",
                  "abort_multipart_upload": "DELETE"}


@dataclass(frozen=True)
class Attempt:
    """The outcome of one control-plane request that becomes a row: an answer or none, never raised."""

    response: dict | None
    status: int
    s3_error: str
    curl_code: int
    t_start: float
    seconds: float

    @property
    def ok(self) -> bool:
        return bool(ok_requests(self.curl_code, self.status))


@dataclass(frozen=True)
class Answer:
    status: int
    length: int | None  # Content-Length
    body: bytes
    bucket_region: str = ""  # x-amz-bucket-region, where the store sends it

    def element(self, name: str) -> str | None:
        """The text of the first ``<name>`` element of the XML body, or None."""
        return element_text(self.body, name)


def held_to_contract(method: str, attempt: Attempt) -> Attempt:
    """``attempt``, or a failure when its 2xx answer lacks what S3 specifies for ``method``: a
    CreateMultipartUpload with no usable ``UploadId`` would have its parts sent as whole-object PUTs."""
    if attempt.ok and method == "create_multipart_upload":
        upload_id = (attempt.response or {}).get("UploadId") or ""
        if not upload_id or len(upload_id) > UPLOAD_ID_MAX or printable(upload_id) != upload_id:
            return replace(attempt, response=None, curl_code=CURLE_WEIRD_SERVER_REPLY)
    return attempt


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
    """Path-style URLs under one endpoint, presigned with ``objperf.s3.sigv4``; requests over libcurl."""

    def __init__(self, endpoint: str, region: str, keys: sigv4.Keys | None, *, ca_bundle: str | None = None,
                 verify_tls: bool = True, timeout: float = CONTROL_TIMEOUT_S):
        self.endpoint = endpoint.rstrip("/")
        self.region = region
        self.keys = keys  # None: anonymous, nothing is signed
        self.ca_bundle, self.verify_tls = ca_bundle, verify_tls
        self.wire = Wire(ca_bundle, verify_tls, timeout)

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
        return cls(settings.endpoint, region, keys, ca_bundle=settings.trusted_cas, verify_tls=settings.verify_tls,
                   timeout=settings.timeout)

    def url(self, bucket: str, key: str = "") -> str:
        """The unsigned path-style URL of a bucket or an object, encoded as botocore encodes it."""
        path = f"/{bucket}/{quote(key, safe='/~')}" if key else f"/{bucket}"
        return self.endpoint + path

    def presign(self, method: str, bucket: str, key: str, expires: int,
                params: Sequence[tuple[str, str]] = (), headers: Mapping[str, str] | None = None) -> str:
        """A presigned URL; ``headers`` are signed in it (``sigv4.signable``), to be sent with it."""
        url = self.url(bucket, key)
        if self.keys is None:
            sigv4.signable(headers)  # refused alike, signed or not
            return f"{url}?{sigv4.encode_query(params)}" if params else url
        return sigv4.presign(method, url, self.keys, self.region, expires, params=params, headers=headers)

    # -- the control plane's calls, as BotocorePlane makes them -----------------------------------------

    def handles(self, call: str, extra: frozenset[str] = frozenset()) -> bool:
        """Whether this plane makes ``call`` (botocore's method name) with these extra parameters."""
        if call in ("head_object", "list_objects_v2", "delete_objects") or call in LIGHT_ATTEMPTS:
            return True
        return call in LIGHT_PRESIGNS and extra == LIGHT_PRESIGNS[call][1]

    @property
    def signing_region(self) -> str:
        return self.region

    def bucket_region(self, bucket: str) -> str | None:
        """The region the store says ``bucket`` lives in: ``x-amz-bucket-region`` on its HEAD answer, or, from a
        store that refuses the HEAD without naming one, the ``<Region>`` of the error body of a listing of
        one key; None when it does not say or cannot be reached (the run's own requests say why)."""
        try:
            head = self.send("HEAD", bucket)
            if head.bucket_region or head.status != 400:
                return head.bucket_region or None
            return self.send("GET", bucket, "", [("max-keys", "1")]).element("Region") or None
        except TransferFailed:
            return None

    def head(self, what: str, bucket: str, key: str = "") -> int | None:
        """HEAD a bucket or an object: its Content-Length; typed errors for no answer or a refusal."""
        try:
            answer = self.send("HEAD", bucket, key)
        except TransferFailed as exc:
            raise unreachable(self.endpoint, what, exc.code, exc.detail) from None
        if not 200 <= answer.status < 300:
            raise refused(self.endpoint, what, "", answer.status)
        return answer.length

    def presign_bucket(self, method: str, bucket: str, params: Sequence[tuple[str, str]], expires: int) -> str:
        """A presigned request of the bucket itself (a listing's page, a DeleteObjects)."""
        return self.presign(method, bucket, "", expires, params)

    def presign_call(self, bucket: str, key: str, *, method: str, expires: int, extra: dict | None,
                     headers: Mapping[str, str] | None = None) -> str:
        params = [("uploadId", extra["UploadId"]), ("partNumber", str(extra["PartNumber"]))] if extra else []
        return self.presign(LIGHT_PRESIGNS[method][0], bucket, key, expires, params, headers)

    def part_url_signer(self, bucket: str, key: str, upload_id: str, *, expires: int) -> Callable[..., str]:
        def part_url(number: int, headers: Mapping[str, str] | None = None) -> str:
            return self.presign_call(bucket, key, method="upload_part", expires=expires,
                                     extra={"UploadId": upload_id, "PartNumber": number}, headers=headers)

        return part_url

    def attempt(self, method: str, *, Bucket: str, Key: str, UploadId: str | None = None,  # noqa: N803
                MultipartUpload: dict | None = None, ChecksumAlgorithm: str | None = None) -> Attempt:  # noqa: N803
        """One of a write run's multipart calls; its outcome becomes a row (S3 errors are returned).  As botocore
        takes them: ``ChecksumAlgorithm`` ("CRC32") opens an upload whose parts each carry that checksum, and a
        part of ``MultipartUpload`` may name its value (``ChecksumCRC32``)."""
        params, body, headers = [("uploadId", UploadId)], b"", {}
        if method == "create_multipart_upload":
            params = [("uploads", "")]
            if ChecksumAlgorithm:
                headers["x-amz-checksum-algorithm"] = ChecksumAlgorithm
        elif method == "complete_multipart_upload":
            body = "".join(f"<Part><PartNumber>{p['PartNumber']}</PartNumber><ETag>{escape(p['ETag'])}</ETag>"
                           + "".join(f"<{name}>{escape(value)}</{name}>" for name, value in sorted(p.items())
                                     if name.startswith("Checksum"))
                           + "</Part>" for p in MultipartUpload["Parts"]).encode()
            body = b"<CompleteMultipartUpload>" + body + b"</CompleteMultipartUpload>"
        t_start = time.time()
        t0 = time.perf_counter()
        try:
            answer = self.send(LIGHT_ATTEMPTS[method], Bucket, Key, params, body, headers=headers)
        except TransferFailed as exc:
            return Attempt(None, 0, "", exc.code, t_start, time.perf_counter() - t0)
        seconds = time.perf_counter() - t0
        status = answer.status
        if 200 <= status < 300 and answer.element("Error") is not None:
            status = 500  # CompleteMultipartUpload can fail after its 200 went out; botocore reads it so too
        if not 200 <= status < 300:
            return Attempt(None, status, answer.element("Code") or "", 0, t_start, seconds)
        response = {"UploadId": answer.element("UploadId")} if method == "create_multipart_upload" else {}
        return held_to_contract(method, Attempt(response, answer.status, "", 0, t_start, seconds))

    def send(self, method: str, bucket: str, key: str = "", params: Sequence[tuple[str, str]] = (),
             body: bytes = b"", *, headers: Mapping[str, str] | None = None) -> Answer:
        """One presigned request, with ``headers`` signed in it and sent; the endpoint's answer, whatever its
        status (``TransferFailed`` for none).  The connection is kept for the next request (over TLS a write
        run's multipart calls would otherwise pay a handshake each), opened again when the server has closed it."""
        url = self.presign(method, bucket, key, 300, params, headers=headers or None)
        return self.wire.send(method, url, body, headers=[f"{k}: {v}" for k, v in (headers or {}).items()])


class Wire:
    """Control-plane requests over kept libcurl handles, each bounded: its answer's body by
    ``CONTROL_BODY_CAP`` (a longer one is a failure, not a truncated answer), its whole time by
    ``timeout``, and its idle time by the same.  One handle for sequential calls, with its kept
    connection; calls made at once (uploads opened ahead) take one each.  ``cancel`` ends every call
    on the wire now, from any thread (later calls go out as usual)."""

    def __init__(self, ca_bundle: str | None, verify_tls: bool, timeout: float, *, proxy_from_env: bool = False):
        self.timeout = timeout
        self._lock = threading.Lock()
        self._new = lambda: Exchange(ca_bundle, verify_tls, min(CONNECT_TIMEOUT_S, timeout), timeout,
                                     proxy_from_env=proxy_from_env)
        self._idle = [self._new()]
        self._busy: set = set()

    def send(self, method: str, url: str, body: bytes = b"", *, headers: Sequence[str] = ()) -> Answer:
        """One request (``headers``: lines it sends beside the wire's own); the answer, whatever its status
        (``TransferFailed`` for none, or too long a one)."""
        with self._lock:
            exchange = self._idle.pop() if self._idle else self._new()
            self._busy.add(exchange)
        try:
            status, length, content = exchange.request(method, url, body, body_limit=CONTROL_BODY_CAP,
                                                       deadline=self.timeout, headers=headers)
        finally:
            with self._lock:
                self._busy.discard(exchange)
                if not exchange.cancelled:
                    self._idle.append(exchange)
        if exchange.truncated:
            raise TransferFailed(CURLE_FILESIZE_EXCEEDED, f"an answer longer than {CONTROL_BODY_CAP >> 20} MiB, "
                                 "more than any S3 control call sends", True)
        return Answer(status, length if length >= 0 else None, content, exchange.bucket_region)

    @property
    def kept(self):
        """The handle sequential calls share."""
        return self._idle[0]

    def cancel(self) -> None:
        with self._lock:
            for exchange in self._busy:
                exchange.cancel()

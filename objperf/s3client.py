"""The S3 control plane: credentials, presigning, HEAD, listing, bucket set-up.

Everything here goes through botocore (the standard AWS credential chain and
SigV4), except what a run itself needs in the common case — HEAD, presigned
URLs, a write run's multipart calls — which ``objperf.s3light`` does without
importing botocore at all.  The data plane — the load itself — never signs
anything: it is handed presigned URLs, made per key (and made afresh as a long
run goes), which are never written anywhere.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from html import escape
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from objperf import sigv4
from objperf.errors import (
    CURLE_COULDNT_CONNECT,
    CURLE_OPERATION_TIMEDOUT,
    CURLE_PEER_FAILED_VERIFICATION,
    TLS_HINT,
    UNTRUSTED,
    CredentialsError,
    NotFound,
    ObjperfError,
    TargetError,
    TransferFailed,
    Unreachable,
    UsageError,
    classify,
)
from objperf.s3light import LightS3

PRESIGN_MAX_SECONDS = 7 * 24 * 3600
# How long a run's presigned URLs live.  Runs sign them afresh every third of this, so a run outlasts
# them and the temporary credentials (SSO, an assumed role) they were signed with: botocore renews
# those ten to fifteen minutes before they expire, and each new URL is signed with what it holds then.
URL_LIFETIME_S = 15 * 60
URL_LIFETIME_MIN_S = 3


def check_url_lifetime(seconds: float) -> None:
    if not URL_LIFETIME_MIN_S <= seconds <= PRESIGN_MAX_SECONDS:
        raise UsageError(f"URL lifetime must be between {URL_LIFETIME_MIN_S}s and 7 days (168h, SigV4's limit), "
                         f"not {seconds:g}s")
CURLE_SSL_CONNECT_ERROR, CURLE_RECV_ERROR = 35, 56  # transport failures, coded as the engine codes them
# What the light path (objperf.s3light) does without botocore, by botocore's method name.
# Presigning: (HTTP method, the extra parameters it carries); a write run's multipart calls: HTTP method.
LIGHT_PRESIGNS = {"get_object": ("GET", set()), "put_object": ("PUT", set()),
                  "upload_part": ("PUT", {"UploadId", "PartNumber"})}
LIGHT_ATTEMPTS = {"create_multipart_upload": "POST", "complete_multipart_upload": "POST",
                  "abort_multipart_upload": "DELETE"}


@dataclass(frozen=True)
class Attempt:
    response: dict | None
    status: int
    s3_error: str
    curl_code: int
    t_start: float
    seconds: float

    @property
    def ok(self) -> bool:
        return self.curl_code == 0 and 200 <= self.status < 300


@dataclass(frozen=True)
class S3Settings:
    """Where and as whom to talk S3.  ``credentials`` is only for the embedded server."""

    endpoint: str | None = None
    region: str | None = None
    profile: str | None = None
    anonymous: bool = False
    addressing: str = "auto"  # auto | path | virtual
    credentials: tuple[str, str] | None = None
    ca_bundle: str | None = None  # over TLS: trust these CA certificates instead of the system's
    verify_tls: bool = True  # False: trust any certificate (--no-verify-ssl)

    def describe(self) -> dict:
        """The settings that may go into a manifest: never credentials."""
        return {"endpoint": self.endpoint, "region": self.region, "profile": self.profile,
                "anonymous": self.anonymous, "addressing": self.addressing, **self.describe_tls()}

    def describe_tls(self) -> dict:
        return {"ca_bundle": self.ca_bundle, "verify_tls": self.verify_tls}

    @property
    def trusted_cas(self) -> str | None:
        """The CA bundle every connection trusts: ``ca_bundle``, else ``AWS_CA_BUNDLE``, else None (the
        system's).  The one place this is decided, so the engine and the control plane never disagree."""
        return self.ca_bundle or os.environ.get("AWS_CA_BUNDLE") or None

    def engine_tls(self) -> dict:
        """The engine's keywords for the same trust as the control plane's."""
        return {"ca_file": self.trusted_cas, "verify_tls": self.verify_tls}

    def requests_verify(self) -> bool | str:
        """``verify=`` for botocore and requests."""
        if not self.verify_tls:
            quiet_insecure_warnings()
            return False
        return self.trusted_cas or True


def quiet_insecure_warnings() -> None:
    """--no-verify-ssl was asked for once; urllib3 would warn on every request."""
    import urllib3

    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


class S3Client:
    """A botocore S3 client whose errors come out as objperf errors with one-line messages.

    botocore is imported and its client built on first use.  In the common case a run never
    needs it: HEAD, presigning and a write run's multipart calls go through ``objperf.s3light``
    (``light=False`` sends everything through botocore)."""

    def __init__(self, settings: S3Settings, *, light: bool = True):
        if settings.addressing not in ("auto", "path", "virtual"):
            raise UsageError(f"bad addressing {settings.addressing!r}: use auto, path or virtual")
        self.settings = settings
        self._light = LightS3.for_settings(settings) if light else None
        if self._light is None:
            self._client  # noqa: B018 - a bad profile or endpoint fails here, not at first use

    @cached_property
    def _client(self):
        import botocore.session
        from botocore import UNSIGNED
        from botocore.config import Config
        from botocore.exceptions import ProfileNotFound

        settings = self.settings
        try:
            session = botocore.session.get_session()
            if settings.profile:
                session.set_config_variable("profile", settings.profile)
                session.get_scoped_config()  # raises ProfileNotFound now, not at first use
            region = settings.region or session.get_config_variable("region") or "us-east-1"
            config = Config(
                signature_version=UNSIGNED if settings.anonymous else "s3v4",
                s3={"addressing_style": settings.addressing},
                retries={"max_attempts": 1, "mode": "standard"},
                connect_timeout=10,
                read_timeout=120,
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            )
            kwargs = {}
            if settings.credentials:
                kwargs = {"aws_access_key_id": settings.credentials[0],
                          "aws_secret_access_key": settings.credentials[1]}
            verify = settings.requests_verify()
            return session.create_client("s3", region_name=region, endpoint_url=settings.endpoint,
                                         config=config, verify=None if verify is True else verify, **kwargs)
        except ProfileNotFound:
            raise CredentialsError(
                f"profile {settings.profile!r} not found in ~/.aws/config or ~/.aws/credentials") from None
        except ValueError as exc:
            raise UsageError(f"bad endpoint {settings.endpoint!r}: {exc}") from None

    @property
    def endpoint(self) -> str:
        return self._light.endpoint if self._light else self._client.meta.endpoint_url

    def _call(self, what: str, func, **params):
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
            ReadTimeoutError,
            SSLError,
        )

        try:
            return func(**params)
        except NoCredentialsError:
            raise CredentialsError(
                "no credentials found: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, pass --profile, or --anonymous"
            ) from None
        except SSLError as exc:
            if _certificate_rejected(exc):
                raise self._unreachable(what, CURLE_PEER_FAILED_VERIFICATION, "") from None
            raise self._unreachable(what, CURLE_SSL_CONNECT_ERROR, "TLS handshake failed") from None
        except (ConnectTimeoutError, ReadTimeoutError):
            raise self._unreachable(what, CURLE_OPERATION_TIMEDOUT, "") from None
        except EndpointConnectionError as exc:
            raise self._unreachable(what, CURLE_COULDNT_CONNECT, type(exc).__name__) from None
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            raise self._refused(what, code, status) from None
        except BotoCoreError as exc:
            raise TargetError(f"{what}: {exc}") from None

    def attempt(self, method: str, **params) -> Attempt:
        """One control-plane request whose outcome becomes a row: S3 errors are returned, not raised."""
        if self._light and method in LIGHT_ATTEMPTS:
            return self._light_attempt(method, **params)
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            ReadTimeoutError,
        )

        t_start = time.time()
        t0 = time.perf_counter()
        try:
            response = getattr(self._client, method)(**params)
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 200)
            return Attempt(response, status, "", 0, t_start, time.perf_counter() - t0)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            return Attempt(None, status, code, 0, t_start, time.perf_counter() - t0)
        except (EndpointConnectionError, ConnectTimeoutError):
            return Attempt(None, 0, "", CURLE_COULDNT_CONNECT, t_start, time.perf_counter() - t0)
        except (ReadTimeoutError, BotoCoreError):
            return Attempt(None, 0, "", CURLE_RECV_ERROR, t_start, time.perf_counter() - t0)

    def _light_attempt(self, method: str, *, Bucket: str, Key: str, UploadId: str | None = None,  # noqa: N803
                       MultipartUpload: dict | None = None) -> Attempt:
        """``attempt`` for the multipart calls of a write run, without botocore."""
        params, body = [("uploadId", UploadId)], b""
        if method == "create_multipart_upload":
            params = [("uploads", "")]
        elif method == "complete_multipart_upload":
            body = "".join(f"<Part><PartNumber>{p['PartNumber']}</PartNumber><ETag>{escape(p['ETag'])}</ETag></Part>"
                           for p in MultipartUpload["Parts"]).encode()
            body = b"<CompleteMultipartUpload>" + body + b"</CompleteMultipartUpload>"
        t_start = time.time()
        t0 = time.perf_counter()
        try:
            answer = self._light.send(LIGHT_ATTEMPTS[method], Bucket, Key, params, body)
        except TransferFailed as exc:
            return Attempt(None, 0, "", exc.code, t_start, time.perf_counter() - t0)
        seconds = time.perf_counter() - t0
        status = answer.status
        if 200 <= status < 300 and b"<Error>" in answer.body:
            status = 500  # CompleteMultipartUpload can fail after its 200 went out; botocore reads it so too
        if not 200 <= status < 300:
            return Attempt(None, status, answer.element("Code") or "", 0, t_start, seconds)
        response = {"UploadId": answer.element("UploadId")} if method == "create_multipart_upload" else {}
        return Attempt(response, answer.status, "", 0, t_start, seconds)

    def open_uploads(self, bucket: str, prefix: str = "") -> list[tuple[str, str]]:
        """(key, upload id) of multipart uploads still open under ``prefix``."""
        page = self._call(f"list multipart uploads in {bucket}", self._client.list_multipart_uploads,
                          Bucket=bucket, Prefix=prefix)
        return [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]

    def object_size(self, bucket: str, key: str) -> int:
        """HEAD the object; a missing object or bucket is named as such."""
        try:
            if self._light:
                size = self._light_head(f"HEAD s3://{bucket}/{key}", bucket, key)
            else:
                head = self._call(f"HEAD s3://{bucket}/{key}", self._client.head_object, Bucket=bucket, Key=key)
                size = int(head["ContentLength"])
        except NotFound as exc:
            if not self.bucket_exists(bucket):
                raise NotFound(f"bucket {bucket!r} does not exist at {self.endpoint}", status=exc.status,
                               s3_error="NoSuchBucket") from None
            raise NotFound(f"object s3://{bucket}/{key} does not exist", status=exc.status,
                           s3_error=exc.s3_error or "NoSuchKey") from None
        if size is None:
            raise TargetError(f"HEAD s3://{bucket}/{key}: no Content-Length from {self.endpoint}")
        return size

    def bucket_exists(self, bucket: str) -> bool:
        try:
            if self._light:
                self._light_head(f"HEAD bucket {bucket}", bucket)
            else:
                self._call(f"HEAD bucket {bucket}", self._client.head_bucket, Bucket=bucket)
        except NotFound:
            return False
        return True

    def _light_head(self, what: str, bucket: str, key: str = "") -> int | None:
        """HEAD without botocore; failures become the errors ``_call`` raises for botocore's."""
        try:
            answer = self._light.send("HEAD", bucket, key)
        except TransferFailed as exc:
            raise self._unreachable(what, exc.code, exc.detail) from None
        if not 200 <= answer.status < 300:
            raise self._refused(what, "", answer.status)
        return answer.length

    def _unreachable(self, what: str, code: int, detail: str) -> Unreachable:
        """The error for no answer, by libcurl's code (botocore's failures are given the same codes)."""
        if code == CURLE_OPERATION_TIMEDOUT:
            message = f"endpoint {self.endpoint} did not answer {what} in time"
        elif code == CURLE_PEER_FAILED_VERIFICATION:
            detail = detail.removeprefix("SSL certificate problem: ")
            message = f"endpoint {self.endpoint}: {UNTRUSTED}{': ' + detail if detail else ''}; {TLS_HINT}"
        else:
            message = f"cannot reach endpoint {self.endpoint} ({detail})"
        return Unreachable(message, code=code)

    def _refused(self, what: str, code: str, status: int | None) -> ObjperfError:
        """The error for an S3 answer that is not a success, one line, credentials or not."""
        error = classify("", status=status, s3_error=code)
        if isinstance(error, CredentialsError):
            return CredentialsError(f"{what}: access denied ({code or status}); check the credentials or profile",
                                    status=status, s3_error=code)
        return type(error)(f"{what}: {code or status} from {self.endpoint}", status=status, s3_error=code)

    def list_keys(self, bucket: str, prefix: str, limit: int = 100_000) -> list[tuple[str, int]]:
        """(key, size) of objects under ``prefix``."""
        found: list[tuple[str, int]] = []
        token = None
        while len(found) < limit:
            params = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": 1000}
            if token:
                params["ContinuationToken"] = token
            page = self._call(f"LIST s3://{bucket}/{prefix}", self._client.list_objects_v2, **params)
            found += [(item["Key"], int(item["Size"])) for item in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                break
            token = page.get("NextContinuationToken")
        return found[:limit]

    def presign(self, bucket: str, key: str, *, method: str = "get_object", expires: int = 24 * 3600,
                extra: dict | None = None) -> str:
        """A presigned URL; it carries a signature, so it goes to the engine and nowhere else."""
        expires = max(1, min(int(expires), PRESIGN_MAX_SECONDS))
        http_method, allowed = LIGHT_PRESIGNS.get(method, ("", None))
        if self._light and set(extra or ()) == allowed:
            params = [("uploadId", extra["UploadId"]), ("partNumber", str(extra["PartNumber"]))] if extra else []
            return self._light.presign(http_method, bucket, key, expires, params)
        return self._call(f"presign s3://{bucket}/{key}", self._client.generate_presigned_url, ClientMethod=method,
                          Params={"Bucket": bucket, "Key": key, **(extra or {})}, ExpiresIn=expires)

    def part_url_signer(self, bucket: str, key: str, upload_id: str, *, expires: int) -> Callable[[int], str]:
        """Presigned UploadPart URLs of one upload, by part number.

        Through botocore, the first comes from its presigner (endpoint rules, addressing, signing
        region); the others re-sign that URL with another part number (``objperf.sigv4``, which
        signs as botocore does), skipping the endpoint rules: a quarter of the cost a part."""
        def presign_part(number: int) -> str:
            return self.presign(bucket, key, method="upload_part", expires=expires,
                                extra={"UploadId": upload_id, "PartNumber": number})

        if self._light or self.settings.anonymous:
            return presign_part
        first = presign_part(1)
        credentials = getattr(getattr(self._client, "_request_signer", None), "_credentials", None)
        if credentials is None:
            return presign_part
        parts = urlsplit(first)
        query = parse_qsl(parts.query, keep_blank_values=True)
        signed = dict(query)
        scope = signed["X-Amz-Credential"].split("/")  # KEY/DATE/REGION/SERVICE/aws4_request
        region, lifetime = scope[2], int(signed["X-Amz-Expires"])
        params = [(k, v) for k, v in query if not k.startswith("X-Amz-")]
        base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))

        def url(number: int) -> str:
            if number == 1:
                return first
            frozen = credentials.get_frozen_credentials()
            keys = sigv4.Keys(frozen.access_key, frozen.secret_key, frozen.token)
            return sigv4.presign("PUT", base, keys, region, lifetime,
                                 params=[(k, str(number) if k == "partNumber" else v) for k, v in params])

        return url

    def list_buckets(self) -> list[str]:
        listing = self._call("list buckets", self._client.list_buckets)
        return [b["Name"] for b in listing.get("Buckets", [])]

    def create_bucket(self, bucket: str) -> None:
        if not self.bucket_exists(bucket):
            self._call(f"create bucket {bucket}", self._client.create_bucket, Bucket=bucket)

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        self._call(f"PUT s3://{bucket}/{key}", self._client.put_object, Bucket=bucket, Key=key, Body=body)

    def put_large_object(self, bucket: str, key: str, parts: Iterable[bytes]) -> None:
        """Upload the concatenation of ``parts`` as one object (multipart when there is more than one)."""
        parts = iter(parts)
        first = next(parts, b"")
        second = next(parts, None)
        if second is None:
            self.put_object(bucket, key, bytes(first))
            return
        what = f"multipart upload s3://{bucket}/{key}"
        upload = self._call(what, self._client.create_multipart_upload, Bucket=bucket, Key=key)
        upload_id = upload["UploadId"]
        try:
            done = []
            for number, chunk in enumerate(itertools.chain([first, second], parts), start=1):
                answer = self._call(what, self._client.upload_part, Bucket=bucket, Key=key, UploadId=upload_id,
                                    PartNumber=number, Body=bytes(chunk))
                done.append({"PartNumber": number, "ETag": answer["ETag"]})
            self._call(what, self._client.complete_multipart_upload, Bucket=bucket, Key=key, UploadId=upload_id,
                       MultipartUpload={"Parts": done})
        except BaseException:
            from botocore.exceptions import BotoCoreError, ClientError

            try:
                self._client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
            except (BotoCoreError, ClientError):
                pass
            raise

    def get_object(self, bucket: str, key: str, byte_range: str | None = None) -> bytes:
        params = {"Bucket": bucket, "Key": key}
        if byte_range:
            params["Range"] = byte_range
        response = self._call(f"GET s3://{bucket}/{key}", self._client.get_object, **params)
        return response["Body"].read()

    def delete_object(self, bucket: str, key: str) -> None:
        self._call(f"DELETE s3://{bucket}/{key}", self._client.delete_object, Bucket=bucket, Key=key)


def _certificate_rejected(exc: BaseException) -> bool:
    """Whether a TLS failure botocore reports was the peer's certificate, not trusted: the
    ``ssl.SSLCertVerificationError`` somewhere in the chain of causes urllib3 and botocore wrap it in."""
    import ssl

    seen: set[int] = set()
    pending: list[object] = [exc]
    while pending:
        current = pending.pop()
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        seen.add(id(current))
        pending += [current.__cause__, current.__context__, *current.args,
                    *getattr(current, "kwargs", {}).values()]
    return False

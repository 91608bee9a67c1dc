"""The S3 control plane through botocore: the standard AWS credential chain, profiles, AWS's
own endpoints, virtual hosts, listing and bucket set-up.  botocore is imported and its client
built on first use; its errors come out as objperf's typed errors with one-line messages.  Each of
its calls is bounded (``objperf.s3.bounded``): its answer at 8 MiB, its whole time at the timeout.

Headers a presigned URL signs go into botocore's request just before it signs (its ``before-sign`` event, told
by a context variable which presign is under way, so threads presigning at once never mix them), and its URL is
held to the header set ``objperf.s3.sigv4`` signs.  ``x-amz-content-sha256`` botocore cannot sign as objperf
does (see ``sigv4``): a URL signing it is botocore's, signed again by ``sigv4`` with the same credentials, region
and lifetime, as the parts of an upload after its first are.  botocore logs each canonical request and signature
at debug level: those records are dropped, a signature never reaching a log beside the values it signs."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from functools import cached_property
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from objperf.core.curl_codes import (
    CURLE_COULDNT_CONNECT,
    CURLE_FILESIZE_EXCEEDED,
    CURLE_OPERATION_TIMEDOUT,
    CURLE_PEER_FAILED_VERIFICATION,
    CURLE_RECV_ERROR,
    CURLE_SSL_CONNECT_ERROR,
)
from objperf.core.errors import (
    CredentialsError,
    TargetError,
    TransferFailed,
    Unreachable,
    UsageError,
    refused,
    unreachable,
)
from objperf.s3 import sigv4
from objperf.s3.bounded import BoundedSender
from objperf.s3.light import Attempt, held_to_contract
from objperf.s3.settings import S3Settings

# The headers the presign under way in this thread signs (none outside one).
_SIGNING: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("objperf_signed_headers", default=())


def _sign_headers_too(request, **kwargs) -> None:
    """botocore's ``before-sign`` hook: the headers of the presign under way into the request it signs."""
    for name, value in _SIGNING.get():
        request.headers[name] = value


class NoSignatures(logging.Filter):
    """Drops botocore's debug records of a canonical request, a string to sign and a signature."""

    SIGNED = ("CanonicalRequest", "StringToSign", "Signature")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.SIGNED)


NO_SIGNATURES = NoSignatures()


class BotocorePlane:
    """Every control-plane call through one botocore client (``handles`` everything)."""

    def __init__(self, settings: S3Settings):
        self.settings = settings
        self._bases: dict[str, tuple[str, str]] = {}  # by bucket: its URL, the region signed for (_bucket_base)

    @property
    def built(self) -> bool:
        """Whether botocore has been imported and its client built."""
        return "client" in vars(self)

    @cached_property
    def client(self):
        import botocore.session
        from botocore import UNSIGNED
        from botocore.config import Config
        from botocore.credentials import Credentials
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
                connect_timeout=settings.connect_timeout,
                read_timeout=settings.timeout,
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            )
            kwargs = {}
            if settings.credentials:
                kwargs = {"aws_access_key_id": settings.credentials[0],
                          "aws_secret_access_key": settings.credentials[1]}
                self.credentials = Credentials(*settings.credentials)
            elif not settings.anonymous:
                self.credentials = session.get_credentials()  # what the client signs with, refreshed as it is
            verify = settings.requests_verify()
            client = session.create_client("s3", region_name=region, endpoint_url=settings.endpoint,
                                           config=config, verify=None if verify is True else verify, **kwargs)
            logging.getLogger("botocore.auth").addFilter(NO_SIGNATURES)  # once, however many clients
            client.meta.events.register("before-sign.s3", _sign_headers_too)
            self.sender = BoundedSender.install(client, settings.timeout)
            return client
        except ProfileNotFound:
            raise CredentialsError(
                f"profile {settings.profile!r} not found in ~/.aws/config or ~/.aws/credentials") from None
        except ValueError as exc:
            where = repr(settings.endpoint) if settings.endpoint else "(from AWS_ENDPOINT_URL or the profile)"
            raise UsageError(f"bad endpoint {where}: {exc}") from None

    credentials = None  # botocore's Credentials (public API), once the client is built; None when anonymous
    sender: BoundedSender | None = None  # what sends the client's calls, bounded

    def cancel(self) -> None:
        """End every botocore call now on the wire, and every libcurl one (from any thread)."""
        if self.sender is not None:
            self.sender.cancel()
        if "wire" in vars(self):
            self.wire.cancel()

    @property
    def endpoint(self) -> str:
        return self.client.meta.endpoint_url

    def handles(self, call: str, extra: frozenset[str] = frozenset()) -> bool:
        return True

    @cached_property
    def wire(self):
        """The bounded libcurl requests of the calls this plane only signs (HEAD, listing)."""
        from objperf.s3.light import Wire

        return Wire(self.settings.trusted_cas, self.settings.verify_tls, self.settings.timeout, proxy_from_env=True)

    def presign_bucket(self, method: str, bucket: str, params: Sequence[tuple[str, str]], expires: int) -> str:
        """A presigned request of the bucket itself (a listing's page, a DeleteObjects, which botocore cannot
        presign: its body goes into its signing).  botocore presigns a HEAD of the bucket once (endpoint rules,
        addressing, signing region); each request is signed from that URL by ``objperf.s3.sigv4``, as botocore
        signs, with the credentials of the moment."""
        base, region = self._bucket_base(bucket)
        credentials = self.credentials
        if credentials is None:  # anonymous: nothing is signed
            return f"{base}?{sigv4.encode_query(params)}" if params else base
        frozen = credentials.get_frozen_credentials()
        return sigv4.presign(method, base, sigv4.Keys(frozen.access_key, frozen.secret_key, frozen.token), region,
                             expires, params=params)

    def _bucket_base(self, bucket: str) -> tuple[str, str]:
        """The bucket's URL without a query, and the region botocore signs for there."""
        kept = self._bases.get(bucket)
        if kept is None:
            url = self.call(f"presign s3://{bucket}", "generate_presigned_url", ClientMethod="head_bucket",
                            Params={"Bucket": bucket}, ExpiresIn=60)
            parts = urlsplit(url)
            scope = dict(parse_qsl(parts.query)).get("X-Amz-Credential", "").split("/")
            region = scope[2] if len(scope) > 2 else self.signing_region
            kept = self._bases[bucket] = (urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), region)
        return kept

    def call(self, what: str, method: str, **params):
        """``client.<method>(**params)``; every failure becomes one typed objperf error."""
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
            ReadTimeoutError,
            SSLError,
        )

        func = getattr(self.client, method)
        try:
            return func(**params)
        except TransferFailed as exc:  # the bounds of objperf.s3.bounded
            if exc.code == CURLE_FILESIZE_EXCEEDED:
                raise Unreachable(f"{what}: the answer from {self.endpoint} is {exc.detail}", code=exc.code) from None
            raise unreachable(self.endpoint, what, exc.code, exc.detail) from None
        except NoCredentialsError:
            raise CredentialsError(
                "no credentials found: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, pass --profile, or --anonymous"
            ) from None
        except SSLError as exc:
            rejected = _certificate_rejected(exc)
            if rejected is not None:
                raise unreachable(self.endpoint, what, CURLE_PEER_FAILED_VERIFICATION, rejected,
                                  other_host=bool(rejected)) from None
            raise unreachable(self.endpoint, what, CURLE_SSL_CONNECT_ERROR, "TLS handshake failed") from None
        except (ConnectTimeoutError, ReadTimeoutError):
            raise unreachable(self.endpoint, what, CURLE_OPERATION_TIMEDOUT, "") from None
        except EndpointConnectionError as exc:
            raise unreachable(self.endpoint, what, CURLE_COULDNT_CONNECT, type(exc).__name__) from None
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            raise refused(self.endpoint, what, code, status) from None
        except BotoCoreError as exc:
            raise TargetError(f"{what}: {exc}") from None

    @property
    def signing_region(self) -> str:
        return self.client.meta.region_name

    def bucket_region(self, bucket: str) -> str | None:
        """The region the store says ``bucket`` lives in (AWS's ``x-amz-bucket-region``, sent on HEAD
        answers, errors included); None when it does not say or cannot be reached (the run's own requests
        say why)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.head_bucket(Bucket=bucket)
        except ClientError as exc:
            response = exc.response
        except (BotoCoreError, TransferFailed):
            return None
        meta = response.get("ResponseMetadata", {})
        told = meta.get("HTTPHeaders", {}).get("x-amz-bucket-region")
        return told or (self._refusal_region(bucket) if meta.get("HTTPStatusCode") == 400 else None)

    def _refusal_region(self, bucket: str) -> str | None:
        """The ``<Region>`` a store names in its refusal of a presigned listing of one key.  Sent by libcurl:
        botocore's own call would follow the region quietly, as its presigned URLs cannot."""
        url = self.client.generate_presigned_url("list_objects_v2", Params={"Bucket": bucket, "MaxKeys": 1},
                                                 ExpiresIn=300)
        try:
            answer = self.wire.send("GET", url)
        except TransferFailed:  # no answer: the run's own requests will say why
            return None
        return answer.element("Region") if answer.status == 400 else None

    def head(self, what: str, bucket: str, key: str = "") -> int | None:
        """HEAD a bucket or an object, presigned by botocore and sent over libcurl: the data plane's TLS rule
        and bounds (a certificate libcurl will refuse for every GET is refused here, saying why)."""
        method, params = ("head_object", {"Bucket": bucket, "Key": key}) if key else ("head_bucket", {"Bucket": bucket})
        url = self.call(f"presign {what}", "generate_presigned_url", ClientMethod=method, Params=params,
                        ExpiresIn=300)
        try:
            answer = self.wire.send("HEAD", url)
        except TransferFailed as exc:
            raise unreachable(self.endpoint, what, exc.code, exc.detail) from None
        if not 200 <= answer.status < 300:
            raise refused(self.endpoint, what, "", answer.status)
        return answer.length if key else None

    def presign_call(self, bucket: str, key: str, *, method: str, expires: int, extra: dict | None,
                     headers: Mapping[str, str] | None = None) -> str:
        """A presigned URL made by botocore; ``headers`` are signed in it (``sigv4.signable``), to be sent with it."""
        what = f"presign s3://{bucket}/{key}"
        signed = sigv4.signable(headers)
        held = _SIGNING.set(tuple((k, v) for k, v in signed.items() if k != sigv4.CONTENT_SHA256))
        try:
            url = self.call(what, "generate_presigned_url", ClientMethod=method,
                            Params={"Bucket": bucket, "Key": key, **(extra or {})}, ExpiresIn=expires)
        finally:
            _SIGNING.reset(held)
        if sigv4.CONTENT_SHA256 in signed and self.credentials is not None:
            url = self._signer_again(url, self.client.meta.method_to_api_mapping[method])(signed)
        return held_to_headers(url, signed, what)

    def _signer_again(self, url: str, operation: str) -> Callable[..., str]:
        """``sign(headers, **params)``: ``url`` (botocore's) signed again by ``sigv4`` with botocore's credentials
        (as they are then), its region and lifetime, ``headers``, and its query's parameters, ``params`` changed."""
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        auth = dict(query)
        region, lifetime = auth["X-Amz-Credential"].split("/")[2], int(auth["X-Amz-Expires"])  # KEY/DATE/REGION/…
        kept = [(k, v) for k, v in query if not k.startswith("X-Amz-")]
        base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        method = self.client.meta.service_model.operation_model(operation).http["method"]
        credentials = self.credentials

        def sign(headers: Mapping[str, str] | None = None, **params: str) -> str:
            frozen = credentials.get_frozen_credentials()
            keys = sigv4.Keys(frozen.access_key, frozen.secret_key, frozen.token)
            return sigv4.presign(method, base, keys, region, lifetime, headers=headers,
                                 params=[(k, params.get(k, v)) for k, v in kept] if params else kept)

        return sign

    def attempt(self, method: str, **params) -> Attempt:
        """One control-plane request whose outcome becomes a row: S3 errors are returned, not raised."""
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
            response = getattr(self.client, method)(**params)
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 200)
            return held_to_contract(method, Attempt(response, status, "", 0, t_start, time.perf_counter() - t0))
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            return Attempt(None, status, code, 0, t_start, time.perf_counter() - t0)
        except TransferFailed as exc:
            return Attempt(None, 0, "", exc.code, t_start, time.perf_counter() - t0)
        except (EndpointConnectionError, ConnectTimeoutError):
            return Attempt(None, 0, "", CURLE_COULDNT_CONNECT, t_start, time.perf_counter() - t0)
        except (ReadTimeoutError, BotoCoreError):
            return Attempt(None, 0, "", CURLE_RECV_ERROR, t_start, time.perf_counter() - t0)

    def part_url_signer(self, bucket: str, key: str, upload_id: str, *, expires: int) -> Callable[..., str]:
        """Presigned UploadPart URLs of one upload, by part number (and the headers each signs).

        The first comes from botocore's presigner (endpoint rules, addressing, signing region); the others
        re-sign that URL with another part number (``objperf.s3.sigv4``, which signs as botocore does),
        skipping the endpoint rules: a quarter of the cost a part."""
        def presign_part(number: int, headers: Mapping[str, str] | None = None) -> str:
            return self.presign_call(bucket, key, method="upload_part", expires=expires,
                                     extra={"UploadId": upload_id, "PartNumber": number}, headers=headers)

        first = presign_part(1)
        if self.credentials is None:
            return presign_part
        sign = self._signer_again(first, "UploadPart")

        def url(number: int, headers: Mapping[str, str] | None = None) -> str:
            return first if number == 1 and not headers else sign(headers, partNumber=str(number))

        return url


def held_to_headers(url: str, headers: Mapping[str, str], what: str) -> str:
    """``url``, when it signs the Host header and ``headers`` and nothing else (a URL that signs nothing, made
    without credentials, as it is); a request sent with those headers would be refused otherwise."""
    told = sigv4.signed_header_names(url)
    asked = ";".join(sorted([*headers, "host"]))
    if told is not None and told != asked:
        raise TargetError(f"{what}: botocore signed the headers {told}, not {asked}")
    return url


def _certificate_rejected(exc: BaseException) -> str | None:
    """Why the peer's certificate was refused, when that is the TLS failure botocore reports: "" for one not
    trusted (the ``ssl.SSLCertVerificationError`` somewhere in the chain of causes urllib3 and botocore wrap it
    in), the words of the check that found it made out for another host; None when it was not the certificate."""
    import ssl

    from urllib3.util.ssl_match_hostname import CertificateError

    seen: set[int] = set()
    pending: list[object] = [exc]
    while pending:
        current = pending.pop()
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        if isinstance(current, CertificateError):  # urllib3's own check of the host name
            return str(current)
        if isinstance(current, ssl.SSLCertVerificationError):
            # OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH (62) and X509_V_ERR_IP_ADDRESS_MISMATCH (64)
            return current.verify_message if current.verify_code in (62, 64) else ""
        seen.add(id(current))
        pending += [current.__cause__, current.__context__, *current.args,
                    *getattr(current, "kwargs", {}).values()]
    return None

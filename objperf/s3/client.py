"""The S3 control plane as one client: credentials, presigning, HEAD, a write run's
multipart calls, listing, bucket set-up.

Two planes make the calls: ``LightS3`` (``objperf.s3.light``: no botocore, in the
common case) where it can make a call, and ``BotocorePlane`` (``objperf.s3.boto``)
for everything else; ``_plane`` is the one place that picks.  The data plane —
the load itself — never signs anything: it is handed presigned URLs, made per key
(and made afresh as a long run goes), which are never written anywhere."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping

from objperf.core.errors import (
    BucketNotFound,
    NotFound,
    ObjperfError,
    TargetError,
    TransferFailed,
    UsageError,
    refused,
    unreachable,
)
from objperf.s3.boto import BotocorePlane
from objperf.s3.bounded import answers_up_to
from objperf.s3.light import Attempt, LightS3
from objperf.s3.listing import LISTING_LIMIT, PAGE_KEYS, Listing, held_to_object_size, list_all
from objperf.s3.settings import PRESIGN_MAX_SECONDS, URL_LIFETIME_S, S3Settings, check_url_lifetime

__all__ = ["URL_LIFETIME_S", "Attempt", "S3Client", "S3Settings", "check_url_lifetime"]


def ip_literal_host(endpoint: str | None) -> str | None:
    """The endpoint's host when it is an IP address (no bucket name can go in front of it), else None."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = urlsplit(endpoint or "").hostname
        return host if host and ipaddress.ip_address(host) else None
    except ValueError:
        return None


def checked_upload(upload: dict, where: str) -> tuple[str, str]:
    """(key, upload id) of a listed upload, each no longer than S3 makes them: a page of long names after
    another would pile up to ``limit`` of them."""
    from objperf.core.sanitize import printable
    from objperf.s3.light import UPLOAD_ID_MAX
    from objperf.s3.listing import MAX_KEY_BYTES

    key, upload_id = upload["Key"], upload["UploadId"]
    if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES or len(upload_id) > UPLOAD_ID_MAX:
        raise TargetError(f"{where}: the store listed an upload of {printable(key[:60])!r}… whose key or upload id "
                          f"is longer than S3 makes them ({MAX_KEY_BYTES:,} bytes of key, {UPLOAD_ID_MAX:,} of id)")
    return key, upload_id


class S3Client:
    """S3 calls whose errors come out as objperf's typed errors with one-line messages.
    ``light=False`` sends everything through botocore."""

    def __init__(self, settings: S3Settings, *, light: bool = True):
        if settings.addressing not in ("auto", "path", "virtual"):
            raise UsageError(f"bad addressing {settings.addressing!r}: use auto, path or virtual")
        if settings.addressing == "virtual" and ip_literal_host(settings.endpoint):
            # botocore would quietly go path style while the manifest said virtual
            raise UsageError(f"--addressing virtual puts the bucket in the host name, and the endpoint "
                             f"{ip_literal_host(settings.endpoint)} is an IP address: use a host name, or "
                             "--addressing path")
        self.settings = settings
        self._botocore = BotocorePlane(settings)
        self._light = LightS3.for_settings(settings) if light else None
        if self._light is None:
            self._botocore.client  # noqa: B018 - a bad profile or endpoint fails here, not at first use

    @property
    def uses_botocore(self) -> bool:
        """Whether botocore has been imported and a client built for this one."""
        return self._botocore.built

    def _plane(self, call: str, extra: Iterable[str] = ()) -> LightS3 | BotocorePlane:
        """The light plane where it makes ``call`` (botocore's method name), else botocore."""
        if self._light is not None and self._light.handles(call, frozenset(extra)):
            return self._light
        return self._botocore

    @property
    def endpoint(self) -> str:
        return (self._light or self._botocore).endpoint

    # -- the calls a run makes (light where it can) ----------------------------------------------------

    def attempt(self, method: str, **params) -> Attempt:
        """One multipart call whose outcome becomes a row: S3 errors are returned, not raised."""
        return self._plane(method).attempt(method, **params)

    def cancel_calls(self) -> None:
        """Cut every call of this client now on the wire (from any thread): their answers are no longer
        wanted."""
        if self._light is not None:
            self._light.wire.cancel()
        self._botocore.cancel()

    def for_multipart(self) -> S3Client:
        """This client, waiting up to the settings' ``multipart_timeout``: for the calls that open and close a
        write run's uploads.  Made before the run: through botocore a client costs 0.45 s of CPU."""
        if self.settings.multipart_timeout == self.settings.timeout:
            return self
        return S3Client(self.settings.for_multipart(), light=self._light is not None)

    def object_size(self, bucket: str, key: str) -> int:
        """HEAD the object; a missing object or bucket is named as such."""
        try:
            size = self._plane("head_object").head(f"HEAD s3://{bucket}/{key}", bucket, key)
        except NotFound as exc:
            if not self.bucket_exists(bucket):
                raise self.missing_bucket(bucket, exc) from None
            raise NotFound(f"object s3://{bucket}/{key} does not exist", status=exc.status,
                           s3_error=exc.s3_error or "NoSuchKey") from None
        if size is None:
            raise NotFound(f"HEAD s3://{bucket}/{key}: no Content-Length from {self.endpoint}")
        return held_to_object_size(size, f"HEAD s3://{bucket}/{key}")

    def check_region(self, bucket: str) -> None:
        """Stop before the run when the store says ``bucket`` lives in another region than the one objperf signs
        for: every presigned request would be refused (botocore's own calls quietly follow the store)."""
        plane = self._plane("head_object")
        told, signing = plane.bucket_region(bucket), plane.signing_region
        if told and signing and told != signing:
            raise UsageError(f"bucket {bucket!r} is in region {told}, objperf signs for {signing}: give --region "
                             f"{told} (or set AWS_REGION={told})")

    def missing_bucket(self, bucket: str, found: NotFound | None = None) -> BucketNotFound:
        """The one way objperf says a bucket is not there, whichever request found out."""
        return BucketNotFound(f"bucket {bucket!r} does not exist at {self.endpoint}",
                              status=found.status if found else 404, s3_error="NoSuchBucket")

    def bucket_exists(self, bucket: str) -> bool:
        try:
            self._plane("head_object").head(f"HEAD bucket {bucket}", bucket)
        except NotFound:
            return False
        return True

    def presign(self, bucket: str, key: str, *, method: str = "get_object", expires: int = 24 * 3600,
                extra: dict | None = None, headers: Mapping[str, str] | None = None) -> str:
        """A presigned URL; it carries a signature, so it goes to the engine and nowhere else.

        ``headers`` (name to value) are signed in it, each in ``X-Amz-SignedHeaders`` (names in lower case,
        values trimmed: ``objperf.s3.sigv4.signable``), whichever plane signs; whoever sends the URL sends them
        with it (S3 refuses an ``x-amz-*`` header it was not told of), and shows their values nowhere."""
        expires = max(1, min(int(expires), PRESIGN_MAX_SECONDS))
        return self._plane(method, extra or ()).presign_call(bucket, key, method=method, expires=expires, extra=extra,
                                                             headers=headers)

    def list_page_signer(self, bucket: str, prefix: str, *, delimiter: str = "", max_keys: int = PAGE_KEYS,
                         expires: int = 300) -> Callable[[str | None], str]:
        """Presigned ListObjectsV2 URLs of one listing, by continuation token (None: its first page)."""
        plane = self._plane("list_objects_v2", ("Prefix", "Delimiter", "MaxKeys", "ContinuationToken"))
        expires = max(1, min(int(expires), PRESIGN_MAX_SECONDS))
        asked = [("list-type", "2"), ("prefix", prefix)] + ([("delimiter", delimiter)] if delimiter else []) \
            + [("max-keys", str(max_keys))]
        return lambda token: plane.presign_bucket(
            "GET", bucket, asked + ([("continuation-token", token)] if token else []), expires)

    def delete_objects_url(self, bucket: str, *, expires: int = 300) -> str:
        """A presigned DeleteObjects (``POST ?delete``): its body, and the body's Content-MD5 (no x-amz header,
        so not signed), go beside it."""
        expires = max(1, min(int(expires), PRESIGN_MAX_SECONDS))
        return self._plane("delete_objects").presign_bucket("POST", bucket, [("delete", "")], expires)

    def part_url_signer(self, bucket: str, key: str, upload_id: str, *, expires: int) -> Callable[..., str]:
        """Presigned UploadPart URLs of one upload: ``signer(number)``, or ``signer(number, headers)`` signing
        ``headers`` as ``presign`` does."""
        plane = self._plane("upload_part", ("UploadId", "PartNumber"))
        return plane.part_url_signer(bucket, key, upload_id, expires=expires)

    # -- botocore's alone ----------------------------------------------------------------------------

    def _call(self, what: str, method: str, **params):
        return self._botocore.call(what, method, **params)

    def open_uploads(self, bucket: str, prefix: str = "", *, limit: int = 1000) -> list[tuple[str, str]]:
        """(key, upload id) of multipart uploads still open under ``prefix``, at most ``limit`` (a page of
        1000 unless more are asked for; a listing that repeats its markers ends there)."""
        found: list[tuple[str, str]] = []
        markers: dict = {}
        seen = set()
        while len(found) < limit:
            page = self._call(f"list multipart uploads in {bucket}", "list_multipart_uploads", Bucket=bucket,
                              Prefix=prefix, **markers)
            found += [checked_upload(u, f"list multipart uploads in {bucket}") for u in page.get("Uploads", [])
                      if isinstance(u.get("Key"), str) and isinstance(u.get("UploadId"), str)]
            after = (page.get("NextKeyMarker"), page.get("NextUploadIdMarker"))
            if not page.get("IsTruncated") or not any(after) or after in seen:
                break
            seen.add(after)
            markers = {"KeyMarker": after[0] or "", "UploadIdMarker": after[1] or ""}
        return found[:limit]

    def list_keys(self, bucket: str, prefix: str, limit: int = LISTING_LIMIT) -> list[tuple[str, int]]:
        """(key, size) of objects under ``prefix``, at most ``limit``."""
        return self.list_objects(bucket, prefix, limit).keys

    def list_objects(self, bucket: str, prefix: str, limit: int = LISTING_LIMIT) -> Listing:
        """The objects under ``prefix`` (``objperf.s3.listing``: every page bounded and checked, the listing
        ended by its last page, ``limit``, a repeated token or the deadline).  Presigned by whichever plane
        signs, sent over libcurl as a run's own requests are."""
        plane = self._plane("list_objects_v2", ("Prefix", "ContinuationToken"))
        where = f"LIST s3://{bucket}/{prefix}"
        signed = self.list_page_signer(bucket, prefix, max_keys=min(PAGE_KEYS, max(1, limit)))

        def fetch_page(token: str | None) -> bytes:
            url = signed(token)
            try:
                answer = plane.wire.send("GET", url)
            except TransferFailed as exc:
                raise unreachable(self.endpoint, where, exc.code, exc.detail) from None
            if not 200 <= answer.status < 300:
                code = answer.element("Code") or ""
                if answer.status == 404 and (code == "NoSuchBucket" or not self.bucket_exists(bucket)):
                    raise self.missing_bucket(bucket)
                raise refused(self.endpoint, where, code, answer.status)
            return answer.body

        return list_all(fetch_page, where, prefix, limit=limit, deadline_s=self.settings.multipart_timeout)

    def list_buckets(self) -> list[str]:
        listing = self._call("list buckets", "list_buckets")
        return [b["Name"] for b in listing.get("Buckets", [])]

    def create_bucket(self, bucket: str) -> None:
        """Make ``bucket`` unless it is there; one made meanwhile with these credentials (another host of a
        cluster, at the same moment) is there."""
        if self.bucket_exists(bucket):
            return
        try:
            self._call(f"create bucket {bucket}", "create_bucket", Bucket=bucket)
        except ObjperfError as exc:
            if getattr(exc, "s3_error", "") != "BucketAlreadyOwnedByYou":
                raise

    def put_object(self, bucket: str, key: str, body: bytes) -> None:
        self._call(f"PUT s3://{bucket}/{key}", "put_object", Bucket=bucket, Key=key, Body=body)

    def put_large_object(self, bucket: str, key: str, parts: Iterable[bytes]) -> None:
        """Upload the concatenation of ``parts`` as one object (multipart when there is more than one)."""
        parts = iter(parts)
        first = next(parts, b"")
        second = next(parts, None)
        if second is None:
            self.put_object(bucket, key, bytes(first))
            return
        what = f"multipart upload s3://{bucket}/{key}"
        upload_id = self._call(what, "create_multipart_upload", Bucket=bucket, Key=key)["UploadId"]
        try:
            done = []
            for number, chunk in enumerate(itertools.chain([first, second], parts), start=1):
                answer = self._call(what, "upload_part", Bucket=bucket, Key=key, UploadId=upload_id,
                                    PartNumber=number, Body=bytes(chunk))
                done.append({"PartNumber": number, "ETag": answer["ETag"]})
            self._call(what, "complete_multipart_upload", Bucket=bucket, Key=key, UploadId=upload_id,
                       MultipartUpload={"Parts": done})
        except BaseException:
            self._botocore.attempt("abort_multipart_upload", Bucket=bucket, Key=key, UploadId=upload_id)
            raise

    def get_object(self, bucket: str, key: str, byte_range: str | None = None, *, limit: int) -> bytes:
        """The object's bytes (or a range's), ``limit`` of them at most plus one: a longer answer than the caller
        expects reads as one byte too many, never as an endless body held in memory."""
        params = {"Bucket": bucket, "Key": key}
        if byte_range:
            params["Range"] = byte_range
        with answers_up_to(limit + 1):  # read within the call's deadline, never past limit + 1 bytes
            body = self._call(f"GET s3://{bucket}/{key}", "get_object", **params)["Body"]
        try:
            return body.read(limit + 1)
        finally:
            body.close()

    def abort_upload(self, bucket: str, key: str, upload_id: str) -> None:
        self._call(f"abort multipart upload s3://{bucket}/{key}", "abort_multipart_upload", Bucket=bucket, Key=key,
                   UploadId=upload_id)

    def delete_object(self, bucket: str, key: str) -> None:
        self._call(f"DELETE s3://{bucket}/{key}", "delete_object", Bucket=bucket, Key=key)

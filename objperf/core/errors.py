"""objperf's exception hierarchy: every failure a user can cause or meet has one
class, and the CLI prints its message as one line.  Like pyarrow's, each class
also subclasses the builtin that fits, so callers can catch either.

Every error carries what it was classified from — ``code`` (libcurl's CURLcode,
0 for none), ``status`` (the HTTP status, None for none) and ``s3_error`` (the
S3 error code, '' for none) — and ``classify`` is the one place that turns those
three into a class.  Nothing is classified by searching an error's message."""

from __future__ import annotations

import errno

from objperf.core.curl_codes import (
    CURLE_OPERATION_TIMEDOUT,
    CURLE_PEER_FAILED_VERIFICATION,
)
from objperf.core.sanitize import printable, without_userinfo

UNTRUSTED = "TLS certificate not trusted"  # how a failed certificate check begins its reason
TLS_HINT = "give its CA with --ca-bundle (or AWS_CA_BUNDLE), or pass --no-verify-ssl"
DENIED_CODES = frozenset({"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken",
                          "ExpiredToken", "AccountProblem", "AllAccessDisabled"})
MISSING_BUCKET_CODES = frozenset({"NoSuchBucket"})
MISSING_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "NoSuchUpload", "NotFound"})


class ObjperfError(Exception):
    """Base of every error objperf raises on purpose."""

    def __init__(self, message: str = "", *, code: int = 0, status: int | None = None, s3_error: str = ""):
        super().__init__(message)
        self.code = code
        self.status = status
        self.s3_error = s3_error


class UsageError(ObjperfError, ValueError):
    """A bad argument: URL, size, duration, flag value."""


class TargetError(ObjperfError, OSError):
    """The endpoint, bucket or object cannot be used (unreachable, missing, forbidden)."""


class Unreachable(TargetError):
    """No answer from the endpoint: it refused, could not be resolved, timed out or was not trusted."""

    @property
    def timed_out(self) -> bool:
        return self.code == CURLE_OPERATION_TIMEDOUT

    @property
    def untrusted(self) -> bool:
        return self.code == CURLE_PEER_FAILED_VERIFICATION


class TransferFailed(Unreachable):
    """One control-plane request got no answer.  ``detail`` is libcurl's own words, which name a host at
    most, never the URL (it would carry a signature); ``sent`` says whether the request went out."""

    def __init__(self, code: int, detail: str, sent: bool):
        super().__init__(detail, code=code)
        self.detail = detail
        self.sent = sent


class NotFound(TargetError):
    """The bucket or the object does not exist (404, NoSuchKey, NoSuchBucket)."""


class BucketNotFound(NotFound):
    """The bucket does not exist."""


class CredentialsError(ObjperfError, PermissionError):
    """Credentials are missing, unknown or rejected."""


class ServerError(ObjperfError, RuntimeError):
    """The embedded local server could not be started or seeded."""


class EngineError(ObjperfError, RuntimeError):
    """A libcurl call of the load engine failed (``code`` is its CURLcode), or the engine could not stop."""


class RunFailed(ObjperfError, RuntimeError):
    """A run could not go on (a disk full under its dataset, an engine fault); its rows so far are kept."""


def classify(message: str, *, code: int = 0, status: int | None = None, s3_error: str = "") -> ObjperfError:
    """The error for one outcome: a libcurl code (no answer), or an HTTP status with its S3 error code."""
    kw = {"code": code, "status": status, "s3_error": s3_error}
    if code:
        return Unreachable(message, **kw)
    if s3_error in DENIED_CODES or status in (401, 403):
        return CredentialsError(message, **kw)
    if s3_error in MISSING_BUCKET_CODES:
        return BucketNotFound(message, **kw)
    if s3_error in MISSING_CODES or status == 404:
        return NotFound(message, **kw)
    return TargetError(message, **kw)


def unreachable(endpoint: str, what: str, code: int, detail: str, *, other_host: bool = False) -> Unreachable:
    """The error for no answer to a control-plane call, by libcurl's code (botocore's failures are given
    the same codes); ``other_host``: the certificate was trusted but made out for another host."""
    endpoint, detail = without_userinfo(endpoint), printable(detail)
    if code == CURLE_PEER_FAILED_VERIFICATION and other_host:
        message = (f"endpoint {endpoint}: its TLS certificate is not trusted for this host, it is made out for "
                   f"another ({detail}); reach it by a name its certificate holds, or pass --no-verify-ssl")
    elif code == CURLE_OPERATION_TIMEDOUT:
        message = f"endpoint {endpoint} did not answer {what} in time"
    elif code == CURLE_PEER_FAILED_VERIFICATION:
        detail = detail.removeprefix("SSL certificate problem: ")
        message = f"endpoint {endpoint}: {UNTRUSTED}{': ' + detail if detail else ''}; {TLS_HINT}"
    elif code in ANSWER_FAULTS:
        message = f"endpoint {endpoint} {ANSWER_FAULTS[code]} to {what}" + (f" ({detail})" if detail else "")
    else:
        message = f"cannot reach endpoint {endpoint} ({detail})"
    return Unreachable(message, code=code)


# libcurl codes of an answer that came wrong, or of this side, not of an endpoint out of reach
ANSWER_FAULTS = {
    8: "sent what is not an HTTP answer S3 gives", 18: "cut its answer short", 27: "could not be answered: "
    "libcurl ran out of memory (this machine's, not the endpoint's)", 52: "closed the connection without answering",
    55: "broke the connection while objperf was sending", 56: "broke the connection while answering",
    61: "sent an answer in an encoding libcurl cannot read", 63: "sent an answer longer than objperf takes",
}


def refused(endpoint: str, what: str, s3_error: str, status: int | None) -> ObjperfError:
    """The error for an S3 answer that is not a success, one line, credentials or not."""
    kind = type(classify("", status=status, s3_error=s3_error))
    endpoint, shown = without_userinfo(endpoint), printable(s3_error)[:80]  # the code is the server's text
    if kind is CredentialsError:
        message = f"{what}: access denied ({shown or status}); check the credentials or profile"
    else:
        message = f"{what}: {shown or status} from {endpoint}"
    return kind(message, status=status, s3_error=s3_error)


def describe_os_error(exc: OSError) -> str:
    """A few words for a failed file operation: "disk full" rather than "[Errno 28] …"."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "disk full"
    return exc.strerror or str(exc)

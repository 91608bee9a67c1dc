"""SigV4 presigned S3 URLs from the standard library alone.

botocore signs everything objperf sends in the general case.  Importing it and
building a client costs about 0.45 s of CPU on every command (a third of a whole
1 GiB read on a small box), so the common case — an explicit endpoint,
path-style addressing, keys from the environment — signs here instead
(``objperf.s3.light``).  The output is byte for byte what botocore makes for the
same request and instant where the AWS CRT is installed (``CrtS3SigV4QueryAuth``),
and without it (``S3SigV4QueryAuth``, as objperf's commands run it) the same
signature over the same query, two of its parameters in another order; the tests
hold them side by side.

Headers named to ``presign`` are signed too (``X-Amz-SignedHeaders``): a request
that carries an ``x-amz-*`` header S3 was not told of is refused, so a checksum,
a copy source or an aws-chunked upload's framing headers go in the signature,
and whoever sends the URL sends those headers with it.  Signed so, byte for byte
as botocore signs them — but for ``x-amz-content-sha256``, on which botocore's two
signers differ: without the CRT it signs the header and puts its value where the
payload's hash goes, with it leaves the header out.  Here it is signed like any
other header and the payload stays ``UNSIGNED-PAYLOAD``, as a presigned URL's
always is: the one of the three that SeaweedFS and rclone's gateway take with an
aws-chunked upload's ``STREAMING-UNSIGNED-PAYLOAD-TRAILER`` (SeaweedFS takes the
payload from the query alone, rclone refuses the unsigned header).  A header's
value sits beside the signature: no message here shows one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from objperf.core.errors import UsageError

ALGORITHM = "AWS4-HMAC-SHA256"
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
_DEFAULT_PORTS = {"http": 80, "https": 443}
CONTENT_SHA256 = "x-amz-content-sha256"

# Headers botocore never signs (its SIGNED_HEADERS_BLACKLIST), the Host header every URL signs already, and
# what a presigned URL carries in its query instead: signing one of them here would sign what botocore does not.
UNSIGNABLE = frozenset({"baggage", "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "te", "traceparent", "tracestate", "trailer", "transfer-encoding", "upgrade", "user-agent",
                        "x-amzn-trace-id", "host", "authorization", "x-amz-date", "x-amz-security-token"})
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a header name (RFC 9110 token)
_VALUE = re.compile(r"[\x20-\x7e\t]*")  # printable ASCII, spaces and tabs: no line break, no control byte


@dataclass(frozen=True)
class Keys:
    """An access key pair, with the session token of temporary credentials."""

    access_key: str
    secret_key: str
    token: str | None = None

    def __repr__(self) -> str:  # never print a secret
        return f"Keys(access_key={self.access_key[:4]}…)"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _encode(text: str) -> str:
    return quote(text, safe="-_.~")


def encode_query(params: Sequence[tuple[str, str]]) -> str:
    return "&".join(f"{_encode(k)}={_encode(v)}" for k, v in params)


def canonical_host(url: str) -> str:
    """The Host header a client sends: lower case, the port only when it is not the scheme's default."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port is not None and parts.port != _DEFAULT_PORTS.get(parts.scheme):
        host = f"{host}:{parts.port}"
    return host


def signable(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``headers`` as SigV4 signs them: names in lower case, sorted; each value trimmed (white space gone from
    both ends, each run of it inside one space), as botocore trims it.  A name that is no header name, that two
    names share but for case, that botocore would not sign or that the URL signs already, and a value with a line
    break or a control byte, or none, are refused, each naming the header and never its value."""
    signed: dict[str, str] = {}
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise UsageError(f"cannot sign a header named {name!r}: not a header name")
        lower = name.lower()
        if lower in UNSIGNABLE:
            raise UsageError(f"cannot sign the {lower} header: a presigned URL signs it itself or never")
        if lower in signed:
            raise UsageError(f"the {lower} header is given twice, in two cases")
        if not isinstance(value, str) or not _VALUE.fullmatch(value) or not value.strip():
            raise UsageError(f"cannot sign the {lower} header: its value is empty, or has a line break or a "
                             "control byte")
        signed[lower] = " ".join(value.split())
    return dict(sorted(signed.items()))


def signed_header_names(url: str) -> str | None:
    """The ``X-Amz-SignedHeaders`` of a presigned URL, None for a URL that carries none."""
    for name, _, value in (p.partition("=") for p in urlsplit(url).query.split("&")):
        if name == "X-Amz-SignedHeaders":
            return unquote(value)
    return None


def presign(method: str, url: str, keys: Keys, region: str, expires: int, *,
            params: Sequence[tuple[str, str]] = (), headers: Mapping[str, str] | None = None,
            now: datetime | None = None) -> str:
    """``url`` (no query; its path percent-encoded) with the operation's query ``params``,
    signed for ``expires`` seconds, with the Host header and ``headers`` (``signable``).  The payload is
    ``UNSIGNED-PAYLOAD``, whatever a signed ``x-amz-content-sha256`` says."""
    moment = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    scope = f"{moment[:8]}/{region}/s3/aws4_request"
    parts = urlsplit(url)
    signed = signable(headers)
    signed["host"] = canonical_host(url)
    signed = dict(sorted(signed.items()))
    names = ";".join(signed)
    auth = [("X-Amz-Algorithm", ALGORITHM), ("X-Amz-Credential", f"{keys.access_key}/{scope}"),
            ("X-Amz-Date", moment), ("X-Amz-SignedHeaders", names), ("X-Amz-Expires", str(expires))]
    if keys.token is not None:
        auth.append(("X-Amz-Security-Token", keys.token))
    query = encode_query([*params, *auth])
    canonical_query = "&".join(f"{k}={v}" for k, _, v in sorted(p.partition("=") for p in query.split("&")))
    canonical_headers = "".join(f"{name}:{value}\n" for name, value in signed.items())
    canonical_request = "\n".join([method, parts.path or "/", canonical_query, canonical_headers, names,
                                   UNSIGNED_PAYLOAD])
    to_sign = "\n".join([ALGORITHM, moment, scope, hashlib.sha256(canonical_request.encode()).hexdigest()])
    key = _hmac(("AWS4" + keys.secret_key).encode(), moment[:8])
    for part in (region, "s3", "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return urlunsplit((parts.scheme, parts.netloc, parts.path, f"{query}&X-Amz-Signature={signature}", ""))

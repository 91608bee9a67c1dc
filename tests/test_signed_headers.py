"""Presigned URLs that sign the headers their request carries: the same header set from either plane, taken by
the server, and their values and signatures kept out of logs and messages."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import zlib
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests

from objperf._engine.payload import payload
from objperf.core.checksums import algorithm
from objperf.core.errors import UsageError
from objperf.s3 import sigv4
from objperf.s3.client import S3Client, S3Settings
from objperf.s3.xml import element_text

pytestmark = pytest.mark.timeout(300)

BODY = bytes(range(256)) * 40 + b"a short tail"
# Headers a write signs, as a caller may give them (names in any case).
HEADER_SETS = [{"x-amz-checksum-crc32": "EukXkQ=="},
               {"X-Amz-Checksum-CRC32C": "  yZRlqg==  ", "x-amz-sdk-checksum-algorithm": "CRC32C"},
               {"x-amz-copy-source": "/src/a%20b", "x-amz-metadata-directive": "REPLACE"},
               {"Content-Encoding": "aws-chunked", "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
                "x-amz-trailer": "x-amz-checksum-crc32", "x-amz-decoded-content-length": "10252"}]


def crc32(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def both_planes(settings: S3Settings) -> list[S3Client]:
    light, botocore = S3Client(settings), S3Client(settings, light=False)
    assert not light.uses_botocore
    return [light, botocore]


def timeless(url: str) -> tuple[str, str, dict]:
    """A URL's host, path and query, but for when it was signed and its signature."""
    parts = urlsplit(url)
    query = {k: v for k, v in parse_qsl(parts.query) if k not in ("X-Amz-Date", "X-Amz-Signature")}
    return parts.netloc, parts.path, query


def expected_names(headers: dict) -> str:
    return ";".join(sorted([*(name.lower() for name in headers), "host"]))


OFFLINE = S3Settings(endpoint="http://127.0.0.1:9", region="eu-west-3", addressing="path",
                     credentials=("AKIDEXAMPLE", "wJalr/K7MDENG+bPxRfiCY"))


def test_both_planes_sign_the_same_headers():
    """Each plane signs the Host header and those asked for, and nothing else: the same URL but for its instant.
    Nothing is sent: presigning is local."""
    light, botocore = both_planes(OFFLINE)
    for headers in HEADER_SETS:
        for method, extra in [("put_object", None), ("upload_part", {"UploadId": "u~1 2", "PartNumber": 7}),
                              ("get_object", None)]:
            urls = [c.presign("bkt", "dir/a b+c", method=method, expires=600, extra=extra, headers=headers)
                    for c in (light, botocore)]
            assert [sigv4.signed_header_names(u) for u in urls] == [expected_names(headers)] * 2
            assert timeless(urls[0]) == timeless(urls[1])
        signers = [c.part_url_signer("bkt", "k", "upload-1", expires=600) for c in (light, botocore)]
        for number in (1, 2, 10_000):
            urls = [signer(number, headers) for signer in signers]
            assert [sigv4.signed_header_names(u) for u in urls] == [expected_names(headers)] * 2
            assert timeless(urls[0]) == timeless(urls[1]) and timeless(urls[0])[2]["partNumber"] == str(number)
        assert [sigv4.signed_header_names(signer(3)) for signer in signers] == ["host", "host"]
    assert botocore.uses_botocore


def test_botocores_own_signer_signs_the_same_headers_too():
    """objperf's commands keep the AWS CRT out (botocore then signs with its own SigV4): the planes agree there
    too, in a process of its own."""
    script = f"""
import json, sys
sys.modules["awscrt"] = None
from objperf.s3.client import S3Client, S3Settings
settings = S3Settings(endpoint="http://127.0.0.1:9", region="eu-west-3", addressing="path",
                      credentials=("AKIDEXAMPLE", "wJalr/K7MDENG+bPxRfiCY"))
import botocore.auth
assert botocore.auth.AUTH_TYPE_MAPS["s3v4-query"] is botocore.auth.S3SigV4QueryAuth
print(json.dumps([[S3Client(settings, light=light).presign("bkt", "k", method="put_object", headers=headers)
                   for light in (True, False)] for headers in {HEADER_SETS!r}]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AWS_CONFIG_FILE": "/nonexistent"})
    assert done.returncode == 0, done.stderr
    for headers, urls in zip(HEADER_SETS, json.loads(done.stdout)):
        assert [sigv4.signed_header_names(u) for u in urls] == [expected_names(headers)] * 2
        assert timeless(urls[0]) == timeless(urls[1])


LOGGED = """
import json, logging, sys
sys.modules["awscrt"] = None  # botocore's own SigV4, which logs what it signs at debug level
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
from objperf.s3.client import S3Client, S3Settings
settings = S3Settings(endpoint="http://127.0.0.1:9", region="eu-west-3", addressing="path",
                      credentials=("AKIDEXAMPLE", "wJalr/K7MDENG+bPxRfiCY"))
headers = {"x-amz-checksum-crc32": sys.argv[1]}
print(json.dumps([S3Client(settings, light=light).presign("bkt", "k", method="put_object", headers=headers)
                  for light in (True, False)]))
"""


def test_signed_values_and_signatures_stay_out_of_logs_and_messages():
    value = crc32(b"a checksum that is logged nowhere")
    done = subprocess.run([sys.executable, "-c", LOGGED, value], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AWS_CONFIG_FILE": "/nonexistent"})
    assert done.returncode == 0, done.stderr
    assert "botocore.auth:Calculating signature using v4 auth" in done.stderr  # botocore did log, at debug level
    signatures = [dict(parse_qsl(urlsplit(u).query))["X-Amz-Signature"] for u in json.loads(done.stdout)]
    for secret in (value, *signatures, OFFLINE.credentials[1]):
        assert secret not in done.stderr
    for client in both_planes(OFFLINE):
        with pytest.raises(UsageError) as refused:
            client.presign("bkt", "k", method="put_object", headers={"x-amz-checksum-crc32": value + "\r\n"})
        assert value not in str(refused.value) and "x-amz-checksum-crc32" in str(refused.value)


def outcome(response: requests.Response) -> tuple[int, str]:
    return response.status_code, element_text(response.content, "Code") or ""


@pytest.mark.integration
def test_seaweedfs_refuses_a_checksum_header_it_was_not_told_of(store):
    """Why the headers are signed: the same PUT with its CRC-32 sent but not signed is refused, nothing stored."""
    headers = {"x-amz-checksum-crc32": crc32(BODY)}
    for n, client in enumerate(both_planes(store.server.settings())):
        key = f"signed/unsigned-{n}"
        url = client.presign(store.bucket, key, method="put_object", expires=600)
        assert outcome(requests.put(url, data=BODY, headers=headers, timeout=30)) == (403, "SignatureDoesNotMatch")
        assert requests.head(client.presign(store.bucket, key, method="head_object"), timeout=30).status_code == 404


def put(client: S3Client, bucket: str, key: str, body: bytes, headers: dict) -> tuple[int, str]:
    """A presigned PUT that signs ``headers``, sent with them."""
    url = client.presign(bucket, key, method="put_object", expires=600, headers=headers)
    return outcome(requests.put(url, data=body, headers=headers, timeout=30))


def kept_checksum(client: S3Client, bucket: str, key: str, header: str) -> str | None:
    mode = {"x-amz-checksum-mode": "ENABLED"}
    head = requests.head(client.presign(bucket, key, method="head_object", headers=mode), headers=mode, timeout=30)
    return head.headers.get(header)


@pytest.mark.integration
@pytest.mark.parametrize("name", ["crc32", "crc32c", "crc64nvme", "sha256"])
def test_seaweedfs_takes_each_checksum_up_front_or_trailing_and_refuses_a_wrong_one(store, name):
    """Each algorithm, its value in a signed header or trailing an aws-chunked body (its framing headers signed):
    stored with its checksum, the object's bytes the body's; a wrong value refused, nothing stored."""
    check = algorithm(name)
    body = payload(10_000, seed=3).tobytes()
    value, wrong = check.value(body), check.value(body[1:])
    for n, client in enumerate(both_planes(store.server.settings())):
        key = f"signed/{name}-{n}"
        assert put(client, store.bucket, key, body, check.headers(value)) == (200, "")
        assert put(client, store.bucket, key + "-wrong", body, check.headers(wrong)) == (400, "BadDigest")
        for size in (len(body), 0):
            framed = check.aws_chunked(size, check.value(body[:size]))
            sent = framed.prefix + body[:size] + framed.suffix
            assert put(client, store.bucket, f"{key}-trailing-{size}", sent, framed.headers) == (200, "")
            assert requests.get(client.presign(store.bucket, f"{key}-trailing-{size}"), timeout=30).content == \
                body[:size]
        assert kept_checksum(client, store.bucket, f"{key}-trailing-{len(body)}", check.header) == value
        framed = check.aws_chunked(len(body), wrong)
        assert put(client, store.bucket, key + "-trailing-wrong", framed.prefix + body + framed.suffix,
                   framed.headers) == (400, "InvalidDigest")
        assert kept_checksum(client, store.bucket, key, check.header) == value
        assert requests.get(client.presign(store.bucket, key), timeout=30).content == body
        for gone in ("-wrong", "-trailing-wrong"):
            assert requests.head(client.presign(store.bucket, key + gone, method="head_object"),
                                 timeout=30).status_code == 404

"""The botocore-free read path: it signs exactly what botocore signs, it is taken only where
botocore could not answer differently, and reads through either path agree."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import zlib
from datetime import datetime
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import botocore.session
import pytest
from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.crt.auth import CrtS3SigV4QueryAuth

from conftest import run_cli
from objperf import load
from objperf.core.errors import UsageError
from objperf.s3 import sigv4
from objperf.s3.client import S3Client, S3Settings
from objperf.s3.light import LightS3

KEYS = ["k", "a b/c+d~e", "dir/ünï cödé.bin", "x?y#z&w=v", "%41", "dir//double/"]
ENDPOINTS = ["http://127.0.0.1:9000", "http://[::1]:9000", "https://acct.r2.cloudflarestorage.com",
             "https://minio.example.com:9000/", "https://minio.example.com/base", "http://h.example:80"]


@functools.cache
def botocore_client(endpoint: str, region: str, token: str | None):
    return botocore.session.get_session().create_client(
        "s3", region_name=region, endpoint_url=endpoint, aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="wJalr/K7MDENG+bPxRfiCY", aws_session_token=token,
        config=Config(signature_version="s3v4", s3={"addressing_style": "auto"}))


def botocore_presign(endpoint: str, region: str, token: str | None, method: str, params: dict) -> str:
    return botocore_client(endpoint, region, token).generate_presigned_url(method, Params=params, ExpiresIn=900)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("token", [None, "FwoGZX/token+with=="])
def test_presigned_urls_equal_botocores(endpoint, token):
    env = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalr/K7MDENG+bPxRfiCY",
           "AWS_CONFIG_FILE": "/nonexistent", **({"AWS_SESSION_TOKEN": token} if token else {})}
    for region in ("us-east-1", "auto"):
        light = LightS3.for_settings(S3Settings(endpoint=endpoint, region=region), env)
        for key in KEYS:
            want = botocore_presign(endpoint, region, token, "get_object", {"Bucket": "bkt", "Key": key})
            at = datetime.strptime(dict(parse_qsl(urlsplit(want).query))["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
            assert sigv4.presign("GET", light.url("bkt", key), light.keys, region, 900, now=at) == want

            want = botocore_presign(endpoint, region, token, "upload_part",
                                    {"Bucket": "bkt", "Key": key, "UploadId": "2~a.b-c_d e+f/g=", "PartNumber": 12})
            parts = urlsplit(want)
            query = parse_qsl(parts.query, keep_blank_values=True)
            at = datetime.strptime(dict(query)["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
            base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
            params = [(k, v) for k, v in query if not k.startswith("X-Amz-")]
            assert sigv4.presign("PUT", base, light.keys, region, 900, params=params, now=at) == want


# Headers a write signs, as a caller may give them: names in any case, values with white space to trim.
SIGNED = [{"x-amz-checksum-crc32": "EukXkQ=="},
          {"X-Amz-Checksum-SHA256": "  n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=  "},
          {"x-amz-copy-source": "/src-bkt/a%20b/c+d~e?versionId=1", "X-Amz-Metadata-Directive": "REPLACE"},
          {"Content-Encoding": "aws-chunked", "x-amz-trailer": "x-amz-checksum-crc32",
           "x-amz-decoded-content-length": "10244", "x-amz-sdk-checksum-algorithm": "CRC32"},
          {"x-amz-meta-note": "two  spaces\tand a tab", "Content-Type": "application/octet-stream"}]


def signed_by(signer, method: str, url: str, params: dict, headers: dict, region: str, token: str | None) -> str:
    """What one of botocore's presigners makes of the request (the CRT's where it is installed, its own
    without it)."""
    request = AWSRequest(method=method, url=url, headers=dict(headers), params=dict(params))
    signer(Credentials("AKIDEXAMPLE", "wJalr/K7MDENG+bPxRfiCY", token), "s3", region, expires=900).add_auth(request)
    return request.prepare().url


def instant(url: str) -> datetime:
    return datetime.strptime(dict(parse_qsl(urlsplit(url).query))["X-Amz-Date"], "%Y%m%dT%H%M%SZ")


def same_request(ours: str, theirs: str) -> bool:
    """The same URL but for the order of its query's parameters (the signature among them)."""
    a, b = urlsplit(ours), urlsplit(theirs)
    return (a.netloc, a.path) == (b.netloc, b.path) and sorted(parse_qsl(a.query)) == sorted(parse_qsl(b.query))


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("token", [None, "FwoGZX/token+with=="])
def test_signed_headers_are_signed_as_botocore_signs_them(endpoint, token):
    """Byte for byte the CRT's URL; botocore's own signs the same query with two parameters swapped."""
    env = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalr/K7MDENG+bPxRfiCY",
           "AWS_CONFIG_FILE": "/nonexistent", **({"AWS_SESSION_TOKEN": token} if token else {})}
    operations = [("PUT", {}), ("PUT", {"partNumber": "12", "uploadId": "2~a.b-c_d e+f/g="}), ("GET", {})]
    for region in ("us-east-1", "auto"):
        light = LightS3.for_settings(S3Settings(endpoint=endpoint, region=region), env)
        for key in KEYS:
            url = light.url("bkt", key)
            for (method, params), headers in itertools.product(operations, SIGNED):
                crt = signed_by(CrtS3SigV4QueryAuth, method, url, params, headers, region, token)
                ours = sigv4.presign(method, url, light.keys, region, 900, params=list(params.items()),
                                     headers=headers, now=instant(crt))
                assert ours == crt
                assert sigv4.signed_header_names(ours) == ";".join(sorted([*map(str.lower, headers), "host"]))
                theirs = signed_by(S3SigV4QueryAuth, method, url, params, headers, region, token)
                ours = sigv4.presign(method, url, light.keys, region, 900, params=list(params.items()),
                                     headers=headers, now=instant(theirs))
                assert same_request(ours, theirs) and ours != theirs


def test_x_amz_content_sha256_is_signed_and_the_payload_left_unsigned():
    """Where botocore's two presigners part: the CRT leaves the header out, botocore's own signs its value as
    the payload's hash.  objperf signs the header with the payload ``UNSIGNED-PAYLOAD``: the same URL as
    botocore's own where the header says so, another where it names a streaming payload."""
    url, keys = "http://127.0.0.1:9000/bkt/key", sigv4.Keys("AKIDEXAMPLE", "wJalr/K7MDENG+bPxRfiCY")
    for value in ("UNSIGNED-PAYLOAD", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"):
        headers = {"x-amz-content-sha256": value, "x-amz-trailer": "x-amz-checksum-crc32"}
        crt = signed_by(CrtS3SigV4QueryAuth, "PUT", url, {}, headers, "us-east-1", None)
        assert sigv4.signed_header_names(crt) == "host;x-amz-trailer"
        theirs = signed_by(S3SigV4QueryAuth, "PUT", url, {}, headers, "us-east-1", None)
        ours = sigv4.presign("PUT", url, keys, "us-east-1", 900, headers=headers, now=instant(theirs))
        assert sigv4.signed_header_names(ours) == sigv4.signed_header_names(theirs) == \
            "host;x-amz-content-sha256;x-amz-trailer"
        assert same_request(ours, theirs) == (value == "UNSIGNED-PAYLOAD")


def test_headers_that_cannot_be_signed_are_refused_without_their_values():
    value = "c2VjcmV0LWNoZWNrc3Vt"
    refused = [{"Host": "h"}, {"authorization": value}, {"X-Amz-Date": value}, {"x-amz-security-token": value},
               {"User-Agent": value}, {"Expect": "100-continue"}, {"x-amz-checksum-crc32": value + "\r\nx-evil: 1"},
               {"x-amz-checksum-crc32": value + "\x00"}, {"x-amz-meta-x": "é" + value}, {"x-amz-meta-x": "  "},
               {"x-amz-checksum-crc32": value, "X-Amz-Checksum-CRC32": value}, {"bad name": value},
               {"x-amz-meta-x": None}, {"": value}]
    for headers in refused:
        with pytest.raises(UsageError) as caught:
            sigv4.presign("PUT", "http://127.0.0.1:9000/bkt/key", sigv4.Keys("AKID", "secret"), "us-east-1", 60,
                          headers=headers)
        assert value not in str(caught.value), headers
    assert sigv4.signable({"X-Amz-Meta-B": " a \t  b ", "x-amz-meta-a": "1"}) == {"x-amz-meta-a": "1",
                                                                                  "x-amz-meta-b": "a b"}

def test_light_path_only_where_botocore_would_agree(tmp_path):
    keys = {"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_CONFIG_FILE": "/nonexistent"}
    config = tmp_path / "config"
    config.write_text("[default]\nregion = eu-west-1\n")
    endpoint = "http://127.0.0.1:9000"
    cases = [
        (S3Settings(endpoint=endpoint), keys, True),
        (S3Settings(endpoint=endpoint, addressing="path"), keys, True),
        (S3Settings(endpoint=endpoint, anonymous=True), {"AWS_CONFIG_FILE": "/nonexistent"}, True),
        (S3Settings(endpoint=endpoint, credentials=("a", "b")), {"AWS_CONFIG_FILE": "/nonexistent"}, True),
        (S3Settings(endpoint=endpoint), {**keys, "AWS_CONFIG_FILE": str(config), "AWS_DEFAULT_REGION": "x"}, True),
        (S3Settings(endpoint=endpoint, region="x"), {**keys, "AWS_CONFIG_FILE": str(config)}, True),
        (S3Settings(), keys, False),                                             # AWS: endpoint rules
        (S3Settings(endpoint=endpoint, addressing="virtual"), keys, False),
        (S3Settings(endpoint=endpoint, profile="p"), keys, False),
        (S3Settings(endpoint=endpoint), {**keys, "AWS_CONFIG_FILE": str(config)}, False),  # region from file
        (S3Settings(endpoint=endpoint), {"AWS_CONFIG_FILE": "/nonexistent"}, False),  # the rest of the chain
        (S3Settings(endpoint=endpoint), {**keys, "AWS_SECRET_ACCESS_KEY": ""}, False),  # botocore's message
        (S3Settings(endpoint=endpoint), {**keys, "AWS_CREDENTIAL_EXPIRATION": "2030-01-01T00:00:00Z"}, False),
        (S3Settings(endpoint="127.0.0.1:9000"), keys, False),                    # botocore names the bad endpoint
        (S3Settings(endpoint="http://127.0.0.1:99999"), keys, False),
        (S3Settings(endpoint=endpoint), {**keys, "http_proxy": "http://proxy:3128"}, False),
        (S3Settings(endpoint=endpoint), {**keys, "HTTP_PROXY": "http://proxy:3128"}, False),
        (S3Settings(endpoint=endpoint), {**keys, "HTTPS_PROXY": "http://proxy:3128"}, True),  # not for http://
    ]
    for settings, env, light in cases:
        assert (LightS3.for_settings(settings, env) is not None) == light, (settings, env)
    assert LightS3.for_settings(S3Settings(endpoint=endpoint), {**keys, "AWS_SESSION_TOKEN": "t"}).keys.token == "t"
    assert "secret" not in repr(LightS3.for_settings(S3Settings(endpoint=endpoint), keys).keys)


@pytest.mark.integration
def test_reads_agree_with_and_without_botocore(store, tmp_path, monkeypatch):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    for name in ("http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    settings = S3Settings(endpoint=store.server.endpoint, addressing="path")
    light = S3Client(settings)
    size = light.object_size(store.bucket, "data/odd.bin")
    assert size == store.objects["data/odd.bin"]
    assert light.presign(store.bucket, "data/odd.bin").startswith(f"{store.server.endpoint}/{store.bucket}/data/")
    assert not light.uses_botocore, "the common case built a botocore client"

    # The same reads as a named profile: botocore finds the keys and signs.
    credentials = tmp_path / "credentials"
    credentials.write_text(f"[objperf-test]\naws_access_key_id = {store.server.access_key}\n"
                           f"aws_secret_access_key = {store.server.secret_key}\n")
    env = {**store.env(), "AWS_SHARED_CREDENTIALS_FILE": str(credentials)}
    del env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    profiled = S3Client(S3Settings(endpoint=store.server.endpoint, addressing="path", profile="objperf-test"))
    assert profiled.uses_botocore
    assert profiled.object_size(store.bucket, "data/odd.bin") == size
    assert not profiled.bucket_exists("no-such-bucket-here") and not light.bucket_exists("no-such-bucket-here")

    expected = bytes(store.expected("data/odd.bin"))
    for run_env, extra in ((store.env(), []), (env, ["--profile", "objperf-test"])):
        out = tmp_path / f"run{len(extra)}"
        proc = run_cli("objperf.fetch", f"s3://{store.bucket}/data/odd.bin", "--endpoint", store.server.endpoint,
                       "--range-size", "1MiB", "--verify", "--out", str(out), *extra, env=run_env)
        assert proc.returncode == 0, proc.stderr
        rows = load(out)
        assert len(rows) == 6 and rows["bytes"].sum() == size
        for row in rows.itertuples():
            assert row.crc32 == zlib.crc32(expected[row.offset:row.offset + row.length])


@pytest.mark.integration
def test_one_connection_serves_many_calls_and_a_closed_one_is_replaced(store):
    import socket

    light = LightS3.for_settings(store.server.settings(), {"AWS_CONFIG_FILE": "/nonexistent"})
    assert light.send("HEAD", store.bucket, "data/small.bin").length == 1000
    assert light.send("HEAD", store.bucket, "data/even.bin").length == store.objects["data/even.bin"]
    assert light.send("HEAD", store.bucket, "no-such-key").status == 404
    assert light.wire.kept.connections_made == 1  # kept alive across calls, error answers included
    closed = 0
    for fd in os.listdir("/proc/self/fd"):  # as when the server closes an idle connection
        with contextlib.suppress(OSError), socket.socket(fileno=os.dup(int(fd))) as sock:
            if sock.family == socket.AF_INET and sock.getsockname()[1] == light.wire.kept.local_port:
                sock.shutdown(socket.SHUT_RDWR)
                closed += 1
    assert closed == 1
    assert light.send("HEAD", store.bucket, "data/small.bin").length == 1000
    assert light.wire.kept.connections_made == 2


def test_a_signal_ends_a_call_the_server_never_answers():
    """Ctrl-C while a control call waits on a silent server ends it at once, not after the
    two-minute idle timeout.  The signal lands on another thread (as it may in any run), so
    nothing interrupts libcurl's wait: the call must look for it itself."""
    import signal
    import socket
    import threading
    import time

    class Interrupted(Exception):
        pass

    def interrupt(signum, frame):
        raise Interrupted

    with socket.create_server(("127.0.0.1", 0)) as silent:
        light = LightS3(f"http://127.0.0.1:{silent.getsockname()[1]}", "us-east-1", sigv4.Keys("k", "s"))
        previous = signal.signal(signal.SIGINT, interrupt)
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        started = time.monotonic()
        try:
            timer.start()
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            with pytest.raises(Interrupted):
                light.send("HEAD", "bucket", "key")
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            timer.cancel()
            signal.signal(signal.SIGINT, previous)
        assert time.monotonic() - started < 5


@pytest.mark.integration
def test_aws_region_is_honoured_beside_aws_default_region(store, monkeypatch):
    from objperf.commands.fetch import build_parser
    from objperf.commands.parser import parse_options
    from objperf.options import FetchOptions

    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    options = parse_options(FetchOptions, build_parser(), [f"s3://{store.bucket}/data/small.bin", "--endpoint",
                                                           store.server.endpoint])
    settings = options.s3_settings()
    assert settings.region == "eu-west-3"
    assert "%2Feu-west-3%2Fs3%2F" in S3Client(settings).presign(store.bucket, "data/small.bin")


def test_compare_signs_for_the_region_the_environment_names(monkeypatch):
    from objperf.peers.compare import Target

    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_REGION", "ap-northeast-1")
    assert Target.parse("S3 s3://b/p/").region == "ap-northeast-1"
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    assert Target.parse("S3 s3://b/p/").region == "eu-central-1"
    assert Target.parse("S3 s3://b/p/ region=auto").region == "auto"
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert Target.parse("S3 s3://b/p/").region == "us-east-1"


@pytest.mark.integration
def test_listing_pages_and_batch_deletes_are_signed_alike_on_both_planes(store):
    """ListObjectsV2 pages (prefix, delimiter, max-keys, continuation token) and DeleteObjects (POST ?delete, its
    Content-MD5 unsigned) presigned by either plane: the same parameters, and a signature the server takes; a
    wrong secret is refused."""
    import dataclasses

    import requests

    from objperf.s3.deletes import delete_request, read_delete_answer
    from objperf.s3.listing import PageWalk

    prefix = "signed-lists/"
    keys = [f"{prefix}{d}/k{i}" for d in ("a", "b") for i in range(3)] + [f"{prefix}top"]
    for key in keys:
        store.client.put_object(store.bucket, key, b"x")
    settings = store.server.settings()
    planes = [store.client, S3Client(settings, light=False)]
    urls = [client.list_page_signer(store.bucket, prefix, delimiter="/", max_keys=2, expires=600) for client in planes]
    first = [urlsplit(sign(None)) for sign in urls]
    assert first[0].path == first[1].path
    timeless = [{k: v for k, v in parse_qsl(u.query) if k not in ("X-Amz-Date", "X-Amz-Signature")} for u in first]
    assert timeless[0] == timeless[1] and timeless[0]["delimiter"] == "/" and timeless[0]["max-keys"] == "2"
    for sign in urls:
        walk, token, listed = PageWalk("LIST", prefix, delimiter="/", max_keys=2), None, []
        while True:
            got = requests.get(sign(token), timeout=10)
            assert got.status_code == 200, got.text
            page = walk.take(got.content)
            listed += [k for k, _ in page.keys] + page.prefixes
            if not page.truncated:
                break
            token = page.token
        assert listed == [f"{prefix}a/", f"{prefix}b/", f"{prefix}top"] and walk.pages == 2
    for client, batch in zip(planes, (keys[:3], keys[3:])):
        body, headers = delete_request(batch)
        got = requests.post(client.delete_objects_url(store.bucket, expires=600), data=body,
                            headers=dict(line.split(": ", 1) for line in headers), timeout=10)
        assert got.status_code == 200, got.text
        assert read_delete_answer(got.content, batch, "DeleteObjects").deleted == len(batch)
    assert store.client.list_keys(store.bucket, prefix) == []
    wrong = dataclasses.replace(settings, credentials=(store.server.access_key, "not-the-secret"))
    for client in (S3Client(wrong), S3Client(wrong, light=False)):
        assert requests.get(client.list_page_signer(store.bucket, prefix)(None), timeout=10).status_code == 403
        assert requests.post(client.delete_objects_url(store.bucket), data=delete_request(["x"])[0],
                             timeout=10).status_code == 403

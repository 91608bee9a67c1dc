"""Failed requests are rows, classified, and never crash a run."""

from __future__ import annotations

import http.server
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import RANGE
from objperf.plan.reads import ReadWorkload
from objperf.run.reads import run_read
from objperf.s3.client import S3Client, S3Settings
from objperf.s3.target import ObjectRef, ResolvedTarget
from objperf.servers.seaweed import LocalSeaweed

ENGINES = ["curl", "requests"]


def run_urls(urls, size, engine, n=3):
    target = ResolvedTarget("s3", [ObjectRef("b", f"k{i}", size) for i in range(len(urls))], "http://x", None, urls)
    return run_read(target, ReadWorkload(concurrency=2, threads=1, range_size=RANGE, requests=n, engine=engine,
                                         connect_timeout=3.0))


@pytest.mark.integration
@pytest.mark.parametrize("engine", ENGINES)
def test_missing_key_is_404_nosuchkey(store, engine):
    url = store.client.presign(store.bucket, "no/such/key")
    result = run_urls([url], 100, engine)
    rows = result.rows
    assert len(rows) == 3
    assert (rows["status"] == 404).all()
    assert (rows["s3_error"] == "NoSuchKey").all()
    assert (rows["bytes"] == 0).all()
    assert result.summary["s3_error_counts"] == {"NoSuchKey": 3}
    assert result.summary["error_requests"] == 3


@pytest.mark.integration
@pytest.mark.parametrize("engine", ENGINES)
def test_bad_signature_is_403(store, engine):
    forged = S3Client(S3Settings(endpoint=store.server.endpoint, region="us-east-1", addressing="path",
                                 credentials=(store.server.access_key, "0" * 40)))
    url = forged.presign(store.bucket, "data/small.bin")
    rows = run_urls([url], 1000, engine).rows
    assert (rows["status"] == 403).all()
    assert set(rows["s3_error"]) <= {"SignatureDoesNotMatch", "AccessDenied"} and rows["s3_error"].iloc[0] != ""


@pytest.mark.parametrize("engine", ENGINES)
def test_refused_connection_has_its_curl_code(engine):
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_urls([f"http://127.0.0.1:{port}/b/k"], 100, engine)
    rows = result.rows
    assert len(rows) == 3
    assert (rows["curl_code"] == 7).all()  # CURLE_COULDNT_CONNECT
    assert (rows["status"] == 0).all()
    assert "7 Couldn't connect to server" in result.summary["curl_error_counts"]


class LongErrorCode(http.server.BaseHTTPRequestHandler):
    """Answers every GET as Swift's S3 layer answers a presigned URL it dislikes: a 34-character code."""

    protocol_version = "HTTP/1.1"
    body = (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>AuthorizationQueryParametersError</Code>"
            b"<Message>Error parsing the X-Amz-Credential parameter</Message></Error>")

    def do_GET(self):
        self.send_response(400)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("engine", ENGINES)
def test_s3_error_codes_are_kept_whole(engine):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LongErrorCode)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run_urls([f"http://127.0.0.1:{server.server_port}/bench/big.bin"], 100, engine)
    finally:
        server.shutdown()
        server.server_close()
    assert set(result.rows["s3_error"].astype(str)) == {"AuthorizationQueryParametersError"}
    assert result.summary["s3_error_counts"] == {"AuthorizationQueryParametersError": 3}


@pytest.mark.integration
def test_good_and_bad_keys_in_one_run(store):
    good = store.client.presign(store.bucket, "data/small.bin")
    bad = store.client.presign(store.bucket, "missing.bin")
    rows = run_urls([good, bad], 1000, "curl", n=10).rows
    assert sorted(rows["status"].value_counts().items()) == [(206, 5), (404, 5)]


@pytest.mark.integration
def test_local_seaweed_retries_on_fresh_ports_when_one_was_taken(monkeypatch, tmp_path):
    """A port found free can be taken before SeaweedFS binds it; start() tries again on new ones."""
    import socket

    import objperf.servers.seaweed as seaweed

    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    real_free_port = seaweed.free_port
    handed = []

    def first_one_taken(*args, **kwargs):
        port = taken if not handed else real_free_port(*args, **kwargs)
        handed.append(port)
        return port

    monkeypatch.setattr(seaweed, "free_port", first_one_taken)
    server = seaweed.LocalSeaweed(tmp_path / "weed")
    try:
        server.start()
        assert server.master_port != taken and taken in handed
        S3Client(server.settings()).create_bucket("after-a-retry")
        assert "after-a-retry" in S3Client(server.settings()).list_buckets()
    finally:
        server.stop()
        squatter.close()
    assert f"port {taken}".encode() in (tmp_path / "weed" / "weed.log").read_bytes()  # the first try's failure


@pytest.mark.integration
def test_a_stopped_server_leaves_nothing_in_tmp():
    def seaweed_files() -> set[str]:
        return {p.name for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith(("seaweedfs-", "weed."))}

    before = seaweed_files()
    server = LocalSeaweed(ipv6=True)
    with server:
        S3Client(server.settings(ipv6=True)).list_buckets()
    assert seaweed_files() - before == set() and not server.workdir.exists()

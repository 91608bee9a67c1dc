"""``objperf put --checksum``: each PUT and part carries the checksum today's SDKs add, in a header or trailing an
aws-chunked body, signed in its URL; the store keeps it (SeaweedFS checks it and hands it back on a HEAD with
checksum mode), the bytes read back equal, and a checksum the store refuses is each request's failed row with its
S3 code."""

from __future__ import annotations

import json
import uuid

import pytest
import requests

from conftest import run_cli
from objperf import api, load
from objperf.core.checksums import algorithm
from objperf.plan.checksums import Framed, WriteChecksum
from objperf.s3.sigv4 import Keys, presign

pytestmark = [pytest.mark.timeout(180), pytest.mark.integration]
MIB = 1 << 20


def stored_checksum(store, key: str, name: str) -> str | None:
    """The checksum the store kept for ``key``, from a HEAD with checksum mode (signed, as S3 wants it)."""
    server = store.server
    mode = {"x-amz-checksum-mode": "ENABLED"}
    url = presign("HEAD", f"{server.endpoint}/{store.bucket}/{key}", Keys(server.access_key, server.secret_key),
                  "us-east-1", 300, headers=mode)
    answer = requests.head(url, headers=mode, timeout=30)
    assert answer.status_code == 200
    return answer.headers.get(f"x-amz-checksum-{name}")


def put(store, tmp_path, *args: str):
    prefix = f"sums-{uuid.uuid4().hex[:8]}/"
    done = run_cli("objperf.commands.put", f"s3://{store.bucket}/{prefix}", "--endpoint", store.server.endpoint,
                   "--out", str(tmp_path / "run"), "--json", *args, env=store.env())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), load(tmp_path / "run"), prefix


@pytest.mark.parametrize("name", ["crc32", "crc32c", "crc64nvme", "sha256"])
@pytest.mark.parametrize("trailer", [False, True], ids=["header", "trailer"])
def test_each_put_carries_its_checksum_and_the_store_keeps_it(store, tmp_path, name, trailer):
    summary, rows, _ = put(store, tmp_path, "--object-size", "3MiB", "-n", "2", "-c", "2", "--checksum", name,
                           "--verify", *(["--checksum-trailer"] if trailer else []))
    assert summary["error_requests"] == 0 and summary["requests"] == 2
    assert summary["verified"].startswith("ok")  # bytes read back equal: the framing is not in the object
    assert (rows["bytes"] == 3 * MIB).all()  # the payload's bytes, not the framing's
    key = str(rows["key"].iloc[0])
    body = store.client.get_object(store.bucket, key, limit=8 * MIB)
    assert stored_checksum(store, key, name) == algorithm(name).value(body)


def test_a_multipart_upload_names_its_algorithm_and_each_parts_checksum(store, tmp_path):
    summary, rows, _ = put(store, tmp_path, "--object-size", "11MiB", "--part-size", "5MiB", "-n", "2",
                           "--checksum", "crc32c", "--verify")
    assert summary["error_requests"] == 0 and summary["verified"].startswith("ok")
    ops = rows["op"].astype(str).value_counts().to_dict()
    assert ops == {"CREATE_MPU": 2, "UPLOAD_PART": 6, "COMPLETE_MPU": 2}


def test_the_manifest_records_the_checksum_sent(store, tmp_path):
    from objperf.dataset.directory import read_manifest

    put(store, tmp_path, "--object-size", "1MiB", "-n", "1", "--checksum", "sha256", "--checksum-trailer")
    workload = read_manifest(tmp_path / "run")["workload"]
    assert workload["checksum"] == "sha256" and workload["checksum_trailer"] is True
    # ... and the summary's workload line says it, as the run printed it and as analyze reads it back
    again = run_cli("objperf", "analyze", str(tmp_path / "run"))
    assert again.returncode == 0, again.stderr
    assert "each request with its SHA256 checksum as a trailer" in again.stdout


def test_a_checksum_the_store_refuses_is_each_requests_failed_row_with_its_s3_code(store, tmp_path, monkeypatch):
    right = WriteChecksum.request

    def wrong(self, payload, payload_offset, length):  # the value of other bytes than those sent
        framed = right(self, payload, payload_offset + 1, length)
        return Framed(framed.headers, framed.before, framed.after, framed.value)

    monkeypatch.setattr(WriteChecksum, "request", wrong)
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    run = api.put(f"s3://{store.bucket}/wrong-{uuid.uuid4().hex[:8]}/", endpoint=store.server.endpoint,
                  object_size="1MiB", requests=3, concurrency=1, checksum="crc32", out=tmp_path / "run",
                  progress=False)
    rows = load(tmp_path / "run")
    assert len(rows) == 3 and (rows["status"] == 400).all()
    assert set(rows["s3_error"].astype(str)) == {"BadDigest"} and (rows["bytes"] == 0).all()
    assert run.summary["error_requests"] == 3 and run.summary["objects_written"] == 0


@pytest.mark.parametrize("args, said", [
    (["--checksum", "md5"], "invalid choice: 'md5'"),
    (["--checksum-trailer"], "--checksum-trailer sends a checksum after the body"),
])
def test_a_checksum_that_cannot_be_sent_is_one_line_before_any_request(tmp_path, args, said):
    done = run_cli("objperf.commands.put", "s3://nowhere/x/", "--endpoint", "http://127.0.0.1:9", *args,
                   "--no-save", timeout=60)
    assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr

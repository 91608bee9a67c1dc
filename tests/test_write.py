"""Writes against the real server: bytes, parts, ETags, fan-out, failures that leave nothing open."""

from __future__ import annotations

import dataclasses
import hashlib
import signal
import subprocess
import sys
import time

import pytest

from conftest import run_cli, wait_until
from objperf import load
from objperf._engine.payload import make_payload
from objperf.core.schema import CUT_CURL_CODE
from objperf.plan.writes import WriteWorkload, expected_bytes
from objperf.run.writes import run_mixed, run_write

pytestmark = pytest.mark.integration

MIB = 1 << 20


def write(store, out=None, **kw):
    workload = WriteWorkload(**{"concurrency": 4, "threads": 2, "buckets": (store.bucket,), "prefix": "w/", **kw})
    return run_write(store.server.settings(), workload, out=out)


def written_keys(result) -> set[tuple[str, str]]:
    rows = result.rows
    done = rows[rows["op"].isin(["PUT", "COMPLETE_MPU"]) & (rows["status"] == 200)]
    return set(zip(done["bucket"].astype(str), done["key"].astype(str)))


def no_open_uploads(store, buckets=None) -> bool:
    return all(not store.client.open_uploads(b) for b in buckets or [store.bucket])


@pytest.fixture(autouse=True)
def _nothing_left_open(store):
    """After every write test, failures included, no multipart upload is open in any bucket."""
    yield
    left = {b: store.client.open_uploads(b) for b in store.client.list_buckets()}
    assert not any(left.values()), f"uploads left open: {left}"


def test_multipart_object_reads_back_byte_for_byte(store, tmp_path):
    size = 12 * MIB + 1234
    result = write(store, tmp_path / "w", object_size=size, part_size=5 * MIB, requests=1, verify=True)
    assert result.summary["verified"].startswith("ok: every key written (1)")
    rows = load(tmp_path / "w")
    assert list(rows["op"].astype(str).value_counts().sort_index().items()) == [
        ("COMPLETE_MPU", 1), ("CREATE_MPU", 1), ("UPLOAD_PART", 3)]
    parts = rows[rows["op"] == "UPLOAD_PART"].sort_values("offset")
    assert list(parts["offset"]) == [0, 5 * MIB, 10 * MIB]
    assert list(parts["length"]) == [5 * MIB, 5 * MIB, 2 * MIB + 1234]
    assert list(parts["bytes"]) == list(parts["length"])
    ((bucket, key),) = written_keys(result)
    body = store.client.get_object(bucket, key, limit=1 << 31)
    sent = make_payload(WriteWorkload(object_size=size, part_size=5 * MIB, buckets=("x",)))
    assert body == bytes(expected_bytes(sent, size, 0, size))
    # Each part's ETag is the MD5 of that part's bytes, taken from the final response's headers.
    for offset, length, etag in zip(parts["offset"], parts["length"], parts["etag"]):
        assert etag.strip('"') == hashlib.md5(body[offset:offset + length]).hexdigest()
    assert no_open_uploads(store)


def test_parts_longer_than_the_payload_wrap_round_it(store, monkeypatch):
    """Bodies repeat the payload from its start; a period that splits parts mid-way must still
    send exactly the bytes a reader expects (the engine wraps inside libcurl's read callback)."""
    import objperf._engine.payload

    monkeypatch.setattr(objperf._engine.payload, "PAYLOAD_PERIOD", 3 * MIB + 7)
    size = 11 * MIB + 5
    result = write(store, object_size=size, part_size=5 * MIB, requests=1, verify=True)
    assert result.summary["verified"].startswith("ok: every key written (1)")
    ((bucket, key),) = written_keys(result)
    body = store.client.get_object(bucket, key, limit=1 << 31)
    period = bytes(make_payload(WriteWorkload(object_size=size, part_size=5 * MIB, buckets=("x",))))
    assert len(period) == 3 * MIB + 7
    assert body == (period * 4)[:size]
    single = write(store, object_size=4 * MIB, part_size=5 * MIB, requests=1, verify=True)
    assert single.summary["verified"].startswith("ok: every key written (1)")


def test_part_url_signers_agree_and_the_server_checks_them(store):
    """UploadPart URLs come from objperf.s3.sigv4, either alone (the light path) or re-signing
    botocore's first URL: both must carry botocore's parameters and a signature the server
    accepts, and a wrong secret must be refused."""
    import dataclasses
    from urllib.parse import parse_qsl, urlsplit

    import requests

    from objperf.s3.client import S3Client

    key = "signer/part-test"
    settings = store.server.settings()
    through_botocore = S3Client(settings, light=False)
    upload_id = store.client.attempt("create_multipart_upload", Bucket=store.bucket, Key=key).response["UploadId"]
    try:
        light = store.client.part_url_signer(store.bucket, key, upload_id, expires=600)
        resigned = through_botocore.part_url_signer(store.bucket, key, upload_id, expires=600)
        theirs = urlsplit(through_botocore.presign(store.bucket, key, method="upload_part", expires=600,
                                                   extra={"UploadId": upload_id, "PartNumber": 3}))
        for ours in (urlsplit(light(3)), urlsplit(resigned(3))):
            assert (ours.netloc, ours.path) == (theirs.netloc, theirs.path)
            timeless = [{k: v for k, v in parse_qsl(u.query) if k not in ("X-Amz-Date", "X-Amz-Signature")}
                        for u in (ours, theirs)]
            assert timeless[0] == timeless[1] and timeless[0]["partNumber"] == "3"
        for number in (1, 2, 3):
            assert requests.put(light(number), data=b"part %d" % number, timeout=10).status_code == 200
            assert requests.put(resigned(number), data=b"part %d" % number, timeout=10).status_code == 200
        wrong_settings = dataclasses.replace(settings, credentials=(store.server.access_key, "not-the-secret"))
        for wrong in (S3Client(wrong_settings), S3Client(wrong_settings, light=False)):
            refused = wrong.part_url_signer(store.bucket, key, upload_id, expires=600)
            assert [requests.put(refused(n), data=b"x", timeout=10).status_code for n in (1, 2)] == [403, 403]
    finally:
        store.client.attempt("abort_multipart_upload", Bucket=store.bucket, Key=key, UploadId=upload_id)
    assert no_open_uploads(store)


def test_multipart_calls_answer_alike_with_and_without_botocore(store):
    from objperf.s3.client import S3Client

    key = "signer/calls"
    seen = []
    for client in (store.client, S3Client(store.server.settings(), light=False)):
        created = client.attempt("create_multipart_upload", Bucket=store.bucket, Key=key)
        assert created.ok and created.response["UploadId"] and created.seconds > 0
        bogus = {"Parts": [{"PartNumber": 1, "ETag": '"0123456789abcdef0123456789abcdef"'}]}
        refused = client.attempt("complete_multipart_upload", Bucket=store.bucket, Key=key,
                                 UploadId=created.response["UploadId"], MultipartUpload=bogus)
        aborted = client.attempt("abort_multipart_upload", Bucket=store.bucket, Key=key,
                                 UploadId=created.response["UploadId"])
        missing = client.attempt("abort_multipart_upload", Bucket="no-such-bucket-m", Key=key, UploadId="x")
        assert not refused.ok and refused.s3_error and aborted.ok
        assert (missing.ok, missing.status, missing.s3_error) == (False, 404, "NoSuchBucket")
        seen.append([(a.ok, a.status, a.s3_error, a.curl_code) for a in (created, refused, aborted, missing)])
    assert seen[0] == seen[1]
    unreachable = S3Client(dataclasses.replace(store.server.settings(), endpoint="http://127.0.0.1:9"))
    gone = unreachable.attempt("create_multipart_upload", Bucket=store.bucket, Key=key)
    assert (gone.ok, gone.curl_code) == (False, 7)
    assert no_open_uploads(store)


def test_write_through_botocore(store, tmp_path, monkeypatch):
    """A named profile takes botocore's path for every control call; the object must be the same."""
    credentials = tmp_path / "credentials"
    credentials.write_text(f"[objperf-w]\naws_access_key_id = {store.server.access_key}\n"
                           f"aws_secret_access_key = {store.server.secret_key}\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    settings = dataclasses.replace(store.server.settings(), credentials=None, profile="objperf-w")
    workload = WriteWorkload(concurrency=4, threads=2, buckets=(store.bucket,), prefix="wb/", object_size=11 * MIB,
                             part_size=5 * MIB, requests=1, verify=True)
    result = run_write(settings, workload, out=tmp_path / "w")
    assert result.summary["verified"].startswith("ok: every key written (1)")
    ops = load(tmp_path / "w")["op"].astype(str).value_counts().to_dict()
    assert ops == {"UPLOAD_PART": 3, "CREATE_MPU": 1, "COMPLETE_MPU": 1}
    assert no_open_uploads(store)


def test_single_put_objects(store):
    result = write(store, object_size=3000, part_size=5 * MIB, requests=4, keys=2, verify=True)
    rows = result.rows
    assert set(rows["op"].astype(str)) == {"PUT"} and len(rows) == 4
    assert (rows["bytes"] == 3000).all() and (rows["status"] == 200).all()
    assert rows["etag"].str.len().min() > 2
    assert result.summary["objects_written"] == 4
    assert result.summary["verified"] == "ok: every key written (2) reads back equal to its last upload"


def test_a_write_run_outlasts_its_presigned_urls(store):
    # One key PUT over and over for 5 s with URLs that live 3 s: each is signed afresh before it expires.
    result = write(store, object_size=3000, part_size=5 * MIB, duration=5.0, keys=1, url_lifetime=3, cleanup=True)
    rows = result.rows
    finished = rows["curl_code"] != CUT_CURL_CODE
    assert (rows["t_start"] > rows["t_start"].min() + 3.5).sum() > 0
    assert (rows.loc[finished, "status"] == 200).all() and not (rows["status"] == 403).any()


def test_parts_spread_over_a_clusters_servers_make_one_object(store):
    servers = (f"127.0.0.1:{store.server.s3_port}", f"[::1]:{store.server.s3_port6}")
    result = write(store, object_size=12 * MIB, part_size=5 * MIB, requests=1, verify=True, cleanup=True,
                   spread_to=servers)
    parts = result.rows[result.rows["op"] == "UPLOAD_PART"]
    assert set(parts["remote_port"]) == {store.server.s3_port, store.server.s3_port6}
    assert result.summary["verified"].startswith("ok: every key written (1)")


def test_fanout_over_keys_and_buckets(store):
    other = store.bucket + "-b"
    store.client.create_bucket(other)
    result = write(store, object_size=6 * MIB, part_size=5 * MIB, requests=6, keys=3, buckets=(store.bucket, other),
                   verify=True, cleanup=True)
    keys = written_keys(result)
    assert len(keys) == 3
    assert {b for b, _ in keys} == {store.bucket, other}
    assert result.summary["verified"].startswith("ok: every key written (3)")
    assert no_open_uploads(store, [store.bucket, other])


def test_seeding_writes_the_named_keys_in_every_bucket_byte_for_byte(store):
    from objperf.run.seed import seed_objects

    size = 40 * MIB + 777  # three parts of 16 MiB, the last short
    buckets = [store.bucket + "-seed-a", store.bucket + "-seed-b"]
    seed_objects(store.server.settings(), buckets, ["seed/x.bin", "seed/y.bin"], size, create_buckets=True)
    data = make_payload(WriteWorkload(object_size=size))
    expected = expected_bytes(data, size, 0, size)
    for bucket in buckets:
        assert sorted(k for k, _ in store.client.list_keys(bucket, "")) == ["seed/x.bin", "seed/y.bin"]
        for key in ("seed/x.bin", "seed/y.bin"):
            assert store.client.get_object(bucket, key, limit=1 << 31) == expected
    assert no_open_uploads(store, buckets)


def test_seeding_a_missing_bucket_fails_in_one_line(store):
    from objperf.core.errors import BucketNotFound
    from objperf.run.seed import seed_objects

    with pytest.raises(BucketNotFound, match="does not exist"):
        seed_objects(store.server.settings(), ["objperf-no-such-bucket"], ["a"], 1000)


def test_cleanup_leaves_the_bucket_as_it_was(store):
    before = store.client.list_keys(store.bucket, "")
    result = write(store, object_size=1000, part_size=5 * MIB, requests=5, keys=5, cleanup=True)
    assert result.summary["cleaned_up"] == 5
    assert store.client.list_keys(store.bucket, "") == before


def test_key_prefixes_deal_a_new_key_to_every_write_and_cleanup_deletes_them(store):
    before = store.client.list_keys(store.bucket, "")
    result = write(store, object_size=1000, part_size=5 * MIB, requests=9, keys=1 << 40, prefix="kp/",
                   key_prefixes=("a/", "b/", "c/"), cleanup=True)
    keys = sorted(key for _, key in written_keys(result))
    assert len(keys) == 9 and [key.split("/")[1] for key in keys] == ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    assert result.summary["cleaned_up"] == 9 and store.client.list_keys(store.bucket, "") == before


def test_cleanup_deletes_the_keys_of_puts_cut_at_the_end_too(store):
    """A PUT cut when the time is up may have reached the store all the same: cleanup deletes its key too."""
    result = write(store, object_size=4096, part_size=5 * MIB, duration=1.0, keys=1 << 40, prefix="kp-cut/",
                   key_prefixes=("a/", "b/"), concurrency=16, cleanup=True)
    puts = result.rows[result.rows["op"] == "PUT"]
    assert len(puts) > 16 and puts["key"].nunique() == len(puts)
    assert result.summary["cleaned_up"] >= result.summary["objects_written"] > 0
    assert store.client.list_keys(store.bucket, "kp-cut/") == []


def test_key_prefixes_and_names_are_refused_together():
    from objperf.core.errors import UsageError

    with pytest.raises(UsageError, match="names or key prefixes, not both"):
        WriteWorkload(buckets=("b",), names=("x",), key_prefixes=("p/",)).validate()


def test_failed_parts_abort_the_upload(store, tmp_path):
    # A 20 ms request timeout fails parts that the server needs longer for: a real failure mid-upload.
    result = write(store, tmp_path / "f", object_size=30 * MIB, part_size=5 * MIB, requests=2, timeout=0.02)
    rows = load(tmp_path / "f")
    parts = rows[rows["op"] == "UPLOAD_PART"]
    assert (parts["curl_code"] == 28).any()  # CURLE_OPERATION_TIMEDOUT
    assert (rows["op"] == "ABORT_MPU").sum() == 2
    assert result.summary["objects_failed"] == 2 and result.summary["objects_written"] == 0
    assert no_open_uploads(store)


def test_duration_cuts_the_parts_in_flight(store, tmp_path):
    # Parts are always in flight in a timed run: at its end they are cut, and their objects aborted.
    result = write(store, tmp_path / "d", object_size=64 * MIB, part_size=8 * MIB, duration=1.0, keys=2)
    rows = load(tmp_path / "d")
    parts = rows[rows["op"] == "UPLOAD_PART"]
    cut = parts[parts["curl_code"] == CUT_CURL_CODE]
    assert len(cut) > 0 and (cut["bytes"] <= cut["length"]).all()
    started = rows["t_start"].min()
    assert (parts["t_start"] < started + 1.0).all()  # nothing sent once the time was up
    assert (cut["t_start"] + cut["total_s"] < started + 1.5).all()
    summary = result.summary
    assert 1.0 <= summary["wall_s"] < 2.5  # the run lasts its duration; closing the uploads is not timed
    assert summary["cut_requests"] == len(cut) and summary["error_requests"] == 0
    assert summary["objects_cut"] >= 1 and summary["objects_failed"] == 0
    assert summary["sent_bytes"] == rows["bytes"].sum()  # cut parts' bytes were sent, not acknowledged
    acknowledged = (parts["curl_code"] == 0) & (parts["status"] == 200)
    assert summary["bytes"] == parts.loc[acknowledged, "bytes"].sum() < summary["sent_bytes"]
    assert no_open_uploads(store)


def test_a_short_runs_aborts_are_not_cut_by_its_duration(store, tmp_path):
    """At the end of a 1 s run SeaweedFS takes its aborts of uploads on one key a second apart.  Bounded by
    the run's duration, they timed out and the uploads stayed open; they are bounded by --timeout."""
    out = tmp_path / "run"
    done = run_cli("objperf", "put", f"s3://{store.bucket}/short/", "--endpoint", store.server.endpoint, "-c", "16",
                   "--object-size", "6MiB", "--part-size", "5MiB", "--keys", "1", "--duration", "1s", "--cleanup",
                   "--out", str(out), env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(out)
    aborts = rows[rows["op"] == "ABORT_MPU"]
    assert len(aborts) >= 2 and (aborts["status"] == 204).all(), aborts[["status", "curl_code", "total_s"]]
    assert "left open" not in done.stdout


def test_mixed_run_has_both_directions(store, tmp_path):
    from objperf.plan.reads import ReadWorkload
    from objperf.s3.target import resolve_read_target

    target = resolve_read_target(f"s3://{store.bucket}/data/even.bin", store.server.settings())
    reads = ReadWorkload(concurrency=2, threads=1, range_size=MIB, duration=2.0)
    writes = WriteWorkload(object_size=6 * MIB, part_size=5 * MIB, concurrency=2, threads=1,
                           buckets=(store.bucket,), prefix="mixed/", duration=2.0, cleanup=True)
    result = run_mixed(target, reads, store.server.settings(), writes, out=tmp_path / "m")
    rows = load(tmp_path / "m")
    assert {"GET", "UPLOAD_PART"} <= set(rows["op"])
    assert set(result.summary["directions"]) == {"read", "write"}
    assert result.summary["directions"]["read"]["bytes"] == rows.loc[rows["op"] == "GET", "bytes"].sum() > 0
    assert result.summary["directions"]["write"]["bytes"] > 0
    assert set(rows.loc[rows["op"] == "GET", "key"]) == {"data/even.bin"}
    assert no_open_uploads(store)


def test_a_mixed_run_outlasts_its_presigned_urls(store):
    from objperf.plan.reads import ReadWorkload
    from objperf.s3.target import resolve_read_target

    target = resolve_read_target(f"s3://{store.bucket}/data/even.bin", store.server.settings(), url_lifetime=3)
    reads = ReadWorkload(concurrency=2, threads=1, range_size=MIB, duration=5.0, sink="discard")
    writes = WriteWorkload(object_size=3000, part_size=5 * MIB, concurrency=2, threads=1, buckets=(store.bucket,),
                           prefix="mixed-urls/", duration=5.0, url_lifetime=3, cleanup=True)
    rows = run_mixed(target, reads, store.server.settings(), writes).rows
    late = rows["t_start"] > rows["t_start"].min() + 3.5
    assert set(rows.loc[late, "op"]) >= {"GET", "PUT"} and not (rows["status"] == 403).any()


@pytest.mark.parametrize("args, message", [
    (["--part-size", "1MiB", "--object-size", "8MiB"], "part size must be between 5 MiB and 5 GiB"),
    (["--object-size", "lots"], "bad size"),
    (["--keys", "0"], "must be at least 1"),
    (["--connect-to", "pinned"], "bad --connect-to 'pinned'"),
    (["--url-lifetime", "1s"], "URL lifetime must be between 3s and 7 days"),
    (["--interface", "192.0.2.7"], "bad --interface '192.0.2.7'"),  # TEST-NET-1: no host has it
])
def test_put_bad_input(store, args, message):
    proc = run_cli("objperf", "put", f"s3://{store.bucket}/x/", "--endpoint", store.server.endpoint, *args,
                   env=store.env())
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr


def test_put_to_a_missing_bucket(store):
    proc = run_cli("objperf", "put", "s3://no-such-bucket-w/x/", "--endpoint", store.server.endpoint, env=store.env())
    assert proc.returncode != 0 and "does not exist" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_ctrl_c_before_an_upload_id_arrives_still_leaves_nothing_open(store, monkeypatch):
    """Ctrl-C after the store opened an upload but before its answer was read: the id was never
    learnt, so the run finds the upload by its key and aborts it."""
    import _thread

    from objperf.s3.client import S3Client

    sent = S3Client.attempt

    def interrupted_before_the_answer(self, method, **params):
        outcome = sent(self, method, **params)
        if method == "create_multipart_upload":
            assert store.client.open_uploads(store.bucket), "the store opened the upload"
            _thread.interrupt_main()  # Ctrl-C, while the answer is lost on the way
            raise ConnectionResetError("the answer never arrived")
        return outcome

    monkeypatch.setattr(S3Client, "attempt", interrupted_before_the_answer)
    result = write(store, object_size=12 * MIB, part_size=5 * MIB, requests=1)
    assert result.status == "interrupted"
    assert list(result.rows["op"].astype(str)) == ["ABORT_MPU"]
    assert list(result.rows["status"]) == [204]
    assert result.summary["objects_cut"] == 1 and result.summary["objects_written"] == 0
    assert no_open_uploads(store)


def test_interrupted_put_aborts_its_uploads(store, tmp_path):
    out = tmp_path / "p"
    args = [sys.executable, "-m", "objperf", "put", f"s3://{store.bucket}/int/", "--endpoint", store.server.endpoint,
            "--object-size", "200MiB", "--part-size", "5MiB", "-c", "2", "--duration", "60s", "--out", str(out)]
    proc = subprocess.Popen(args, env=store.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list((out / "requests").glob("part-*.parquet")):
        time.sleep(0.1)
    wait_until(lambda: store.client.open_uploads(store.bucket, "int/"), what="an open upload")  # parts in flight
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    rows = load(out)
    assert rows.attrs["manifest"]["status"] == "interrupted"
    assert (rows["op"] == "UPLOAD_PART").sum() > 0 and (rows["op"] == "ABORT_MPU").sum() >= 1
    assert no_open_uploads(store)


def test_a_url_lifetime_outside_sigv4s_range_is_refused_before_anything_is_sent(store):
    from objperf.core.errors import UsageError
    from objperf.s3.target import resolve_read_target

    with pytest.raises(UsageError, match="URL lifetime must be between 3s and 7 days"):
        write(store, object_size=3000, requests=1, url_lifetime=8 * 24 * 3600)
    with pytest.raises(UsageError, match="URL lifetime"):
        resolve_read_target(f"s3://{store.bucket}/data/small.bin", store.server.settings(), url_lifetime=1)


def test_uploads_are_opened_ahead_several_at_once(store):
    # Two parts per object and 16 in flight: eight uploads must be open at once to fill the slots.
    result = write(store, object_size=10 * MIB, part_size=5 * MIB, concurrency=16, requests=24, verify=True)
    rows = result.rows
    creates = rows[rows["op"] == "CREATE_MPU"].sort_values("t_start")
    assert len(creates) == 24 and (creates["status"] == 200).all()
    starts, ends = creates["t_start"].to_numpy(), (creates["t_start"] + creates["total_s"]).to_numpy()
    overlapping = sum(1 for i in range(1, len(starts)) if starts[i] < ends[:i].max())
    assert overlapping > 0  # some CreateMultipartUpload went out before an earlier one was answered
    assert result.summary["objects_written"] == 24 and result.summary["verified"].startswith("ok")
    assert no_open_uploads(store)


def test_uploads_still_being_opened_when_the_time_is_up_are_aborted_and_the_run_ends(store, monkeypatch):
    import threading

    from objperf.s3.client import S3Client

    answer = S3Client.attempt

    def slow_create(self, method, **params):
        if method == "create_multipart_upload":
            time.sleep(0.6)  # still on the wire when the run's 0.3 s are up
        return answer(self, method, **params)

    monkeypatch.setattr(S3Client, "attempt", slow_create)
    results = []
    run = threading.Thread(target=lambda: results.append(
        write(store, object_size=12 * MIB, part_size=5 * MIB, concurrency=4, duration=0.3)), daemon=True)
    run.start()
    run.join(30)
    assert results, "the run never ended"
    summary = results[0].summary
    assert summary["objects_written"] == 0 and summary["objects_cut"] == 0  # none of them had begun to move
    assert (results[0].rows["op"] == "ABORT_MPU").sum() == (results[0].rows["op"] == "CREATE_MPU").sum() > 0
    assert no_open_uploads(store)

"""The core of the suite against every S3 server objperf is tested with: SeaweedFS, Ceph's RADOS Gateway,
Swift's S3 API, moto and rclone's S3 gateway, each started here on loopback.  What a user relies on whatever
the store: ranged reads whose bytes are
right, listings past one page, multipart writes verified and cleaned up, server-side copies read back, errors
named, mixed runs, HTTP/2 asked for over cleartext, prefixes of mixed sizes."""

from __future__ import annotations

import json
import zlib
from dataclasses import replace

import pytest
from s3_servers import CephRGW, Moto, Rclone, SwiftS3, available, started

from conftest import run_cli
from objperf import load
from objperf._engine.payload import payload, payload_parts
from objperf.analysis.stats import failed_rows
from objperf.core.errors import UsageError
from objperf.dataset.directory import read_manifest
from objperf.s3.client import S3Client
from objperf.servers.seaweed import LocalSeaweed

pytestmark = [pytest.mark.integration, pytest.mark.compat]

BUCKET = "objperf-compat"
MIB = 1 << 20
OBJECTS = {"data/odd.bin": 5 * MIB + 12345, "data/small.bin": 1000}
SERVERS = {"seaweedfs": LocalSeaweed, "ceph-rgw": CephRGW, "swift": SwiftS3, "moto": Moto, "rclone": Rclone}


class Compat:
    """One server of the suite, its bucket seeded."""

    def __init__(self, name: str, server):
        self.name, self.server = name, server
        self.client = S3Client(server.settings())
        self.endpoint = server.endpoint

    def env(self) -> dict:
        import os

        return {**os.environ, "AWS_ACCESS_KEY_ID": self.server.access_key,
                "AWS_SECRET_ACCESS_KEY": self.server.secret_key, "AWS_CONFIG_FILE": "/nonexistent",
                "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_DEFAULT_REGION": self.region}

    @property
    def partial_status(self) -> int:
        """What the server answers a GET of part of an object: rclone's gateway 200 (with the range's bytes and
        Content-Range, which objperf checks and its summary points out), S3 and the others 206."""
        return 200 if self.name == "rclone" else 206

    @property
    def region(self) -> str:
        return self.server.settings().region

    def cli(self, command: str, *args: str, timeout: float = 180, env: dict | None = None):
        proc = run_cli("objperf", command, *args, "--endpoint", self.endpoint, env=env or self.env(),
                       timeout=timeout)
        for secret in (self.server.access_key, self.server.secret_key):
            assert secret not in proc.stdout + proc.stderr
        return proc


@pytest.fixture(scope="session", params=list(SERVERS))
def compat(request, tmp_path_factory):
    name = request.param
    missing = available().get(name)
    if missing:
        pytest.fail(f"{name}: {missing}")  # the compatibility suite exists to run them: never skip quietly
    server = started(SERVERS[name], tmp_path_factory.mktemp(name))
    try:
        store = Compat(name, server)
        store.client.create_bucket(BUCKET)
        for key, size in OBJECTS.items():
            store.client.put_large_object(BUCKET, key, payload_parts(size, len(key), part_size=5 * MIB))
        yield store
    finally:
        server.stop()


def test_ranged_reads_land_whole_with_their_crcs(compat, tmp_path):
    out = tmp_path / "run"
    proc = compat.cli("fetch", f"s3://{BUCKET}/data/odd.bin", "--range-size", "1MiB", "-c", "4", "--requests",
                      "24", "--verify", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    data = payload(OBJECTS["data/odd.bin"], seed=len("data/odd.bin"))
    assert len(rows) == 24 and (rows["status"] == compat.partial_status).all()
    if compat.name == "rclone":
        assert "GETs of part of an object were answered 200 OK, not 206" in proc.stdout
    for row in rows.itertuples():
        assert row.crc32 == zlib.crc32(bytes(data[row.offset:row.offset + row.bytes]))
    assert sorted(rows["offset"].unique().tolist()) == [i * MIB for i in range(6)]


def test_a_listing_past_one_page_reads_every_key(compat, tmp_path):
    keys = [f"many/k{i:04d}" for i in range(1003)]
    have = {k for k, _ in compat.client.list_keys(BUCKET, "many/")}
    for key in keys:
        if key not in have:
            compat.client.put_object(BUCKET, key, key.encode())
    out = tmp_path / "run"
    proc = compat.cli("fetch", f"s3://{BUCKET}/many/", "--requests", "1003", "-c", "32", "--range-size", "1KiB",
                      "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    assert sorted(rows["key"].astype(str)) == keys and (rows["bytes"] == 10).all()


def test_multipart_put_is_verified_and_cleaned_up(compat, tmp_path):
    out = tmp_path / "run"
    proc = compat.cli("put", f"s3://{BUCKET}/mpu/", "--object-size", "12MiB", "--part-size", "5MiB", "--keys", "2",
                      "--requests", "2", "-c", "4", "--verify", "--cleanup", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    summary = read_manifest(out)["summary"]
    assert summary["objects_written"] == 2 and summary["verified"].startswith("ok: every key written (2)")
    rows = load(out)
    assert (rows["op"] == "UPLOAD_PART").sum() == 6 and (rows.loc[rows["op"] == "UPLOAD_PART", "status"] == 200).all()
    assert compat.client.list_keys(BUCKET, "mpu/") == []
    assert compat.client.open_uploads(BUCKET, "mpu/") == []


def test_heads_stat_each_key_and_deletes_remove_each_once(compat, tmp_path):
    """The ops that move no body, on every server: a HEAD names each object's size and ETag; a DELETE of each
    object under a prefix leaves none there and nothing else touched."""
    head = compat.cli("fetch", f"s3://{BUCKET}/data/", "--op", "head", "-c", "2", "--requests", "8", "--out",
                      str(tmp_path / "head"))
    assert head.returncode == 0, head.stderr
    rows = load(tmp_path / "head")
    assert len(rows) == 8 and (rows["op"] == "HEAD").all() and (rows["status"] == 200).all()
    assert (rows["curl_code"] == 0).all() and set(rows["key"].astype(str)) == set(OBJECTS)
    keys = {f"gone/k{i:02d}" for i in range(12)}
    for key in keys:
        compat.client.put_object(BUCKET, key, key.encode())
    gone = compat.cli("delete", f"s3://{BUCKET}/gone/", "-c", "4", "--out", str(tmp_path / "delete"))
    assert gone.returncode == 0, gone.stderr
    rows = load(tmp_path / "delete")
    assert sorted(rows["key"].astype(str)) == sorted(keys) and (rows["op"] == "DELETE").all()
    assert rows["status"].isin([200, 204]).all() and (rows["curl_code"] == 0).all()
    assert compat.client.list_keys(BUCKET, "gone/") == []
    assert {k for k, _ in compat.client.list_keys(BUCKET, "data/")} == set(OBJECTS)


def test_lists_page_through_a_prefix_and_batch_deletes_remove_each_key_once(compat, tmp_path):
    """LIST and DeleteObjects on every server: every pass pages through what was put, --max-keys a page, a
    delimiter rolling keys into common prefixes; a batch delete answers for every key and leaves none there,
    and nothing else touched."""
    keys = [f"listed/d{d}/k{i}" for d in range(3) for i in range(5)] + [f"listed/top{i:02d}" for i in range(10)]
    for key in keys:
        compat.client.put_object(BUCKET, key, key.encode())

    def pages(out) -> dict[int, list[int]]:  # each page's length by its place in its pass
        rows = load(out)
        assert (rows["op"] == "LIST").all() and (rows["status"] == 200).all() and (rows["curl_code"] == 0).all()
        return {int(at): sorted(int(n) for n in mine) for at, mine in rows.groupby("offset")["length"]}

    flat = compat.cli("list", f"s3://{BUCKET}/listed/", "--max-keys", "10", "--passes", "2", "--out",
                      str(tmp_path / "flat"))
    assert flat.returncode == 0, flat.stderr
    assert pages(tmp_path / "flat") == {0: [10, 10], 1: [10, 10], 2: [5, 5]}
    nested = compat.cli("list", f"s3://{BUCKET}/listed/", "--delimiter", "/", "--max-keys", "4", "--out",
                        str(tmp_path / "nested"))
    assert nested.returncode == 0, nested.stderr
    assert pages(tmp_path / "nested") == {0: [4], 1: [4], 2: [4], 3: [1]}  # 3 common prefixes and 10 keys
    gone = compat.cli("delete", f"s3://{BUCKET}/listed/", "--batch", "10", "-c", "2", "--out",
                      str(tmp_path / "delete"), "--json")
    assert gone.returncode == 0, gone.stderr
    rows = load(tmp_path / "delete")
    assert (rows["op"] == "DELETE_OBJECTS").all() and sorted(rows["length"]) == [5, 10, 10]
    assert (rows["status"] == 200).all() and (rows["curl_code"] == 0).all()
    assert json.loads(gone.stdout)["keys_deleted"] == len(keys)
    assert compat.client.list_keys(BUCKET, "listed/") == []
    assert {k for k, _ in compat.client.list_keys(BUCKET, "data/")} == set(OBJECTS)
# What each server does with a server-side copy, where it is not a copy: rclone's gateway takes an UploadPartCopy
# for an UploadPart of an empty body (200, the empty body's MD5 as its ETag, no CopyPartResult), which objperf fails
# (code 8: no answer S3 gives) and aborts, rather than complete an object of empty parts.
COPIES = {"rclone": {"COPY": "ok", "UPLOAD_PART_COPY": ["200 - (curl 8)"]}}


def test_copies_read_back_as_their_sources_or_each_op_is_refused_with_its_code(compat, tmp_path):
    """Server-side copies on every server: CopyObject (data/small.bin) and a multipart copy by UploadPartCopy
    ranges (data/odd.bin, its last part odd).  Each copy reads back as its source, or every request of an op the
    server lacks is a failed row with the server's S3 code (or objperf's for an answer S3 would not give), its
    upload aborted; docs/compare.md says which server lacks which."""
    to = "copies/"
    proc = compat.cli("copy", f"s3://{BUCKET}/data/", "--to", f"s3://{BUCKET}/{to}", "--part-size", "5MiB", "-c", "4",
                      "--out", str(tmp_path / "run"))
    assert "Traceback" not in proc.stderr, proc.stderr
    rows = load(tmp_path / "run")
    ops = rows["op"].astype(str)
    said = {}
    for op in ("COPY", "UPLOAD_PART_COPY"):
        mine = rows[ops == op]
        ok = mine["status"].between(200, 299) & (mine["curl_code"] == 0)
        said[op] = "ok" if len(mine) and ok.all() else sorted({f"{s} {e or '-'} (curl {c})" for s, e, c in zip(
            mine["status"], mine["s3_error"].astype(str), mine["curl_code"])})
    assert said == COPIES.get(compat.name, {"COPY": "ok", "UPLOAD_PART_COPY": "ok"})
    completed = rows[ops == "COMPLETE_MPU"]
    whole = said["UPLOAD_PART_COPY"] == "ok"
    assert len(completed) == whole and (completed["status"] == 200).all()
    if not whole:  # the multipart copy with failed parts was aborted
        assert rows.loc[ops == "ABORT_MPU", "status"].isin([200, 204]).any()
    for key, done in (("small.bin", said["COPY"] == "ok"), ("odd.bin", whole)):
        if done:
            size = OBJECTS[f"data/{key}"]
            assert compat.client.get_object(BUCKET, to + key, limit=size) == \
                compat.client.get_object(BUCKET, f"data/{key}", limit=size), key
    assert proc.returncode == (0 if said["COPY"] == "ok" and whole else 1), proc.stderr
    assert compat.client.open_uploads(BUCKET, to) == []  # completed or aborted, none left open


def test_a_missing_key_is_a_404_named_in_the_rows(compat, tmp_path):
    from objperf.plan.reads import ReadWorkload
    from objperf.run.reads import run_read
    from objperf.s3.target import ObjectRef, ResolvedTarget

    settings = compat.server.settings()
    url = compat.client.presign(BUCKET, "no/such/key")
    target = ResolvedTarget("s3", [ObjectRef(BUCKET, "no/such/key", 100)], compat.endpoint, settings, [url])
    result = run_read(target, ReadWorkload(concurrency=1, threads=1, range_size=100, requests=2))
    assert (result.rows["status"] == 404).all() and (result.rows["s3_error"] == "NoSuchKey").all()


@pytest.mark.parametrize("what, url, message", [
    ("key", f"s3://{BUCKET}/nope.bin", f"object s3://{BUCKET}/nope.bin does not exist"),
    ("bucket by key", "s3://objperf-no-such-bucket/k", "bucket 'objperf-no-such-bucket' does not exist"),
    ("bucket by prefix", "s3://objperf-no-such-bucket/", "bucket 'objperf-no-such-bucket' does not exist"),
])
def test_missing_things_are_one_line_each(compat, what, url, message):
    proc = compat.cli("fetch", url, "-n", "1", "--no-save")
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_wrong_credentials_are_one_line_without_secrets(compat):
    if compat.name == "moto":
        pytest.skip("moto's server checks no signatures without its IAM mode, which breaks presigned URLs")
    env = {**compat.env(), "AWS_SECRET_ACCESS_KEY": "wrong-secret-" * 3}
    proc = compat.cli("fetch", f"s3://{BUCKET}/data/small.bin", "-n", "1", "--no-save", env=env)
    assert proc.returncode == 1, proc.stderr
    assert "access denied" in proc.stderr and "wrong-secret" not in proc.stderr + proc.stdout


def test_a_mixed_run_reads_and_writes_at_once(compat, tmp_path):
    out = tmp_path / "run"
    proc = compat.cli("mixed", f"s3://{BUCKET}/data/odd.bin", "--write-to", f"s3://{BUCKET}/mixed/",
                      "--object-size", "6MiB", "--part-size", "5MiB", "-c", "2", "--duration", "3s", "--cleanup",
                      "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    assert (rows["op"] == "GET").sum() > 0 and (rows["op"] == "UPLOAD_PART").sum() > 0
    assert not failed_rows(rows).any()  # requests cut by the clock at the end are not failures
    assert compat.client.open_uploads(BUCKET, "mixed/") == []


def test_http2_asked_over_cleartext_still_reads_and_says_what_answered(compat, tmp_path):
    out = tmp_path / "run"
    proc = compat.cli("fetch", f"s3://{BUCKET}/data/odd.bin", "--http", "2", "--requests", "6", "--range-size",
                      "1MiB", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    assert (rows["status"] == compat.partial_status).all()
    versions = set(rows["http_version"].astype(str))
    if versions == {"1.1"}:
        assert "asked for HTTP/2, the server answered HTTP/1.1: 6" in proc.stdout + proc.stderr


def test_a_prefix_of_mixed_sizes_reads_every_range_once(compat, tmp_path):
    sizes = {"edge/a.bin": 4 * MIB, "edge/c.bin": MIB + MIB // 2, "edge/d.bin": MIB // 2, "edge/empty.bin": 0,
             "edge/dir/": 0}
    for key, size in sizes.items():
        compat.client.put_object(BUCKET, key, bytes(payload(size, seed=7))) if size else \
            compat.client.put_object(BUCKET, key, b"")
    out = tmp_path / "run"
    proc = compat.cli("fetch", f"s3://{BUCKET}/edge/", "--range-size", "1MiB", "-c", "3", "--out", str(out),
                      "--json")
    assert proc.returncode == 0, proc.stderr
    rows = load(out)
    ranges = rows.groupby(rows["key"].astype(str))["offset"].apply(sorted).to_dict()
    assert ranges == {"edge/a.bin": [0, MIB, 2 * MIB, 3 * MIB], "edge/c.bin": [0, MIB], "edge/d.bin": [0]}
    assert json.loads(proc.stdout)["skipped_objects"] == 2


def test_a_bucket_in_another_region_stops_the_run_naming_both(compat, tmp_path):
    """A store that checks the region of a signature gets signatures for its region or none: without the check,
    botocore's calls quietly followed the store while every presigned request was signed for the wrong region.
    moto says where a bucket lives in AWS's x-amz-bucket-region; Swift names its region only in the body of a
    refusal; SeaweedFS and Ceph take any region."""
    if compat.name == "moto":
        compat.client._botocore.client.create_bucket(
            Bucket="objperf-eu", CreateBucketConfiguration={"LocationConstraint": "eu-central-1"})
        bucket, right, wrong = "objperf-eu", "eu-central-1", "us-east-1"
    elif compat.name == "swift":
        bucket, right, wrong = BUCKET, compat.region, "us-east-1"
    else:
        pytest.skip(f"{compat.name} keeps every bucket in one region and names none")
    compat.client.put_object(bucket, "k.bin", b"x" * 1000)
    env = {**compat.env(), "AWS_DEFAULT_REGION": wrong}
    told = f"bucket '{bucket}' is in region {right}, objperf signs for {wrong}"
    for url in (f"s3://{bucket}/k.bin", f"s3://{bucket}/"):
        proc = compat.cli("fetch", url, "-n", "2", "--no-save", env=env)
        assert proc.returncode == 2, proc.stderr
        assert told in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    put = compat.cli("put", f"s3://{bucket}/w/", "--object-size", "1KiB", "-n", "1", "--no-save", env=env)
    assert put.returncode == 2 and told in put.stderr
    right_run = compat.cli("fetch", f"s3://{bucket}/k.bin", "-n", "2", "--region", right, "--no-save", env=env)
    assert right_run.returncode == 0, right_run.stderr
    wrong_settings = replace(compat.server.settings(), region=wrong)
    with pytest.raises(UsageError, match=f"is in region {right}"):  # botocore's side, where light cannot go
        S3Client(wrong_settings, light=False).check_region(bucket)


def test_long_s3_error_codes_reach_the_rows_whole(compat):
    """Swift names a query signature for the wrong region AuthorizationQueryParametersError: 33 characters,
    once cut to 32 in the rows."""
    if compat.name != "swift":
        pytest.skip(f"{compat.name} takes a signature for any region")
    from objperf.plan.reads import ReadWorkload
    from objperf.run.reads import run_read
    from objperf.s3.target import ObjectRef, ResolvedTarget

    wrong_settings = replace(compat.server.settings(), region="us-east-1")
    url = S3Client(wrong_settings).presign(BUCKET, "data/small.bin")
    target = ResolvedTarget("s3", [ObjectRef(BUCKET, "data/small.bin", 1000)], compat.endpoint, wrong_settings,
                            [url])
    result = run_read(target, ReadWorkload(concurrency=1, threads=1, range_size=100, requests=2))
    assert (result.rows["status"] == 400).all()
    assert (result.rows["s3_error"] == "AuthorizationQueryParametersError").all()


OK = (200, "")
# How each server takes a checksum sent with a presigned PUT whose URL signs it (objperf's signing, the value in
# base64 as S3 has it): its answer to the right value in a header, a wrong one, the right one sent but not
# signed, the right value trailing an aws-chunked body (its framing headers signed, x-amz-content-sha256 among
# them with the payload unsigned), a wrong one there.  Only SeaweedFS checks a value.
CHECKSUM_ANSWERS = {
    "seaweedfs": {"header": OK, "wrong header": (400, "BadDigest"), "unsigned header": (403, "SignatureDoesNotMatch"),
                  "trailing": OK, "wrong trailing": (400, "InvalidDigest")},
    "rclone": {"header": OK, "wrong header": OK, "unsigned header": (403, "AccessDenied"), "trailing": OK,
               "wrong trailing": OK},
    "moto": {"header": OK, "wrong header": OK, "unsigned header": OK, "trailing": OK, "wrong trailing": OK},
    "ceph-rgw": {"header": OK, "wrong header": OK, "unsigned header": OK,
                 "trailing": (403, "SignatureDoesNotMatch"), "wrong trailing": (403, "SignatureDoesNotMatch")},
    "swift": {"header": OK, "wrong header": OK, "unsigned header": OK, "trailing": (501, "NotImplemented"),
              "wrong trailing": (501, "NotImplemented")},
}
# Which of the objects written the server keeps the value of, as it was sent (a HEAD asking for checksums gives it
# back): rclone keeps a wrong header's value, moto a wrong trailing one, and neither keeps the other kind.
CHECKSUMS_KEPT = {"seaweedfs": {"header", "trailing"}, "rclone": {"header", "wrong header"},
                  "moto": {"trailing", "wrong trailing"}, "ceph-rgw": set(), "swift": set()}


@pytest.mark.parametrize("name", ["crc32", "crc32c", "crc64nvme", "sha256"])
def test_checksums_sent_with_a_presigned_put_as_each_server_takes_them(compat, name):
    import requests

    from objperf.core.checksums import algorithm
    from objperf.s3.xml import element_text

    check = algorithm(name)
    body = payload(10_000, seed=3).tobytes()
    value, wrong = check.value(body), check.value(body[1:])
    framed, framed_wrong = check.aws_chunked(len(body), value), check.aws_chunked(len(body), wrong)
    cases = {"header": (body, check.headers(value), check.headers(value)),
             "wrong header": (body, check.headers(wrong), check.headers(wrong)),
             "unsigned header": (body, {}, check.headers(value)),
             "trailing": (framed.prefix + body + framed.suffix, framed.headers, framed.headers),
             "wrong trailing": (framed_wrong.prefix + body + framed_wrong.suffix, framed_wrong.headers,
                                framed_wrong.headers)}
    answers, kept = {}, set()
    for case, (sent, signed, headers) in cases.items():
        key = f"checksums/{name}/{case.replace(' ', '-')}"
        url = compat.client.presign(BUCKET, key, method="put_object", expires=600, headers=signed)
        answer = requests.put(url, data=sent, headers=headers, timeout=60)
        answers[case] = (answer.status_code, element_text(answer.content, "Code") or "")
        if answer.status_code == 200:
            assert requests.get(compat.client.presign(BUCKET, key), timeout=60).content == body, case
            mode = {"x-amz-checksum-mode": "ENABLED"}
            head = requests.head(compat.client.presign(BUCKET, key, method="head_object", headers=mode),
                                 headers=mode, timeout=60)
            told = head.headers.get(check.header)
            assert told in (None, value if "wrong" not in case else wrong), case
            if told:
                kept.add(case)
    assert answers == CHECKSUM_ANSWERS[compat.name]
    assert kept == CHECKSUMS_KEPT[compat.name]

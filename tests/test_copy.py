"""``objperf copy``: every object under a prefix (or the keys named) copied once by the store itself, CopyObject up
to --part-size and a multipart copy (UploadPartCopy, a byte range a part) above it, one row a request; each copy's
bytes are its source's, no upload is left open, and ``objperf analyze`` tells what the run told."""

from __future__ import annotations

import json
import uuid

import pytest

from conftest import run_cli
from objperf import load
from objperf._engine.payload import payload

pytestmark = [pytest.mark.timeout(180), pytest.mark.integration]
PART = 5 << 20  # S3's smallest part


def seeded(store, sizes: dict[str, int]) -> str:
    """Objects of these sizes (each its own bytes) under a new prefix; the prefix."""
    prefix = f"copy-{uuid.uuid4().hex[:8]}/"
    for n, (key, size) in enumerate(sizes.items()):
        data = payload(size, seed=101 + n).tobytes() if size else b""
        chunks = [data[i:i + PART] for i in range(0, size, PART)] or [b""]
        store.client.put_large_object(store.bucket, prefix + key, chunks)
    return prefix


def body(store, key: str, size: int) -> bytes:
    return store.client.get_object(store.bucket, key, limit=size)


def copy(store, *args: str, timeout: float = 150):
    return run_cli("objperf", "copy", *args, "--endpoint", store.server.endpoint, env=store.env(), timeout=timeout)


def test_each_object_is_copied_once_by_copyobject_and_reads_back_as_its_source(store, tmp_path):
    sizes = {"a.bin": 1000, "deeper/b.bin": 70_000, "empty": 0}
    prefix = seeded(store, sizes)
    done = copy(store, f"s3://{store.bucket}/{prefix}", "-c", "4", "--out", str(tmp_path / "run"), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    to = summary["copied_to"].removeprefix(f"s3://{store.bucket}/")
    assert to.startswith("objperf-copy-") and to.endswith("/")
    rows = load(tmp_path / "run")
    assert len(rows) == len(sizes) and (rows["op"].astype(str) == "COPY").all()
    assert (rows["status"] == 200).all() and (rows["curl_code"] == 0).all()
    by_key = rows.set_index(rows["key"].astype(str))
    assert set(by_key.index) == {to + key for key in sizes}  # each object once, at its key under the new prefix
    for key, size in sizes.items():
        assert by_key.loc[to + key, "bytes"] == size  # what the store copied
        assert body(store, to + key, size) == body(store, prefix + key, size)  # the copy's bytes are its source's
    assert summary["objects_copied"] == len(sizes) and summary["objects_failed"] == 0
    assert summary["ops"]["COPY"]["requests"] == len(sizes) and summary["ops"]["COPY"]["failed"] == 0
    assert summary["ops"]["COPY"]["bytes"] == summary["bytes"] == sum(sizes.values())
    assert [k for k, _ in store.client.list_objects(store.bucket, prefix).keys] == sorted(prefix + k for k in sizes)


def test_a_large_object_is_a_multipart_copy_its_odd_last_part_included(store, tmp_path):
    big, small = 2 * PART + 12_345, 3000
    prefix = seeded(store, {"big.bin": big, "small.bin": small})
    to = f"copied-{uuid.uuid4().hex[:8]}/"
    done = copy(store, f"s3://{store.bucket}/{prefix}", "--to", f"s3://{store.bucket}/{to}", "--part-size", "5MiB",
                "-c", "8", "--out", str(tmp_path / "run"), "--json")
    assert done.returncode == 0, done.stderr
    rows = load(tmp_path / "run")
    ops = rows["op"].astype(str)
    parts = rows[ops == "UPLOAD_PART_COPY"].sort_values("offset")
    assert list(parts["offset"]) == [0, PART, 2 * PART] and list(parts["length"]) == [PART, PART, 12_345]
    assert (parts["status"] == 200).all() and parts["bytes"].sum() == big and (parts["etag"].astype(str) != "").all()
    assert (parts["key"].astype(str) == to + "big.bin").all()
    assert ops.value_counts().to_dict() == {"UPLOAD_PART_COPY": 3, "CREATE_MPU": 1, "COMPLETE_MPU": 1, "COPY": 1}
    assert body(store, to + "big.bin", big) == body(store, prefix + "big.bin", big)
    assert body(store, to + "small.bin", small) == body(store, prefix + "small.bin", small)
    assert store.client.open_uploads(store.bucket, to) == []  # the upload was completed, none left open
    summary = json.loads(done.stdout)
    assert summary["objects_copied"] == 2 and summary["ops"]["UPLOAD_PART_COPY"]["bytes"] == big
    again = json.loads(run_cli("objperf", "analyze", str(tmp_path / "run"), "--json").stdout)["summary"]
    for name, op in summary["ops"].items():  # the dataset tells each op's requests, errors and bytes as the run did
        assert {k: again["ops"][name].get(k) for k in ("requests", "failed", "bytes")} == \
            {k: op.get(k) for k in ("requests", "failed", "bytes")}
    assert again["objects_copied"] == 2 and again["bytes"] == summary["bytes"] == big + small


def test_the_keys_named_are_the_only_ones_copied_and_cleanup_deletes_the_copies(store, tmp_path):
    prefix = seeded(store, {"x": 100, "y": 200, "z": 300})
    to = f"copied-{uuid.uuid4().hex[:8]}/"
    done = copy(store, f"s3://{store.bucket}/{prefix}", "--keys", "x,z", "--to", f"s3://{store.bucket}/{to}",
                "--verify", "--cleanup", "--no-save", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["ops"]["COPY"]["requests"] == 2 and summary["objects_copied"] == 2
    assert summary["verified"].startswith("ok") and summary["cleaned_up"] == 2
    assert store.client.list_objects(store.bucket, to).keys == []  # the copies were deleted
    assert len(store.client.list_objects(store.bucket, prefix).keys) == 3  # their sources were not


def test_with_no_url_it_seeds_the_embedded_server_and_copies_what_it_seeded(tmp_path):
    done = run_cli("objperf", "copy", "--objects", "6", "--object-size", "6MiB", "--part-size", "5MiB", "--verify",
                   "--out", str(tmp_path / "run"), "--json", timeout=150)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["objects_copied"] == 6 and summary["verified"].startswith("ok")
    rows = load(tmp_path / "run")
    assert rows["op"].astype(str).value_counts().to_dict() == {"UPLOAD_PART_COPY": 12, "CREATE_MPU": 6,
                                                               "COMPLETE_MPU": 6}
    analyzed = run_cli("objperf", "analyze", str(tmp_path / "run"))
    assert analyzed.returncode == 0 and "in short     COPY c16: " in analyzed.stdout
    assert "6 objects copied" in analyzed.stdout


def test_a_server_kept_across_runs_copies_what_each_run_asked_for_and_no_more():
    from objperf import api

    with api.local_server(ipv6=False):
        runs = [api.copy(objects=n, object_size=size, no_save=True, progress=False)
                for n, size in ((5, "4KiB"), (3, "8KiB"), (2, "4KiB"))]
    assert [run.summary["objects_copied"] for run in runs] == [5, 3, 2]
    assert [run.summary["bytes"] for run in runs] == [5 * 4096, 3 * 8192, 2 * 4096]


@pytest.mark.parametrize("args, says", [
    (("https://example.test/x",), "give URL as s3://BUCKET/PREFIX/"),
    (("s3://b/p/", "--to", "/tmp/x"), "give --to as s3://"),
    (("s3://b/p/", "--to", "s3://b/q"), "end it with /"),
    (("s3://b/p/", "--to", "s3://b/p/sub/"), "overlap"),
    (("s3://b/p/", "--part-size", "1MiB"), "5MiB to 5GiB"),
    (("s3://b/p/", "-c", "0"), "concurrency"),
    (("s3://b/p/", "--buckets", "x,y"), "--buckets"),
    (("s3://b/key", "--keys", "a,b"), "not both"),
    (("s3://b/p/", "--range-size", "1MiB"), "unrecognized arguments"),
])
def test_a_copy_asked_wrongly_is_one_line_before_any_request(tmp_path, args, says):
    done = run_cli("objperf", "copy", *args, "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()

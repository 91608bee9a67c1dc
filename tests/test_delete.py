"""``objperf delete``: every object under a prefix (or the keys named) deleted once through the one engine, one
row a DELETE, the rate and latency in the summary; what lies outside the prefix is left as it was."""

from __future__ import annotations

import json
import uuid

import pytest

from conftest import run_cli
from objperf import load

pytestmark = pytest.mark.timeout(120)


def seeded(store, n: int) -> tuple[str, set[str]]:
    prefix = f"delete-{uuid.uuid4().hex[:8]}/"
    keys = {f"{prefix}k-{i:03d}" for i in range(n)}
    for key in keys:
        store.client.put_object(store.bucket, key, b"x" * 100)
    return prefix, keys


def listed(store, prefix: str) -> set[str]:
    return {key for key, _ in store.client.list_objects(store.bucket, prefix).keys}


@pytest.mark.integration
def test_every_object_under_the_prefix_is_deleted_once_and_nothing_else(store, tmp_path):
    prefix, keys = seeded(store, 40)
    before = listed(store, "data/")
    done = run_cli("objperf.commands.delete", f"s3://{store.bucket}/{prefix}", "--endpoint", store.server.endpoint,
                   "-c", "8", "--out", str(tmp_path / "run"), "--json", env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(tmp_path / "run")
    assert len(rows) == 40 and (rows["op"].astype(str) == "DELETE").all()
    assert sorted(rows["key"].astype(str)) == sorted(keys)  # each key once
    assert (rows["status"] == 204).all() and (rows["curl_code"] == 0).all() and (rows["bytes"] == 0).all()
    assert listed(store, prefix) == set()  # a deleted key is gone
    assert listed(store, "data/") == before  # and only those
    summary = json.loads(done.stdout)
    assert summary["ops"]["DELETE"]["requests"] == 40 and summary["ops"]["DELETE"]["failed"] == 0
    assert summary["error_requests"] == 0 and summary["requests"] == 40


@pytest.mark.integration
def test_the_keys_named_are_the_only_ones_deleted(store, tmp_path):
    prefix, keys = seeded(store, 6)
    named = sorted(keys)[:2]
    done = run_cli("objperf.commands.delete", f"s3://{store.bucket}/{prefix}", "--endpoint", store.server.endpoint,
                   "--keys", ",".join(k[len(prefix):] for k in named), "--no-save", "--json", env=store.env())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ops"]["DELETE"]["requests"] == 2
    assert listed(store, prefix) == keys - set(named)


@pytest.mark.integration
def test_with_no_url_it_seeds_the_embedded_server_and_deletes_what_it_seeded(tmp_path):
    done = run_cli("objperf", "delete", "--objects", "30", "--out", str(tmp_path / "run"), "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    rows = load(tmp_path / "run")
    assert len(rows) == 30 and (rows["status"] == 204).all()
    assert set(rows["key"].astype(str)) == {f"delete/object-{i:06d}" for i in range(30)}
    analyzed = run_cli("objperf.commands.analyze", str(tmp_path / "run"))
    assert analyzed.returncode == 0 and "in short     DELETE c16: " in analyzed.stdout


@pytest.mark.integration
@pytest.mark.parametrize("args, says", [
    (("https://example.test/x",), "give s3://BUCKET/PREFIX/"),
    (("s3://b/p/", "--verify"), "unrecognized arguments"),
    (("s3://b/p/", "-c", "0"), "concurrency"),
])
def test_a_delete_asked_wrongly_is_one_line_before_any_request(tmp_path, args, says):
    done = run_cli("objperf", "delete", *args, "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.integration
def test_fetch_does_not_delete(tmp_path):
    done = run_cli("objperf.fetch", "s3://b/p/", "--op", "delete", "--no-save")
    assert done.returncode == 2 and "Traceback" not in done.stderr and "--op" in done.stderr


@pytest.mark.integration
def test_a_batch_delete_leaves_exactly_the_rest(store, tmp_path):
    """--batch 500 of the first 1,234 of 1,300 keys: three DeleteObjects (500, 500, 234), each answered for every
    key it named; the 66 after them, and everything outside the prefix, are there as they were."""
    prefix = f"delete-{uuid.uuid4().hex[:8]}/"
    keys = [f"{prefix}k-{i:04d}" for i in range(1300)]
    for key in keys:
        store.client.put_object(store.bucket, key, b"x")
    before = listed(store, "data/")
    done = run_cli("objperf.commands.delete", f"s3://{store.bucket}/{prefix}", "--endpoint", store.server.endpoint,
                   "--keys", "1234", "--batch", "500", "-c", "2", "--out", str(tmp_path / "run"), "--json",
                   env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(tmp_path / "run")
    assert (rows["op"].astype(str) == "DELETE_OBJECTS").all() and (rows["status"] == 200).all()
    assert (rows["curl_code"] == 0).all() and sorted(rows["length"]) == [234, 500, 500]
    assert sorted(rows["key"].astype(str)) == [keys[0], keys[500], keys[1000]]  # a batch's row names its first key
    assert listed(store, prefix) == set(keys[1234:])
    assert listed(store, "data/") == before
    summary = json.loads(done.stdout)
    assert summary["keys_deleted"] == 1234 and summary["keys_refused"] == 0
    assert summary["ops"]["DELETE_OBJECTS"]["keys"] == 1234 and summary["ops"]["DELETE_OBJECTS"]["requests"] == 3
    assert summary["ops"]["DELETE_OBJECTS"]["keys_per_s"] > summary["ops"]["DELETE_OBJECTS"]["requests_per_s"]


@pytest.mark.integration
def test_a_batch_delete_on_the_embedded_server_says_keys_and_batches_and_analyze_the_same(tmp_path):
    out = tmp_path / "run"
    done = run_cli("objperf", "delete", "--objects", "250", "--batch", "100", "--out", str(out), timeout=120)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith(("  DELETE_OBJECTS ", "  in short"))]
    assert "3 requests (0 failed)" in said[0] and "250 keys deleted" in said[0], done.stdout
    assert "DELETE_OBJECTS c16 batch 100" in said[1] and "keys/s" in said[1]
    again = run_cli("objperf", "analyze", str(out))
    assert [line for line in again.stdout.splitlines() if line.startswith(("  DELETE_OBJECTS ", "  in short"))] \
        == said
    assert sorted(load(out)["length"]) == [50, 100, 100]


@pytest.mark.integration
@pytest.mark.parametrize("batch, says", [("1001", "--batch must be from 1 to 1,000 keys"), ("0", "--batch"),
                                         ("ten", "--batch")])
def test_a_bad_batch_is_one_line_before_any_request(tmp_path, batch, says):
    from hostile import HostileS3
    from test_hostile import env

    with HostileS3("well-behaved") as s3:
        done = run_cli("objperf", "delete", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--batch", batch,
                       "--out", str(tmp_path / "r"), env=env())
        assert s3.calls == {}
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()


def test_a_key_no_document_can_name_is_refused_before_a_batch_and_batches_keep_to_a_bucket():
    from objperf.core.errors import UsageError
    from objperf.run.batches import batches_of, check_keys
    from objperf.s3.target import ObjectRef

    with pytest.raises(UsageError, match="delete without --batch"):
        check_keys([ObjectRef("b", "fine", 1), ObjectRef("b", "bell\x07", 1)])
    objects = [ObjectRef(bucket, f"k{i}", 1) for bucket in ("a", "b") for i in range(5)]
    assert batches_of(objects, 3) == [(0, 3), (3, 5), (5, 8), (8, 10)]
    assert batches_of(objects[:1], 1000) == [(0, 1)]

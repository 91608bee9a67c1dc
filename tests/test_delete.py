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

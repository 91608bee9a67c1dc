"""``objperf mixed --mix``: one engine drawing each request from a weighted mix of GET, HEAD, PUT and DELETE on
whole objects, and LIST of their prefix: the shares asked are the shares done, every answer is to a request S3
would serve (no GET of an object being deleted), each op apart in the summary, and analyze telling the same."""

from __future__ import annotations

import json
import uuid

import pytest

from conftest import run_cli
from objperf import load
from objperf.plan.mix import MixWorkload, parse_mix
from objperf.run.mix import run_mix

pytestmark = pytest.mark.timeout(240)


@pytest.mark.integration
def test_ten_thousand_requests_keep_the_shares_asked_and_s3_serves_every_one(store):
    prefix = f"mix-{uuid.uuid4().hex[:8]}/"
    asked = parse_mix("get=60,put=20,head=10,delete=10")
    workload = MixWorkload(shares=asked, object_size=1024, concurrency=32, requests=10_000, bucket=store.bucket,
                           prefix=prefix, seed=7)
    result = run_mix(store.server.settings(), workload)
    rows = result.rows
    assert result.status == "complete" and len(rows) == 10_000
    assert (rows["curl_code"] == 0).all() and rows["status"].between(200, 299).all()  # no 404: none deleted
    done = rows["op"].astype(str).str.lower().value_counts(normalize=True)
    for op, share in asked.items():
        assert abs(done[op] - share) <= 0.02, (op, done[op], share)
    assert (rows.loc[rows["op"].astype(str).isin(["GET", "PUT"]), "bytes"] == 1024).all()
    listed = {key for key, _ in store.client.list_objects(store.bucket, prefix).keys}
    deleted = set(rows.loc[rows["op"].astype(str) == "DELETE", "key"].astype(str))
    written = set(rows.loc[rows["op"].astype(str) == "PUT", "key"].astype(str))
    assert deleted and not deleted & listed  # a deleted key is gone
    assert written - deleted <= listed  # and a written one not deleted is there
    assert set(result.summary["ops"]) == {"GET", "HEAD", "PUT", "DELETE"}
    assert sum(o["requests"] for o in result.summary["ops"].values()) == 10_000


@pytest.mark.integration
def test_lists_in_a_mix_keep_their_share_and_each_lists_a_first_page_of_max_keys(store):
    """LISTs drawn beside GETs, PUTs and DELETEs: their share is the one asked, each asks for the first page of the
    mix's prefix (never fewer than max-keys objects there: more PUTs than DELETEs), apart in the summary with its
    keys; the objects' requests go on as before."""
    prefix = f"mix-{uuid.uuid4().hex[:8]}/"
    asked = parse_mix("get=45,list=25,put=20,delete=10")
    workload = MixWorkload(shares=asked, object_size=512, concurrency=16, requests=4000, bucket=store.bucket,
                           prefix=prefix, seed=5, max_keys=10)
    result = run_mix(store.server.settings(), workload)
    rows = result.rows
    assert result.status == "complete" and len(rows) == 4000
    assert (rows["curl_code"] == 0).all() and rows["status"].between(200, 299).all()
    done = rows["op"].astype(str).str.lower().value_counts(normalize=True)
    for op, share in asked.items():
        assert abs(done[op] - share) <= 0.03, (op, done[op], share)
    lists = rows[rows["op"].astype(str) == "LIST"]
    assert (lists["length"] == 10).all() and (lists["offset"] == 0).all() and (lists["bytes"] > 0).all()
    assert set(lists["key"].astype(str)) == {prefix}
    listed = result.summary["ops"]["LIST"]
    assert listed["requests"] == len(lists) and listed["keys"] == 10 * len(lists) and listed["failed"] == 0
    assert "keys" not in result.summary["ops"]["GET"]


@pytest.mark.integration
def test_copies_in_a_mix_are_new_objects_with_their_sources_bytes(store):
    """COPYs drawn beside GETs, PUTs and DELETEs: their share is the one asked, each a new object whose bytes are
    its source's, never a source being deleted, the copies there for the others' requests after."""
    prefix = f"mix-{uuid.uuid4().hex[:8]}/"
    asked = parse_mix("get=40,copy=30,put=15,delete=15")
    workload = MixWorkload(shares=asked, object_size=2048, concurrency=16, requests=3000, bucket=store.bucket,
                           prefix=prefix, seed=11)
    result = run_mix(store.server.settings(), workload)
    rows = result.rows
    assert result.status == "complete" and len(rows) == 3000
    assert (rows["curl_code"] == 0).all() and rows["status"].between(200, 299).all()  # no copy of a deleted one
    done = rows["op"].astype(str).str.lower().value_counts(normalize=True)
    for op, share in asked.items():
        assert abs(done[op] - share) <= 0.03, (op, done[op], share)
    copies = rows[rows["op"].astype(str) == "COPY"]
    assert (copies["bytes"] == 2048).all() and copies["key"].astype(str).str.contains("/copy-").all()
    deleted = set(rows.loc[rows["op"].astype(str) == "DELETE", "key"].astype(str))
    kept = sorted(set(copies["key"].astype(str)) - deleted)
    listed = {key for key, _ in store.client.list_objects(store.bucket, prefix).keys}
    assert kept and set(kept) <= listed
    originals = {store.client.get_object(store.bucket, key, limit=1 << 20) for key in listed if "/copy-" not in key}
    for key in kept[:20]:  # a copy's bytes are an object's of the pool
        assert store.client.get_object(store.bucket, key, limit=1 << 20) in originals
    assert result.summary["ops"]["COPY"]["requests"] == len(copies) and result.summary["ops"]["COPY"]["failed"] == 0


@pytest.mark.integration
def test_the_same_seed_draws_the_same_ops(store):
    def ops(seed: int) -> list[str]:
        workload = MixWorkload(shares=parse_mix("get=1,head=1,put=1"), object_size=512, concurrency=1,
                               requests=60, bucket=store.bucket, prefix=f"mix-{uuid.uuid4().hex[:8]}/", seed=seed)
        rows = run_mix(store.server.settings(), workload).rows.sort_values("t_start")
        return list(rows["op"].astype(str))

    assert ops(11) == ops(11) != ops(12)


@pytest.mark.integration
def test_a_mix_run_says_each_op_and_analyze_says_the_same(tmp_path):
    out = tmp_path / "run"
    done = run_cli("objperf", "mixed", "--mix", "get=3,head=1,delete=1", "--object-size", "4KiB", "-c", "8",
                   "--duration", "2s", "--out", str(out), timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("  GET ", "  HEAD ", "  DELETE "))]
    assert len(lines) == 3 and "a mix of GET 60%, HEAD 20%, DELETE 20%" in done.stdout
    again = run_cli("objperf", "analyze", str(out))
    assert again.returncode == 0, again.stderr
    assert [line for line in again.stdout.splitlines() if line.startswith(("  GET ", "  HEAD ", "  DELETE "))] \
        == lines
    assert "in short     MIX c8 4KiB: " in again.stdout
    rows = load(out)
    assert set(rows["op"].astype(str)) == {"GET", "HEAD", "DELETE"}
    summary = json.loads(run_cli("objperf", "analyze", str(out), "--json").stdout)["summary"]
    assert summary["ops"]["GET"]["requests"] == (rows["op"].astype(str) == "GET").sum()


@pytest.mark.parametrize("args, says", [
    (("--mix", "get=0"), "positive"),
    (("--mix", "fetch=1"), "'fetch' is not one of get, head, put, list, copy, delete"),
    (("--mix", "get=1", "--max-keys", "10"), "give list= in --mix"),
    (("--max-keys", "10"), "give --mix with list="),
    (("--mix", "list=1", "--max-keys", "1001"), "--max-keys must be from 1 to 1,000"),
    (("--mix", "get=1,get=2"), "given twice"),
    (("--mix", "get=x"), "not a number"),
    (("--mix", "get=1", "--read-concurrency", "4"), "--read-concurrency go with a reader and a writer"),
    (("--mix", "get=1", "--local-cluster", "2"), "--mix runs on one host"),
    (("--mix", "get=1", "s3://bucket/key.bin", "--endpoint", "http://127.0.0.1:9"), "ending in /"),
])
def test_a_mix_asked_wrongly_is_one_line_before_anything_starts(tmp_path, args, says):
    done = run_cli("objperf", "mixed", *args, "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()

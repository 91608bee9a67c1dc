"""The engine's queue mode beyond GET and PUT, against a real SeaweedFS: a job's own headers, the body's bytes
around its payload range, and the answer's document kept in the job's own bounded buffer until it is taken."""

from __future__ import annotations

import base64
import hashlib
import uuid

import numpy as np
import pytest
from defusedxml.ElementTree import fromstring as parse_xml

from objperf._engine.config import queue_engine
from objperf._engine.payload import payload
from objperf.core.curl_codes import CURLE_FILESIZE_EXCEEDED
from objperf.core.schema import OP, OPS
from objperf.run.drive import drain_until_done
from objperf.s3.sigv4 import Keys, presign

pytestmark = [pytest.mark.timeout(120), pytest.mark.integration]


def signed(store, method: str, key: str, params=(), headers=None) -> str:
    server = store.server
    path = f"{server.endpoint}/{store.bucket}/{key}" if key else f"{server.endpoint}/{store.bucket}"
    return presign(method, path, Keys(server.access_key, server.secret_key), "us-east-1", 600, params=params,
                   headers=headers)


def run_jobs(jobs, data=None) -> tuple[dict, object, list[int]]:
    """Each job (a dict of submit's arguments) through one queue engine; (rows, engine, each job's entry) once
    all are done."""
    engine = queue_engine(len(jobs) + 1, payload=data, concurrency=2, threads=1, sink="discard")
    rows: list[dict] = []
    entries = [engine.submit(**job) for job in jobs]
    engine.start(0.0)
    engine.close_queue()
    drain_until_done(engine, lambda chunk: rows.append(chunk) if chunk is not None else None)
    merged = {name: np.concatenate([r[name] for r in rows]) for name in rows[0]}
    return merged, engine, entries


def put_keys(store, n: int, size: int = 64) -> tuple[str, list[str]]:
    prefix = f"jobs-{uuid.uuid4().hex[:8]}/"
    keys = [f"{prefix}k-{i:02d}" for i in range(n)]
    for key in keys:
        store.client.put_object(store.bucket, key, (key.encode() * size)[:size])
    return prefix, keys


def test_a_body_is_its_bytes_before_the_payload_range_and_after_it(store):
    data = payload(1 << 16, seed=7)
    key = f"jobs-{uuid.uuid4().hex[:8]}/framed"
    job = dict(url=signed(store, "PUT", key), op=OP["PUT"], key_index=0, offset=0, length=50_000,
               payload_offset=40_000, before=b"BEFORE-", after=b"-AFTER")
    rows, engine, _ = run_jobs([job], data)
    engine.close()
    wrapped = np.concatenate([data, data])[40_000:90_000].tobytes()
    assert store.client.get_object(store.bucket, key, limit=1 << 20) == b"BEFORE-" + wrapped + b"-AFTER"
    assert rows["status"][0] == 200 and rows["curl_code"][0] == 0
    assert rows["bytes"][0] == 50_000  # the payload's bytes the row counts, not the framing


def test_a_listing_page_lands_in_its_job_buffer_until_taken(store):
    prefix, keys = put_keys(store, 5)
    url = signed(store, "GET", "", params=[("list-type", "2"), ("prefix", prefix)])
    rows, engine, entries = run_jobs([dict(url=url, op=OP["LIST"], key_index=0, offset=0, length=0, document=1 << 20)])
    (entry,) = entries
    # Held: a new job may not take the entry before its document is read.
    with pytest.raises(RuntimeError, match="full"):
        engine.submit(url, OP["LIST"], 0, 0, 0, document=1 << 20)
        engine.submit(url, OP["LIST"], 0, 0, 0, document=1 << 20)
    doc = engine.document(entry)
    engine.close()
    assert OPS[rows["op"][0]] == "LIST" and rows["status"][0] == 200 and rows["curl_code"][0] == 0
    assert rows["bytes"][0] == len(doc) > 0
    listed = [el.findtext("{*}Key") for el in parse_xml(doc).iter() if el.tag.endswith("Contents")]
    assert listed == keys
    with pytest.raises(ValueError, match="no document"):
        engine.document(entry)


def test_a_document_longer_than_its_bound_fails_the_row(store):
    prefix, _ = put_keys(store, 5)
    url = signed(store, "GET", "", params=[("list-type", "2"), ("prefix", prefix)])
    rows, engine, entries = run_jobs([dict(url=url, op=OP["LIST"], key_index=0, offset=0, length=0, document=100)])
    assert rows["curl_code"][0] == CURLE_FILESIZE_EXCEEDED and rows["bytes"][0] == 0
    assert len(engine.document(entries[0])) <= 100
    engine.close()


def test_a_batch_delete_posts_its_document_with_its_own_header(store):
    prefix, keys = put_keys(store, 4)
    body = ("<Delete><Quiet>false</Quiet>" + "".join(f"<Object><Key>{k}</Key></Object>" for k in keys[:3])
            + "</Delete>").encode()
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    url = signed(store, "POST", "", params=[("delete", "")])
    job = dict(url=url, op=OP["DELETE_OBJECTS"], key_index=0, offset=0, length=0, before=body,
               headers=[f"Content-MD5: {md5}", "Content-Type: application/xml"], document=1 << 20)
    rows, engine, entries = run_jobs([job])
    doc = engine.document(entries[0])
    engine.close()
    assert rows["status"][0] == 200 and rows["curl_code"][0] == 0, doc
    deleted = [el.findtext("{*}Key") for el in parse_xml(doc).iter() if el.tag.endswith("Deleted")]
    assert sorted(deleted) == keys[:3]
    assert [k for k, _ in store.client.list_objects(store.bucket, prefix).keys] == keys[3:]


def test_a_copy_sends_its_source_in_its_own_header_and_moves_no_body(store):
    prefix, keys = put_keys(store, 1, size=1000)
    source = store.client.get_object(store.bucket, keys[0], limit=1 << 20)
    target = f"{prefix}copy"
    copy_source = {"x-amz-copy-source": f"/{store.bucket}/{keys[0]}"}  # an x-amz header: signed in the URL
    job = dict(url=signed(store, "PUT", target, headers=copy_source), op=OP["COPY"], key_index=0, offset=0,
               length=len(source), headers=[f"{k}: {v}" for k, v in copy_source.items()], document=1 << 16)
    rows, engine, entries = run_jobs([job])
    doc = engine.document(entries[0])
    engine.close()
    assert rows["status"][0] == 200 and rows["curl_code"][0] == 0, rows["s3_error"][0]
    assert b"CopyObjectResult" in doc and rows["bytes"][0] == len(source)
    assert store.client.get_object(store.bucket, target, limit=1 << 20) == source  # the copy's bytes are its source's


def test_a_header_line_that_would_split_the_request_is_refused():
    engine = queue_engine(2, payload=payload(1024, seed=1), concurrency=1, threads=1, sink="discard")
    try:
        for line in ("x-amz-copy-source: a\r\nX-Evil: 1", "x-a: b\n", "no-colon", "x-a: \0"):
            with pytest.raises(ValueError, match="header line"):
                engine.submit("http://127.0.0.1:9/", OP["COPY"], 0, 0, 0, headers=[line])
    finally:
        engine.close()


def test_a_copy_cut_in_flight_counts_no_byte_copied():
    """A copy the run's end cut before any answer copied nothing anyone can count: its row says 0 bytes."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # takes each request and never answers it
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/b/copy"
        engine = queue_engine(2, concurrency=1, threads=1, sink="discard")
        engine.submit(url, OP["COPY"], 0, 0, 5 << 20, headers=["x-amz-copy-source: /b/source"], document=1 << 16)
        engine.start(0.5)  # the deadline cuts it
        engine.close_queue()
        rows: list[dict] = []
        drain_until_done(engine, lambda chunk: rows.append(chunk) if chunk is not None else None)
        engine.close()
    finally:
        stop.set()
        thread.join()
        listener.close()
        for conn in held:
            conn.close()
    (row,) = [{k: v[0] for k, v in chunk.items()} for chunk in rows]
    assert row["curl_code"] == 42 and row["status"] == 0 and row["bytes"] == 0


def test_a_rows_document_is_there_the_moment_its_row_is(store):
    """The engine hands a row over only once its job's document is written and its entry let go."""
    prefix, _ = put_keys(store, 3)
    url = signed(store, "GET", "", params=[("list-type", "2"), ("prefix", prefix)])
    engine = queue_engine(8, concurrency=4, threads=2, sink="discard")
    engine.start(0.0)
    taken = submitted = 0
    try:
        entries: dict[int, int] = {}
        while taken < 200:
            while submitted < 200 and len(entries) < 6:
                entries[submitted] = engine.submit(url, OP["LIST"], submitted, 0, 0, document=1 << 20)
                submitted += 1
            engine.wait_finished(1.0)
            chunk = engine.drain()
            for key in ([] if chunk is None else chunk["key_index"]):
                assert b"ListBucketResult" in engine.document(entries.pop(int(key)))  # never "not finished"
                taken += 1
    finally:
        engine.close_queue()
        drain_until_done(engine, lambda chunk: None)
        engine.close()

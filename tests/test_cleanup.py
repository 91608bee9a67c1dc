"""``objperf cleanup`` says what it found and what it removed, here (scratch directories, the servers still
running in them) and in the store (open multipart uploads), or that there was nothing; ``--dry-run`` lists
the same and changes nothing, on this machine or in the store."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from objperf.core import scratch

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def cleanup(*args: str, tmpdir, env: dict) -> subprocess.CompletedProcess:
    """``objperf cleanup`` looking for scratch directories in ``tmpdir`` (its temporary directory)."""
    done = subprocess.run([sys.executable, "-m", "objperf", "cleanup", *args], capture_output=True, text=True,
                          env={**env, "TMPDIR": str(tmpdir)}, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done


@pytest.fixture
def stranded(tmp_path):
    """A scratch directory left by a process that is gone, naming a server of it that still runs."""
    where = tmp_path / "tmp"
    where.mkdir()
    path = where / "objperf-seaweed-stale"
    (path / "data-1").mkdir(parents=True)
    server = subprocess.Popen(["sleep", "300"])
    try:
        record = {"pid": os.getpid(), "start": "0",  # this PID, with a start time it cannot have had: gone
                  "servers": [{"pid": server.pid, "start": scratch.process_start(server.pid)}]}
        (path / scratch.OWNER).write_text(json.dumps(record))
        yield where, path, server
    finally:
        server.kill()
        server.wait()


def open_upload(store, key: str) -> str:
    return store.client._botocore.client.create_multipart_upload(Bucket=store.bucket, Key=key)["UploadId"]


def test_a_dry_run_lists_what_is_left_here_and_in_the_store_and_changes_nothing(store, stranded):
    where, path, server = stranded
    key = "cleanup-dry/objperf-0badcafe-00001"
    upload_id = open_upload(store, key)
    url = [f"s3://{store.bucket}/cleanup-dry/", "--endpoint", store.server.endpoint]
    try:
        dry = cleanup(*url, "--dry-run", tmpdir=where, env=store.env())
        assert f"would remove {path}" in dry.stderr and f"server process(es) {server.pid}" in dry.stderr
        assert f"would abort: s3://{store.bucket}/{key} upload id {upload_id}" in dry.stderr
        assert "nothing removed" in dry.stderr and "nothing aborted" in dry.stderr
        assert path.is_dir() and server.poll() is None  # here: nothing changed
        assert store.client.open_uploads(store.bucket, "cleanup-dry/") == [(key, upload_id)]  # nor in the store

        done = cleanup(*url, tmpdir=where, env=store.env())
        assert f"removed {path}" in done.stderr and f"stopped its server process(es) {server.pid}" in done.stderr
        assert "removed 1 of 1 scratch directory" in done.stderr
        assert "aborted 1 of 1 open multipart upload(s)" in done.stderr
        assert not path.exists() and server.wait(timeout=10) is not None
        assert store.client.open_uploads(store.bucket, "cleanup-dry/") == []
    finally:
        for left, left_id in store.client.open_uploads(store.bucket, "cleanup-dry/"):
            store.client.abort_upload(store.bucket, left, left_id)


@pytest.mark.parametrize("dry", [False, True], ids=["cleanup", "dry-run"])
def test_nothing_to_clean_is_said_here_and_in_the_store(store, tmp_path, dry):
    flags = ["--dry-run"] if dry else []
    here = cleanup(*flags, tmpdir=tmp_path, env=store.env())
    assert "nothing to clean on this machine" in here.stderr, here.stderr
    both = cleanup(f"s3://{store.bucket}/never-written/", "--endpoint", store.server.endpoint, *flags,
                   tmpdir=tmp_path, env=store.env())
    assert "nothing to clean on this machine" in both.stderr
    assert f"nothing to clean in the store: no open multipart upload of objperf's under s3://{store.bucket}/" \
        "never-written/" in both.stderr


def test_a_live_processes_scratch_is_neither_listed_nor_removed(store, tmp_path):
    mine = scratch.make("test", where=tmp_path)
    for flags in (["--dry-run"], []):
        done = cleanup(*flags, tmpdir=tmp_path, env=store.env())
        assert "nothing to clean on this machine" in done.stderr and str(mine) not in done.stderr
    assert mine.is_dir()

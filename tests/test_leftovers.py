"""What a killed run leaves, and how objperf removes it: a local server dies with the process that started
it, its scratch directory is swept by the next objperf (by its owner file, never by guesswork), and
``objperf cleanup`` lists and aborts objperf's open multipart uploads in a store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hostile import wait_for
from test_faults import weed_processes

from conftest import run_cli
from objperf.core import scratch

pytestmark = pytest.mark.timeout(180)


def owned_scratch() -> dict[Path, dict]:
    found = {}
    for path in Path(tempfile.gettempdir()).glob("objperf-*"):
        try:
            found[path] = json.loads((path / scratch.OWNER).read_text())
        except (OSError, ValueError):
            continue
    return found


@pytest.mark.integration
def test_a_killed_run_leaves_no_server_and_its_scratch_is_swept_by_the_next(tmp_path):
    before_servers, before_dirs = weed_processes(), set(owned_scratch())
    proc = subprocess.Popen([sys.executable, "-m", "objperf.fetch", "--duration", "5m", "--no-save",
                             "--object-size", "8MiB"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: any(record.get("servers") for path, record in owned_scratch().items()
                                    if path not in before_dirs and record["pid"] == proc.pid), timeout=90)
        # The owner file names the server's process as soon as it is spawned, before setpriv has exec'd weed.
        assert wait_for(lambda: weed_processes() - before_servers, timeout=60), "no server started"
        servers = weed_processes() - before_servers
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_for(lambda: not (weed_processes() & servers), timeout=30), "the server outlived its parent"
    finally:
        proc.kill()
    left = [path for path, record in owned_scratch().items() if record["pid"] == proc.pid]
    assert len(left) == 1 and left[0].name.startswith("objperf-seaweed-")
    done = run_cli("objperf", "cleanup", timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"removed {left[0]}" in done.stderr
    assert not left[0].exists()


def test_a_live_processes_scratch_is_never_swept(tmp_path):
    mine = scratch.make("test", where=tmp_path)
    unowned = tmp_path / "objperf-unowned"
    unowned.mkdir()
    gone = tmp_path / "objperf-gone"
    gone.mkdir()
    # a process that has ended: its PID, with a start time it cannot have had
    (gone / scratch.OWNER).write_text(json.dumps({"pid": os.getpid(), "start": "0", "servers": []}))
    assert scratch.sweep(tmp_path) == [gone]
    assert mine.exists() and unowned.exists() and not gone.exists()


@pytest.mark.integration
def test_cleanup_lists_and_aborts_objperfs_open_uploads_and_no_others(store):
    client = store.client._botocore.client
    ours = client.create_multipart_upload(Bucket=store.bucket, Key="left/objperf-0123abcd-00001")["UploadId"]
    theirs = client.create_multipart_upload(Bucket=store.bucket, Key="left/somebody-else.bin")["UploadId"]
    args = [f"s3://{store.bucket}/left/", "--endpoint", store.server.endpoint]
    try:
        dry = run_cli("objperf", "cleanup", *args, "--dry-run", env=store.env(), timeout=60)
        assert dry.returncode == 0, dry.stderr
        assert f"would abort: s3://{store.bucket}/left/objperf-0123abcd-00001 upload id {ours}" in dry.stderr
        assert "somebody-else" not in dry.stderr
        assert len(store.client.open_uploads(store.bucket, "left/")) == 2
        done = run_cli("objperf", "cleanup", *args, env=store.env(), timeout=60)
        assert done.returncode == 0, done.stderr
        assert "aborted 1 of 1 open multipart upload(s)" in done.stderr
        assert store.client.open_uploads(store.bucket, "left/") == [("left/somebody-else.bin", theirs)]
    finally:
        for key, upload_id in store.client.open_uploads(store.bucket, "left/"):
            store.client.abort_upload(store.bucket, key, upload_id)

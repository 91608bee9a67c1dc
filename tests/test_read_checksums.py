"""``objperf fetch --checksum-mode``: each GET asks for the object's checksum (signed, as S3 wants an x-amz
header), a read of a whole object asks for it whole and is checked against the CRC-32 the store names; a
mismatch fails the row; a range's answer, a composite of parts or another algorithm is counted unchecked, never
failed; the summary and its re-analysis tell the same."""

from __future__ import annotations

import json
import uuid

import pytest
from hostile import HostileS3
from test_hostile import env

from conftest import run_cli
from objperf import load

pytestmark = [pytest.mark.timeout(180), pytest.mark.integration]
OBJECTS = {"data/a.bin": 3 << 20, "data/b.bin": 1 << 20}


def fetch(where: str, endpoint: str, tmp_path, *args: str, environ: dict):
    done = run_cli("objperf.fetch", where, "--endpoint", endpoint, "--checksum-mode", "--json", "--out",
                   str(tmp_path / "r"), *args, env=environ, timeout=90)
    return done, (json.loads(done.stdout) if done.stdout.strip() else {})


def test_whole_reads_of_objects_written_with_a_checksum_are_verified(store, tmp_path):
    prefix = f"readsums-{uuid.uuid4().hex[:8]}/"
    wrote = run_cli("objperf.commands.put", f"s3://{store.bucket}/{prefix}", "--endpoint", store.server.endpoint,
                    "--object-size", "3MiB", "--keys", "3", "-n", "3", "--checksum", "crc32", "--no-save",
                    env=store.env())
    assert wrote.returncode == 0, wrote.stderr
    done, summary = fetch(f"s3://{store.bucket}/{prefix}", store.server.endpoint, tmp_path, "--range-size", "4MiB",
                          environ=store.env())
    assert done.returncode == 0, done.stderr
    assert summary["checksums"] == {"verified": 3, "mismatched": 0, "unchecked": 0, "absent": 0}
    assert summary["error_requests"] == 0 and summary["bytes"] == 9 << 20
    again = json.loads(run_cli("objperf", "analyze", str(tmp_path / "r"), "--json").stdout)["summary"]
    assert again["checksums"] == summary["checksums"]
    said = run_cli("objperf", "analyze", str(tmp_path / "r")).stdout
    assert "each object's checksum asked for (checksum mode)" in said  # the workload line names it
    # Ranges: S3 names no checksum on a part of an object; none is counted verified.
    done, summary = fetch(f"s3://{store.bucket}/{prefix}", store.server.endpoint, tmp_path / "ranges",
                          "--range-size", "1MiB", environ=store.env())
    assert done.returncode == 0 and summary["checksums"]["verified"] == 0 and summary["error_requests"] == 0


def test_a_checksum_of_other_bytes_fails_the_row_and_a_ranges_is_left_unchecked(tmp_path):
    with HostileS3("checksum-wrong", objects=OBJECTS) as s3:
        done, summary = fetch(f"s3://{s3.bucket}/data/", s3.endpoint, tmp_path, "--range-size", "4MiB",
                              environ=env())
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "r")
    assert len(rows) == 2 and (rows["curl_code"] == 8).all() and (rows["bytes"] == 0).all()
    assert summary["checksums"]["mismatched"] == 2 and summary["bytes"] == 0
    with HostileS3("checksum-on-range", objects=OBJECTS) as s3:
        done, summary = fetch(f"s3://{s3.bucket}/data/a.bin", s3.endpoint, tmp_path / "ranges", "--range-size",
                              "1MiB", environ=env())
    assert done.returncode == 0, done.stderr
    assert summary["checksums"] == {"verified": 0, "mismatched": 0, "unchecked": 3, "absent": 0}


def test_checksum_mode_goes_with_gets_on_the_curl_engine(tmp_path):
    for extra, said in ((["--op", "head"], "a HEAD has no body: --checksum-mode"),
                        (["--engine", "requests"], "--checksum-mode checks answers in the curl engine")):
        done = run_cli("objperf.fetch", "s3://b/k", "--endpoint", "http://127.0.0.1:9", "--checksum-mode", *extra,
                       "--no-save", env=env(), timeout=60)
        assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1, \
            done.stderr

"""A copy's answer is held to the S3 contract: a 200 whose document is an ``<Error>``, one that names no ETag, or one
past its bound copied nothing; each is a failed row with its code, a multipart copy with such a part is aborted, and
a copy never answered is cut at the run's end (or at Ctrl-C) with its upload aborted: never a hang or a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from hostile import HostileS3
from test_hostile import env

from conftest import run_cli, wait_until
from objperf import load

pytestmark = pytest.mark.timeout(120)
PART = 5 << 20


def copy_args(s3: HostileS3, out) -> list[str]:
    return ["copy", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--part-size", "5MiB", "-c", "4",
            "--out", str(out)]


@pytest.mark.integration
@pytest.mark.parametrize("size", [1000, 2 * PART + 1], ids=["CopyObject", "multipart"])
@pytest.mark.parametrize("mode, code, s3_error", [("copy-200-error", 8, "InternalError"), ("copy-no-etag", 8, ""),
                                                  ("copy-long-document", 63, "")])
def test_a_copy_whose_answer_says_it_failed_is_a_failed_row_and_its_upload_aborted(tmp_path, size, mode, code,
                                                                                  s3_error):
    with HostileS3(mode, objects={"data/obj.bin": size}) as s3:
        done = run_cli("objperf", *copy_args(s3, tmp_path / "run"), "--json", env=env(), timeout=60)
        calls = dict(s3.calls)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "run")
    ops = rows["op"].astype(str)
    copies = rows[ops.isin(["COPY", "UPLOAD_PART_COPY"])]
    assert len(copies) >= 1 and (copies["status"] == 200).all()  # the store said 200 to each
    assert (copies["curl_code"] == code).all() and (copies["bytes"] == 0).all()  # and copied nothing
    assert (copies["s3_error"].astype(str) == s3_error).all()
    summary = json.loads(done.stdout)
    assert summary["objects_copied"] == 0 and summary["objects_failed"] == 1 and summary["bytes"] == 0
    if size > PART:  # the multipart copy was aborted, never completed
        assert calls.get("COMPLETE_MPU", 0) == 0 and calls.get("ABORT_MPU", 0) >= 1
        assert (rows[ops == "ABORT_MPU"]["status"] == 204).all() and summary["uploads_left_open"] == []


@pytest.mark.integration
def test_a_copy_never_answered_is_cut_at_the_runs_end_and_its_upload_aborted(tmp_path):
    with HostileS3("copy-stall", objects={"data/obj.bin": 2 * PART + 1}) as s3:
        done = run_cli("objperf", *copy_args(s3, tmp_path / "run"), "--duration", "1s", "--json", env=env(),
                       timeout=60)
        calls = dict(s3.calls)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "run")
    parts = rows[rows["op"].astype(str) == "UPLOAD_PART_COPY"]
    assert len(parts) == 3 and (parts["curl_code"] == 42).all() and (parts["bytes"] == 0).all()  # cut, not failed
    assert calls.get("COMPLETE_MPU", 0) == 0 and calls.get("ABORT_MPU", 0) >= 1
    summary = json.loads(done.stdout)
    assert summary["objects_cut"] == 1 and summary["objects_copied"] == 0 and summary["uploads_left_open"] == []


def interrupted(s3: HostileS3, out, call: str) -> tuple[subprocess.Popen, str, dict]:
    """A copy run stopped by Ctrl-C once ``call`` has reached the server: the process, its stderr, the calls."""
    proc = subprocess.Popen([sys.executable, "-m", "objperf", *copy_args(s3, out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env(), text=True)
    try:
        wait_until(lambda: s3.calls.get(call, 0) >= 1, what=f"a {call} in flight")
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc, stderr, dict(s3.calls)


@pytest.mark.integration
def test_ctrl_c_during_a_multipart_copy_aborts_its_upload(tmp_path):
    with HostileS3("copy-stall", objects={"data/obj.bin": 2 * PART + 1}) as s3:
        proc, stderr, calls = interrupted(s3, tmp_path / "run", "UPLOAD_PART_COPY")
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert calls.get("ABORT_MPU", 0) >= 1 and calls.get("COMPLETE_MPU", 0) == 0
    rows = load(tmp_path / "run")
    assert (rows[rows["op"].astype(str) == "ABORT_MPU"]["status"] == 204).any()


@pytest.mark.integration
def test_ctrl_c_while_an_upload_opens_cuts_it_and_looks_for_what_it_may_have_opened(tmp_path):
    """CreateMultipartUpload answered 2 bytes a second: Ctrl-C cuts it, and the run lists the key's open uploads
    (the store may have opened one whose id never arrived) rather than wait or leave it."""
    with HostileS3("create-trickle", objects={"data/obj.bin": 2 * PART + 1}) as s3:
        proc, stderr, calls = interrupted(s3, tmp_path / "run", "CREATE_MPU")
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert calls.get("LIST_UPLOADS", 0) >= 1 and calls.get("UPLOAD_PART_COPY", 0) == 0
    rows = load(tmp_path / "run")
    assert (rows["op"].astype(str) == "CREATE_MPU").all() and (rows["curl_code"] == 42).all()


def test_a_summary_counts_no_byte_of_a_copy_that_failed_or_was_cut_whatever_the_row_says():
    """A copy cut in flight copied nothing the store said it did: its bytes are not counted, as a cut part's are not."""
    import numpy as np

    from objperf.analysis.summary import summarize
    from objperf.core.schema import OP

    n = 4
    cols = {"op": np.array([OP["COPY"], OP["COPY"], OP["UPLOAD_PART_COPY"], OP["UPLOAD_PART_COPY"]], dtype=np.int8),
            "status": np.array([200, 0, 200, 200], dtype=np.int16),
            "curl_code": np.array([0, 42, 8, 0], dtype=np.int32),
            "bytes": np.full(n, 1000, dtype=np.int64), "ttfb_s": np.full(n, 0.01), "total_s": np.full(n, 0.02),
            "s3_error": np.full(n, b"", dtype="S64")}
    s = summarize(cols, wall_s=1.0, cpu_s=0.0)
    assert s["bytes"] == 2000  # the copy and the part the store said it copied; not the cut one, nor the failed
    assert s["ops"]["COPY"]["bytes"] == 1000 and s["ops"]["UPLOAD_PART_COPY"]["bytes"] == 1000
    assert s["ops"]["COPY"]["cut"] == 1 and s["ops"]["UPLOAD_PART_COPY"]["failed"] == 1

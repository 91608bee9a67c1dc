"""What a server answers is held to what was asked, on every engine: a write it acknowledged before its body
was all sent is not done, a failed request's bytes are never counted, and a redirect to another place is a
failed row, never a transfer from somewhere else counted as the store's."""

from __future__ import annotations

import json

import pytest
from hostile import HostileS3
from test_hostile import env, error_lines, put_args, run_measured

from conftest import run_cli
from objperf import load
from objperf.dataset.directory import read_manifest

pytestmark = pytest.mark.timeout(120)
OBJECT = {"data/obj.bin": 4 << 20}


# Multipart, and one PUT an object: 3/4 of each body is more than the connection's buffers hold
@pytest.mark.integration
@pytest.mark.parametrize("sizes", [("64MiB", "32MiB"), ("32MiB", "32MiB")])
def test_a_write_acknowledged_before_its_body_was_sent_is_not_done(tmp_path, sizes):
    """Answered 200 with an ETag and the connection closed, each part 3 of 4 MiB sent: the run said
    '6 uploads completed' and exited 0."""
    with HostileS3("write-acked-early") as s3:
        args = put_args(s3, tmp_path, "--requests", "2")
        args[args.index("--object-size") + 1], args[args.index("--part-size") + 1] = sizes
        done = run_cli("objperf", "put", *args, env=env(), timeout=60)
        assert s3.calls.get("COMPLETE_MPU", 0) == 0
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "put")
    writes = rows[rows.op.isin(["PUT", "UPLOAD_PART"])]
    assert len(writes) >= 1 and (writes.curl_code == 55).all() and (writes.bytes == 0).all()
    summary = read_manifest(tmp_path / "put")["summary"]
    assert summary["objects_written"] == 0 and summary["bytes"] == 0 and summary["gbps"] == 0
    assert "0 uploads completed" in done.stdout


@pytest.mark.integration
@pytest.mark.parametrize("engine", ["curl", "requests"])
def test_a_failed_requests_bytes_are_never_counted(tmp_path, engine):
    """Rows libcurl failed (the body cut: 18) kept their bytes: every request failed, and the run said
    '2.0 MiB, 2.29 Gbps'."""
    with HostileS3("get-body-cut", objects=OBJECT) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", s3.endpoint, "--engine",
                       engine, "--range-size", "1MiB", "-c", "2", "--requests", "4", "--json", "--out",
                       str(tmp_path / "r"), env=env(), timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "r")
    assert len(rows) == 4 and (rows.curl_code != 0).all() and (rows.bytes == 0).all()
    summary = json.loads(done.stdout)
    assert summary["bytes"] == 0 and summary["gbps"] == 0 and summary["error_requests"] == 4
    again = json.loads(run_cli("objperf", "analyze", str(tmp_path / "r"), "--json").stdout)["summary"]
    assert again["bytes"] == 0


def test_a_summary_counts_no_byte_of_a_failed_row_whatever_the_row_says():
    """Rows from another tool, or an older objperf, may keep a failed request's bytes: they are not counted."""
    import numpy as np

    from objperf.analysis.summary import summarize
    from objperf.core.schema import OP_GET, OP_UPLOAD_PART

    n = 6
    cols = {"op": np.array([OP_GET] * 3 + [OP_UPLOAD_PART] * 3, dtype=np.int8),
            "status": np.array([206, 206, 0, 200, 200, 0], dtype=np.int16),
            "curl_code": np.array([0, 18, 42, 0, 55, 42], dtype=np.int32),
            "bytes": np.full(n, 1000, dtype=np.int64), "ttfb_s": np.full(n, 0.01), "total_s": np.full(n, 0.02),
            "s3_error": np.full(n, b"", dtype="S64")}
    s = summarize(cols, wall_s=1.0, cpu_s=0.0)
    # a GET done, a GET cut by the run's end (its bytes arrived), a part acknowledged; not the failed two
    assert s["bytes"] == 3000 and s["directions"]["read"]["bytes"] == 2000
    assert s["directions"]["write"]["bytes"] == 1000 and s["directions"]["write"]["sent_bytes"] == 3000


@pytest.mark.integration
@pytest.mark.parametrize("engine", ["curl", "requests"])
def test_a_redirect_elsewhere_is_a_failed_row_on_every_engine(tmp_path, engine):
    """--engine requests followed redirects (up to 30) to another host and counted its bytes as the store's."""
    with HostileS3("well-behaved", objects=OBJECT) as elsewhere, \
            HostileS3("redirect", objects=OBJECT, redirect_to=elsewhere.endpoint) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", s3.endpoint, "--engine",
                       engine, "--range-size", "1MiB", "-c", "2", "--requests", "4", "--out", str(tmp_path / "r"),
                       env=env(), timeout=60)
        assert elsewhere.calls.get("GET", 0) == 0
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "r")
    assert len(rows) == 4 and (rows.status == 302).all() and (rows.bytes == 0).all()


@pytest.mark.integration
def test_an_upload_the_store_opens_again_after_its_abort_is_aborted_again(tmp_path):
    """A part a store wrote after it took the upload's abort opened the upload again: a busy SeaweedFS left
    one open after a full disk ended a put, and every later write test found it."""
    with HostileS3("reopened-after-abort") as s3:
        done = run_cli("objperf", "put", *put_args(s3, tmp_path, "--duration", "1s", "--object-size", "64MiB"),
                       env=env(), timeout=60)
        assert s3.aborts and all(n == 2 for n in s3.aborts.values()), s3.aborts
    assert "Traceback" not in done.stderr and "left open" not in done.stdout + done.stderr, done.stderr


@pytest.mark.integration
@pytest.mark.parametrize("url", ["s3://{bucket}/data/obj.bin", "{endpoint}/{bucket}/data/obj.bin"])
def test_a_size_no_object_can_have_is_one_line_before_any_get(tmp_path, url):
    """A HEAD size over 5 TiB (up to 2^63 - 1) was taken as the object's size."""
    with HostileS3("head-says-huge", objects=OBJECT) as s3:
        store = ["--endpoint", s3.endpoint] if url.startswith("s3://") else []  # else a plain HTTP URL
        done = run_cli("objperf.fetch", url.format(bucket=s3.bucket, endpoint=s3.endpoint), *store,
                       "--duration", "1s", "--no-save", env=env(), timeout=60)
        assert s3.calls.get("GET", 0) == 0
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "not a size an S3 object can have" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.integration
def test_an_error_line_is_shortened_not_printed_whole(tmp_path):
    """Error lines were never shortened: a 70 KB key was printed whole."""
    from objperf.core.sanitize import ERROR_LINE_CHARS

    dataset = "data/sample/read-concurrency"
    done = run_cli("objperf", "analyze", dataset, "--window", "\x1b[2J" + "k" * 70_000 + "-tail")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert len(line) < ERROR_LINE_CHARS + 200 and "characters left out" in line
    assert line.startswith("objperf analyze: error: bad --window") and "-tail" in line  # its head and its end
    assert "\x1b" not in line


@pytest.mark.integration
@pytest.mark.parametrize("engine", ["curl", "requests"])
def test_a_key_with_dot_segments_is_asked_for_as_named_or_refused(tmp_path, engine):
    """libcurl squashed '.' and '..' (no CURLOPT_PATH_AS_IS): a listed key data/./x/../obj.bin was asked for
    as data/obj.bin, another object than the one named and signed."""
    key = "data/./x/../obj.bin"
    with HostileS3("listing-keys", keys=[key], objects={key: 2 << 20}) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--engine", engine,
                       "--range-size", "1MiB", "-c", "2", "--requests", "4", "--out", str(tmp_path / "r"),
                       env=env(), timeout=60)
        asked = [path for path in s3.paths if path != f"/{s3.bucket}"]  # the bucket's HEAD aside
    assert "Traceback" not in done.stderr
    if engine == "curl":
        assert done.returncode == 0, done.stderr
        assert asked and all(path == f"/{s3.bucket}/{key}" for path in asked), asked
        assert (load(tmp_path / "r").status == 206).all()
    else:  # its HTTP library cannot send it as named: refused before any request
        assert done.returncode == 2 and asked == [] and "as named" in done.stderr, done.stderr


@pytest.mark.integration
def test_an_answer_that_is_no_http_is_not_said_to_be_an_endpoint_out_of_reach(tmp_path):
    """An invalid Content-Length read 'cannot reach endpoint', as if the store were down."""
    with HostileS3("head-bad-length", objects=OBJECT) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", s3.endpoint,
                       "--duration", "1s", "--no-save", env=env(), timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "cannot reach" not in line and "not an HTTP answer" in line, line


@pytest.mark.parametrize("code", [8, 18, 27, 52, 55, 56, 61, 63])
def test_a_libcurl_code_of_a_wrong_answer_or_of_this_side_never_reads_as_out_of_reach(code):
    """libcurl's code 27 (out of memory) read 'cannot reach endpoint'."""
    from objperf.core.errors import unreachable

    line = str(unreachable("http://127.0.0.1:9", "HEAD s3://b/k", code, "detail"))
    assert "cannot reach" not in line and "127.0.0.1:9" in line and "HEAD s3://b/k" in line


# -- LIST pages and DeleteObjects answers: documents read as outside input -------------------------------------

def list_args(s3: HostileS3, tmp_path, *extra: str) -> list[str]:
    return ["list", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--out", str(tmp_path / "r"), "--json",
            *extra]


@pytest.mark.integration
def test_a_list_page_that_repeats_its_token_fails_its_row_and_its_pass_starts_over(tmp_path):
    """Every page truncated, naming the same token: each pass's second page is a failed row (code 8), the lister
    starts over, and the run ends with its passes, never looping."""
    with HostileS3("listing-forever-same-token", objects={f"data/k{i}": 10 for i in range(3)}) as s3:
        done = run_cli("objperf", *list_args(s3, tmp_path, "--passes", "3"), env=env(), timeout=60)
        assert s3.calls.get("LIST") == 6
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "r").sort_values("t_start")
    assert list(rows["offset"]) == [0, 1] * 3 and list(rows["curl_code"]) == [0, 8] * 3
    assert list(rows["length"]) == [3, 0] * 3 and (rows.loc[rows["curl_code"] == 8, "bytes"] == 0).all()
    summary = json.loads(done.stdout)
    assert summary["ops"]["LIST"]["failed"] == 3 and summary["ops"]["LIST"]["keys"] == 9 and summary["passes"] == 0
    assert summary["broken_answers"].startswith("3 answer(s) broke the S3 contract")
    assert "repeated continuation token" in summary["broken_answers"]


@pytest.mark.integration
def test_a_list_page_longer_than_its_bound_fails_its_row_and_memory_stays_bounded(tmp_path):
    with HostileS3("listing-endless-body") as s3:
        (done, rss) = run_measured("objperf", *list_args(s3, tmp_path, "--passes", "2"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "no request succeeded" in done.stderr and len(error_lines(done.stderr)) == 1, done.stderr
    rows = load(tmp_path / "r")
    assert len(rows) == 2 and (rows["curl_code"] == 63).all() and (rows["bytes"] == 0).all()
    assert rss < 400 << 20, rss


@pytest.mark.integration
def test_a_list_page_of_more_keys_than_asked_fails_its_row(tmp_path):
    with HostileS3("listing-forever-new-token", page_keys=50) as s3:
        done = run_cli("objperf", *list_args(s3, tmp_path, "--max-keys", "10", "--requests", "4"), env=env(),
                       timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    rows = load(tmp_path / "r")
    assert len(rows) == 4 and (rows["curl_code"] == 8).all() and (rows["offset"] == 0).all()
    assert "lists 50 keys and common prefixes, more than the max-keys 10" in json.loads(done.stdout)["broken_answers"]


@pytest.mark.integration
def test_a_batch_answer_naming_keys_not_asked_fails_every_batch(tmp_path):
    objects = {f"data/k{i}": 10 for i in range(5)}
    with HostileS3("delete-names-unasked", objects=objects) as s3:
        done = run_cli("objperf", "delete", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--batch", "2",
                       "--out", str(tmp_path / "r"), "--json", env=env(), timeout=60)
        assert s3.calls.get("DELETE_OBJECTS") == 3
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(error_lines(done.stderr)) == 1, done.stderr
    rows = load(tmp_path / "r")
    assert sorted(rows["length"]) == [1, 2, 2] and (rows["curl_code"] == 8).all() and (rows["status"] == 200).all()
    summary = json.loads(done.stdout)
    assert summary["ops"]["DELETE_OBJECTS"]["failed"] == 3 and summary["ops"]["DELETE_OBJECTS"]["keys"] == 0
    assert "names key 'elsewhere/not-asked' though it was not asked for" in summary["broken_answers"]


@pytest.mark.integration
def test_keys_a_batch_answer_refuses_fail_its_row_with_their_code_and_are_counted(tmp_path):
    objects = {f"data/k{i}": 10 for i in range(6)}
    with HostileS3("delete-refuses", objects=objects) as s3:
        done = run_cli("objperf", "delete", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--batch", "3",
                       "--keys", "4", "--out", str(tmp_path / "r"), "--json", env=env(), timeout=60)
        left = sorted(s3.objects)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr  # a batch of the two succeeded
    rows = load(tmp_path / "r")
    assert sorted(rows["length"]) == [1, 3] and (rows.set_index("length").loc[3, "curl_code"] == 22)
    assert rows.set_index("length").loc[3, "s3_error"] == "AccessDenied"
    summary = json.loads(done.stdout)
    assert (summary["keys_deleted"], summary["keys_refused"]) == (3, 1)
    assert summary["s3_error_counts"] == {"AccessDenied": 1} and "broken_answers" not in summary
    assert left == ["data/k1", "data/k4", "data/k5"]  # refused, and the two not asked for

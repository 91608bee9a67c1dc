"""objperf against a hostile S3 server (``tests/hostile.py``): each misbehaviour ends in one clear line,
a failed row with a named error, or a bounded wait — never a write outside the sink directory, an
unbounded wait or memory, a success that was not one, or a control byte on the terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import HostileS3, wait_for

from conftest import run_cli
from objperf import load
from objperf.core.errors import TargetError
from objperf.run.sinkpath import confined_path
from objperf.s3.client import S3Client
from objperf.s3.settings import S3Settings

pytestmark = pytest.mark.timeout(120)
KEYS = {"AWS_ACCESS_KEY_ID": "hostile-key", "AWS_SECRET_ACCESS_KEY": "hostile-secret-never-shown"}


def env() -> dict:
    return {**os.environ, **KEYS, "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
            "AWS_DEFAULT_REGION": "us-east-1"}


def run_measured(module: str, *args: str, timeout: float = 90) -> tuple[subprocess.CompletedProcess, int]:
    """A command's outcome and its peak RSS in bytes (from wait4: this child's alone)."""
    proc = subprocess.Popen([sys.executable, "-m", module, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env(), text=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    _, _, usage = os.wait4(proc.pid, os.WNOHANG) if proc.returncode is None else (0, 0, None)
    rss = usage.ru_maxrss * 1024 if usage else 0
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), rss


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error" in line]


def assert_one_clean_error(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    errors = error_lines(done.stderr)
    assert len(errors) == 1, done.stderr
    for word in words:
        assert word in errors[0], errors[0]
    assert KEYS["AWS_SECRET_ACCESS_KEY"] not in done.stdout + done.stderr


# -- keys that would write outside the sink directory ----------------------------------------------


@pytest.mark.parametrize("url_prefix, key", [
    ("data/", "data/../../escaped.bin"),
    ("data/", "data/a/../../../escaped.bin"),
    ("", "/tmp/objperf-hostile-escaped.bin"),
    ("", "../escaped.bin"),
])
@pytest.mark.integration
def test_a_listed_key_never_becomes_a_path_outside_the_sink_directory(tmp_path, url_prefix, key):
    sink = tmp_path / "sink"
    sink.mkdir()
    with HostileS3("listing-keys", keys=[key, f"{url_prefix}fine.bin"]) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/{url_prefix}", "--endpoint", s3.endpoint,
                       "--sink", "file", "--sink-dir", str(sink), "--no-save", "-c", "2", env=env(), timeout=60)
        assert s3.calls.get("GET", 0) == 0  # refused before the first request
    assert_one_clean_error(done, "refusing key", repr(key))
    escaped = [p for p in tmp_path.rglob("*escaped*")] + list(Path("/tmp").glob("objperf-hostile-escaped*"))
    assert escaped == []
    assert list(sink.iterdir()) == []  # one refused key writes nothing


@pytest.mark.integration
def test_a_key_outside_the_asked_prefix_is_refused(tmp_path):
    with HostileS3("listing-keys", keys=["data/a.bin", "elsewhere/b.bin"]) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save",
                       env=env(), timeout=60)
        assert s3.calls.get("GET", 0) == 0
    assert_one_clean_error(done, "'elsewhere/b.bin'", "not under the prefix")


@pytest.mark.parametrize("key", ["a/\0/b", "..", "a/..", ".", "", "/", "a\\..\\..\\x"])
def test_confined_path_refuses_what_is_no_file_below_the_directory(tmp_path, key):
    with pytest.raises(TargetError, match="refusing key"):
        confined_path(tmp_path, "bucket", key)


def test_confined_path_refuses_a_symlink_leading_out(tmp_path):
    (tmp_path / "sink" / "bucket").mkdir(parents=True)
    (tmp_path / "sink" / "bucket" / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(TargetError, match="leaves the sink directory"):
        confined_path(tmp_path / "sink", "bucket", "link/x.bin")
    assert confined_path(tmp_path / "sink", "bucket", "a/./b//c.bin") == (tmp_path / "sink" / "bucket" / "a/b/c.bin")


# -- listings without end ------------------------------------------------------------------------------


@pytest.mark.integration
def test_an_endless_listing_body_is_cut_at_the_cap_and_memory_stays_bounded():
    with HostileS3("listing-endless-body") as s3:
        started = time.monotonic()
        done, rss = run_measured("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save")
    assert_one_clean_error(done, "longer than")
    assert rss < 600 << 20, f"peak RSS {rss >> 20} MiB"
    assert time.monotonic() - started < 60


@pytest.mark.integration
def test_a_listing_that_repeats_its_token_stops_at_once():
    with HostileS3("listing-forever-same-token") as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save",
                       env=env(), timeout=60)
        assert s3.calls["LIST"] == 2
    assert_one_clean_error(done, "repeated continuation token", "loops")


@pytest.mark.integration
def test_a_listing_that_never_ends_stops_at_its_deadline():
    with HostileS3("listing-forever-new-token", page_keys=0) as s3:
        started = time.monotonic()
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save",
                       "--timeout", "2s", env=env(), timeout=60)
    assert_one_clean_error(done, "did not end within 2s")
    assert time.monotonic() - started < 30


@pytest.mark.integration
def test_a_listing_cut_by_the_key_limit_says_so(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEYS["AWS_ACCESS_KEY_ID"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", KEYS["AWS_SECRET_ACCESS_KEY"])
    with HostileS3("listing-forever-new-token") as s3:
        client = S3Client(S3Settings(endpoint=s3.endpoint, region="us-east-1"))
        listing = client.list_objects(s3.bucket, "data/", limit=2500)
    assert listing.capped and len(listing.keys) == 2500 and listing.pages == 3


@pytest.mark.parametrize("mode, options, words", [
    ("listing-long-key", {"key_bytes": 1 << 20}, ("key of 1.0 MiB", "1 to 1,024 bytes")),
    ("listing-long-key", {"key_bytes": 1025}, ("key of 1,025 bytes", "1 to 1,024 bytes")),
    ("listing-long-token", {"token_bytes": 1 << 20}, ("continuation token is 1.0 MiB long",)),
    ("listing-long-token", {"token_bytes": 4097}, ("continuation token is 4,097 bytes long",)),
])
@pytest.mark.integration
def test_a_listing_that_would_pile_up_long_names_stops_at_its_first_page(mode, options, words):
    """One 1 MB key (or token) a page, pages without end: refused at the first, as S3 holds none so long."""
    with HostileS3(mode, **options) as s3:
        started = time.monotonic()
        done, rss = run_measured("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save")
        assert s3.calls["LIST"] == 1 and s3.calls.get("GET", 0) == 0
    assert_one_clean_error(done, *words)
    assert rss < 400 << 20, f"peak RSS {rss >> 20} MiB"
    assert time.monotonic() - started < 60


@pytest.mark.integration
def test_a_listing_of_the_longest_keys_holds_at_most_its_cap_of_names():
    """Pages of 1,000 keys of 1,024 bytes each without end: the keys held stop at the listing's cap of
    bytes of names, one line, long before the memory's end (and before the first GET)."""
    from objperf.s3.listing import LISTING_KEY_BYTES

    with HostileS3("listing-max-keys") as s3:
        done, rss = run_measured("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save",
                                 "--keys", "100000000", "--timeout", "5m")
        assert s3.calls.get("GET", 0) == 0
        assert s3.calls["LIST"] == LISTING_KEY_BYTES // (1000 * 1024) + 1
    assert_one_clean_error(done, f"key names passed {LISTING_KEY_BYTES >> 20} MiB")
    assert rss < (LISTING_KEY_BYTES * 3) + (150 << 20), f"peak RSS {rss >> 20} MiB"


@pytest.mark.integration
@pytest.mark.parametrize("page_keys", [1, 1000])
def test_a_listing_that_repeats_its_keys_is_one_line_and_nothing_is_read(page_keys):
    """Always truncated, a new token each page and the same keys on every one: not new objects."""
    with HostileS3("listing-repeats", page_keys=page_keys) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save",
                       env=env(), timeout=60)
        assert s3.calls["LIST"] == 2 and s3.calls.get("GET", 0) == 0
    assert_one_clean_error(done, "(page 2)", "listing is broken")


@pytest.mark.parametrize("keys, word", [
    (["data/b.bin", "data/a.bin"], "'data/a.bin' after a key that comes later"),
    (["data/a.bin", "data/a.bin"], "'data/a.bin' again"),
    # S3's order for two, a directory walk's for the first and third: in neither order throughout
    (["data/a-c", "data/a/b", "data/a.x"], "'data/a.x' after a key that comes later"),
    (["data/é", "data/z"], "'data/z' after a key that comes later"),  # UTF-8's order, not the code points'
])
@pytest.mark.integration
def test_a_listing_out_of_order_is_one_line_before_any_read(keys, word):
    with HostileS3("listing-keys", keys=keys, objects=dict.fromkeys(keys, 1 << 20)) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save",
                       env=env(), timeout=60)
        assert s3.calls.get("GET", 0) == 0
    assert_one_clean_error(done, word, "listing is broken")


@pytest.mark.integration
def test_a_listing_in_either_order_stores_give_is_taken(store):
    """S3's order (UTF-8 binary) and a directory walk's ('a/b' before 'a-c', as SeaweedFS lists) both hold
    each key once: both are listings."""
    from test_properties import listing_xml

    from objperf.s3.listing import list_all

    for keys in (["p/a", "p/a-c", "p/a/b", "p/a0"], ["p/a", "p/a/b", "p/a-c", "p/a.x/y", "p/a0"]):
        pages = iter([keys[:2], keys[2:]])
        listing = list_all(lambda token, pages=pages: listing_xml(next(pages), ["1", "1", "1"], "true" if token is None
                                                                  else "false", "t" if token is None else None),
                           "LIST", "p/", limit=1000, deadline_s=60)
        assert [k for k, _ in listing.keys] == keys
    names = ["order/a", "order/a/b", "order/a-c", "order/a.x/y", "order/é", "order/z"]
    for key in names:
        store.client.put_object(store.bucket, key, b"x")
    try:
        assert sorted(k for k, _ in store.client.list_keys(store.bucket, "order/")) == sorted(names)
    finally:
        for key in names:
            store.client.delete_object(store.bucket, key)


@pytest.mark.parametrize("mode, bad_size, words", [
    ("listing-bad-size", "-5", ("size '-5'",)),
    ("listing-bad-size", "1e99", ("size '1e99'",)),
    ("listing-bad-size", "99999999999999999999", ("not a byte count",)),
    ("listing-not-xml", "", ("not XML",)),
])
@pytest.mark.integration
def test_a_malformed_listing_is_one_line(mode, bad_size, words):
    with HostileS3(mode, bad_size=bad_size) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/", "--endpoint", s3.endpoint, "--no-save",
                       env=env(), timeout=60)
    assert_one_clean_error(done, *words)


# -- the multipart calls -------------------------------------------------------------------------------


def put_args(s3: HostileS3, tmp_path: Path, *extra: str) -> list[str]:
    return [f"s3://{s3.bucket}/w/", "--endpoint", s3.endpoint, "--object-size", "12MiB", "--part-size", "5MiB",
            "-c", "2", "--out", str(tmp_path / "put"), *extra]


@pytest.mark.integration
def test_a_create_without_upload_id_sends_no_part_and_fails(tmp_path):
    with HostileS3("create-no-upload-id") as s3:
        done = run_cli("objperf", "put", *put_args(s3, tmp_path, "--keys", "2"), env=env(), timeout=60)
        assert s3.calls.get("PUT", 0) == 0 and s3.calls.get("UPLOAD_PART", 0) == 0
        assert s3.calls.get("COMPLETE_MPU", 0) == 0
    assert done.returncode == 1, done.stdout
    assert "Traceback" not in done.stderr
    rows = load(tmp_path / "put")
    creates = rows[rows.op == "CREATE_MPU"]
    assert len(creates) >= 1 and (creates.curl_code == 8).all()
    assert "not an answer S3 gives" in done.stdout


@pytest.mark.integration
def test_a_part_without_etag_is_a_failed_row_and_the_upload_is_never_completed(tmp_path):
    with HostileS3("part-no-etag") as s3:
        done = run_cli("objperf", "put", *put_args(s3, tmp_path), env=env(), timeout=60)
        assert s3.calls.get("COMPLETE_MPU", 0) == 0
        assert s3.calls.get("ABORT_MPU", 0) == 1
    assert done.returncode == 1
    rows = load(tmp_path / "put")
    parts = rows[rows.op == "UPLOAD_PART"]
    assert len(parts) >= 1 and (parts.curl_code == 8).all() and (parts.bytes == 0).all()


@pytest.mark.integration
def test_a_complete_answered_200_with_an_error_body_fails_the_object(tmp_path):
    with HostileS3("complete-200-error") as s3:
        done = run_cli("objperf", "put", *put_args(s3, tmp_path), env=env(), timeout=60)
        assert s3.calls.get("ABORT_MPU", 0) == 1
    assert done.returncode == 1
    assert "0 uploads completed, 1 failed" in done.stdout


@pytest.mark.integration
def test_an_endless_create_answer_is_cut_and_memory_stays_bounded(tmp_path):
    with HostileS3("create-endless-body") as s3:
        done, rss = run_measured("objperf", "put", *put_args(s3, tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert rss < 600 << 20, f"peak RSS {rss >> 20} MiB"
    rows = load(tmp_path / "put")
    assert (rows[rows.op == "CREATE_MPU"].curl_code == 63).all()


@pytest.mark.integration
def test_a_trickled_create_ends_with_the_runs_duration(tmp_path):
    with HostileS3("create-trickle") as s3:
        started = time.monotonic()
        done = run_cli("objperf", "put", *put_args(s3, tmp_path, "--duration", "3s"), env=env(), timeout=90)
        took = time.monotonic() - started
    assert took < 30, f"took {took:.0f}s"
    assert "Traceback" not in done.stderr
    assert json.loads((tmp_path / "put" / "manifest.json").read_text())["status"] != "running"


@pytest.mark.integration
def test_sigterm_ends_a_run_waiting_on_a_trickled_create(tmp_path):
    with HostileS3("create-trickle") as s3:
        proc = subprocess.Popen([sys.executable, "-m", "objperf", "put", *put_args(s3, tmp_path, "--duration", "5m")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        try:
            assert wait_for(lambda: s3.calls.get("CREATE_MPU", 0) >= 1, timeout=30)
            proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 143, stderr
    manifest = json.loads((tmp_path / "put" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"


@pytest.mark.integration
def test_all_parts_refused_is_a_failed_run_whose_summary_counts_what_was_sent(tmp_path):
    with HostileS3("part-500") as s3:
        done = run_cli("objperf", "put", *put_args(s3, tmp_path, "--json"), env=env(), timeout=60)
    assert done.returncode == 1
    summary = json.loads(done.stdout)
    assert summary["status"] == "failed"
    parts = summary["directions"]["write"]
    assert summary["error_requests"] > 0 and parts["failed"] == parts["requests"]
    text = run_cli("objperf", "analyze", str(tmp_path / "put"), timeout=60).stdout
    assert f"no part acknowledged: {parts['failed']:,} refused or failed (their bytes are not counted)" in text


# -- GETs whose answer is not the range asked -------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("mode, code", [("wrong-content-range", 33), ("short-body", 18)])
def test_a_206_that_is_not_the_range_asked_is_a_failed_row(tmp_path, mode, code):
    with HostileS3(mode, objects={"data/obj.bin": 4 << 20}) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", s3.endpoint,
                       "--range-size", "1MiB", "--verify", "-c", "2", "--out", str(tmp_path / "r"), env=env(),
                       timeout=60)
    rows = load(tmp_path / "r")
    # the first range is the one a server stuck on "bytes 0-" gets right
    wrong = rows[rows.offset > 0] if mode == "wrong-content-range" else rows
    assert len(wrong) >= 1 and (wrong.curl_code == code).all() and (wrong.bytes == 0).all()
    assert f"{len(wrong)} failed" in done.stdout
    assert done.returncode == (0 if len(wrong) < len(rows) else 1)


@pytest.mark.integration
def test_an_object_longer_than_its_head_said_lands_no_byte(tmp_path):
    sink = tmp_path / "sink"
    with HostileS3("head-says-zero", objects={"data/obj.bin": 4 << 20}) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", s3.endpoint,
                       "--sink", "file", "--sink-dir", str(sink), "--out", str(tmp_path / "r"), env=env(),
                       timeout=60)
    assert done.returncode == 1
    rows = load(tmp_path / "r")
    assert (rows.curl_code == 33).all()
    assert (sink / "hostile" / "data" / "obj.bin").stat().st_size == 0


# -- what reaches the terminal ---------------------------------------------------------------------------


@pytest.mark.integration
def test_control_bytes_from_the_server_never_reach_the_terminal(tmp_path):
    with HostileS3("ansi-error") as s3:
        for args in (["objperf.fetch", f"s3://{s3.bucket}/data/obj.bin"],
                     ["objperf.fetch", f"{s3.endpoint}/hostile/data/obj.bin"]):
            done = run_cli(*args, "--endpoint", s3.endpoint, "--no-save", env=env(), timeout=60) \
                if args[1].startswith("s3") else run_cli(*args, "--no-save", env=env(), timeout=60)
            assert done.returncode != 0
            for stream in (done.stdout, done.stderr):
                assert not any(ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) <= 0x9f for c in stream), stream


# -- bad values: one line, before the first request ----------------------------------------------------


@pytest.mark.parametrize("command, args", [
    ("objperf.fetch", ["-c", "99999999999999999999"]),
    ("objperf.fetch", ["--requests", "99999999999999999999"]),
    ("objperf.fetch", ["--threads", "100000"]),
    ("objperf.fetch", ["--range-size", "99999999999TiB"]),
    ("objperf.fetch", ["--timeout", "99999999h"]),
    ("objperf.commands.put", ["--keys", "99999999999999999999"]),
    ("objperf.commands.put", ["--object-size", "6TiB"]),
    ("objperf.commands.put", ["-c", "99999999999"]),
])
@pytest.mark.integration
def test_a_number_too_large_is_one_line_before_any_request(command, args):
    with HostileS3("well-behaved") as s3:
        url = f"s3://{s3.bucket}/data/" if command == "objperf.fetch" else f"s3://{s3.bucket}/w/"
        done = run_cli(command, url, "--endpoint", s3.endpoint, "--no-save", *args, env=env(), timeout=60)
        assert s3.calls == {}
    assert_one_clean_error(done)
    assert done.returncode == 2


@pytest.mark.integration
def test_put_with_a_hundred_million_keys_holds_none_before_its_first_request(tmp_path):
    with HostileS3("well-behaved") as s3:
        done, rss = run_measured("objperf", "put", f"s3://{s3.bucket}/w/", "--endpoint", s3.endpoint, "--keys",
                                 "100000000", "--object-size", "1KiB", "--requests", "20", "--no-save")
    assert done.returncode == 0, done.stderr
    assert rss < 400 << 20, f"peak RSS {rss >> 20} MiB"


# -- one TLS rule for both planes ----------------------------------------------------------------------


def subject_only_certificate(where: Path) -> tuple[str, str, str]:
    """A CA and a certificate for ``localhost`` named in its subject alone, with no subjectAltName (an old
    style that libcurl still matches)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = name(f"objperf test CA {where.name}")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder().subject_name(name("localhost")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(2).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(ca_key, hashes.SHA256()))
    paths = [where / "cert.pem", where / "key.pem", where / "ca.pem"]
    paths[0].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    paths[2].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return tuple(map(str, paths))


@pytest.mark.integration
def test_both_planes_judge_a_certificate_by_the_engines_rule(tmp_path, monkeypatch):
    """The control plane's requests go over libcurl whichever plane signs them, so a certificate is judged by
    the rule that judges every GET: never refused for the control plane and taken for the data (nor the
    reverse), and a refusal says libcurl's reason."""
    from objperf.core.errors import Unreachable

    cert, key, ca = subject_only_certificate(tmp_path)
    (tmp_path / "other").mkdir()
    other_ca = subject_only_certificate(tmp_path / "other")[2]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEYS["AWS_ACCESS_KEY_ID"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", KEYS["AWS_SECRET_ACCESS_KEY"])
    with HostileS3("well-behaved", objects={"data/obj.bin": 3 << 20}, tls=(cert, key)) as s3:
        endpoint = s3.endpoint.replace("127.0.0.1", "localhost")
        for light in (True, False):
            client = S3Client(S3Settings(endpoint=endpoint, region="us-east-1", ca_bundle=ca), light=light)
            assert client.object_size(s3.bucket, "data/obj.bin") == 3 << 20
            assert client.list_keys(s3.bucket, "data/") == [("data/obj.bin", 3 << 20)]
            untrusting = S3Client(S3Settings(endpoint=endpoint, region="us-east-1", ca_bundle=other_ca), light=light)
            with pytest.raises(Unreachable, match="TLS certificate not trusted: .*certificate") as refusal:
                untrusting.object_size(s3.bucket, "data/obj.bin")
            assert refusal.value.untrusted
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", endpoint, "--ca-bundle", ca,
                       "--no-save", env=env(), timeout=60)
        assert done.returncode == 0, done.stderr
        refused = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", endpoint, "--ca-bundle",
                          other_ca, "--no-save", env=env(), timeout=60)
    assert_one_clean_error(refused, "TLS certificate not trusted", "--ca-bundle")


@pytest.mark.integration
@pytest.mark.parametrize("scheme", ["s3", "http"])
def test_a_head_answer_followed_by_an_endless_body_ends_in_time(scheme):
    with HostileS3("head-endless-body") as s3:
        url = f"s3://{s3.bucket}/data/obj.bin" if scheme == "s3" else f"{s3.endpoint}/hostile/data/obj.bin"
        started = time.monotonic()
        done, rss = run_measured("objperf.fetch", url, *(["--endpoint", s3.endpoint] if scheme == "s3" else []),
                                 "--no-save", "--timeout", "5s")
    assert time.monotonic() - started < 60
    assert rss < 600 << 20
    assert "Traceback" not in done.stderr


# -- botocore's calls: every answer capped, every call within its deadline ----------------------------


def settings_for(s3: HostileS3, timeout: float = 120.0) -> S3Settings:
    return S3Settings(endpoint=s3.endpoint, region="us-east-1", timeout=timeout, multipart_timeout=timeout)


@pytest.fixture
def small_dataset(tmp_path) -> Path:
    """A dataset of a few rows (made against a well-behaved server) to push, or to serve."""
    with HostileS3("well-behaved", objects={"data/obj.bin": 2 << 20}) as s3:
        done = run_cli("objperf.fetch", f"s3://{s3.bucket}/data/obj.bin", "--endpoint", s3.endpoint,
                       "--range-size", "1MiB", "--out", str(tmp_path / "ds"), env=env(), timeout=60)
    assert done.returncode == 0, done.stderr
    return tmp_path / "ds"


def served(dataset: Path, prefix: str = "ds/") -> dict[str, bytes]:
    return {prefix + str(p.relative_to(dataset)): p.read_bytes() for p in dataset.rglob("*") if p.is_file()}


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["uploads-endless-body", "uploads-endless-error"])
def test_cleanup_cuts_an_endless_uploads_answer_at_the_cap_in_one_line(mode):
    with HostileS3(mode) as s3:
        started = time.monotonic()
        done, rss = run_measured("objperf", "cleanup", f"s3://{s3.bucket}/objperf/", "--endpoint", s3.endpoint,
                                 "--dry-run")
        assert s3.calls["LIST_UPLOADS"] == 1
    assert_one_clean_error(done, "list multipart uploads in hostile", "longer than 8 MiB")
    assert rss < 400 << 20, f"peak RSS {rss >> 20} MiB"
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("mode, words", [
    ("get-endless-error", ("GET s3://hostile/ds/manifest.json", "longer than 8 MiB")),
    ("get-endless-body", ("larger than a manifest can be",)),
])
@pytest.mark.integration
def test_analyze_of_a_dataset_in_a_store_cuts_an_endless_answer_in_one_line(small_dataset, mode, words):
    with HostileS3(mode, files=served(small_dataset)) as s3:
        started = time.monotonic()
        done, rss = run_measured("objperf", "analyze", f"s3://{s3.bucket}/ds/", "--endpoint", s3.endpoint)
    assert_one_clean_error(done, *words)
    assert rss < 400 << 20, f"peak RSS {rss >> 20} MiB"
    assert time.monotonic() - started < 60


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["put-endless-body", "put-endless-error"])
def test_push_cuts_an_endless_answer_in_one_line(small_dataset, mode):
    with HostileS3(mode) as s3:
        done, rss = run_measured("objperf", "push", str(small_dataset), f"s3://{s3.bucket}/shared/", "--endpoint",
                                 s3.endpoint)
        assert s3.calls["PUT"] == 1  # the first file's answer ends the push
    assert_one_clean_error(done, "PUT s3://hostile/shared/", "longer than 8 MiB")
    assert rss < 400 << 20, f"peak RSS {rss >> 20} MiB"


def _cleanup(client: S3Client, s3: HostileS3, _) -> None:
    client.open_uploads(s3.bucket, "objperf/")


def _pull(client: S3Client, s3: HostileS3, tmp_path: Path) -> None:
    from objperf.dataset.store_reader import pull

    pull(f"s3://{s3.bucket}/ds/", client.settings, tmp_path / "pulled")


def _push(client: S3Client, s3: HostileS3, tmp_path: Path) -> None:
    from objperf.dataset.store_reader import push

    push(tmp_path / "ds", f"s3://{s3.bucket}/shared/", client.settings)


@pytest.mark.integration
@pytest.mark.parametrize("mode, call", [("uploads-trickle", _cleanup), ("get-trickle", _pull),
                                        ("put-trickle", _push)])
def test_a_trickled_botocore_answer_ends_at_the_control_timeout(small_dataset, tmp_path, monkeypatch, mode, call):
    """1 byte every 2 s keeps every read alive: the call's whole time is what is bounded."""
    from objperf.core.errors import Unreachable

    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    with HostileS3(mode, files=served(small_dataset), uploads=[("objperf/objperf-0123abcd-00001", "u-1")]) as s3:
        client = S3Client(settings_for(s3, timeout=3))
        started = time.monotonic()
        with pytest.raises(Unreachable, match=r"did not answer .* in time"):
            call(client, s3, tmp_path)
        took = time.monotonic() - started
    assert 3 <= took < 10, f"took {took:.1f}s"


@pytest.mark.integration
def test_botocore_calls_still_read_whole_answers_and_objects_within_the_callers_limit(small_dataset, tmp_path,
                                                                                    monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    uploads = [(f"objperf/objperf-0123abcd-{i:05d}", f"u-{i}") for i in range(3)]
    with HostileS3("well-behaved", files=served(small_dataset), uploads=uploads,
                   objects={"data/big.bin": 20 << 20}) as s3:
        client = S3Client(settings_for(s3))
        assert client.open_uploads(s3.bucket, "objperf/") == uploads
        assert len(client.get_object(s3.bucket, "data/big.bin", limit=20 << 20)) == 20 << 20  # past the 8 MiB cap
        assert len(client.get_object(s3.bucket, "data/big.bin", limit=1000)) == 1001  # one byte too many, no more
        pulled = objperf_load_pulled(s3, tmp_path)
        assert len(pulled) == len(load(small_dataset))


def objperf_load_pulled(s3: HostileS3, tmp_path: Path):
    from objperf.dataset.store_reader import pull

    return load(pull(f"s3://{s3.bucket}/ds/", settings_for(s3), tmp_path / "back"))


@pytest.mark.integration
@pytest.mark.parametrize("upload", [("objperf/" + "k" * 2000, "u-1"), ("objperf/objperf-0123abcd-00001", "u" * 5000)])
def test_cleanup_refuses_an_upload_named_longer_than_s3_names_them(upload):
    with HostileS3("well-behaved", uploads=[upload]) as s3:
        done = run_cli("objperf", "cleanup", f"s3://{s3.bucket}/objperf/", "--endpoint", s3.endpoint, env=env(),
                       timeout=60)
        assert s3.calls.get("ABORT_MPU", 0) == 0
    assert_one_clean_error(done, "longer than S3 makes them")

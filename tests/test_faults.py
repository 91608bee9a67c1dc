"""The fault matrix: a bad day for the store, the disk or the user, end to end.  Nothing is left
behind (no multipart upload, no server process, no half dataset), nothing is mislabelled, and no run
says ``complete`` with exit 0 when nothing useful happened."""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import run_cli, wait_until
from objperf import load
from objperf._engine.payload import payload_parts
from objperf.s3.client import S3Client
from objperf.servers.seaweed import LocalSeaweed

pytestmark = pytest.mark.integration

MIB = 1 << 20


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error:" in line]


def open_uploads(client: S3Client, bucket: str) -> list:
    return client.open_uploads(bucket)


@pytest.fixture
def own_server(tmp_path):
    """A SeaweedFS of the test's own, which the test may kill."""
    server = LocalSeaweed(tmp_path / "own-seaweed")
    server.start()
    client = S3Client(server.settings())
    client.create_bucket("faults")
    try:
        yield server, client
    finally:
        server.stop()


def server_env(server) -> dict:
    return {**os.environ, "AWS_ACCESS_KEY_ID": server.access_key, "AWS_SECRET_ACCESS_KEY": server.secret_key,
            "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
            "AWS_DEFAULT_REGION": "us-east-1"}


def wait_for_rows(out: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not list((out / "requests").glob("part-*.parquet")):
        time.sleep(0.1)


# -- multipart uploads left open -----------------------------------------------------------------------


def test_a_full_disk_under_a_put_still_aborts_every_upload(store, small_disk):
    out = small_disk(256 << 10) / "put"
    done = run_cli("objperf", "put", f"s3://{store.bucket}/full-disk/", "--endpoint", store.server.endpoint,
                   "--object-size", "64MiB", "--part-size", "5MiB", "-c", "4", "--keys", "3", "--duration", "60s",
                   "--out", str(out), env=store.env(), timeout=120)
    assert done.returncode == 1, done.stderr
    errors = error_lines(done.stderr)
    assert len(errors) == 1 and "disk full writing the dataset" in errors[0]
    assert "rows not written" in done.stdout
    assert not open_uploads(store.client, store.bucket)
    assert json.loads((out / "manifest.json").read_text())["status"] == "failed"


def test_a_second_ctrl_c_does_not_cut_the_aborts_short(store, tmp_path):
    out = tmp_path / "p"
    args = [sys.executable, "-m", "objperf", "put", f"s3://{store.bucket}/twice/", "--endpoint", store.server.endpoint,
            "--object-size", "200MiB", "--part-size", "5MiB", "-c", "4", "--keys", "3", "--duration", "60s",
            "--out", str(out)]
    proc = subprocess.Popen(args, env=store.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_rows(out)
    wait_until(lambda: open_uploads(store.client, store.bucket), what="an open upload")  # parts in flight
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # while the first one's clean-up runs
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert not open_uploads(store.client, store.bucket)
    assert load(out).attrs["manifest"]["status"] == "interrupted"


@pytest.mark.parametrize("hangup", [signal.SIGHUP, signal.SIGTERM])
def test_a_closed_terminal_ends_a_put_as_sigterm_does(store, tmp_path, hangup):
    """SIGHUP (the terminal closed) ended a run without aborting its uploads or finishing its manifest."""
    out, prefix = tmp_path / "p", f"hangup-{int(hangup)}/"
    args = [sys.executable, "-m", "objperf", "put", f"s3://{store.bucket}/{prefix}", "--endpoint",
            store.server.endpoint, "--object-size", "200MiB", "--part-size", "5MiB", "-c", "4", "--keys", "3",
            "--duration", "60s", "--out", str(out)]
    proc = subprocess.Popen(args, env=store.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_rows(out)
    wait_until(lambda: store.client.open_uploads(store.bucket, prefix), what="an open upload")
    proc.send_signal(hangup)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + hangup, stderr
    assert "Traceback" not in stderr
    assert not store.client.open_uploads(store.bucket, prefix)
    assert load(out).attrs["manifest"]["status"] == "interrupted"


def test_aborts_the_store_did_not_take_are_listed_and_fail_the_run(own_server, tmp_path):
    server, client = own_server
    out = tmp_path / "p"
    args = [sys.executable, "-m", "objperf", "put", "s3://faults/dies/", "--endpoint", server.endpoint,
            "--object-size", "400MiB", "--part-size", "5MiB", "-c", "2", "--keys", "2", "--duration", "60s",
            "--out", str(out)]
    proc = subprocess.Popen(args, env=server_env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_rows(out)
    wait_until(lambda: open_uploads(client, "faults"), what="an open upload")
    server.stop()  # the store dies with uploads open
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    assert "left open" in stderr and "upload id" in stderr
    summary = load(out).attrs["manifest"]["summary"]
    assert summary["uploads_left_open"] and all("upload id" in u for u in summary["uploads_left_open"])


def test_aborts_to_a_store_that_stopped_answering_go_out_together_and_are_reported(own_server, tmp_path):
    """A store that hangs (a full Ceph cluster did): every part and every abort times out.  The aborts went out
    one after another, a timeout each, and the summary still said the uploads were aborted."""
    server, client = own_server
    out = tmp_path / "p"
    args = [sys.executable, "-m", "objperf", "put", "s3://faults/frozen/", "--endpoint", server.endpoint,
            "--object-size", "20MiB", "--part-size", "5MiB", "-c", "16", "--keys", "8", "--duration", "12s",
            "--timeout", "3s", "--out", str(out)]
    proc = subprocess.Popen(args, env=server_env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    frozen = [p.pid for p in server._procs]
    try:
        wait_for_rows(out)
        wait_until(lambda: open_uploads(client, "faults"), what="an open upload")
        for pid in frozen:
            os.killpg(pid, signal.SIGSTOP)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        for pid in frozen:
            os.killpg(pid, signal.SIGCONT)
    assert proc.returncode == 1, stderr
    rows = load(out)
    aborts = rows[rows["op"] == "ABORT_MPU"].sort_values("t_start")
    assert len(aborts) >= 2 and (aborts["curl_code"] == 28).all()  # each timed out
    ends = (aborts["t_start"] + aborts["total_s"]).to_numpy()
    assert (aborts["t_start"].to_numpy()[1:] < ends[:-1]).any()  # in flight together, not a timeout apart
    left = rows.attrs["manifest"]["summary"]["uploads_left_open"]
    ids = [u for u in left if "upload id" in u]
    assert len(ids) == len(aborts)
    assert f"{len(left)} upload(s) the store did not abort" in stdout
    assert f"{len(left)} multipart upload(s) left open" in stderr
    assert all(entry in stderr for entry in ids)  # each with its upload id, for the user to abort


# -- runs that would lie about how they ended --------------------------------------------------------


class Stall(http.server.BaseHTTPRequestHandler):
    """Answers HEAD with a size, then takes every GET and never sends a byte of it."""

    protocol_version = "HTTP/1.1"

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(64 * MIB))
        self.end_headers()

    def do_GET(self):
        time.sleep(30)

    def log_message(self, *args):
        pass


class WholeObject(http.server.BaseHTTPRequestHandler):
    """Ignores Range: every GET gets 200 and the whole 8 MiB object."""

    protocol_version = "HTTP/1.1"
    body = bytes(range(256)) * (8 * MIB // 256)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        try:
            self.wfile.write(self.body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    servers = []

    def start(handler) -> str:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/object.bin"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_run_in_which_nothing_succeeded_and_nothing_moved_fails(serve, tmp_path):
    url = serve(Stall)
    out = tmp_path / "r"
    done = run_cli("objperf.fetch", url, "-c", "4", "--duration", "3s", "--out", str(out), timeout=60)
    assert done.returncode == 1, done.stderr
    errors = error_lines(done.stderr)
    assert len(errors) == 1 and "no request succeeded" in errors[0] and "no byte moved" in errors[0]
    assert load(out).attrs["manifest"]["status"] == "failed"


def test_a_server_that_goes_away_mid_fetch_stops_the_run(own_server, tmp_path):
    server, client = own_server
    client.put_large_object("faults", "big.bin", payload_parts(16 * MIB))
    out = tmp_path / "r"
    args = [sys.executable, "-m", "objperf.fetch", "s3://faults/big.bin", "--endpoint", server.endpoint,
            "-c", "4", "--range-size", "1MiB", "--sink", "discard", "--duration", "60s", "--out", str(out)]
    proc = subprocess.Popen(args, env=server_env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_rows(out)
    killed = time.monotonic()
    server.stop()
    stdout, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - killed < 20  # not the run's 60 s
    assert proc.returncode == 1, stderr
    errors = error_lines(stderr)
    assert len(errors) == 1 and "server unreachable since" in errors[0]
    df = load(out)
    assert df.attrs["manifest"]["status"] == "failed" and (df["status"] == 206).sum() > 0


def test_a_server_that_ignores_range_gets_error_rows_and_no_byte_lands_outside_a_range(serve, tmp_path):
    url = serve(WholeObject)
    sink = tmp_path / "sink"
    done = run_cli("objperf.fetch", url, "-c", "2", "--range-size", "1MiB", "--sink", "file", "--sink-dir",
                   str(sink), "--out", str(tmp_path / "r"), timeout=60)
    df = load(tmp_path / "r")
    assert len(df) == 8 and (df["curl_code"] == 33).all() and (df["bytes"] <= df["length"]).all()
    assert "33 Requested range was not delivered by the server" in done.stdout
    assert (sink / "http" / "object.bin").stat().st_size == 8 * MIB  # nothing written past the object
    assert done.returncode == 1


def test_control_plane_calls_end_within_the_timeout(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        started = time.monotonic()
        done = run_cli("objperf.fetch", "s3://b/k", "--endpoint", f"http://127.0.0.1:{silent.getsockname()[1]}",
                       "--timeout", "2s", env={**os.environ, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
                                               "AWS_DEFAULT_REGION": "us-east-1"}, timeout=60)
    assert time.monotonic() - started < 15
    assert done.returncode == 1 and "did not answer" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# -- data that would get mixed, servers that would be orphaned -----------------------------------------


def test_a_refusal_writes_nothing_and_the_same_out_then_works(store, tmp_path):
    out = tmp_path / "r"
    refused = run_cli("objperf.fetch", f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
                      "-c", "8000", "--range-size", "4MiB", "--out", str(out), env=store.env())  # 31 GiB of slots
    assert refused.returncode == 2 and "RAM sink needs" in refused.stderr
    assert not out.exists() or not any(out.iterdir())
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
                   "--range-size", "1MiB", "--out", str(out), env=store.env())
    assert done.returncode == 0, done.stderr


def test_an_out_with_files_but_no_manifest_is_refused_before_any_traffic(store, tmp_path):
    out = tmp_path / "r"
    (out / "requests").mkdir(parents=True)
    (out / "requests" / "part-00000.parquet").write_bytes(b"a killed run's part")
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
                   "--out", str(out), env=store.env())
    assert done.returncode == 2 and "is not empty" in done.stderr
    assert sorted(p.name for p in (out / "requests").iterdir()) == ["part-00000.parquet"]


def weed_processes() -> set[int]:
    found = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "weed":
                    found.add(int(pid))
            except OSError:
                pass
    return found


def test_a_signal_during_the_embedded_servers_start_leaves_no_server_running(tmp_path):
    before = weed_processes()
    proc = subprocess.Popen([sys.executable, "-m", "objperf.fetch", "--duration", "5s"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not weed_processes() - before:
        time.sleep(0.02)
    assert weed_processes() - before, "the embedded server never started"
    proc.send_signal(signal.SIGINT)  # while it starts
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    wait_until(lambda: not weed_processes() - before, timeout=15, what="the embedded server's end")


def test_sigterm_exits_143(store, tmp_path):
    out = tmp_path / "r"
    args = [sys.executable, "-m", "objperf.fetch", f"s3://{store.bucket}/data/even.bin", "--endpoint",
            store.server.endpoint, "--range-size", "256KiB", "-c", "2", "--duration", "60s", "--out", str(out)]
    proc = subprocess.Popen(args, env=store.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_rows(out)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 143, stderr
    assert load(out).attrs["manifest"]["status"] == "interrupted"


def test_a_missing_bucket_is_the_same_exit_status_for_every_command(store):
    fetch = run_cli("objperf.fetch", "s3://no-such-bucket-x/k", "--endpoint", store.server.endpoint, env=store.env())
    put = run_cli("objperf", "put", "s3://no-such-bucket-x/k/", "--endpoint", store.server.endpoint, env=store.env())
    assert fetch.returncode == put.returncode == 1
    assert "does not exist" in fetch.stderr and "does not exist" in put.stderr


@pytest.mark.parametrize("flags, message", [
    (["--endpoint", "http://127.0.0.1:99999"], "bad --endpoint"),
    (["--endpoint", "ftp://127.0.0.1:9000"], "bad --endpoint"),
    (["--buffer-size", "0"], "buffer size is 1KiB to 10MiB"),
    (["--buffer-size", "64MiB"], "buffer size is 1KiB to 10MiB"),
])
def test_bad_connection_flags_are_one_line_and_exit_2(flags, message):
    done = run_cli("objperf.fetch", "s3://b/k", *flags, env={**os.environ, "AWS_ACCESS_KEY_ID": "k",
                                                            "AWS_SECRET_ACCESS_KEY": "s"})
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_objects_queued_but_never_started_are_not_counted_cut(store):
    done = run_cli("objperf", "mixed", f"s3://{store.bucket}/data/even.bin", "--write-to",
                   f"s3://{store.bucket}/mixed-cut/", "--endpoint", store.server.endpoint, "--object-size", "1MiB",
                   "--part-size", "8MiB", "--read-concurrency", "2", "--write-concurrency", "4", "--duration", "2s",
                   "--cleanup", "--json", env=store.env(), timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["objects_written"] > 0
    assert summary["objects_cut"] <= 4  # at most the writes in flight when the time was up

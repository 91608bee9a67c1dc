"""``python -m objperf.fetch`` as a user runs it: datasets, summaries, bad input, interrupts."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TRICKLE_SIZE, Trickle, run_cli, wait_until
from objperf import load
from objperf.core.schema import CUT_CURL_CODE

pytestmark = pytest.mark.integration

FETCH = "objperf.fetch"


def fetch(store, *args, env=None):
    return run_cli(FETCH, *args, "--endpoint", store.server.endpoint, "--addressing", "path",
                   env=env or store.env())


def assert_no_secrets(store, *texts: str, directory: Path | None = None):
    needles = [*store.secrets, "X-Amz-Signature", "X-Amz-Credential"]
    blobs = list(texts)
    if directory is not None:
        blobs += [p.read_bytes().decode("latin-1") for p in directory.rglob("*") if p.is_file()]
    for blob in blobs:
        for needle in needles:
            assert needle not in blob


def test_fetch_writes_a_loadable_dataset(store, tmp_path):
    out = tmp_path / "run"
    proc = fetch(store, f"s3://{store.bucket}/data/odd.bin", "--range-size", "1MiB", "-c", "3", "--out", str(out),
                 "--verify")
    assert proc.returncode == 0, proc.stderr
    assert "throughput" in proc.stdout and "TTFB" in proc.stdout and "per GiB received" in proc.stdout
    df = load(out)
    assert len(df) == 6 and df["bytes"].sum() == store.objects["data/odd.bin"]
    manifest = df.attrs["manifest"]
    assert manifest["status"] == "complete" and manifest["rows"] == 6
    assert manifest["workload"]["concurrency"] == 3
    assert manifest["system"]["libcurl_version"] and manifest["system"]["cpu_count"] >= 1
    assert manifest["system"]["platform"] == platform.platform()  # as Python names it, without its cost
    assert manifest["summary"]["requests"] == 6
    assert set(df["key"]) == {"data/odd.bin"} and set(df["bucket"]) == {store.bucket}
    assert_no_secrets(store, proc.stdout, proc.stderr, directory=out)


@pytest.mark.parametrize("args, receive_buffer", [
    ((), 64 << 10),  # 512 slots share 32 MiB of receive buffers
    (("--buffer-size", "256KiB"), 256 << 10),  # asked for: kept
])
def test_many_slots_share_a_bounded_receive_buffer_and_the_manifest_says_which(store, tmp_path, args,
                                                                              receive_buffer):
    out = tmp_path / "run"
    proc = fetch(store, f"s3://{store.bucket}/data/small.bin", "-c", "512", "--requests", "512", "--sink", "discard",
                 *args, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    df = load(out)
    assert len(df) == 512 and (df["bytes"] == store.objects["data/small.bin"]).all()
    assert df.attrs["manifest"]["workload"]["buffer_size"] == receive_buffer


@pytest.mark.parametrize("module, args", [
    ("objperf.fetch", ("s3://{bucket}/data/odd.bin", "--range-size", "1MiB", "-c", "3")),
    ("objperf.commands.put", ("s3://{bucket}/no-save/", "--object-size", "1MiB", "--requests", "2", "--cleanup")),
])
def test_a_run_that_keeps_no_rows_loads_neither_pyarrow_nor_pandas(store, module, args):
    """pyarrow is 27 MiB of RSS and 40 ms of start-up: a --no-save run has no use for it."""
    script = (f"import sys; from {module} import main; code = main(sys.argv[1:]); "
              "print([m for m in ('pandas', 'pyarrow') if m in sys.modules]); sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", script, *(a.format(bucket=store.bucket) for a in args),
                           "--endpoint", store.server.endpoint, "--no-save", "--json"],
                          env=store.env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    *summary, loaded = proc.stdout.strip().splitlines()
    assert loaded == "[]"
    assert json.loads("\n".join(summary))["bytes"] == (store.objects["data/odd.bin"] if module == "objperf.fetch"
                                                       else 2 << 20)


@pytest.mark.parametrize("key, args, threads", [
    # 1 MiB ranges from a server on this machine: half the cores, the rest are the server's
    ("data/odd.bin", ("--range-size", "1MiB"), max(1, (os.cpu_count() or 1) // 2)),
    # 1000-byte requests: the client's work per request bounds the run, every core
    ("data/small.bin", ("--requests", "40"), os.cpu_count() or 1),
    # asked for: kept
    ("data/odd.bin", ("--range-size", "1MiB", "--threads", "3"), 3),
])
def test_a_local_server_leaves_cores_to_the_server_and_the_manifest_says_how_many(store, tmp_path, key, args,
                                                                                   threads):
    out = tmp_path / "run"
    proc = fetch(store, f"s3://{store.bucket}/{key}", "-c", "4", "--sink", "discard", *args, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    df = load(out)
    assert df.attrs["manifest"]["workload"]["threads"] == threads
    assert set(df["thread"]) <= set(range(threads)) and df["bytes"].gt(0).all()


def test_a_run_writes_its_dataset_without_pandas_or_arrows_compute_and_dataset_modules(store, tmp_path):
    """Importing pandas cost every run 0.2 s and 45 MiB before its first request; Arrow's casts and
    dictionary encoding (pyarrow.compute) 0.3 s and 50 MiB at its first flush; reading parts back to compact
    them (pyarrow.dataset) 0.3 s and 58 MiB at its end.  Writing rows and samples needs none of them, and
    the dataset reads back whole."""
    out = tmp_path / "run"
    script = ("import sys; from objperf.fetch import main; code = main(sys.argv[1:]); "
              "print([m for m in ('pandas', 'pyarrow.compute', 'pyarrow.dataset') if m in sys.modules]); "
              "sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", script, f"s3://{store.bucket}/data/odd.bin", "--endpoint",
                           store.server.endpoint, "--range-size", "1MiB", "-c", "3", "--verify", "--out", str(out)],
                          env=store.env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    df = load(out)
    assert len(df) == 6 and df["bytes"].sum() == store.objects["data/odd.bin"] and (df["crc32"] != 0).all()
    assert set(df["remote_ip"]) == {"127.0.0.1"} and set(df["http_version"]) == {"1.1"}
    assert (df["tls_resumed"] == -1).all() and df["new_conn"].dtype == bool
    put_out = tmp_path / "put"  # flushed several times, then compacted into one part
    put = subprocess.run([sys.executable, "-c", script.replace("objperf.fetch", "objperf.commands.put"),
                          f"s3://{store.bucket}/no-pandas/", "--endpoint", store.server.endpoint, "--object-size",
                          "6MiB", "--part-size", "5MiB", "--duration", "2.5s", "--cleanup", "--out", str(put_out)],
                         env=store.env(), capture_output=True, text=True, timeout=120)
    assert put.returncode == 0, put.stderr
    assert put.stdout.strip().splitlines()[-1] == "[]"
    written = load(put_out)
    assert [p.name for p in (put_out / "requests").iterdir()] == ["part-00000.parquet"]
    assert len(written) == written.attrs["manifest"]["rows"] and set(written["op"]) >= {"CREATE_MPU", "UPLOAD_PART"}


def test_prefix_and_keys_read_round_robin(store, tmp_path):
    # Keys in turn while they have ranges left: the one-range object is read once, not in every round.
    proc = fetch(store, f"s3://{store.bucket}/data/", "--range-size", "1MiB", "-n", "9", "--out", str(tmp_path / "a"))
    assert proc.returncode == 0, proc.stderr
    df = load(tmp_path / "a")
    assert sorted(df["key"].astype(str).value_counts().to_dict().items()) == [
        ("data/even.bin", 4), ("data/odd.bin", 4), ("data/small.bin", 1)]
    proc = fetch(store, f"s3://{store.bucket}", "--keys", "data/small.bin,data/even.bin", "-n", "4",
                 "--out", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    assert set(load(tmp_path / "b")["key"]) == {"data/small.bin", "data/even.bin"}


def test_json_summary(store):
    import json

    proc = fetch(store, f"s3://{store.bucket}/data/small.bin", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["requests"] == 1 and summary["bytes"] == 1000 and summary["status_counts"] == {"206": 1}


@pytest.mark.parametrize("args, message", [
    (["--concurrency", "0"], "must be at least 1"),
    (["--range-size", "8XB"], "bad size"),
    (["--duration", "soon"], "bad duration"),
    (["--bogus-flag"], "unrecognized arguments"),
    (["--sink", "disk"], "invalid choice"),
    (["--buffer-size", "64MiB"], "buffer size"),
    (["--sink", "file"], "--sink-dir"),
    (["--concurrency", "3000000"], "more than this kernel allows a process"),
    (["--connect-to", "localhost:9000"], "bad --connect-to 'localhost:9000': expected HOST:PORT:ADDR:PORT"),
    (["--url-lifetime", "200h"], "URL lifetime must be between 3s and 7 days"),
    (["--interface", "nosuchnic0"], "bad --interface 'nosuchnic0': neither a network interface nor a local address"),
    (["--interface", "if!127.0.0.1"], "bad --interface 'if!127.0.0.1'"),
    (["--interface", "127.0.0.1,nosuchnic0"], "bad --interface 'nosuchnic0'"),
    (["--spread-to", "10.0.0.2:9000,nope"], "bad --spread-to 'nope': expected ADDR:PORT"),
])
def test_bad_flags_give_one_line(store, args, message):
    proc = fetch(store, f"s3://{store.bucket}/data/small.bin", *args)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def one_line_failure(proc, message):
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert message in lines[0], lines[0]


def test_virtual_addressing_on_an_ip_endpoint_is_refused(store):
    """botocore went path style on an IP endpoint while the manifest recorded virtual."""
    proc = run_cli(FETCH, f"s3://{store.bucket}/data/small.bin", "--endpoint", store.server.endpoint,
                   "--addressing", "virtual", env=store.env())
    one_line_failure(proc, "--addressing virtual puts the bucket in the host name, and the endpoint 127.0.0.1 is "
                           "an IP address")


def test_bad_url(store):
    one_line_failure(fetch(store, "ftp://host/file"), "bad URL")
    one_line_failure(fetch(store, "s3:///nokey"), "bad URL")


def test_missing_bucket_and_key(store):
    one_line_failure(fetch(store, "s3://no-such-bucket-here/k"), "bucket 'no-such-bucket-here' does not exist")
    # The listing path says it the same way (it printed "LIST s3://no-such-bucket-here/: NoSuchBucket from ...").
    one_line_failure(fetch(store, "s3://no-such-bucket-here/"), "bucket 'no-such-bucket-here' does not exist")
    one_line_failure(fetch(store, "s3://no-such-bucket-here/some/prefix/"),
                     "bucket 'no-such-bucket-here' does not exist")
    one_line_failure(fetch(store, f"s3://{store.bucket}/nope.bin"), "does not exist")


def test_unreachable_endpoint(store):
    proc = run_cli(FETCH, f"s3://{store.bucket}/data/small.bin", "--endpoint", "http://127.0.0.1:9",
                   env=store.env())
    one_line_failure(proc, "cannot reach endpoint")


def test_bad_credentials(store):
    env = {**store.env(), "AWS_SECRET_ACCESS_KEY": "wrong" * 8}
    proc = fetch(store, f"s3://{store.bucket}/data/small.bin", env=env)
    one_line_failure(proc, "access denied")
    assert_no_secrets(store, proc.stdout, proc.stderr)


def test_unknown_profile(store):
    proc = fetch(store, f"s3://{store.bucket}/data/small.bin", "--profile", "r2-test")
    one_line_failure(proc, "profile 'r2-test' not found")


def test_no_credentials(store):
    env = {k: v for k, v in store.env().items() if not k.startswith("AWS_ACCESS") and not k.startswith("AWS_SECRET")}
    one_line_failure(fetch(store, f"s3://{store.bucket}/data/small.bin", env=env), "no credentials found")


def fetch_under_open_file_limit(store, soft: int, hard: int, *args: str, may_raise_hard: bool = True,
                                module: str = FETCH):
    """A fetch (or ``module``) in a shell whose ``ulimit -n`` is soft/hard; as root, one that also
    cannot raise the hard limit (as any other user cannot)."""
    import resource
    import shutil

    prefix = []
    if not may_raise_hard and os.geteuid() == 0:
        prefix = [shutil.which("setpriv"), "--bounding-set", "-sys_resource", "--inh-caps", "-sys_resource"]
    return subprocess.run([*prefix, sys.executable, "-m", module, f"s3://{store.bucket}/data/small.bin", *args,
                           "--endpoint", store.server.endpoint, "--addressing", "path"],
                          capture_output=True, text=True, env=store.env(), timeout=120, stdin=subprocess.DEVNULL,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard)))


def test_concurrency_above_the_soft_open_file_limit_still_connects(store):
    import json

    proc = fetch_under_open_file_limit(store, 48, 4096, "-c", "96", "-n", "192", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status_counts"] == {"206": 192} and summary["curl_error_counts"] == {}


def test_concurrency_above_the_hard_open_file_limit_is_one_line(store):
    proc = fetch_under_open_file_limit(store, 48, 48, "-c", "96", may_raise_hard=False)
    one_line_failure(proc, "concurrency 96 needs about")
    assert "ulimit -Hn" in proc.stderr


def test_mixed_run_counts_both_directions_sockets_against_the_limit(store):
    # Either engine alone fits in 240 open files; the 100 + 100 sockets of both, held at once, do not.
    proc = fetch_under_open_file_limit(store, 48, 240, "--read-concurrency", "100", "--write-concurrency", "100",
                                       "--threads", "1", "--duration", "1s", may_raise_hard=False,
                                       module="objperf.commands.mixed")
    one_line_failure(proc, "reads and writes together (100 + 100 in flight) needs about")
    assert "ulimit -Hn" in proc.stderr


def test_ram_sink_larger_than_memory_is_one_line(store):
    total = int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0]) * 1024
    slots = 2 * total // store.objects["data/odd.bin"] + 1  # each slot holds the whole object: one range
    proc = fetch(store, f"s3://{store.bucket}/data/odd.bin", "--range-size", "64MiB", "-c", str(slots))
    one_line_failure(proc, "the RAM sink needs")
    assert f"{slots:,} slots" in proc.stderr and "--sink discard" in proc.stderr


def test_out_dir_already_holding_a_dataset(store, tmp_path):
    assert fetch(store, f"s3://{store.bucket}/data/small.bin", "--out", str(tmp_path)).returncode == 0
    one_line_failure(fetch(store, f"s3://{store.bucket}/data/small.bin", "--out", str(tmp_path)), "already holds")


def start_long_fetch(store, out: Path):
    args = [sys.executable, "-m", FETCH, f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
            "--range-size", "256KiB", "-c", "2", "--duration", "60s", "--out", str(out)]
    proc = subprocess.Popen(args, env=store.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(list((out / "requests").glob("part-*.parquet"))) < 2:
        time.sleep(0.05)  # two parts flushed: the run is well under way, GETs in flight
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_keeps_finished_rows(store, tmp_path, sig):
    out = tmp_path / "run"
    proc = start_long_fetch(store, out)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, stderr  # 130 for SIGINT, 143 for SIGTERM
    assert "interrupted" in stdout
    df = load(out)
    assert df.attrs["manifest"]["status"] == "interrupted"
    assert len(df) == df.attrs["manifest"]["rows"] > 0
    # A GET whose last bytes had arrived by the signal finishes; the others in flight are cut.
    cut = df["curl_code"] == CUT_CURL_CODE
    finished = df[~cut]
    assert len(finished) > 0 and (finished["status"] == 206).all() and (finished["bytes"] == finished["length"]).all()
    assert cut.sum() <= 2 and (df.loc[cut, "bytes"] <= df.loc[cut, "length"]).all()
    assert "Traceback" not in stderr


def test_interrupt_cuts_the_gets_in_flight(trickle_url, tmp_path):
    # Each 16 MiB range takes 5 s to arrive: at the signal both GETs are certainly in flight.
    out = tmp_path / "run"
    before, sent = Trickle.started, Trickle.sent
    proc = subprocess.Popen([sys.executable, "-m", FETCH, trickle_url, "-c", "2", "--range-size", "16MiB",
                             "--duration", "60s", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: Trickle.started >= before + 2, what="both GETs answered")
    # More body than loopback's socket buffers hold: the client has read into both GETs when the signal comes.
    wait_until(lambda: Trickle.sent >= sent + (12 << 20), what="12 MiB of body on its way")
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    df = load(out)
    assert len(df) == 2 and (df["curl_code"] == CUT_CURL_CODE).all() and (df["status"] == 206).all()
    assert ((df["bytes"] > 0) & (df["bytes"] < df["length"])).all() and (df["length"] == TRICKLE_SIZE // 2).all()
    assert "2 cut in flight when the run ended" in stdout


def test_killed_run_keeps_flushed_rows(store, tmp_path):
    out = tmp_path / "run"
    proc = start_long_fetch(store, out)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    with pytest.warns(UserWarning, match="did not finish"):
        df = load(out)
    assert df.attrs["manifest"]["status"] == "running"  # it never got to say how it ended
    assert len(df) > 0 and (df["bytes"] == df["length"]).all()


def test_embedded_default_runs_its_own_server(tmp_path):
    out = tmp_path / "demo"
    proc = run_cli(FETCH, "--object-size", "6MiB", "--range-size", "1MiB", "--out", str(out), "--figures",
                   timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "started local SeaweedFS" in proc.stderr
    df = load(out)
    assert len(df) == 6 and df["bytes"].sum() == 6 << 20
    assert df.attrs["manifest"]["target"]["endpoint"].startswith("http://127.0.0.1:")
    figures = sorted(p.name for p in out.glob("*.png"))
    assert figures == ["throughput.png", "ttfb.png"]


def test_a_plain_url_is_sized_and_read_without_an_http_library(trickle_url):
    # HEAD answers the size over libcurl, as the engine will read: requests is never imported.
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", FETCH, trickle_url, "-c", "2",
                           "--range-size", "64KiB", "--requests", "2", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["bytes"] == 2 * (64 << 10)
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time")}
    assert "objperf.run" in imported and "requests" not in imported


def test_a_plain_url_without_a_size_is_one_line(tmp_path):
    proc = run_cli(FETCH, "http://127.0.0.1:1/nothing-listens-here")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "cannot reach http://127.0.0.1:1/" in proc.stderr


def test_a_run_whose_every_request_failed_exits_non_zero_and_keeps_its_rows(store, tmp_path):
    # Pinned to a port nothing listens on: the HEAD before the run succeeds, every GET is refused.
    port = store.server.s3_port
    out = tmp_path / "run"
    proc = fetch(store, f"s3://{store.bucket}/data/even.bin", "-n", "3",
                 "--connect-to", f"127.0.0.1:{port}:127.0.0.1:1", "--out", str(out))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "objperf fetch: error: no request succeeded (3 failed)" in proc.stderr
    assert "by libcurl code: 7 " in proc.stdout
    df = load(out)
    assert len(df) == 3 and (df["curl_code"] == 7).all()

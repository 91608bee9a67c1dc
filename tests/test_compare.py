"""Client comparison against the real server: every client's bytes verified, the table right, failures kept."""

from __future__ import annotations

import sys

import pytest

from conftest import run_cli
from objperf.options.names import CLIENTS
from objperf.peers import clients
from objperf.peers.compare import Target, available, load_client_runs, run_compare

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MIB = 1 << 20


def target(store, name="local"):
    return Target(name, store.bucket, f"compare-{name}/", store.server.endpoint, "us-east-1", None,
                  (store.server.access_key, store.server.secret_key))


def test_every_available_client_downloads_and_uploads_verified_bytes(store, tmp_path):
    names = available(list(CLIENTS), print)
    ruby = {"ruby sdk"} if clients.has_ruby_sdk() else set()  # a Debian package: make's set-up installs it
    assert set(CLIENTS) - {"ruby sdk"} | ruby == set(names)  # the others come with the project's Python set-up
    runs = run_compare([target(store)], names, size=6 * MIB, repeat=1, out=tmp_path / "c", say=print)
    assert len(runs) == len(names) * 2
    failed = runs[~runs["ok"]]
    assert failed.empty, failed[["client", "operation", "detail"]].to_string()
    assert runs["verified"].all() and (runs["gbps"] > 0).all()
    # CPU is counted in clock ticks: a one-stream curl of 6 MiB can finish inside one.
    assert (runs["cpu_user_s"] >= 0).all() and (runs.loc[runs["client"] != "curl", "cpu_user_s"] > 0).all()
    assert (runs["peak_rss_mib"] > 1).all() and (runs["version"] != "?").all()
    stored = load_client_runs(tmp_path / "c")
    assert len(stored) == len(runs) and set(stored["operation"]) == {"download", "upload"}
    assert (tmp_path / "c" / "samples" / "nic").is_dir()
    assert not store.client.list_keys(store.bucket, "compare-local/")  # it cleans up after itself


def test_the_ruby_sdk_puts_and_gets_verified_bytes(store):
    if not clients.has_ruby_sdk():
        pytest.skip("ruby and ruby-aws-sdk-s3 are not installed here (make's set-up installs them)")
    runs = run_compare([target(store, "ruby")], ["ruby sdk"], size=6 * MIB, repeat=1, out=None, say=print)
    assert len(runs) == 2 and runs["ok"].all() and runs["verified"].all()
    assert set(runs["operation"]) == {"download", "upload"} and (runs["version"] != "?").all()
    # timed inside Ruby around the transfer, as the article did; the interpreter's start apart
    assert (runs["startup_s"] > 0.05).all() and (runs["wall_s"] > 0).all()
    assert (runs["gbps"] == 6 * MIB * 8 / runs["wall_s"] / 1e9).all()


def test_the_aws_crt_counts_as_installed_though_commands_keep_botocore_from_loading_it():
    probe = ("from objperf.commands.common import skip_aws_crt; skip_aws_crt(); "
             "from objperf.peers.compare import available; print(available(['aws crt'], print))")
    done = __import__("subprocess").run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().endswith("['aws crt']"), done.stdout + done.stderr  # the bench extra installs it


def test_objperf_in_a_comparison_leaves_no_dataset_behind(store, tmp_path):
    import os
    from pathlib import Path

    runs_dir = Path(os.environ["OBJPERF_RUNS"])
    before = set(runs_dir.iterdir()) if runs_dir.exists() else set()
    runs = run_compare([target(store, "stray")], ["objperf"], size=6 * MIB, repeat=1, out=None, say=print)
    assert runs["ok"].all()
    assert (set(runs_dir.iterdir()) if runs_dir.exists() else set()) == before


def test_every_client_trusts_the_targets_ca_bundle_over_tls(store):
    tls = Target("tls", store.bucket, "compare-tls/", store.server.endpoint_tls, "us-east-1", None,
                 (store.server.access_key, store.server.secret_key), ca_bundle=store.server.tls[2])
    names = available(list(CLIENTS), print)
    runs = run_compare([tls], names, size=6 * MIB, repeat=1, out=None, say=print)
    # s3torchconnector takes no CA bundle: it says so, in one line, and the others trust the bundle
    cannot = runs[runs["client"] == "s3torchconnector"]
    assert (~cannot["ok"]).all() and cannot["outcome"].str.fullmatch(
        r"failed: s3torchconnector (get|put) failed: ValueError: s3torchconnector takes no CA bundle: .*").all()
    failed = runs[~runs["ok"] & (runs["client"] != "s3torchconnector")]
    assert failed.empty, failed[["client", "operation", "detail"]].to_string()
    assert len(runs) == len(names) * 2 and runs[runs["client"] != "s3torchconnector"]["verified"].all()


@pytest.mark.timeout(120)
def test_obstore_reads_and_writes_verified_bytes(store, tmp_path):
    """obstore's ranged reads (get_range_async, as many tasks as objperf's slots) and multipart put: the
    downloaded file's and the stored object's SHA-256 against the source's, over plain HTTP and over TLS."""
    tls = Target("obstore-tls", store.bucket, "compare-obstore-tls/", store.server.endpoint_tls, "us-east-1",
                 None, (store.server.access_key, store.server.secret_key), ca_bundle=store.server.tls[2])
    # 13 MiB in parts of 5 MiB (S3's least): a short last range, a real multipart upload
    runs = run_compare([target(store, "obstore"), tls], ["obstore"], size=13 * MIB, repeat=1, out=tmp_path / "o",
                       concurrency=3, part_size=5 * MIB, say=print)
    assert len(runs) == 4 and set(runs["operation"]) == {"download", "upload"}
    assert runs["verified"].all() and runs["ok"].all(), runs[["target", "operation", "detail"]].to_string()
    assert runs["outcome"].str.match(r"ok(, crashed on exit \(SIG[A-Z]+\))?$").all()
    assert (runs["version"] == __import__("importlib.metadata").metadata.version("obstore")).all()
    assert (runs["gbps"] > 0).all()
    assert not store.client.list_keys(store.bucket, "compare-obstore")


@pytest.mark.timeout(60)
def test_a_peer_that_dies_after_its_done_line_crashed_on_exit_one_that_dies_before_failed():
    """obstore 0.12 can abort in its runtime's teardown once its transfer is over: the process that printed
    its done line and then aborted finished its transfer; the one that ended before printing it did not."""
    import os

    from objperf.peers.clients import measure
    from objperf.peers.tables import render_table

    no_core = "import os, resource; resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
    finished = measure([sys.executable, "-c", no_core + "print('done bytes=6', flush=True); os.abort()"],
                       env=dict(os.environ))
    assert finished.exit_status == -6 and finished.done == "done bytes=6"
    assert finished.ok and finished.crashed_on_exit and finished.outcome == "ok, crashed on exit (SIGABRT)"
    refused = measure([sys.executable, "-c", "import sys; print('starting'); sys.exit('cannot reach the store')"],
                      env=dict(os.environ))
    assert refused.exit_status == 1 and not refused.done
    assert not refused.ok and refused.outcome == "failed: cannot reach the store"
    aborted = measure([sys.executable, "-c", no_core + "os.abort()"], env=dict(os.environ))
    assert not aborted.ok and aborted.outcome == "failed: SIGABRT"
    clean = measure([sys.executable, "-c", "print('done bytes=6')"], env=dict(os.environ))
    assert clean.ok and not clean.crashed_on_exit and clean.outcome == "ok"
    wrong = measure([sys.executable, "-c", no_core + "print('done bytes=6', flush=True); os.abort()"],
                    env=dict(os.environ))
    wrong.ok, wrong.detail = False, "bytes differ from the object"  # as the bench's checks say it
    assert wrong.outcome == "failed: bytes differ from the object"

    big = {"objperf ram": [clean, clean], "obstore": [finished, clean], "s5cmd": [refused, refused],
           "boto3": [wrong, clean]}
    small = {name: [clean] for name in big}
    table = render_table("reads", big, small, 1 << 30, base="best peer", cpu_base="best peer",
                         versions=dict.fromkeys(big, "1.0")).splitlines()
    assert "  obstore: run 1 ok, crashed on exit (SIGABRT)" in table
    assert "  boto3: run 1 failed: bytes differ from the object" in table
    s5cmd = next(line for line in table if line.startswith("s5cmd"))
    assert s5cmd.split()[1:] == ["1.0", "every", "run", "failed:", "cannot", "reach", "the", "store"]
    assert next(line for line in table if line.startswith("obstore")).split()[11] == "2/2"  # both count


def test_table_has_a_row_per_client_operation_and_run_and_right_means(store):
    from objperf.analysis.stats import client_means, timing_table

    runs = run_compare([target(store, "a"), target(store, "b")], ["objperf", "curl"], size=2 * MIB, repeat=2,
                       out=None, say=print)
    assert len(runs) == 2 * 2 * 2 * 2  # targets x operations x clients x repetitions
    assert runs.groupby(["target", "client", "operation"]).size().eq(2).all()
    table = timing_table(runs.rename(columns={"target": "provider", "rep": "run", "wall_s": "seconds"}))
    assert list(table.index) == [1, 2, "mean"]
    for (client, operation, provider), mean in table.loc["mean"].items():
        mine = runs[(runs["client"] == client) & (runs["operation"] == operation) & (runs["target"] == provider)]
        assert mean == pytest.approx(mine["wall_s"].mean())
    means = client_means(runs.rename(columns={"target": "provider", "wall_s": "seconds"}))
    assert (means["runs"] == 2).all()


def test_a_failing_client_is_recorded_as_failed_not_fast(store, tmp_path):
    runs = run_compare([target(store)], ["objperf", "curl"], size=2 * MIB, repeat=1, out=tmp_path / "f",
                       endpoint_for={"curl": "http://127.0.0.1:9"}, say=print)
    curl = runs[runs["client"] == "curl"]
    assert (~curl["ok"]).all() and (curl["exit_status"] != 0).all() and curl["gbps"].isna().all()
    assert curl["detail"].str.len().min() > 0 and not curl["detail"].str.contains("Signature").any()
    assert runs[runs["client"] == "objperf"]["ok"].all()
    assert len(load_client_runs(tmp_path / "f")) == 4


def test_compare_cli_bad_input():
    proc = run_cli("objperf", "compare", "--clients", "wget")
    assert proc.returncode == 2 and "unknown client" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = run_cli("objperf", "compare", "--target", "only-a-name")
    assert proc.returncode == 2 and "bad --target" in proc.stderr
    proc = run_cli("objperf", "compare", "--target", "lab s3://b/p/ ca_bundle=/nonexistent.pem")
    assert proc.returncode == 2 and "ca_bundle /nonexistent.pem: no such file" in proc.stderr


def test_one_store_takes_the_same_target_options_as_every_command(store, tmp_path):
    out = tmp_path / "one"
    proc = run_cli("objperf", "compare", f"s3://{store.bucket}/compare-one/", "--endpoint-url",
                   store.server.endpoint, "--region", "us-east-1", "-c", "4", "--clients", "objperf,curl",
                   "--size", "2MiB", "--repeat", "1", "--out", str(out), env=store.env())
    assert proc.returncode == 0, proc.stderr
    runs = load_client_runs(out)
    assert len(runs) == 4 and runs["ok"].all() and runs["verified"].all()
    assert set(runs["target"]) == {"127.0.0.1"}  # named after the endpoint's host


def test_target_options_without_a_url_are_refused_in_one_line():
    proc = run_cli("objperf", "compare", "--region", "auto", "--no-save")
    assert proc.returncode == 2 and "give s3://BUCKET/PREFIX/" in proc.stderr and "Traceback" not in proc.stderr


def test_a_client_that_closes_its_output_early_is_measured_to_its_end():
    """The peak memory was sampled only while the client's output was open: a client that closed it early
    ran on unmeasured, its peak read as 0."""
    import os

    from objperf.peers.clients import measure

    grows = ("import os, time; os.close(1); os.close(2); block = bytearray(64 << 20); "
             "block[::4096] = b'x' * len(block[::4096]); time.sleep(0.3)")
    result = measure([sys.executable, "-c", grows], env=dict(os.environ))
    assert result.ok and result.wall_s >= 0.3
    assert result.peak_rss_mib >= 64 and result.cpu_s > 0


def test_a_client_s_private_memory_leaves_out_the_file_pages_it_maps():
    """A client's libraries count in its RSS but are shared; what it allocates is its own."""
    import os
    import tempfile

    from objperf.peers.clients import measure

    with tempfile.NamedTemporaryFile(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as f:
        f.truncate(96 << 20)
        f.flush()
        maps = (f"import mmap, time; f = open({f.name!r}, 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ); "
                "sum(m[i] for i in range(0, len(m), 4096)); block = bytearray(32 << 20); "
                "block[::4096] = b'x' * len(block[::4096]); time.sleep(0.3)")
        result = measure([sys.executable, "-c", maps], env=dict(os.environ))
    assert result.ok and result.peak_rss_mib >= 96 + 32
    assert 32 <= result.peak_private_mib < 96


@pytest.mark.timeout(120)
def test_obstore_trusts_the_bench_s_own_ca_over_https(tmp_path):
    """The bench's certificate was a self-signed leaf, its own CA: rustls (obstore's TLS) refuses a CA's
    certificate as a server's, and every obstore run over HTTPS failed.  Now a CA of the run signs it."""
    import os
    import zlib

    from objperf._engine.payload import payload_parts
    from objperf.peers.bench import make_certificate
    from objperf.peers.clients import measure, obstore_transfer
    from objperf.s3.client import S3Client
    from objperf.servers.seaweed import LocalSeaweed

    cert, key, ca = make_certificate(tmp_path / "tls")
    with LocalSeaweed(tmp_path / "seaweed", tls=(cert, key, ca)) as server:
        client = S3Client(server.settings(tls=True))
        client.create_bucket("objperf-bench-ca")
        client.put_large_object("objperf-bench-ca", "k", payload_parts(3 * MIB))
        env = {**os.environ, "AWS_ACCESS_KEY_ID": server.access_key, "AWS_SECRET_ACCESS_KEY": server.secret_key,
               "AWS_CA_BUNDLE": ca}
        got = measure(obstore_transfer("get", "s3://objperf-bench-ca/k", str(tmp_path / "k"),
                                       endpoint=server.endpoint_tls, region="us-east-1", concurrency=2,
                                       part_size=MIB), env=env, timeout=60)
    assert got.ok, got.detail
    assert zlib.crc32((tmp_path / "k").read_bytes()) == zlib.crc32(b"".join(payload_parts(3 * MIB)))


@pytest.mark.timeout(60)
def test_obstore_held_in_memory_counts_every_range_once(store):
    """The bench's ``obstore ram`` row keeps no file: its ranges, a short last one among them, are counted."""
    from objperf.peers.clients import measure, obstore_transfer

    size = store.objects["data/odd.bin"]
    args = obstore_transfer("get", f"s3://{store.bucket}/data/odd.bin", "ram", endpoint=store.server.endpoint,
                            region="us-east-1", concurrency=4, part_size=1 << 20)
    got = measure(args, env=store.env(), timeout=50)
    assert got.ok and got.done == f"done bytes={size}", got.detail
    twice = obstore_transfer("get", f"s3://{store.bucket}/data/odd.bin", "ram", endpoint=store.server.endpoint,
                             region="us-east-1", concurrency=4, part_size=1 << 20, passes=2)
    got = measure(twice, env=store.env(), timeout=50)
    assert got.ok and got.done == f"done bytes={2 * size}", got.detail  # every range once a pass
    missing = measure([*args[:4], f"s3://{store.bucket}/data/no-such.bin", *args[5:]], env=store.env(), timeout=50)
    assert not missing.ok and not missing.done
    assert missing.outcome.startswith("failed: obstore get failed: FileNotFoundError: Object at location data/no-such")

"""Over TLS: the engines and the control plane trust the same CA bundle, and an untrusted
certificate is one clear line (the session's SeaweedFS has an HTTPS gateway whose
certificate a throwaway CA signed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_write import no_open_uploads

from conftest import RANGE, run_cli
from objperf import load
from objperf.dataset.directory import read_manifest
from objperf.plan.reads import ReadWorkload
from objperf.run.reads import run_read
from objperf.s3.client import S3Client
from objperf.s3.target import resolve_read_target

pytestmark = pytest.mark.integration

KEY = "data/odd.bin"


@pytest.mark.parametrize("engine", ["curl", "requests"])
def test_ranges_read_over_tls_land_the_objects_bytes(store, engine):
    target = resolve_read_target(f"s3://{store.bucket}/{KEY}", store.server.settings(tls=True))
    assert target.urls[0].startswith("https://127.0.0.1:")
    workload = ReadWorkload(concurrency=2, threads=1, range_size=RANGE, engine=engine)
    result = run_read(target, workload, keep_slot_buffers=True)
    rows = result.rows
    assert (rows["status"] == 206).all() and (rows["curl_code"] == 0).all()
    assert rows["bytes"].sum() == store.objects[KEY]
    if engine == "curl":
        assert (rows.loc[rows["new_conn"] == 1, "tls_s"] > 0).all()  # a handshake on every new connection
    data = store.expected(KEY)
    last = rows.sort_values("t_start").groupby("slot").tail(1)
    for slot, offset, length in zip(last["slot"], last["offset"], last["length"]):
        assert np.array_equal(result.slot_buffers[slot][:length], data[offset:offset + length])
    assert result.manifest["target"]["ca_bundle"] == store.server.tls[2]


def tls_args(store, *extra: str) -> list[str]:
    return [f"s3://{store.bucket}/{KEY}", "--endpoint", store.server.endpoint_tls, "-c", "2",
            "--range-size", "1MiB", "--json", *extra]


def test_the_ca_bundle_is_found_where_botocore_finds_it(store, tmp_path):
    ca = store.server.tls[2]
    config = tmp_path / "config"
    config.write_text(f"[profile lab]\nregion = us-east-1\nca_bundle = {ca}\naws_access_key_id = "
                      f"{store.server.access_key}\naws_secret_access_key = {store.server.secret_key}\n")
    no_env_bundle = {k: v for k, v in store.env().items() if k != "AWS_CA_BUNDLE"}
    for env, extra in ((store.env(), ("--ca-bundle", ca)),
                       ({**store.env(), "AWS_CA_BUNDLE": ca}, ()),
                       ({**no_env_bundle, "AWS_CONFIG_FILE": str(config)}, ("--profile", "lab"))):
        done = run_cli("objperf.fetch", *tls_args(store, *extra), env=env)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["bytes"] == store.objects[KEY] and summary["status_counts"] == {"206": 6}


def test_an_untrusted_certificate_is_one_line_that_names_the_cure(store):
    done = run_cli("objperf.fetch", *tls_args(store), env=store.env())
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "TLS certificate not trusted" in done.stderr and "--ca-bundle" in done.stderr


def test_no_verify_ssl_trusts_any_certificate_quietly(store):
    done = run_cli("objperf.fetch", *tls_args(store, "--no-verify-ssl"), env=store.env())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["bytes"] == store.objects[KEY]
    assert "Warning" not in done.stderr


def test_a_missing_ca_bundle_is_one_line(store, tmp_path):
    done = run_cli("objperf.fetch", *tls_args(store, "--ca-bundle", str(tmp_path / "nope.pem")), env=store.env())
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"objperf fetch: error: --ca-bundle {tmp_path / 'nope.pem'}: no readable file there"


def test_a_presigned_https_url_is_read_with_the_ca_bundle(store):
    url = S3Client(store.server.settings(tls=True)).presign(store.bucket, KEY)
    done = run_cli("objperf.fetch", url, "-c", "2", "--range-size", "1MiB", "--json",
                   "--ca-bundle", store.server.tls[2], env=store.env())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["bytes"] == store.objects[KEY]


def test_uploads_over_tls_read_back_verified(store):
    done = run_cli("objperf", "put", f"s3://{store.bucket}/tls/", "--endpoint", store.server.endpoint_tls,
                   "--ca-bundle", store.server.tls[2], "--object-size", "12MiB", "--part-size", "5MiB",
                   "-c", "2", "--requests", "1", "--verify", "--cleanup", "--json", env=store.env())
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["verified"].startswith("ok: every key written (1)") and summary["objects_written"] == 1
    assert no_open_uploads(store)


def test_a_presigned_https_url_without_its_ca_is_one_line(store):
    url = S3Client(store.server.settings(tls=True)).presign(store.bucket, KEY)
    done = run_cli("objperf.fetch", url, "--json", env={**store.env(), "AWS_CA_BUNDLE": ""})
    assert done.returncode != 0 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "TLS certificate not trusted" in done.stderr and "--ca-bundle" in done.stderr
    assert "X-Amz-Signature" not in done.stderr


def test_without_keepalive_every_request_opens_a_connection_that_resumes_a_session(store, tmp_path):
    """--no-keepalive pays a connect and a handshake per request, as a client without keep-alive does; the
    engine's threads keep the TLS sessions their slots got, so later handshakes resume one (most of them:
    libcurl with OpenSSL still makes a full one now and then), and the rows and the summary say which."""
    out = tmp_path / "run"
    done = run_cli("objperf.fetch", *tls_args(store, "--ca-bundle", store.server.tls[2], "--threads", "1",
                                              "--requests", "12", "--no-keepalive", "--out", str(out)),
                   env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(out)
    assert len(rows) == 12 and rows["new_conn"].all() and (rows["status"] == 206).all()
    assert rows["tls_resumed"].isin([0, 1]).all()
    first = rows.sort_values("t_start").groupby("slot").head(1)
    assert (first["tls_resumed"] == 0).all()  # each slot's first connection: no session yet
    tls = json.loads(done.stdout)["tls"]
    assert tls["handshakes"] == 12 and tls["resumed"] == (rows["tls_resumed"] == 1).sum() >= 1
    assert 0 < tls["share_of_request_time"] < 1
    assert read_manifest(out)["workload"]["keepalive"] is False


def test_kept_connections_say_no_handshake_and_cleartext_none(store, tmp_path):
    kept = tmp_path / "kept"
    done = run_cli("objperf.fetch", *tls_args(store, "--ca-bundle", store.server.tls[2], "--requests", "12",
                                              "--out", str(kept)), env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(kept)
    assert (rows.loc[~rows["new_conn"], "tls_resumed"] == -1).all()
    assert rows.loc[rows["new_conn"], "tls_resumed"].isin([0, 1]).all() and 1 <= rows["new_conn"].sum() <= 2
    assert json.loads(done.stdout)["tls"]["handshakes"] == rows["new_conn"].sum()
    plain = tmp_path / "plain"
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/{KEY}", "--endpoint", store.server.endpoint, "-c", "2",
                   "--range-size", "1MiB", "--requests", "6", "--no-keepalive", "--json", "--out", str(plain),
                   env=store.env())
    assert done.returncode == 0, done.stderr
    rows = load(plain)
    assert rows["new_conn"].all() and (rows["tls_resumed"] == -1).all()
    assert json.loads(done.stdout)["tls"] is None


def test_a_tls_run_says_in_one_line_whether_the_kernel_could_hold_its_tls(store, tmp_path):
    """A kernel with TLS (its tls module, loaded when first asked for) could keep a connection's records off
    the client's CPU: a TLS run's figures say whether they were measured with or without it."""
    from pathlib import Path

    out = tmp_path / "run"
    done = run_cli("objperf.fetch", *tls_args(store, "--ca-bundle", store.server.tls[2], "--requests", "4",
                                              "--out", str(out)), env=store.env())
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)["kernel_tls"]
    assert said.startswith("available" if Path("/sys/module/tls").exists() else "not available (")
    assert "\n" not in said
    told = run_cli("objperf.commands.analyze", str(out))
    assert told.returncode == 0, told.stderr
    assert [line for line in told.stdout.splitlines() if "kernel TLS" in line] == [f"  kernel TLS   {said}"]
    plain = run_cli("objperf.fetch", f"s3://{store.bucket}/{KEY}", "--endpoint", store.server.endpoint,
                    "--requests", "2", "--json", "--no-save", env=store.env())
    assert plain.returncode == 0 and "kernel_tls" not in json.loads(plain.stdout)  # cleartext: nothing to say
    version = run_cli("objperf", "--version")
    assert version.returncode == 0 and version.stdout.strip().endswith(f"kernel TLS {said}")


def test_a_certificate_for_another_host_is_said_so_on_every_plane(tmp_path):
    """Over botocore a certificate made out for another host read 'TLS handshake failed'."""
    import trustme
    from hostile import HostileS3
    from test_hostile import env

    ca = trustme.CA()
    ca.issue_cert("other.example").private_key_and_cert_chain_pem.write_to_path(tmp_path / "cert.pem")
    ca.cert_pem.write_to_path(tmp_path / "ca.pem")
    with HostileS3("well-behaved", tls=(str(tmp_path / "cert.pem"), str(tmp_path / "cert.pem"))) as s3:
        common = ["--endpoint", s3.endpoint, "--ca-bundle", str(tmp_path / "ca.pem")]
        for args in (["cleanup", f"s3://{s3.bucket}/w/"],  # botocore's plane
                     ["fetch", f"s3://{s3.bucket}/data/obj.bin", "--duration", "1s", "--no-save"]):  # libcurl's
            done = run_cli("objperf", *args, *common, env=env(), timeout=60)
            assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
            (line,) = done.stderr.strip().splitlines()
            assert "handshake failed" not in line and ("not trusted for this host" in line
                                                       or "subject name matches target host" in line), line

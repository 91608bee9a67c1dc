"""Datasets that live in the store: pushed whole and read back checked, through a real SeaweedFS; what a
store hands back is held to the manifest like any other file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import objperf
from conftest import run_cli
from objperf.dataset.source import DatasetError

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def dataset(store, tmp_path):
    out = tmp_path / "run"
    done = run_cli("objperf.fetch", f"s3://{store.bucket}/data/odd.bin", "--endpoint", store.server.endpoint,
                   "--range-size", "1MiB", "-c", "2", "--out", str(out), env=store.env(), timeout=120)
    assert done.returncode == 0, done.stderr
    return out


def store_keywords(store) -> dict:
    return {"endpoint": store.server.endpoint}


@pytest.mark.integration
def test_push_then_load_from_the_store_gives_the_same_rows(store, dataset, monkeypatch):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    url = f"s3://{store.bucket}/shared/run-1/"
    done = run_cli("objperf", "push", str(dataset), url, "--endpoint", store.server.endpoint, env=store.env())
    assert done.returncode == 0, done.stderr
    listed = {key for key, _ in store.client.list_keys(store.bucket, "shared/run-1/")}
    assert "shared/run-1/manifest.json" in listed and any(k.endswith(".parquet") for k in listed)
    here, there = objperf.load(dataset), objperf.load(url, **store_keywords(store))
    assert there.equals(here) and there.attrs["manifest"]["run_id"] == here.attrs["manifest"]["run_id"]
    both = objperf.load([dataset, url], **store_keywords(store))
    assert len(both) == 2 * len(here)


@pytest.mark.integration
def test_a_file_the_store_hands_back_altered_is_refused(store, dataset, monkeypatch, tmp_path):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    url = f"s3://{store.bucket}/shared/altered/"
    assert run_cli("objperf", "push", str(dataset), url, "--endpoint", store.server.endpoint,
                   env=store.env()).returncode == 0
    manifest = json.loads((dataset / "manifest.json").read_text())
    name = sorted(manifest["files"])[0]
    store.client.put_object(store.bucket, f"shared/altered/{name}", b"x" * manifest["files"][name]["bytes"])
    with pytest.raises(DatasetError, match="altered"):
        objperf.load(url, **store_keywords(store))
    store.client.put_object(store.bucket, f"shared/altered/{name}", b"x" * (manifest["files"][name]["bytes"] + 99))
    with pytest.raises(DatasetError, match="truncated or grown"):
        objperf.load(url, **store_keywords(store))


@pytest.mark.integration
def test_a_manifest_in_the_store_naming_a_path_outside_is_refused_before_any_file_is_written(store, dataset,
                                                                                            monkeypatch):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    manifest = json.loads((dataset / "manifest.json").read_text())
    manifest["files"]["../../escaped.txt"] = {"bytes": 3, "sha256": "0" * 64}
    store.client.put_object(store.bucket, "shared/evil/manifest.json", json.dumps(manifest).encode())
    store.client.put_object(store.bucket, "shared/escaped.txt", b"abc")
    with pytest.raises(DatasetError, match="no file of an objperf dataset"):
        objperf.load(f"s3://{store.bucket}/shared/evil/", **store_keywords(store))


@pytest.mark.integration
def test_push_refuses_a_directory_that_is_no_dataset_and_store_options_without_an_s3_url(store, tmp_path):
    (tmp_path / "empty").mkdir()
    done = run_cli("objperf", "push", str(tmp_path / "empty"), f"s3://{store.bucket}/x/", "--endpoint",
                   store.server.endpoint, env=store.env())
    assert done.returncode == 2 and "not a dataset directory" in done.stderr
    with pytest.raises(objperf.api.UsageError, match="name a store"):
        objperf.load(tmp_path / "empty", endpoint="http://127.0.0.1:9")
    shutil.rmtree(tmp_path / "empty")


def fetch_into_store(store, out: str, *more: str, cwd=None):
    return subprocess.run([sys.executable, "-m", "objperf.fetch", f"s3://{store.bucket}/data/odd.bin", "--endpoint",
                           store.server.endpoint, "--range-size", "1MiB", "-c", "2", "--out", out, *more],
                          capture_output=True, text=True, env=store.env(), timeout=120, cwd=cwd,
                          stdin=subprocess.DEVNULL)


@pytest.mark.integration
def test_a_run_writes_its_dataset_straight_into_the_store(store, tmp_path, monkeypatch):
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    url = f"s3://{store.bucket}/results/direct/"
    done = fetch_into_store(store, url, "--requests", "40", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing on this machine: no runs/, no staging
    rows = objperf.load(url, **store_keywords(store))
    manifest = rows.attrs["manifest"]
    assert manifest["status"] == "complete" and manifest["rows"] == len(rows) == 40
    assert set(manifest["files"]) == {key[len("results/direct/"):] for key, _ in
                                      store.client.list_keys(store.bucket, "results/direct/")} - {"manifest.json"}
    ranges = (store.objects["data/odd.bin"] - rows["offset"]).clip(upper=1 << 20)
    assert (rows["bytes"] == ranges).all()  # each row the bytes of its range, as the store sent them
    again = run_cli("objperf", "analyze", url, "--endpoint", store.server.endpoint, "--json", env=store.env())
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["summary"]["requests"] == 40


@pytest.mark.parametrize(("out", "more", "said"), [
    ("s3://{bucket}/data/", (), "already holds objects"),
    ("s3://{bucket}/data/new-results/", ("--url-of-prefix",), "lies inside"),
    ("s3://{bucket}/results/figures/", ("--figures",), "--figures draws into a directory"),
])
@pytest.mark.integration
def test_a_dataset_the_store_cannot_hold_apart_is_refused_before_any_request(store, tmp_path, out, more, said):
    out = out.format(bucket=store.bucket)
    args = [f"s3://{store.bucket}/data/", "--endpoint", store.server.endpoint] if "--url-of-prefix" in more else \
        [f"s3://{store.bucket}/data/odd.bin", "--endpoint", store.server.endpoint]
    more = tuple(m for m in more if m != "--url-of-prefix")
    done = subprocess.run([sys.executable, "-m", "objperf.fetch", *args, "--requests", "4", "--out", out, *more],
                          capture_output=True, text=True, env=store.env(), timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not store.client.list_keys(store.bucket, out.split("/", 3)[3] + "requests/")  # nothing was sent


@pytest.mark.integration
def test_a_store_url_where_only_a_directory_will_do_is_refused(store, tmp_path):
    for args in (["study", "read-concurrency", "--out", f"s3://{store.bucket}/study/"],
                 ["fetch", "--requests", "1", "--out", f"s3://{store.bucket}/embedded/"]):
        done = subprocess.run([sys.executable, "-m", "objperf", *args], capture_output=True, text=True,
                              env=store.env(), timeout=120, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert list(tmp_path.iterdir()) == []  # no directory named "s3:"


def test_a_store_that_will_not_take_the_manifest_is_one_line_before_any_request():
    from objperf.core.errors import RunFailed
    from objperf.dataset.store_prefix import StorePrefix
    from objperf.dataset.store_writer import StoreWriter
    from objperf.s3.settings import S3Settings
    from objperf.servers.seaweed import free_port

    settings = S3Settings(endpoint=f"http://127.0.0.1:{free_port()}", credentials=("k", "s"), timeout=2)
    with pytest.raises(RunFailed, match=r"cannot begin the dataset at s3://b/p/: .*manifest\.json"):
        StoreWriter(StorePrefix.parse("s3://b/p/", settings), {"run_id": "x"})


@pytest.mark.integration
def test_an_unfinished_dataset_in_the_store_is_read_from_its_listing_and_only_its_own_names(store, dataset,
                                                                                            monkeypatch):
    """A run that died leaves a "running" manifest naming no file: its parts come from the listing, and a key
    that is no file of a dataset (however it is named) is not read."""
    for name, value in store.env().items():
        monkeypatch.setenv(name, value)
    manifest = json.loads((dataset / "manifest.json").read_text())
    part = sorted(name for name in manifest["files"] if name.startswith("requests/"))[0]
    prefix = "shared/unfinished/"
    store.client.put_object(store.bucket, prefix + part, (dataset / part).read_bytes())
    store.client.put_object(store.bucket, prefix + "requests/evil.parquet", (dataset / part).read_bytes())
    store.client.put_object(store.bucket, prefix + "requests/part-00001.parquet.txt", b"x")
    store.client.put_object(store.bucket, prefix + "samples/nic/sub/part-00000.parquet", b"x")
    running = {**manifest, "status": "running"}
    del running["files"]
    store.client.put_object(store.bucket, prefix + "manifest.json", json.dumps(running).encode())
    with pytest.warns(UserWarning, match="did not finish"):
        rows = objperf.load(f"s3://{store.bucket}/{prefix}", **store_keywords(store))
    assert len(rows) == len(objperf.load(dataset))  # the one part, once

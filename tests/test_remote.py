"""Datasets that live in the store: pushed whole and read back checked, through a real SeaweedFS; what a
store hands back is held to the manifest like any other file."""

from __future__ import annotations

import json
import shutil

import pytest

import objperf
from conftest import run_cli
from objperf.source import DatasetError

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


def test_push_refuses_a_directory_that_is_no_dataset_and_store_options_without_an_s3_url(store, tmp_path):
    (tmp_path / "empty").mkdir()
    done = run_cli("objperf", "push", str(tmp_path / "empty"), f"s3://{store.bucket}/x/", "--endpoint",
                   store.server.endpoint, env=store.env())
    assert done.returncode == 2 and "not a dataset directory" in done.stderr
    with pytest.raises(objperf.api.UsageError, match="name a store"):
        objperf.load(tmp_path / "empty", endpoint="http://127.0.0.1:9")
    shutil.rmtree(tmp_path / "empty")

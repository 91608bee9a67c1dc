"""A disk that fills during a run, under the dataset (--out) or under the file sink (--sink-dir): the run
ends within seconds with one line and a non-zero exit, its engine threads gone, the rows written before
the disk filled loadable, the manifest saying ``failed``."""

from __future__ import annotations

import json
import time

import pytest

from conftest import run_cli
from objperf import load

pytestmark = pytest.mark.integration

FETCH = "objperf.fetch"


def test_a_full_disk_under_the_dataset_ends_the_run_with_one_line(store, small_disk):
    out = small_disk(256 << 10) / "run"
    started = time.monotonic()
    done = run_cli(FETCH, f"s3://{store.bucket}/data/small.bin", "--endpoint", store.server.endpoint,
                   "-c", "8", "--sink", "discard", "--duration", "60s", "--out", str(out), env=store.env())
    assert time.monotonic() - started < 30  # not the run's 60 s: the full disk ended it
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "disk full writing the dataset" in errors[0], done.stderr
    assert "Traceback" not in done.stderr and "rows not written" in done.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "disk full" in manifest["summary"]["error"]
    df = load(out)  # the parts flushed before the disk filled
    assert len(df) > 0 and (df["status"] == 206).all()


def test_a_full_disk_under_the_file_sink_ends_the_run_with_one_line(store, small_disk, tmp_path):
    sink = small_disk(1 << 20)
    out = tmp_path / "run"
    started = time.monotonic()
    done = run_cli(FETCH, f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
                   "-c", "4", "--range-size", "256KiB", "--sink", "file", "--sink-dir", str(sink),
                   "--duration", "60s", "--out", str(out), env=store.env())
    assert time.monotonic() - started < 30
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "cannot write the file sink: disk full" in errors[0], done.stderr
    df = load(out)
    assert df.attrs["manifest"]["status"] == "failed"
    assert (df["curl_code"] == 23).sum() >= 1  # the request whose bytes did not fit
    written = sink / store.bucket / "data" / "even.bin"
    assert written.stat().st_size == store.objects["data/even.bin"]  # only the object's own file was written

"""A run's first request waits for nothing it does not need: what writes parquet and what np.unique loads
come while the first requests are in flight, and a command loads neither the other commands' options nor
the cluster's code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

PROBE = """
import json, sys
from objperf.run import recorder

seen = {}
start_clock = recorder.Recorder.start_clock

def watched(self):
    seen.update({name: name in sys.modules for name in ("pyarrow", "numpy.ma", "objperf.options.copies",
                                                         "objperf.options.study", "objperf.cluster.runner")})
    start_clock(self)

recorder.Recorder.start_clock = watched
from importlib import import_module
code = import_module(sys.argv[1]).main(sys.argv[2:])
seen["code"] = code
print(json.dumps(seen))
"""


def test_a_fetch_starts_its_requests_before_loading_pyarrow_and_still_writes_every_row(tmp_path, trickle_url):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", PROBE, "objperf.commands.fetch", trickle_url, "-c", "2",
                           "--range-size", "64KiB", "--requests", "4", "--out", str(out), "--json"],
                          capture_output=True, text=True, timeout=50, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])  # after the summary's JSON
    assert seen == {"pyarrow": False, "numpy.ma": False, "objperf.options.copies": False,
                    "objperf.options.study": False, "objperf.cluster.runner": False, "code": 0}

    from objperf import load

    rows = load(out)
    assert len(rows) == 4
    assert (rows["bytes"] == 64 << 10).all()


def test_a_put_loads_what_its_rows_need_before_its_clock_starts(tmp_path, store):
    """A write run's control plane (creates, completes, URLs) runs on the thread the drive loop steps: an
    import there once the run has begun held up its first uploads (a 1 s put then had none open to abort)."""
    out = tmp_path / "put"
    done = subprocess.run([sys.executable, "-c", PROBE, "objperf.commands.put", f"s3://{store.bucket}/startup/",
                           "--endpoint", store.server.endpoint, "--object-size", "1MiB", "--requests", "2",
                           "--out", str(out), "--json"],
                          capture_output=True, text=True, timeout=50, stdin=subprocess.DEVNULL, env=store.env())
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["pyarrow"] and seen["numpy.ma"] and seen["code"] == 0

    from objperf import load

    assert len(load(out)) >= 2

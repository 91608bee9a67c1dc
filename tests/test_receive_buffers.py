"""Each slot's receive buffer follows what its reads deliver: it grows on a stream that fills it, shrinks on one
that never comes near it, stays as asked with --buffer-size, and the slots' buffers together stay within
32 MiB at any concurrency, 4096 in flight included."""

from __future__ import annotations

import json

import pytest

from conftest import TRICKLE_SIZE, run_cli
from objperf._engine.config import EngineConfig, plan_engine
from objperf.plan.reads import RECEIVE_BUFFER_MIN, RECEIVE_BUFFERS_TOTAL, ReadWorkload

pytestmark = pytest.mark.timeout(180)
KIB, MIB = 1 << 10, 1 << 20


@pytest.mark.parametrize("concurrency", [1, 16, 32, 33, 100, 256, 1024, 4096])
def test_the_slots_buffers_grow_only_within_32_mib_together(concurrency):
    workload = ReadWorkload(concurrency=concurrency)
    start, most = workload.receive_buffer(), workload.receive_buffer_max()
    assert RECEIVE_BUFFER_MIN <= start <= most <= 10 * MIB and most % KIB == 0
    assert concurrency * most <= RECEIVE_BUFFERS_TOTAL
    asked = ReadWorkload(concurrency=concurrency, buffer_size=256 * KIB)
    assert asked.receive_buffer() == asked.receive_buffer_max() == 256 * KIB  # asked for: kept, not adapted
    assert asked.describe()["buffer_max"] == 256 * KIB and workload.describe()["buffer_max"] == most


def test_only_cleartext_http1_buffers_follow_their_reads():
    """Over TLS libcurl reads a record (16 KiB) at a time, and HTTP/2 frames reach a transfer through the
    connection's buffers: a larger buffer would be memory for nothing."""
    adaptive = dict(buffer_size=128 * KIB, buffer_max=MIB, buffer_min=8 * KIB)
    assert EngineConfig(**adaptive).receive_buffer_bounds == (8 * KIB, MIB)
    assert EngineConfig(**adaptive, tls=True).receive_buffer_bounds == (128 * KIB, 128 * KIB)
    assert EngineConfig(**adaptive, http_version="2").receive_buffer_bounds == (128 * KIB, 128 * KIB)
    assert EngineConfig(buffer_size=128 * KIB).receive_buffer_bounds == (128 * KIB, 128 * KIB)
    with pytest.raises(ValueError, match="1 KiB to 10 MiB"):
        EngineConfig(buffer_size=128 * KIB, buffer_max=16 * MIB).check()


def fetch(url: str, out, *args: str) -> dict:
    done = run_cli("objperf.fetch", url, *(("--out", str(out)) if out else ()), "--json", *args, timeout=150)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.integration
def test_a_stream_that_fills_its_buffer_grows_it_and_the_summary_says_so(nginx, tmp_path):
    """nginx sends from memory as fast as the client reads: reads fill 128 KiB, and the slots grow."""
    summary = fetch(nginx.http_url, tmp_path / "run", "-c", "4", "--range-size", "4MiB", "--requests", "64",
                    "--sink", "ram", "--verify")
    assert summary["bytes"] == 64 * 4 * MIB and summary["error_requests"] == 0
    buffers = summary["receive_buffers"]
    assert 128 * KIB < buffers["most"] <= ReadWorkload(concurrency=4).receive_buffer_max()
    assert buffers["least"] <= buffers["median"] <= buffers["most"]
    again = run_cli("objperf.commands.analyze", str(tmp_path / "run"), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["summary"]["receive_buffers"] == buffers  # the dataset tells what the run did
    told = run_cli("objperf.commands.analyze", str(tmp_path / "run"))
    assert "libcurl's receive buffers were" in told.stdout or "libcurl's receive buffer was" in told.stdout


@pytest.mark.integration
def test_a_buffer_asked_for_stays_as_asked(nginx, tmp_path):
    summary = fetch(nginx.http_url, tmp_path / "run", "-c", "4", "--range-size", "4MiB", "--requests", "16",
                    "--sink", "discard", "--buffer-size", "64KiB")
    assert summary["receive_buffers"] == {"least": 64 * KIB, "median": 64 * KIB, "most": 64 * KIB}


@pytest.mark.integration
def test_a_stream_of_small_reads_shrinks_its_buffer(trickle_url):
    """The trickle writes 64 KiB at a time: a 1 MiB buffer is never a quarter full, and halves transfer by
    transfer until reads come near it."""
    with plan_engine([trickle_url], [TRICKLE_SIZE], concurrency=1, threads=1, sink="discard", range_size=64 * KIB,
                     max_requests=6, buffer_size=MIB, buffer_max=2 * MIB, buffer_min=8 * KIB) as engine:
        engine.start()
        rows = []
        while not engine.join(0.05):
            rows.append(engine.drain())
        rows.append(engine.drain())
        assert sum(len(r["status"]) for r in rows if r) == 6
        assert all((r["status"] == 206).all() for r in rows if r)
        assert 8 * KIB <= engine.receive_buffers[0] <= 256 * KIB


@pytest.mark.integration
@pytest.mark.slow
def test_4096_slots_keep_their_buffers_within_32_mib(nginx, tmp_path):
    summary = fetch(nginx.http_url, None, "-c", "4096", "--range-size", "64KiB", "--requests", "8192",
                    "--sink", "discard", "--no-save")
    assert summary["requests"] == 8192 and summary["error_requests"] == 0 and summary["bytes"] == 8192 * 64 * KIB
    assert 4096 * summary["receive_buffers"]["most"] <= RECEIVE_BUFFERS_TOTAL

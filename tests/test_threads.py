"""The engine threads a run gets when none are asked for: every core for a remote store, half of them for a
server on this machine moving requests of 1 MiB or more."""

from __future__ import annotations

import pytest

from objperf.plan.reads import ReadWorkload
from objperf.plan.threads import engine_threads, server_is_local
from objperf.plan.writes import WriteWorkload

MIB = 1 << 20


@pytest.mark.parametrize("urls, connect_to, spread_to, local", [
    (["http://127.0.0.1:8333/b/k"], (), (), True),
    (["https://[::1]:8333/b/k"], (), (), True),
    (["http://bucket.localhost:9000/k"], (), (), True),
    (["https://s3.example.com/b/k"], (), (), False),
    (["http://127.0.0.1:1/a", "https://s3.example.com/b"], (), (), False),  # one remote server is enough
    (["https://s3.example.com/b/k"], ("s3.example.com:443:127.0.0.1:8443",), (), True),  # pinned here
    (["https://s3.example.com/b/k"], ("s3.example.com:443:[::1]:8443",), (), True),
    (["http://127.0.0.1:8333/b/k"], ("::10.0.0.2:9000",), (), False),  # pinned elsewhere
    (["https://s3.example.com/b/k"], (), ("::127.0.0.1:1", "::[::1]:2"), True),  # spread over local servers
    (["http://127.0.0.1:8333/b/k"], (), ("::127.0.0.1:1", "::10.0.0.2:2"), False),
    (["https://127.0.0.1.example.com/b/k"], (), (), False),  # a name, not an address
])
def test_a_server_is_local_only_when_every_address_the_slots_reach_is_loopback(urls, connect_to, spread_to, local):
    assert server_is_local(urls, connect_to, spread_to) is local


@pytest.mark.parametrize("concurrency, request_size, local, cores, threads", [
    (16, 8 * MIB, False, 8, 8),       # a remote store: every core
    (16, 8 * MIB, True, 8, 4),        # a local server moving bytes: half
    (16, 8 * MIB, True, 2, 1),
    (16, 8 * MIB, True, 1, 1),
    (256, 1 << 10, True, 2, 2),       # small requests: the client's per-request work bounds the run
    (4096, 256 << 10, True, 2, 2),
    (4096, 8 * MIB, True, 2, 2),      # 4096 in flight: 1024 per thread at most
    (3000, 8 * MIB, True, 8, 4),
    (5000, 8 * MIB, True, 8, 5),
    (2, 1 << 10, False, 8, 2),        # never more threads than transfers
])
def test_the_default_thread_count(concurrency, request_size, local, cores, threads):
    assert engine_threads(concurrency, request_size, local, cores) == threads


def test_a_workload_settles_its_threads_without_changing_the_one_it_was_given():
    reads = ReadWorkload(concurrency=4, range_size=8 * MIB)
    settled = reads.with_threads(["http://127.0.0.1:1/b/k"], 64 * MIB)
    assert reads.threads is None and settled.threads == engine_threads(4, 8 * MIB, True)
    assert settled.describe()["threads"] == settled.threads
    assert ReadWorkload(threads=3).with_threads(["http://127.0.0.1:1/b/k"], MIB).threads == 3
    # a 1 KiB object read with 8 MiB ranges makes 1 KiB requests
    assert reads.with_threads(["http://127.0.0.1:1/b/k"], 1024).threads == engine_threads(4, 1024, True)
    writes = WriteWorkload(buckets=("b",), object_size=64 * MIB, part_size=32 * MIB, concurrency=4)
    assert writes.with_threads("https://s3.example.com").threads == engine_threads(4, 32 * MIB, False)
    with pytest.raises(Exception, match="threads must be at least 1"):
        ReadWorkload(threads=0).validate()

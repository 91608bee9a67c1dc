"""Seeding: the objects a run reads are written once and reused while the store holds them with the right
size and objperf's content; ``--reseed`` writes them again; another tool's object under the same name is
never measured as if it were objperf's."""

from __future__ import annotations

import pytest

from objperf._engine.payload import payload
from objperf.plan.writes import expected_bytes
from objperf.run.seed import all_there, seed_objects

pytestmark = pytest.mark.integration

SIZE = (5 << 20) + 12345  # two parts, the last one short


def seeded_here(store, key: str, *, reseed: bool = False) -> list[str]:
    said: list[str] = []
    seed_objects(store.server.settings(), [store.bucket], [key], SIZE, say=said.append, reseed=reseed)
    return said


def test_objects_with_objperfs_content_are_reused_and_reseed_writes_them_again(store):
    key = "seed-tests/reused.bin"
    first = seeded_here(store, key)
    assert first and first[0].startswith("seeding 1 object(s)")
    body = store.client.get_object(store.bucket, key, limit=SIZE)
    assert body == bytes(expected_bytes(payload(SIZE), SIZE, 0, SIZE))
    assert seeded_here(store, key)[0].startswith("reusing 1 object(s)")
    assert seeded_here(store, key, reseed=True)[0].startswith("seeding 1 object(s)")


def test_an_object_of_the_right_size_with_other_content_is_written_again(store):
    key = "seed-tests/foreign.bin"
    store.client.put_object(store.bucket, key, bytes(SIZE))  # zeros: the right size, not objperf's bytes
    assert not all_there(store.server.settings(), [store.bucket], [key], SIZE)
    assert seeded_here(store, key)[0].startswith("seeding")
    assert all_there(store.server.settings(), [store.bucket], [key], SIZE)


def test_an_object_that_differs_only_at_its_end_is_not_taken_for_a_seed(store):
    key = "seed-tests/tail.bin"
    good = bytearray(expected_bytes(payload(SIZE), SIZE, 0, SIZE))
    good[-1] ^= 0xFF
    store.client.put_object(store.bucket, key, bytes(good))
    assert not all_there(store.server.settings(), [store.bucket], [key], SIZE)

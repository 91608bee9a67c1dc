"""The engine's door: a configuration and a feed made and checked in Python and handed over whole, the row
ring's C side generated from objperf.core.schema, and a teardown that calls no Python from __dealloc__."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

from objperf._engine import ringgen
from objperf._engine.config import EngineConfig, JobQueue, ReadPlan, plan_engine, queue_engine
from objperf._engine.core import Engine
from objperf.core.schema import ENGINE_COLUMNS


def test_the_compiled_ring_is_the_one_the_schema_makes():
    assert ringgen.RING.read_text() == ringgen.ring_source(ringgen.engine_columns())
    text = ringgen.RING.read_text()
    for name in ENGINE_COLUMNS:
        assert f"*{ringgen.C_NAMES.get(name, name)}\n" in text, name
        assert f'cols["{name}"]' in text, name


def test_a_column_added_to_the_schema_reaches_the_ring():
    columns = dict(ENGINE_COLUMNS, retries=np.dtype(np.int16))
    text = ringgen.ring_source(columns)
    assert "int16_t *retries" in text and 'r.retries = <int16_t *>cnp.PyArray_DATA(cols["retries"])' in text


@pytest.mark.parametrize("config, feed, message", [
    (EngineConfig(concurrency=0), ReadPlan([b"http://x/"], [1]), "must be positive"),
    (EngineConfig(sink="tape"), ReadPlan([b"http://x/"], [1]), "sink must be"),
    (EngineConfig(ip="5"), ReadPlan([b"http://x/"], [1]), "ip must be"),
    (EngineConfig(), ReadPlan([], []), "non-empty"),
    (EngineConfig(), ReadPlan([b"http://x/"], [-1]), ">= 0"),
    (EngineConfig(sink="file"), ReadPlan([b"http://x/"], [1]), "file descriptor"),
    (EngineConfig(sink="file"), JobQueue(4), "plan mode"),
    (EngineConfig(), JobQueue(0), "at least one job"),
])
def test_a_bad_configuration_is_refused_before_any_c_state_is_made(config, feed, message):
    with pytest.raises(ValueError, match=message):
        Engine(config, feed)


def test_the_engine_takes_its_configuration_whole_and_nothing_else():
    with pytest.raises(TypeError):
        Engine([b"http://x/"], [1])
    with plan_engine([b"http://127.0.0.1:9/x"], [10], concurrency=3, threads=2, sink="discard") as engine:
        assert (engine.concurrency, engine.thread_count) == (3, 2)
    with queue_engine(4, concurrency=2, sink="discard") as engine:
        assert engine.queued == 0


def test_an_engine_dropped_unclosed_warns_and_frees_its_handles_without_calling_python_from_dealloc():
    """A run whose caller forgot ``close``: ``__del__`` says so and frees everything; ``__dealloc__`` then finds
    nothing left to free (it may call no Python)."""
    engine = plan_engine([b"http://127.0.0.1:9/x"], [10], concurrency=2, threads=2, sink="ram", max_requests=4,
                         connect_timeout=5.0)
    engine.start()
    assert engine.join(30)
    rows = engine.drain()
    assert rows is not None and (rows["curl_code"] == 7).all()  # nothing listens on port 9: refused, no request
    buffer = engine.slot_buffer(0)
    cycle = [engine]
    cycle.append(cycle)
    del engine
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del cycle
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning) and "not closed" in str(w.message)]
    assert buffer.shape[0] == 10  # the RAM sink's pages live as long as an array points into them


@pytest.mark.parametrize("concurrency", [1, 256, 1024, 4096])
def test_the_slots_receive_buffers_together_stay_within_32_mib_up_to_4096_slots(concurrency):
    """libcurl gives every slot its own receive buffer, whatever the object's size: at 4096 slots 16 KiB each
    was 64 MiB of the client's memory for streams of a few hundred KiB/s."""
    from objperf.plan.reads import ReadWorkload

    each = ReadWorkload(concurrency=concurrency).receive_buffer()
    assert 8 << 10 <= each <= 128 << 10 and each % 1024 == 0
    assert concurrency * each <= 32 << 20
    assert ReadWorkload(concurrency=concurrency, buffer_size=1 << 20).receive_buffer() == 1 << 20  # asked: kept

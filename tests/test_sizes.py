import pytest

from objperf.core.errors import UsageError
from objperf.core.sizes import format_size, parse_duration, parse_size


@pytest.mark.parametrize("text, expected", [
    ("8MiB", 8 << 20), ("8M", 8 << 20), ("8MB", 8 << 20), ("1.5GB", 3 << 29), ("4k", 4096), ("8mb", 8 << 20),
    ("1GiB", 1 << 30), ("123", 123), ("0.5KiB", 512), (" 2 GiB ", 2 << 30),
])
def test_sizes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "8XB", "-1", "1.1B", "MiB", "1e3"])
def test_bad_sizes(text):
    with pytest.raises(UsageError):
        parse_size(text)


@pytest.mark.parametrize("text, expected", [("30s", 30), ("2m", 120), ("1h30m", 5400), ("500ms", 0.5), ("10", 10)])
def test_durations(text, expected):
    assert parse_duration(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "soon", "0s", "5x", "-3s"])
def test_bad_durations(text):
    with pytest.raises(UsageError):
        parse_duration(text)


def test_format_size():
    assert format_size(1 << 30) == "1 GiB"
    assert format_size(1536) == "1.5 KiB"


def test_payload_parts_join_up_into_the_payload():
    import numpy as np

    from objperf._engine.payload import payload, payload_parts

    parts = list(payload_parts(10_000_003, seed=7, part_size=1 << 20))
    assert len(parts) == 10 and len(parts[-1]) == 10_000_003 - 9 * (1 << 20)
    assert np.array_equal(np.frombuffer(b"".join(parts), np.uint8), payload(10_000_003, seed=7))

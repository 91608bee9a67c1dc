"""Object size distributions (``--sizes``): what many draws look like against what was asked, the same seed
drawing the same sizes, and bad input refused in one line."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from objperf.core.errors import UsageError
from objperf.plan.sizes import SizeDistribution, parse_sizes
from objperf.plan.writes import WriteWorkload, on_host

pytestmark = pytest.mark.timeout(120)

KIB, MIB = 1 << 10, 1 << 20
DRAWS = 200_000


def draws(text: str, seed: int = 1, n: int = DRAWS) -> np.ndarray:
    return SizeDistribution.parse(text).draw(np.random.default_rng(seed), n)


def test_weighted_buckets_take_their_shares():
    sizes = draws("4KiB:50,1MiB:40,64MiB:10")
    values, counts = np.unique(sizes, return_counts=True)
    assert list(values) == [4 * KIB, MIB, 64 * MIB]
    # 200,000 draws: a share's standard error is at most 0.11 percentage points; 0.5 is over 4 of them
    assert counts / len(sizes) == pytest.approx([0.5, 0.4, 0.1], abs=0.005)
    # and so its quantiles are the bucket sizes, where the shares say
    assert [int(np.quantile(sizes, q)) for q in (0.25, 0.49, 0.51, 0.89, 0.91)] == \
        [4 * KIB, 4 * KIB, MIB, MIB, 64 * MIB]


def test_weights_need_not_sum_to_100():
    d = SizeDistribution.parse("1KiB:1,2KiB:3")
    assert d.weights == (0.25, 0.75)
    assert np.mean(draws("1KiB:1,2KiB:3") == 2 * KIB) == pytest.approx(0.75, abs=0.005)


def test_log_uniform_quantiles():
    """Log-uniform between 1 KiB and 64 MiB: the q-quantile is 1 KiB·65536^q, so each doubling holds 1/16."""
    sizes = draws("1KiB..64MiB")
    assert sizes.min() >= KIB and sizes.max() <= 64 * MIB
    d = SizeDistribution.parse("1KiB..64MiB")
    for q in (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95):
        expected = KIB * 65536 ** q
        assert d.quantile(q) == pytest.approx(expected, rel=1e-3)
        assert np.quantile(sizes, q) == pytest.approx(expected, rel=0.03)  # 200,000 draws
    doublings = np.histogram(np.log2(sizes), bins=np.arange(10, 27))[0] / len(sizes)
    assert doublings == pytest.approx(np.full(16, 1 / 16), abs=0.004)
    assert sizes.mean() == pytest.approx(d.mean(), rel=0.03)


def test_a_small_log_uniform_range_includes_both_ends():
    sizes = draws("1..3")
    shares = np.bincount(sizes, minlength=4)[1:] / len(sizes)
    # size s takes log((s+1)/s) of log(4/1): 1/2, log2(3/2)/2, log2(4/3)/2
    assert shares == pytest.approx([0.5, np.log2(1.5) / 2, np.log2(4 / 3) / 2], abs=0.005)


def test_buckets_of_ranges_and_sizes_mix():
    sizes = draws("4KiB:50,1MiB..8MiB:50")
    small = sizes == 4 * KIB
    assert small.mean() == pytest.approx(0.5, abs=0.005)
    big = sizes[~small]
    assert big.min() >= MIB and big.max() <= 8 * MIB
    assert np.median(big) == pytest.approx(2 ** 21.5, rel=0.03)  # the middle of 2^20..2^23 in logs


def test_a_fixed_size_is_every_object():
    assert set(draws("64MiB", n=1000)) == {64 * MIB}
    assert SizeDistribution.parse("64MiB") == SizeDistribution.fixed(64 * MIB)
    assert parse_sizes(4096) == SizeDistribution.fixed(4096)
    assert set(draws("0", n=10)) == {0}


def test_the_same_seed_draws_the_same_sizes():
    assert np.array_equal(draws("1KiB..1GiB", seed=7), draws("1KiB..1GiB", seed=7))
    assert not np.array_equal(draws("1KiB..1GiB", seed=7, n=100), draws("1KiB..1GiB", seed=8, n=100))
    # a run's stream is the same however many it takes at a time
    workload = WriteWorkload(sizes=SizeDistribution.parse("4KiB:50,1MiB..8MiB:50"), seed=3, buckets=("b",))
    one_by_one = workload.size_stream()
    taken = [one_by_one.take() for _ in range(10_000)]
    again = workload.size_stream()
    assert [again.peek() for _ in range(3)] == [taken[0]] * 3
    assert [again.take() for _ in range(10_000)] == taken
    # a cluster's hosts each draw a stream of their own, the same every time
    host0, host1 = (on_host(workload, i).size_stream() for i in (0, 1))
    firsts = [host0.take() for _ in range(100)]
    assert firsts != [host1.take() for _ in range(100)]
    again0 = on_host(workload, 0).size_stream()
    assert [again0.take() for _ in range(100)] == firsts


def test_the_text_reads_back_the_same():
    for text in ("4KiB:50,1MiB:40,64MiB:10", "1KiB..64MiB", "64MiB", "100B..1000B", "4KiB:1,1MiB..8MiB:3"):
        d = SizeDistribution.parse(text)
        assert SizeDistribution.parse(str(d)) == d


@pytest.mark.parametrize("text, said", [
    ("4KiB:0", "the weight of '4KiB:0' must be a positive number"),
    ("4KiB:-5", "must be a positive number"),
    ("4KiB:x", "must be a positive number"),
    ("foo", "'foo' is not a size of 0 bytes or more"),
    ("-1KiB", "is not a size of 0 bytes or more"),
    ("6TiB", "more than S3's largest object (5 TiB)"),
    ("1KiB..6TiB", "more than S3's largest object (5 TiB)"),
    ("4KiB:50,1MiB", "give every bucket a weight"),
    ("8MiB..1MiB", "ends below its start"),
    ("0..1MiB", "starts at 1 byte or more"),
    ("", "give a size (64MiB), a range (4KiB..64MiB) or weighted buckets"),
])
def test_bad_sizes_are_said_in_one_line(text, said):
    with pytest.raises(UsageError) as caught:
        SizeDistribution.parse(text)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_workload_checks_what_s3_takes():
    too_many_parts = WriteWorkload(sizes=SizeDistribution.parse("1KiB..1TiB"), part_size=8 * MIB, buckets=("b",))
    with pytest.raises(UsageError, match="parts per object: S3 allows at most 10000"):
        too_many_parts.validate()
    mixed = WriteWorkload(sizes=SizeDistribution.parse("4KiB:50,64MiB:50"), part_size=8 * MIB, buckets=("b",))
    mixed.validate()
    assert mixed.multipart and mixed.parts_of(4 * KIB) == 1 and mixed.parts_of(64 * MIB) == 8
    assert mixed.describe()["sizes"] == "4KiB:50,64MiB:50"


@pytest.mark.parametrize("args, said", [
    (["--sizes", "4KiB:0"], "argument --sizes: bad sizes '4KiB:0': the weight of '4KiB:0' must be a positive number"),
    (["--sizes", "foo"], "argument --sizes: bad sizes 'foo'"),
    (["--sizes", "1KiB..6TiB"], "more than S3's largest object (5 TiB)"),
    (["--seed", "-3"], "argument --seed: bad seed '-3'"),
    (["--sizes", "4KiB:1,1MiB:1", "--object-size", "1GiB"], "--object-size and --sizes both size the objects"),
])
def test_the_command_refuses_bad_sizes_before_anything_starts(args, said):
    done = subprocess.run([sys.executable, "-m", "objperf", "put", "s3://nowhere/p/", *args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_mix_of_whole_objects_refuses_sizes_before_anything_starts():
    done = subprocess.run([sys.executable, "-m", "objperf", "mixed", "--mix", "get=50,put=50", "--sizes",
                           "1KiB:1,2KiB:1", "-d", "2s"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--sizes go with a reader and a writer, not with --mix" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

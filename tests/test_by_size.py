"""Object sizes in datasets: every row's ``object_size`` (written, or recovered from an older dataset's manifest
and rows), ``objperf analyze --by size``, the figure by size; and writes drawn from ``--sizes`` against the
real server: the sizes the store lists follow the buckets asked, read back equal, and analyse by size."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from objperf import load
from objperf.analysis.saved import grouped, size_groups
from objperf.dataset.object_sizes import listed_sizes, recover_object_sizes
from objperf.plan.sizes import SizeDistribution
from objperf.plan.writes import WriteWorkload, on_host

KIB, MIB = 1 << 10, 1 << 20
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


# -- without a server -------------------------------------------------------------

@pytest.mark.timeout(60)
def test_a_few_sizes_are_each_a_group_of_their_own():
    groups = size_groups(pd.Series([4 * KIB, MIB, 4 * KIB, 64 * MIB, -1, 1000, 0]))
    assert list(groups) == ["4KiB", "1MiB", "4KiB", "64MiB", "unknown", "1000B", "0B"]
    assert list(groups.categories) == ["0B", "1000B", "4KiB", "1MiB", "64MiB", "unknown"]  # smallest first


@pytest.mark.timeout(60)
def test_many_sizes_are_grouped_by_powers_of_two():
    sizes = SizeDistribution.parse("1KiB..64MiB").draw(np.random.default_rng(1), 10_000)
    groups = pd.Series(size_groups(pd.Series(sizes)))
    assert list(groups.cat.categories) == [f"{a}-{b}" for a, b in zip(
        ["1KiB", "2KiB", "4KiB", "8KiB", "16KiB", "32KiB", "64KiB", "128KiB", "256KiB", "512KiB", "1MiB", "2MiB",
         "4MiB", "8MiB", "16MiB", "32MiB"],
        ["2KiB", "4KiB", "8KiB", "16KiB", "32KiB", "64KiB", "128KiB", "256KiB", "512KiB", "1MiB", "2MiB", "4MiB",
         "8MiB", "16MiB", "32MiB", "64MiB"])]
    # each doubling holds a 16th of a log-uniform draw, and every size falls in its own power of two
    assert groups.value_counts(normalize=True).to_numpy() == pytest.approx(np.full(16, 1 / 16), abs=0.012)
    low = np.exp2(np.floor(np.log2(sizes)))
    assert all(str(g).startswith(f"{int(v) // KIB}KiB" if v < MIB else f"{int(v) // MIB}MiB")
               for g, v in zip(groups[:200], low[:200]))


@pytest.mark.timeout(120)
def test_an_older_dataset_has_its_object_sizes_recovered():
    """The shipped sample was written before rows held object_size: a part gets its upload's size, from the
    COMPLETE_MPU of its key."""
    rows = load(SAMPLE / "write-part-size")
    assert list(rows.columns[:8]) == ["run_id", "host", "thread", "slot", "op", "bucket", "key", "object_size"]
    for key, part in rows.groupby(rows["key"].astype(str)):
        complete = part[part["op"] == "COMPLETE_MPU"]
        assert set(part["object_size"]) == set(complete["length"]), key
    assert (rows["object_size"] > 0).all()


@pytest.mark.timeout(60)
def test_recovery_takes_reads_from_the_manifest_and_says_what_it_cannot():
    rows = pd.DataFrame({"run_id": "r", "op": ["GET", "GET", "PUT", "UPLOAD_PART", "UPLOAD_PART", "COMPLETE_MPU",
                                               "COMPLETE_MPU", "UPLOAD_PART"],
                         "bucket": "b", "key": ["a", "x", "p", "m", "twice", "m", "twice", "twice"],
                         "length": [100, 100, 7, 5, 5, 12, 13, 5]})
    rows.loc[len(rows)] = ["r", "COMPLETE_MPU", "b", "twice", 14]
    manifest = {"target": {"objects": [{"bucket": "b", "key": "a", "size": 1000},
                                       {"bucket": "b", "key": "bad", "size": "9"}]}}
    assert listed_sizes([manifest]) == {("b", "a"): 1000}
    out = recover_object_sizes(rows, [manifest])
    # a listed read; an unlisted one; a PUT's length; a part of a key written once; of a key written twice at
    # two sizes: unknown
    assert list(out["object_size"]) == [1000, -1, 7, 12, -1, 12, 13, -1, 14]


@pytest.mark.timeout(60)
def test_grouped_by_size_counts_every_row():
    rows = load(SAMPLE / "write-part-size")
    groups = grouped(rows, "size")
    assert list(groups["size"]) == ["16MiB", "64MiB", "256MiB"]
    assert groups["requests"].sum() == len(rows)
    assert dict(zip(groups["size"], groups["requests"])) == \
        {label: int((rows["object_size"] == n).sum()) for label, n in (("16MiB", 16 * MIB), ("64MiB", 64 * MIB),
                                                                         ("256MiB", 256 * MIB))}


@pytest.mark.timeout(120)
def test_runs_compared_by_size_line_up_smallest_first():
    from objperf.analysis.diff import compare_runs

    rows = load(SAMPLE / "write-part-size")
    small = rows[rows["object_size"] < 256 * MIB]
    table = compare_runs({"all": rows, "no 256MiB": small}, by="size")
    assert list(dict.fromkeys(table["group"])) == ["16MiB", "64MiB", "256MiB"]
    requests = table[table["metric"] == "requests_per_s"].set_index("group")
    assert requests.loc["256MiB", "all"] > 0 and np.isnan(requests.loc["256MiB", "no 256MiB"])


@pytest.mark.timeout(120)
def test_the_figure_by_size():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from objperf.plots import NothingToDraw, latency_by_size

    rows = load(SAMPLE / "write-part-size")
    ax = latency_by_size(rows)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16MiB", "64MiB", "256MiB"]
    plt.close(ax.figure)
    with pytest.raises(NothingToDraw):
        latency_by_size(rows[rows["object_size"] == 16 * MIB])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme", ["a group a size", "a group a power of two"])
def test_a_scan_by_size_gives_the_loaded_table(tmp_path, scheme):
    """analyze --scan --by size was refused: the scan now groups the rows as loading does, each size its own or
    by powers of two, smallest first, unknown last, with the same counts, Gbps and request rates, and TTFB and
    latency within the sketches' accuracy of the values of those ranks."""
    pytest.importorskip("duckdb")
    from objperf.analysis.scan import groups_table, scan
    from objperf.analysis.sketch import RELATIVE_ACCURACY

    rows = load(SAMPLE / "read-concurrency")
    rng = np.random.default_rng(3)
    if scheme == "a group a size":
        sizes = rng.choice([0, 1000, 4 * KIB, MIB, 8 * MIB, -1], len(rows))
    else:  # more than 16 sizes: powers of two, some sizes on their edges
        sizes = np.where(rng.random(len(rows)) < 0.1, rng.choice([4 * KIB, 8 * KIB - 1, 8 * KIB, MIB], len(rows)),
                         SizeDistribution.parse("1KiB..64MiB").draw(rng, len(rows)))
    rows["object_size"] = sizes.astype(np.int64)
    dataset = tmp_path / "d"
    (dataset / "requests").mkdir(parents=True)
    rows.to_parquet(dataset / "requests" / "part-00000.parquet", row_group_size=100)

    loaded = grouped(rows, "size")
    scanned = groups_table(scan([dataset], by="size"), "size")
    assert list(scanned["size"]) == list(loaded["size"].astype(str)) == list(size_groups(rows["object_size"])
                                                                               .categories)
    assert list(scanned.columns[:len(loaded.columns)]) == list(loaded.columns)
    assert (scanned["requests"] == loaded["requests"]).all() and (scanned["failed"] == loaded["failed"]).all()
    for column in ("gbps", "requests_per_s"):
        assert scanned[column].to_numpy() == pytest.approx(loaded[column].to_numpy(), rel=1e-9)
    groups = size_groups(rows["object_size"])
    ok = (rows["curl_code"] == 0) & rows["status"].between(200, 299)
    first_byte = ((rows["curl_code"] == 0) | (rows["curl_code"] == 42)) & rows["status"].between(200, 299) \
        & (rows["ttfb_s"] > 0) & (rows["op"] == "GET")
    for mine, label in zip(scanned.itertuples(), scanned["size"]):
        for name, chosen, column in (("ttfb", first_byte, "ttfb_s"), ("latency", ok, "total_s")):
            ms = rows.loc[chosen & (groups == label), column].to_numpy() * 1000
            for p in (50, 99):
                exact = np.percentile(ms, p, method="lower")
                assert abs(getattr(mine, f"{name}_ms_p{p}") - exact) <= RELATIVE_ACCURACY * exact * (1 + 1e-9)


@pytest.mark.timeout(60)
def test_a_scan_by_size_of_rows_that_hold_no_size_is_one_line():
    """The shipped sample was written before rows held object_size: loading recovers it, a scan says so."""
    pytest.importorskip("duckdb")
    done = run_cli("objperf", "analyze", str(SAMPLE / "write-part-size"), "--by", "size", "--scan")
    assert done.returncode == 2 and "these rows hold no object size" in done.stderr and "without --scan" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# -- against the real server ----------------------------------------------------------

def listed(store, prefix: str) -> dict[int, int]:
    """Each object the store lists under ``prefix``, by its run's object number: its size."""
    return {int(re.search(r"-(\d+)$", key).group(1)): size for key, size in store.client.list_keys(store.bucket,
                                                                                               prefix)}


def asked(text: str, seed: int, n: int) -> list[int]:
    stream = WriteWorkload(sizes=SizeDistribution.parse(text), seed=seed, buckets=("b",)).size_stream()
    return [stream.take() for _ in range(n)]


SIZES = "4KiB:50,64KiB:30,6MiB:20"


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_put_with_sizes_writes_the_buckets_asked_and_analyses_by_them(store, tmp_path):
    out = tmp_path / "put"
    done = run_cli("objperf", "put", f"s3://{store.bucket}/sizes-a/", "--endpoint", store.server.endpoint,
                   "--sizes", SIZES, "--seed", "11", "--part-size", "5MiB", "--keys", "120", "-c", "8", "--verify",
                   "--figures", "--out", str(out), env=store.env(), timeout=240)
    assert done.returncode == 0, done.stderr
    assert (out / "sizes.png").stat().st_size > 0  # request time by object size, beside throughput.png
    assert "ok: every key written (120) reads back equal to its last upload" in done.stdout
    assert "sizes 4KiB:50,64KiB:30,6MiB:20 (seed 11)" in done.stdout
    sizes = listed(store, "sizes-a/")
    assert len(sizes) == 120
    # the store holds exactly the sizes the seed draws, object by object
    assert [sizes[i] for i in range(120)] == asked(SIZES, 11, 120)
    # and they follow the buckets: 120 draws, each share within 4 standard errors (at most 18 points)
    counts = pd.Series(list(sizes.values())).value_counts()
    assert set(counts.index) == {4 * KIB, 64 * KIB, 6 * MIB}
    for size, share in ((4 * KIB, 0.5), (64 * KIB, 0.3), (6 * MIB, 0.2)):
        assert abs(counts[size] / 120 - share) < 4 * (share * (1 - share) / 120) ** 0.5, counts
    rows = load(out)
    uploads = rows[rows["op"].isin(["PUT", "COMPLETE_MPU"])]
    assert sorted(uploads["object_size"]) == sorted(sizes.values())
    parts = rows[rows["op"] == "UPLOAD_PART"]
    assert set(parts["object_size"]) == {6 * MIB} and set(parts["length"]) == {5 * MIB, MIB}
    assert set(rows[rows["op"] == "PUT"]["object_size"]) == {4 * KIB, 64 * KIB}

    analysed = run_cli("objperf", "analyze", str(out), "--by", "size", "--json", timeout=120)
    assert analysed.returncode == 0, analysed.stderr
    groups = {g["size"]: g["requests"] for g in json.loads(analysed.stdout)["groups"]}
    assert groups == {label: int((rows["object_size"] == n).sum())
                      for label, n in (("4KiB", 4 * KIB), ("64KiB", 64 * KIB), ("6MiB", 6 * MIB))}
    text = run_cli("objperf", "analyze", str(out), "--by", "size", timeout=120)
    table = text.stdout[text.stdout.index("size  requests"):].splitlines()
    assert [line.split()[0] for line in table[1:]] == ["4KiB", "64KiB", "6MiB"]
    # rows left where they lie (--scan) make the same table
    scanned = run_cli("objperf", "analyze", str(out), "--by", "size", "--scan", "--json", timeout=120)
    assert scanned.returncode == 0, scanned.stderr
    loaded = pd.DataFrame(json.loads(analysed.stdout)["groups"])
    scanned = pd.DataFrame(json.loads(scanned.stdout)["groups"])
    for column in ("size", "requests", "failed"):
        assert list(scanned[column]) == list(loaded[column])
    for column in ("gbps", "requests_per_s"):
        assert scanned[column].to_numpy() == pytest.approx(loaded[column].to_numpy(), rel=1e-9)


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_the_same_seed_writes_the_same_sizes_and_another_does_not(store, tmp_path):
    def put(prefix: str, seed: str) -> dict[int, int]:
        done = run_cli("objperf", "put", f"s3://{store.bucket}/{prefix}/", "--endpoint", store.server.endpoint,
                       "--sizes", "1KiB..256KiB", "--seed", seed, "--keys", "40", "-c", "4", "--no-save",
                       env=store.env(), timeout=120)
        assert done.returncode == 0, done.stderr
        return listed(store, f"{prefix}/")

    first, again, other = put("seed-a", "3"), put("seed-b", "3"), put("seed-c", "4")
    assert first == again == dict(enumerate(asked("1KiB..256KiB", 3, 40)))
    assert first != other


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_one_key_rewritten_at_several_sizes_keeps_each_parts_object_size(store, tmp_path):
    """A key written over and over, at times as one PUT, at times in parts: each row says its own object's size
    (the key alone could not tell a part of a 6 MiB upload from one of 11 MiB)."""
    workload = WriteWorkload(sizes=SizeDistribution.parse("1MiB:40,6MiB:30,11MiB:30"), seed=2, part_size=5 * MIB,
                             keys=1, requests=12, concurrency=4, threads=1, buckets=(store.bucket,),
                             prefix="rewritten/", verify=True, cleanup=True)
    from objperf.run.writes import run_write

    result = run_write(store.server.settings(), workload, out=tmp_path / "w")
    assert result.summary["objects_written"] == 12
    assert result.summary["verified"].startswith("ok")
    rows = load(tmp_path / "w")
    drawn = asked("1MiB:40,6MiB:30,11MiB:30", 2, 12)
    assert sorted(rows[rows["op"].isin(["PUT", "COMPLETE_MPU"])]["object_size"]) == sorted(drawn)
    parts = rows[rows["op"] == "UPLOAD_PART"]
    assert set(parts["object_size"]) == {n for n in drawn if n > 5 * MIB}
    for size, mine in parts.groupby("object_size"):
        assert mine["bytes"].sum() == size * drawn.count(size)  # every part of every upload of that size
    groups = grouped(rows, "size")
    assert groups["requests"].sum() == len(rows)


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_reads_of_objects_of_many_sizes_split_by_their_sizes(store, tmp_path):
    """fetch reads objects whose sizes differ already: each GET's row says its object's size, as listed."""
    written = run_cli("objperf", "put", f"s3://{store.bucket}/sizes-r/", "--endpoint", store.server.endpoint,
                      "--sizes", "4KiB:50,3MiB:50", "--keys", "24", "-c", "4", "--no-save", env=store.env())
    assert written.returncode == 0, written.stderr
    sizes = listed(store, "sizes-r/")
    out = tmp_path / "read"
    read = run_cli("objperf", "fetch", f"s3://{store.bucket}/sizes-r/", "--endpoint", store.server.endpoint,
                   "--range-size", "1MiB", "-c", "4", "--out", str(out), env=store.env())
    assert read.returncode == 0, read.stderr
    rows = load(out)
    number = rows["key"].astype(str).str.extract(r"-(\d+)$")[0].astype(int)
    assert (rows["object_size"].to_numpy() == number.map(sizes).to_numpy()).all()
    # every range of every object once: one GET a 4 KiB object, three a 3 MiB one
    counts = rows["object_size"].value_counts()
    small = sum(1 for n in sizes.values() if n == 4 * KIB)
    assert dict(counts) == {4 * KIB: small, 3 * MIB: 3 * (24 - small)}
    analysed = run_cli("objperf", "analyze", str(out), "--by", "size", "--json")
    assert analysed.returncode == 0, analysed.stderr
    assert {g["size"]: g["requests"] for g in json.loads(analysed.stdout)["groups"]} == \
        {"4KiB": small, "3MiB": 3 * (24 - small)}


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_mixed_draws_its_writes_sizes(store, tmp_path):
    out = tmp_path / "mixed"
    done = run_cli("objperf", "mixed", f"s3://{store.bucket}/data/even.bin", "--endpoint", store.server.endpoint,
                   "--write-to", f"s3://{store.bucket}/mixed-sizes/", "--sizes", "4KiB:50,6MiB:50",
                   "--part-size", "5MiB", "--keys", "4", "-c", "2", "-d", "3s", "--cleanup", "--out", str(out),
                   env=store.env(), timeout=120)
    assert done.returncode == 0, done.stderr
    rows = load(out)
    assert set(rows[rows["op"] == "GET"]["object_size"]) == {store.objects["data/even.bin"]}
    writes = rows[rows["op"] != "GET"]
    assert set(writes[writes["op"] == "PUT"]["object_size"]) <= {4 * KIB}
    assert set(writes[writes["op"] == "UPLOAD_PART"]["object_size"]) <= {6 * MIB}
    assert set(writes["object_size"]) == {4 * KIB, 6 * MIB}


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_each_host_of_a_cluster_draws_its_own_stream_the_same_every_time(store, tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "cluster"
    done = run_cli("objperf", "put", f"s3://{store.bucket}/sizes-cluster/", "--endpoint", store.server.endpoint,
                   "--local-cluster", "2", "--sizes", "1KiB..1MiB", "--seed", "5", "--keys", "12", "-c", "2",
                   "--out", str(out), env=store.env(), timeout=240)
    assert done.returncode == 0, done.stderr
    workload = WriteWorkload(sizes=SizeDistribution.parse("1KiB..1MiB"), seed=5, buckets=("b",))
    drawn = []
    for host in (0, 1):
        stream = on_host(workload, host).size_stream()
        expected = [stream.take() for _ in range(12)]
        assert [size for _, size in sorted(listed(store, f"sizes-cluster/host{host:02d}/").items())] == expected
        drawn.append(expected)
    assert drawn[0] != drawn[1]
    rows = load(out)
    assert sorted(rows["object_size"]) == sorted(drawn[0] + drawn[1])

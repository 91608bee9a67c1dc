"""Reads through both engines against the real server: bytes, rows, timings, sinks."""

from __future__ import annotations

import mmap
import re
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from conftest import RANGE, TRICKLE_SIZE, Trickle
from objperf._engine.core import page_array
from objperf.analysis.summary_text import format_summary
from objperf.core.schema import CUT_CURL_CODE
from objperf.plan.reads import ReadWorkload
from objperf.run.reads import run_read
from objperf.s3.client import S3Settings
from objperf.s3.target import resolve_read_target

ENGINES = ["curl", "requests"]


def read(store, keys, **kw):
    target = resolve_read_target(f"s3://{store.bucket}/", store.server.settings(), keys=keys)
    workload = ReadWorkload(**{"concurrency": 4, "threads": 2, "range_size": RANGE, "verify": True, **kw})
    return target, run_read(target, workload, keep_slot_buffers=True)


@pytest.mark.integration
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("key", ["data/odd.bin", "data/small.bin", "data/even.bin"])
def test_every_range_arrives_intact_in_ram(store, engine, key):
    _, result = read(store, [key], engine=engine)
    rows = result.rows.sort_values("offset")
    data = store.expected(key)
    size = len(data)
    nranges = -(-size // RANGE)
    assert len(rows) == nranges
    assert list(rows["offset"]) == [i * RANGE for i in range(nranges)]
    assert list(rows["length"]) == [min(RANGE, size - i * RANGE) for i in range(nranges)]
    assert (rows["status"] == 206).all() and (rows["curl_code"] == 0).all()
    for offset, length, crc in zip(rows["offset"], rows["length"], rows["crc32"]):
        assert crc == zlib.crc32(data[offset:offset + length])
    assert rows["bytes"].sum() == size == result.summary["bytes"]
    # The slot buffers are the RAM sink itself: each holds the last body its slot received.
    last = rows.sort_values("t_start").groupby("slot").tail(1)
    for slot, offset, length in zip(last["slot"], last["offset"], last["length"]):
        assert np.array_equal(result.slot_buffers[slot][:length], data[offset:offset + length])


@pytest.mark.parametrize("nbytes", [1, 4097, (40 << 20) + 5])
def test_page_array_is_zeroed_writable_page_aligned_memory(nbytes):
    # 40 MiB is faulted in by more than one thread on a multi-core box: every slice must be there.
    arr = page_array(nbytes)
    assert arr.shape == (nbytes,) and arr.dtype == np.uint8
    assert arr.ctypes.data % mmap.PAGESIZE == 0
    assert not arr.any()
    arr[:] = 7
    assert int(arr.sum()) == 7 * nbytes


def anon_huge_kib(address: int) -> int:
    """AnonHugePages of the mapping that holds ``address`` (/proc/self/smaps), in KiB."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            first, last = (int(x, 16) for x in head.split("-"))
            inside = first <= address < last
        elif inside and line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    raise AssertionError("no mapping holds the array")


def test_page_array_in_small_pages_when_asked_holds_no_huge_page():
    # The RAM sink's buffers for a short read: small pages, faulted faster than huge ones on a VM.
    arr = page_array(64 << 20, huge=False)
    assert not arr.any() and anon_huge_kib(arr.ctypes.data) == 0


@pytest.mark.parametrize(("workload", "sizes", "pays"), [
    (dict(), [1 << 30], False),  # one pass over a GiB: the fault would cost more than the copy saves
    (dict(), [8 << 30], True),
    (dict(duration=10.0), [1 << 20], True),  # timed: as long as it is given
    (dict(bytes=16 << 30), [1 << 30], True),
    (dict(requests=512), [1 << 30], False),  # 512 ranges of 8 MiB: 4 GiB
    (dict(requests=2048), [1 << 30], True),
])
def test_huge_pages_only_for_reads_long_enough_to_win_back_their_fault(workload, sizes, pays):
    from objperf.plan.reads import huge_pages_pay

    assert huge_pages_pay(ReadWorkload(range_size=8 << 20, **workload), sizes) is pays


@pytest.mark.integration
def test_engines_agree_on_the_same_workload(store):
    keys = ["data/odd.bin", "data/small.bin", "data/even.bin"]
    seen = {}
    for engine in ENGINES:
        _, result = read(store, keys, engine=engine, requests=25, concurrency=3)
        rows = result.rows
        seen[engine] = sorted(zip(rows["key"].astype(str), rows["offset"], rows["length"], rows["status"],
                                  rows["bytes"], rows["crc32"]))
    assert len(seen["curl"]) == 25
    assert seen["curl"] == seen["requests"]


@pytest.mark.integration
def test_rows_timings_are_ordered(store):
    _, result = read(store, ["data/odd.bin"], requests=30, concurrency=6)
    rows = result.rows
    assert len(rows) == 30 == result.summary["requests"]
    assert (rows["ttfb_s"] > 0).all()
    assert (rows["ttfb_s"] <= rows["total_s"]).all()
    assert (rows["pretransfer_s"] <= rows["ttfb_s"]).all()
    assert (rows["dns_s"] <= rows["pretransfer_s"]).all()
    # libcurl's phase times are cumulative; connect_s is 0 on a reused connection.
    fresh = rows[rows["new_conn"]]
    assert (fresh["dns_s"] <= fresh["connect_s"]).all() and (fresh["connect_s"] <= fresh["pretransfer_s"]).all()
    assert (rows.loc[~rows["new_conn"], "connect_s"] == 0).all()
    # Thirty requests over six reused slots open at most six connections.
    assert 1 <= rows["new_conn"].sum() <= 6
    assert set(rows["thread"]) == {0, 1}
    assert set(rows["slot"]) == set(range(6))
    assert (rows["remote_ip"] == "127.0.0.1").all() and (rows["ip_family"] == 4).all()
    assert (rows["http_version"] == "1.1").all()
    assert rows["bytes"].sum() == rows["length"].sum()


@pytest.mark.integration
@pytest.mark.parametrize("engine", ENGINES)
def test_file_sink_writes_the_object(store, engine, tmp_path):
    key = "data/odd.bin"
    _, result = read(store, [key], engine=engine, sink="file", sink_dir=str(tmp_path))
    written = (tmp_path / store.bucket / key).read_bytes()
    assert written == store.expected(key).tobytes()


@pytest.mark.integration
def test_discard_sink_counts_bytes(store):
    _, result = read(store, ["data/even.bin"], sink="discard", requests=8)
    assert result.rows["bytes"].sum() == 8 * RANGE
    assert result.summary["gbps"] > 0


@pytest.mark.integration
def test_byte_budget_and_random_ranges(store):
    _, result = read(store, ["data/even.bin"], bytes=3 * RANGE, random_ranges=True)
    rows = result.rows
    assert len(rows) == 3
    assert set(rows["offset"]) <= {0, RANGE, 2 * RANGE, 3 * RANGE}


@pytest.mark.integration
def test_duration_stops_the_run(store):
    _, result = read(store, ["data/even.bin"], duration=1.0, sink="discard")
    assert result.status == "complete" and result.summary["servers"] == {}  # one server: no breakdown
    assert len(result.rows) > 4
    assert result.summary["wall_s"] < 10


@pytest.mark.integration
@pytest.mark.parametrize("engine, late_s", [("curl", 0.6), ("requests", 1.5)])
def test_duration_cuts_the_gets_in_flight(trickle_url, engine, late_s):
    # Whole, each range would take 5 s; the run must end at its duration and keep what arrived.
    target = resolve_read_target(trickle_url, S3Settings())
    workload = ReadWorkload(concurrency=2, threads=1, range_size=TRICKLE_SIZE // 2, duration=1.0, engine=engine)
    result = run_read(target, workload, keep_slot_buffers=True)
    rows, summary = result.rows, result.summary
    assert summary["wall_s"] < 1.0 + late_s
    assert len(rows) == 2 and (rows["curl_code"] == CUT_CURL_CODE).all() and (rows["status"] == 206).all()
    assert ((rows["bytes"] > 0) & (rows["bytes"] < rows["length"])).all()
    assert (rows["total_s"] >= 0.9).all()
    assert summary["cut_requests"] == 2 and summary["error_requests"] == 0 and summary["curl_error_counts"] == {}
    assert summary["bytes"] == rows["bytes"].sum()
    assert "2 cut in flight when the run ended" in format_summary(summary)
    assert summary["ttfb_ms_p50"] > 0  # the first bytes arrived: TTFB is known
    body = np.frombuffer(Trickle.body, dtype=np.uint8)
    for slot, offset, got in zip(rows["slot"], rows["offset"], rows["bytes"]):
        assert np.array_equal(result.slot_buffers[slot][:got], body[offset:offset + got])


@pytest.mark.integration
@pytest.mark.parametrize("family", ["4", "6"])
def test_ip_family_is_chosen_and_recorded(store, family):
    settings = store.server.settings(ipv6=True)
    # "localhost" resolves to both ::1 and 127.0.0.1; the engine must take the family asked for.
    port = store.server.s3_port6
    settings = type(settings)(endpoint=f"http://localhost:{port}", region=settings.region, addressing="path",
                              credentials=settings.credentials)
    target = resolve_read_target(f"s3://{store.bucket}/data/odd.bin", settings)
    result = run_read(target, ReadWorkload(concurrency=2, threads=1, range_size=RANGE, ip=family, verify=True))
    rows = result.rows
    assert (rows["status"] == 206).all()
    assert (rows["ip_family"] == int(family)).all()
    assert set(rows["remote_ip"]) == {"::1" if family == "6" else "127.0.0.1"}
    data = store.expected("data/odd.bin")
    assert all(c == zlib.crc32(data[o:o + n]) for o, n, c in zip(rows["offset"], rows["length"], rows["crc32"]))


@pytest.mark.integration
def test_ipv6_literal_endpoint(store):
    target = resolve_read_target(f"s3://{store.bucket}/data/small.bin", store.server.settings(ipv6=True))
    result = run_read(target, ReadWorkload(concurrency=1, threads=1, range_size=RANGE))
    assert list(result.rows["remote_ip"]) == ["::1"] and list(result.rows["ip_family"]) == [6]


@pytest.mark.integration
def test_plain_http_url(store):
    url = store.client.presign(store.bucket, "data/odd.bin")
    target = resolve_read_target(url, store.server.settings())
    assert target.kind == "http" and target.objects[0].size == store.objects["data/odd.bin"]
    result = run_read(target, ReadWorkload(concurrency=2, threads=1, range_size=RANGE))
    assert result.rows["bytes"].sum() == store.objects["data/odd.bin"]


@pytest.mark.integration
def test_connect_to_and_interface_pin_both_ends(store):
    port = store.server.s3_port6
    settings = store.server.settings(ipv6=True)
    settings = type(settings)(endpoint=f"http://localhost:{port}", region=settings.region, addressing="path",
                              credentials=settings.credentials)
    target = resolve_read_target(f"s3://{store.bucket}/data/small.bin", settings)
    for pinned in ("127.0.0.1", "::1"):
        address = f"[{pinned}]" if ":" in pinned else pinned
        workload = ReadWorkload(concurrency=2, threads=1, range_size=RANGE, requests=4,
                                connect_to=(f"localhost:{port}:{address}:{port}",), interface=pinned)
        rows = run_read(target, workload).rows
        assert (rows["status"] == 206).all()
        assert set(rows["remote_ip"]) == {pinned} and set(rows["local_ip"]) == {pinned}
    # A NIC by name, in libcurl's if! form: the loopback NIC carries both families.
    by_name = ReadWorkload(concurrency=2, threads=1, range_size=RANGE, requests=4, interface="if!lo")
    rows = run_read(target, by_name).rows
    assert (rows["status"] == 206).all()


@pytest.mark.integration
@pytest.mark.parametrize("engine", ENGINES)
def test_a_prefix_of_different_sizes_has_every_range_read_exactly_once(store, engine):
    """Four sizes under one prefix, an empty object and a directory marker: before, the plan visited keys in
    turn for as many rounds as the largest had ranges, so the small ones were read again and again and the
    large ones only in part."""
    sizes = {"edge/a.bin": 4 * RANGE, "edge/b.bin": 4 * RANGE, "edge/c.bin": RANGE + RANGE // 2,
             "edge/d.bin": RANGE // 2, "edge/empty.bin": 0, "edge/dir/": 0}
    for key, size in sizes.items():
        store.client.put_object(store.bucket, key, bytes(size))
    target = resolve_read_target(f"s3://{store.bucket}/edge/", store.server.settings())
    result = run_read(target, ReadWorkload(concurrency=3, threads=2, range_size=RANGE, engine=engine))
    rows = result.rows
    read = sorted(zip(rows["key"].astype(str), rows["offset"]))
    expected = sorted((key, offset) for key, size in sizes.items() if size
                      for offset in range(0, size, RANGE))
    assert read == expected and (rows["status"] == 206).all()
    assert rows["bytes"].sum() == sum(sizes.values())
    assert result.summary["skipped_objects"] == 2
    assert "2 empty objects or directory markers" in format_summary(result.summary)


def test_the_sequential_plan_covers_every_range_once_a_pass():
    from objperf.plan.reads import SequentialPlan

    counts = [7, 1, 3, 3, 12, 1, 5]
    plan = SequentialPlan(counts)
    assert plan.total == sum(counts)
    for start in (0, plan.total, 5 * plan.total):  # passes repeat
        seen = [plan(n) for n in range(start, start + plan.total)]
        assert sorted(seen) == sorted((key, r) for key, count in enumerate(counts) for r in range(count))
    assert [key for key, _ in (plan(n) for n in range(len(counts)))] == plan.order  # every key in the first round


@pytest.mark.integration
def test_slots_are_dealt_over_several_source_addresses(store):
    target = resolve_read_target(f"s3://{store.bucket}/data/odd.bin", store.server.settings())
    workload = ReadWorkload(concurrency=4, threads=2, range_size=RANGE, requests=40, verify=True,
                            interface="127.0.0.2,127.0.0.3")
    rows = run_read(target, workload).rows
    assert (rows["status"] == 206).all()
    per_source = rows["local_ip"].astype(str).value_counts()
    assert set(per_source.index) == {"127.0.0.2", "127.0.0.3"} and per_source.min() >= 10


@pytest.mark.integration
def test_http2_over_cleartext_falls_back_to_what_the_server_speaks(store):
    """SeaweedFS speaks no HTTP/2 over cleartext: asked with prior knowledge it failed every request.  Now the
    engine offers the upgrade, the server answers 1.1, and the summary says so."""
    target = resolve_read_target(f"s3://{store.bucket}/data/even.bin", store.server.settings())
    result = run_read(target, ReadWorkload(concurrency=2, threads=1, range_size=RANGE, http_version="2"))
    rows = result.rows
    assert len(rows) == 4 and (rows["status"] == 206).all() and rows["bytes"].sum() == 4 * RANGE
    assert set(rows["http_version"]) == {"1.1"}
    assert result.summary["http_version_counts"] == {"1.1": 4}
    assert "asked for HTTP/2, the server answered HTTP/1.1: 4" in format_summary(result.summary)


@pytest.mark.integration
@pytest.mark.parametrize("threads", [1, 2])
def test_slots_are_spread_over_a_clusters_servers(store, threads):
    # Two S3 gateways over one filer stand for a cluster's servers; the URL names only the first.
    servers = (f"127.0.0.1:{store.server.s3_port}", f"[::1]:{store.server.s3_port6}")
    target = resolve_read_target(f"s3://{store.bucket}/data/odd.bin", store.server.settings())
    workload = ReadWorkload(concurrency=4, threads=threads, range_size=RANGE, requests=24, verify=True,
                            spread_to=servers)
    result = run_read(target, workload)
    rows = result.rows
    assert len(rows) == 24 and (rows["status"] == 206).all()
    by_server = result.summary["servers"]
    assert set(by_server) == {servers[0], servers[1]} and sum(v["requests"] for v in by_server.values()) == 24
    assert sum(v["ok"] for v in by_server.values()) == 24 and all(v["ttfb_ms_p50"] > 0 for v in by_server.values())
    assert f"server       {servers[1]}" in format_summary(result.summary)
    served = rows.groupby("slot")[["remote_ip", "remote_port"]].agg(set)
    # slot i keeps to server i mod 2, and both servers carried reads
    for slot, (ips, ports) in served.iterrows():
        assert ports == {(store.server.s3_port, store.server.s3_port6)[slot % 2]}
        assert ips == {("127.0.0.1", "::1")[slot % 2]}
    data = store.expected("data/odd.bin")
    assert all(c == zlib.crc32(data[o:o + n]) for o, n, c in zip(rows["offset"], rows["length"], rows["crc32"]))


@pytest.mark.parametrize("servers, message", [(("127.0.0.1",), "bad --spread-to '127.0.0.1'"),
                                              (("[::1]:99999",), "bad --spread-to '[::1]:99999'")])
def test_spread_to_wants_addresses_and_ports(servers, message):
    from objperf.core.errors import UsageError

    with pytest.raises(UsageError, match=re.escape(message)):
        ReadWorkload(spread_to=servers).validate()


@pytest.mark.integration
def test_samples_back_the_byte_count(store, tmp_path):
    from objperf.dataset.directory import load_samples

    target = resolve_read_target(f"s3://{store.bucket}/data/", store.server.settings())
    result = run_read(target, ReadWorkload(concurrency=3, threads=1, range_size=RANGE, duration=1.0),
                      out=tmp_path / "s")
    evidence = result.summary["evidence"]
    app = result.summary["bytes"]
    assert evidence["nic"] == "lo" and evidence["nic_rx_bytes"] >= app > 0
    assert evidence["nic_vs_app_read_pct"] == pytest.approx((evidence["nic_rx_bytes"] - app) / app * 100)
    assert 0 < evidence["client_cores_busy"] <= 2.5
    samples = load_samples(tmp_path / "s")
    nic, cpu = samples["nic"], samples["cpu"]
    assert {"lo"} <= set(nic["iface"]) and (nic.groupby("iface")["rx_bytes"].diff().dropna() >= 0).all()
    assert {"process", "cpu0"} <= set(cpu["cpu"])
    lo = nic[nic["iface"] == "lo"]
    assert lo["t"].diff().median() == pytest.approx(0.1, abs=0.05)  # about ten samples a second


@pytest.mark.integration
@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_outlasts_its_presigned_urls(store, engine):
    # URLs that live 3 s, a run of 5 s: without URLs signed afresh every second, the store would
    # answer 403 "Request has expired" from the fourth second on.
    target = resolve_read_target(f"s3://{store.bucket}/", store.server.settings(), keys=["data/even.bin"],
                                 url_lifetime=3)
    first = list(target.urls)
    workload = ReadWorkload(concurrency=2, threads=1, range_size=RANGE, duration=5.0, sink="discard", engine=engine)
    rows = run_read(target, workload).rows
    late = rows["t_start"] > rows["t_start"].min() + 3.5
    finished = rows["curl_code"] != CUT_CURL_CODE
    assert late.sum() > 0 and (rows.loc[finished, "status"] == 206).all() and not (rows["status"] == 403).any()
    assert target.urls != first and target.describe()["url_lifetime_s"] == 3


@pytest.mark.integration
def test_urls_change_under_a_running_engine(store):
    from objperf._engine.config import plan_engine, queue_engine

    key = "data/even.bin"
    size = store.objects[key]
    engine = plan_engine([store.client.presign(store.bucket, key)], [size], concurrency=4, threads=2, range_size=RANGE,
                    sink="discard", verify=True, max_requests=1500)
    engine.start()
    for _ in range(200):  # each new table frees the one before last, while slots read the live one
        engine.set_urls([store.client.presign(store.bucket, key, expires=600)])
        time.sleep(0.001)
    assert engine.running  # the changes came while requests were being made
    engine.join()
    rows = engine.drain()
    assert len(rows["status"]) == 1500 and (rows["status"] == 206).all() and (rows["bytes"] == RANGE).all()
    expected = store.expected(key)
    crcs = {offset: zlib.crc32(expected[offset:offset + RANGE]) for offset in range(0, size, RANGE)}
    assert all(crc == crcs[offset] for offset, crc in zip(rows["offset"], rows["crc32"]))
    with pytest.raises(ValueError, match="needs 1 URLs"):
        engine.set_urls([])
    uploader = queue_engine(4, concurrency=1)
    with pytest.raises(ValueError, match="plan mode"):
        uploader.set_urls([])


@pytest.mark.integration
def test_a_run_whose_urls_cannot_be_signed_again_goes_on_and_says_so_once(store, monkeypatch, capsys):
    from objperf.core.errors import CredentialsError

    target = resolve_read_target(f"s3://{store.bucket}/data/even.bin", store.server.settings(), url_lifetime=6)

    def expired_session(*args, **kwargs):
        raise CredentialsError("the SSO session has expired; run aws sso login")

    monkeypatch.setattr(target.client, "presign", expired_session)  # what botocore raises when it cannot renew
    workload = ReadWorkload(concurrency=2, threads=1, range_size=RANGE, duration=4.5, sink="discard")
    rows = run_read(target, workload).rows  # two renewals fail, at 2 s and 4 s; the URLs live 6 s
    finished = rows["curl_code"] != CUT_CURL_CODE
    assert (rows.loc[finished, "status"] == 206).all() and finished.sum() > 10
    err = capsys.readouterr().err
    assert err.count("cannot sign fresh URLs") == 1 and "SSO session has expired" in err


@pytest.mark.integration
def test_datasets_from_several_runs_load_as_one(store, tmp_path):
    from objperf import load

    runs = {}
    for key in ("data/odd.bin", "data/small.bin"):
        target = resolve_read_target(f"s3://{store.bucket}/{key}", store.server.settings())
        out = tmp_path / key.replace("/", "-")
        runs[out] = run_read(target, ReadWorkload(concurrency=2, threads=1, range_size=RANGE), out=out)
    both = load(list(runs))
    assert len(both) == sum(len(r.rows) for r in runs.values())
    assert set(both["run_id"]) == {r.run_id for r in runs.values()}
    assert set(both["key"]) == {"data/odd.bin", "data/small.bin"}
    assert both.groupby("key", observed=True)["bytes"].sum().to_dict() == {
        "data/odd.bin": store.objects["data/odd.bin"], "data/small.bin": store.objects["data/small.bin"]}
    assert {m["run_id"] for m in both.attrs["manifests"].values()} == set(both["run_id"])


@pytest.mark.integration
def test_a_run_that_keeps_no_rows_counts_every_one_into_its_summary(store):
    """A --no-save command lets its rows go as it counts them: its summary is the one a run holding every row
    prints, and memory does not grow with the rows (about 24 bytes a row kept, not 319)."""
    target = resolve_read_target(f"s3://{store.bucket}/", store.server.settings(), keys=["data/odd.bin"])
    workload = ReadWorkload(concurrency=3, threads=1, range_size=RANGE // 4, requests=300, sink="discard")
    kept = run_read(target, workload)
    counted = run_read(target, workload, keep_rows=False)
    assert len(kept.rows) == 300 and not len(counted.columns["offset"])
    with pytest.raises(ValueError, match="kept none of its 300 rows"):  # never an empty frame that reads as none
        counted.rows  # noqa: B018
    for name in ("requests", "ok_requests", "error_requests", "bytes", "status_counts", "http_version_counts"):
        assert counted.summary[name] == kept.summary[name], name
    assert counted.summary["bytes"] == kept.rows["bytes"].sum() > 0
    assert 0 < counted.summary["ttfb_ms_p50"] <= counted.summary["ttfb_ms_p99"]
    assert list(counted.summary["servers"]) == list(kept.summary["servers"])

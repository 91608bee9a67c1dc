"""The bench's round-by-round ratios: each objperf run set against the reference's run of the same round."""

import pytest

from objperf.peers.clients import Measured
from objperf.peers.tables import like_for_like_curl, render_table, round_ratios


def run(wall_s: float, *, ok: bool = True) -> Measured:
    return Measured(wall_s=wall_s, cpu_user_s=0.5, cpu_system_s=0.1, peak_rss_mib=10, exit_status=0 if ok else 1)


def test_each_round_is_set_against_the_same_round_of_the_reference():
    big = {"objperf ram": [run(1.0), run(2.0), run(1.0)],
           "s5cmd": [run(1.5), run(2.0), run(1.0, ok=False)],  # a failed round has no ratio
           "boto3": [run(4.0)] * 3}
    assert round_ratios(big, "s5cmd") == ["objperf ram Gbps / s5cmd's, round by round: 1.50 1.00 (median 1.25)"]


def test_the_best_peer_is_the_fastest_peer_of_each_round():
    big = {"objperf put": [run(2.0), run(2.0)],
           "s5cmd": [run(3.0), run(1.0)],
           "aws crt": [run(2.5), run(4.0)],
           "objperf ram (nginx)": [run(1.0), run(1.0)]}
    assert round_ratios(big, "best peer") == [
        "objperf put Gbps / best peer's, round by round: 1.25 0.50 (median 0.88)"]


def test_writes_to_nginx_are_set_against_the_peers_writing_to_nginx():
    big = {"objperf put": [run(2.0), run(2.0)], "s5cmd": [run(1.0), run(1.0)],
           "objperf put (nginx)": [run(1.0), run(2.0)],
           "s5cmd (nginx)": [run(2.0), run(4.0)], "aws crt (nginx)": [run(3.0), run(3.0)]}
    assert round_ratios(big, "best peer") == [
        "objperf put Gbps / best peer's, round by round: 0.50 0.50 (median 0.50)",
        "objperf put (nginx) Gbps / best peer's, round by round: 2.00 1.50 (median 1.75)"]
    small = {name: [Measured(0.1, 0.1, 0.0, 10, 0)] for name in big}
    table = render_table("writes", big, small, 1 << 30, base="best peer", cpu_base="best peer",
                         versions={name: "1" for name in big}).splitlines()
    row = {line.split("  ")[0].strip(): line.split() for line in table if line.startswith(("objperf", "s5cmd", "aws"))}
    # Gbps and marginal CPU against the best peer on the row's own server, in both columns
    assert row["objperf put (nginx)"][-4:] == ["2.00x", "1.00x", "2.00x", "1.00x"]
    assert row["objperf put"][-4:] == ["0.50x", "1.00x", "0.50x", "1.00x"]
    assert row["s5cmd (nginx)"][-4] == "1.00x" and row["aws crt (nginx)"][-4] == "0.89x"


def test_no_line_without_the_reference():
    assert round_ratios({"objperf ram": [run(1.0)], "boto3": [run(2.0)]}, "s5cmd") == []


def test_cpu_is_set_against_curl_doing_the_same_gets():
    big = {"objperf discard": [run(1.0)], "objperf discard 1x": [run(1.0)],
           "curl": [Measured(1.0, 0.2, 0.0, 10, 0)], "curl 16x": [Measured(1.0, 0.4, 0.0, 10, 0)]}
    small = {name: [Measured(0.1, 0.0, 0.0, 10, 0)] for name in big}
    table = render_table("reads", big, small, 1 << 30, base="curl", cpu_base="curl").splitlines()
    ratio = {line.split("  ")[0].strip(): line.split()[-3] for line in table if line.startswith(("objperf", "curl"))}
    # objperf's 0.6 CPU-s: half again curl's 16 GETs at a time, three times curl's one stream
    assert ratio["objperf discard"] == "1.50x" and ratio["objperf discard 1x"] == "3.00x"
    assert ratio["curl"] == ratio["curl 16x"] == "1.00x"


def test_each_server_has_its_own_curl():
    rows = {name: {"gbps": 1.0} for name in ("curl", "curl 16x", "curl (nginx)", "curl 16x (nginx)")}
    assert like_for_like_curl("objperf ram (nginx)", rows) == "curl 16x (nginx)"
    assert like_for_like_curl("objperf discard", rows) == "curl 16x"
    assert like_for_like_curl("objperf discard 1x", rows) == "curl"
    assert like_for_like_curl("curl (nginx)", rows) == "curl (nginx)"
    assert like_for_like_curl("objperf ram (nginx)", {"curl (nginx)": {}}) == "curl (nginx)"


def test_a_row_shows_its_rate_once_started_and_what_the_server_spent():
    slow_start = Measured(2.0, 0.5, 0.1, 10, 0, server_cpu_s=0.75)
    big = {"objperf discard": [slow_start], "curl 16x": [Measured(1.0, 0.4, 0.0, 10, 0)]}
    small = {"objperf discard": [Measured(1.0, 0.3, 0.0, 10, 0)], "curl 16x": [Measured(0.0, 0.0, 0.0, 10, 0)]}
    table = render_table("reads", big, small, 1 << 30, base="curl 16x", cpu_base="curl 16x").splitlines()
    assert table[1].split()[2:10] == ["Gbps", "in-run", "running", "CPU-s/GiB", "marginal", "in-run", "server", "peak"]
    mine = next(line for line in table if line.startswith("objperf discard")).split()[3:]
    theirs = next(line for line in table if line.startswith("curl 16x")).split()[3:]
    # 2 s for 1 GiB whole, of which 1 s was the start-up its 1 MiB run also took
    assert mine[0] == "4.29" and mine[2] == f"{((1 << 30) - (1 << 20)) * 8 / 1e9:.2f}"
    assert mine[6] == "0.750"
    assert theirs[6] == "-"  # no reading of the server: not shown as zero


def test_a_row_shows_its_private_memory_beside_its_peak_rss():
    def with_private(mib):
        return Measured(1.0, 0.4, 0.0, 90, 0, peak_private_mib=mib)

    big = {"objperf discard": [with_private(30), with_private(40), with_private(35)],
           "curl 16x": [Measured(1.0, 0.4, 0.0, 11, 0)]}
    small = {name: [Measured(0.1, 0.0, 0.0, 10, 0)] for name in big}
    table = render_table("reads", big, small, 1 << 30, base="curl 16x", cpu_base="curl 16x").splitlines()
    assert table[1].split()[9:12] == ["peak", "RSS", "private"]
    mine = next(line for line in table if line.startswith("objperf discard")).split()[3:]
    theirs = next(line for line in table if line.startswith("curl 16x")).split()[3:]
    assert mine[7:9] == ["90Mi", "35Mi"]  # the median of its rounds
    assert theirs[7:9] == ["11Mi", "-"]  # not read: not shown as zero


def test_curl_reads_every_range_once_per_pass_pass_after_pass():
    from objperf.peers.clients import curl_ranged

    _, config = curl_ranged("https://host/obj", 20, range_size=8, concurrency=2, options=('cacert = "ca.pem"',),
                            passes=2)
    transfers = config.split("next\n")
    assert [t.split('range = "')[1].split('"')[0] for t in transfers] == ["0-7", "8-15", "16-19"] * 2
    assert all('cacert = "ca.pem"' in t for t in transfers)


def test_the_bench_names_a_store_only_for_s3_urls():
    """objperf refuses store flags without an s3:// URL: the bench's plain-HTTP rows (nginx) must not pass them."""
    from objperf.peers.clients import objperf_fetch

    plain = objperf_fetch("http://127.0.0.1:1/bench/big.bin", endpoint="http://127.0.0.1:2", concurrency=4,
                          range_size=1 << 20, sink="discard")
    assert "--endpoint" not in plain and "--addressing" not in plain
    s3 = objperf_fetch("s3://b/k", endpoint="http://127.0.0.1:2", concurrency=4, range_size=1 << 20, sink="ram")
    assert s3[s3.index("--endpoint") + 1] == "http://127.0.0.1:2" and "--addressing" in s3


def test_the_ram_sinks_copy_is_set_against_one_memcpy_measured_here():
    """The copy is what the runs differ by in objperf's own count; the RAM sink's processes also spend, before
    the run, the faulting of their slot buffers: shown apart, never charged to the copy per GiB."""
    from objperf.peers.tables import copy_line, memcpy_seconds_per_gib

    def run(process_cpu: float, in_run_cpu: float) -> Measured:
        return Measured(1.0, process_cpu, 0.1, 10, 0, in_run_cpu_gib=in_run_cpu)

    big = {"objperf ram": [run(0.9, 0.52), run(0.8, 0.56), run(0.85, 0.54)],  # 0.3 s of faulting before the clock
           "objperf discard": [run(0.5, 0.45), run(0.48, 0.47), run(0.52, 0.46)]}
    small = {name: [Measured(0.1, 0.05, 0.0, 10, 0)] for name in big}
    one = memcpy_seconds_per_gib(total=256 << 20)
    assert 0 < one < 10
    line = copy_line(big, small, 1 << 30, ram="objperf ram", discard="objperf discard")
    first, second = line.splitlines()
    extra, ratio = float(first.split(" spends ")[1].split()[0]), float(first.rsplit(": ", 1)[1].rstrip("x"))
    assert extra == 0.08  # the medians in the run: 0.54 - 0.46
    assert abs(ratio - extra / float(first.split("costs ")[1].split()[0])) < 0.01 * ratio + 0.01
    assert float(second.split("whole processes: ")[1].split()[0]) == 0.35  # 0.95 - 0.6, each less 0.05


def test_every_row_shows_its_version_and_its_ratio_to_the_fastest_peer_on_its_server():
    def took(wall_s: float, cpu_s: float) -> Measured:
        return Measured(wall_s, cpu_s, 0.0, 10, 0)

    big = {"objperf ram": [took(1.0, 0.4)], "s5cmd": [took(4.0, 1.0)], "obstore": [took(2.0, 0.8)],
           "objperf ram (nginx)": [took(1.0, 0.3)], "obstore (nginx)": [took(0.5, 0.6)],
           "curl 16x (nginx)": [took(1.0, 0.2)]}
    small = {name: [took(0.1, 0.0)] for name in big}
    versions = {"objperf ram": "0.1.0", "objperf ram (nginx)": "0.1.0", "s5cmd": "v2.3.0", "obstore": "0.12.1",
                "obstore (nginx)": "0.12.1", "curl 16x (nginx)": "7.88.1"}
    table = render_table("reads", big, small, 1 << 30, base="s5cmd", cpu_base="s5cmd", versions=versions)
    lines = table.splitlines()
    assert lines[1].split()[:2] == ["client", "version"] and lines[1].endswith("vs best peer: Gbps, CPU")
    row = {line.split("  ")[0].strip(): line.split() for line in lines[3:3 + len(big)]}
    assert set(row) == set(big)
    assert {name: words[len(name.split())] for name, words in row.items()} == versions
    # the fastest peer of SeaweedFS is obstore (2 s), of nginx obstore too (0.5 s), whatever their CPU
    assert row["objperf ram"][-2:] == ["2.00x", "0.50x"]
    assert row["s5cmd"][-2:] == ["0.50x", "1.25x"] and row["obstore"][-2:] == ["1.00x", "1.00x"]
    assert row["objperf ram (nginx)"][-2:] == ["0.50x", "0.50x"]
    assert row["curl 16x (nginx)"][-2:] == ["0.50x", "0.33x"]
    assert "best peer: obstore, obstore (nginx)" in lines


def test_a_row_is_named_after_its_client_for_its_version():
    from objperf.peers.tables import client_of, row_versions

    assert [client_of(n) for n in ("objperf ram (nginx)", "curl 16x h2", "obstore (nginx)", "aws crt",
                                   "s3torchconnector", "objperf put")] == [
        "objperf", "curl", "obstore", "aws crt", "s3torchconnector", "objperf"]
    import importlib.metadata

    found = row_versions(["obstore", "obstore (nginx)", "objperf discard"])
    assert found["obstore"] == found["obstore (nginx)"] == importlib.metadata.version("obstore")
    assert found["objperf discard"] == importlib.metadata.version("objperf")


@pytest.mark.timeout(60)
def test_the_page_of_a_run_gives_its_date_machine_every_version_and_its_tables():
    import importlib.metadata
    import os
    import re

    from objperf._curl.exchange import curl_versions
    from objperf.peers import page

    tables = ["objperf bench reads: 1 GiB per run\nclient  Gbps\nobjperf ram  9.99", "scale: nginx\nc=4096  1.0"]
    text = page.render(tables, command="objperf bench --size 1GiB", started="2026-12-04T21:00:00.000+00:00",
                       ended="2026-12-04T21:09:00.000+00:00")
    assert "- started 2026-12-04T21:00:00.000+00:00, ended 2026-12-04T21:09:00.000+00:00 (UTC)" in text
    assert f"- cores: {os.cpu_count()}" in text and f"- kernel: {os.uname().release}" in text
    assert re.search(r"\n- CPU: \S.*\n", text) and re.search(r"\n- memory: \d+\.\d GiB\n", text)
    assert re.search(r"\n- load average at the end \(1, 5, 15 min\): \d+\.\d \d+\.\d \d+\.\d\n", text)
    rows = dict(line.strip("| ").split(" | ") for line in text.splitlines() if line.startswith("| ")
                and "---" not in line and "software" not in line)
    assert rows["libcurl"] == curl_versions()["libcurl"] and rows["TLS (libcurl's)"] == curl_versions()["tls"]
    assert rows["obstore"] == importlib.metadata.version("obstore")
    assert rows["s3torchconnector"] == importlib.metadata.version("s3torchconnector")
    assert set(page.PEERS) | {"objperf", "SeaweedFS", "nginx"} <= set(rows)
    assert rows["objperf"].startswith(importlib.metadata.version("objperf"))
    assert "## objperf bench reads\n\n```text\nobjperf bench reads: 1 GiB per run\n" in text
    assert "## scale\n\n```text\nscale: nginx\nc=4096  1.0\n```\n" in text


def test_a_page_into_a_directory_that_is_not_there_is_refused_before_the_bench_starts():
    from conftest import run_cli

    proc = run_cli("objperf", "bench", "--op", "get", "--markdown", "/nonexistent/benchmark.md")
    assert proc.returncode == 2 and proc.stderr.strip() == \
        "objperf bench: --markdown /nonexistent/benchmark.md: no such directory"


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_the_libcurl_yardstick_builds_and_reads_every_byte_it_asks_for(nginx, tmp_path):
    """The C program the bench holds objperf's memory at 4096 in flight to: built here, its ranges read whole."""
    import subprocess
    from pathlib import Path

    from objperf.peers import yardstick

    program = yardstick.build(tmp_path)
    assert isinstance(program, Path), program
    done = subprocess.run(yardstick.command(program, nginx.http_url, 4 << 20, 1 << 20, 8, 8 << 10, 0.5),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    requests, received, failed = map(int, done.stdout.split())
    assert failed == 0 and requests >= 8 and received == requests * (1 << 20)
    wrong = subprocess.run(yardstick.command(program, nginx.http_url + ".missing", 4 << 20, 1 << 20, 2, 8 << 10, 0.2),
                           capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 1 and wrong.stdout.split()[2] == wrong.stdout.split()[0]  # every 404 counted failed


def test_curl_serial_gets_the_whole_object_once_a_pass():
    from objperf.peers.clients import curl_serial

    _, config = curl_serial("http://host/obj", passes=3)
    transfers = config.split("next\n")
    assert len(transfers) == 3 and all('url = "http://host/obj"' in t and "range" not in t for t in transfers)


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_every_nginx_reader_reads_the_object_once_a_pass_and_is_checked(tmp_path):
    """The bench's table of reads from nginx: each client reads the object ``passes`` times over, every byte
    counted; a client that read less is not ok."""
    from objperf.peers.bench import BIG_KEY, Bench

    size = 3 << 20
    bench = Bench(size, 4, 1 << 20, tmp_path)
    try:
        bench.start()
        readers = bench.nginx_readers(passes=2)
        assert {"objperf ram", "objperf discard", "curl", "curl 4x"} <= readers.keys()
        for name, read in readers.items():
            got = read(BIG_KEY, size)
            assert got.ok, (name, got.outcome, got.detail)
        assert not bench.curl(bench.nginx_url + BIG_KEY, size + 1, passes=2).ok  # fewer bytes than asked
    finally:
        bench.stop()


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_the_op_rate_table_runs_every_op_and_holds_each_to_what_was_asked(store):
    """``bench --op ops``: a row for each op, each run answering every request it was asked, LIST and
    DeleteObjects with their keys a second."""
    from objperf.peers.ops_bench import bench_ops

    said: list[str] = []
    table = bench_ops(store.server.endpoint, store.env(), store.bucket, objects=40, concurrency=4, say=said.append)
    rows = {line.split()[0]: line for line in table.splitlines()[3:]}
    assert set(rows) == {"PUT", "GET", "HEAD", "LIST", "COPY", "DELETE", "DELETE_OBJECTS"}, table
    assert all(line.split()[-1] == "1/1" for line in rows.values()), table  # no op's run fell short
    assert rows["LIST"].split()[2] != "-" and rows["DELETE_OBJECTS"].split()[2] != "-", table
    assert len(said) == 7 and not [text for text in said if "failed," in text]
    assert store.client.list_keys(store.bucket, "ops-") == store.client.list_keys(store.bucket, "copies-") == []

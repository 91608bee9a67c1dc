"""What a run costs on the price tables: a small known set of requests priced by hand, egress bands, the
per-TiB pattern figure, and the --price section of a real run's summary."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import run_cli
from objperf.analysis.cost import cost, cost_per_tib, price_table, providers
from objperf.imports.dataset import rows_frame

MIB = 1 << 20


def requests(gets: int, get_bytes: int, parts: int, part_bytes: int, uploads: int):
    ops = ["GET"] * gets + ["UPLOAD_PART"] * parts + ["CREATE_MPU", "COMPLETE_MPU"] * uploads + ["DELETE"]
    nbytes = [get_bytes] * gets + [part_bytes] * parts + [0] * (2 * uploads) + [0]
    n = len(ops)
    return rows_frame({"op": ops, "bytes": np.array(nbytes), "status": np.full(n, 200)}, n)


def test_a_known_small_set_of_requests_costs_what_the_price_table_says():
    rows = requests(1000, 8 * MIB, 10, 32 * MIB, 2)
    aws = cost(rows, "aws-s3")
    assert aws["requests_class_b"] == 1000 and aws["requests_class_a"] == 14  # DELETE is free
    assert aws["egress_gb"] == pytest.approx(7.8125)
    # by hand from prices.csv: 1,000 GETs at $0.40/M, 14 writes at $5/M, 7.8125 GB at $0.09
    assert aws["usd"] == pytest.approx(1000 * 0.40 / 1e6 + 14 * 5.00 / 1e6 + 7.8125 * 0.09)
    assert aws["usd_per_tib_read"] == pytest.approx((1 << 40) / (8 * MIB) * 0.40 / 1e6 + 1024 * 0.09)
    assert aws["usd_per_tib_written"] == pytest.approx(14 / (10 * 32 * MIB) * (1 << 40) * 5.00 / 1e6)
    r2 = cost(rows, "r2")
    assert r2["usd"] == pytest.approx(1000 * 0.36 / 1e6 + 14 * 4.50 / 1e6) and r2["egress_usd"] == 0
    ia = cost(rows, "r2-ia")
    assert ia["retrieval_usd"] == pytest.approx(7.8125 * 0.01)


def test_copies_are_billed_as_writes_and_move_no_egress():
    ops = ["COPY"] * 3 + ["CREATE_MPU", "UPLOAD_PART_COPY", "UPLOAD_PART_COPY", "COMPLETE_MPU", "ABORT_MPU"]
    rows = rows_frame({"op": ops, "bytes": np.array([MIB] * 3 + [0, 32 * MIB, 32 * MIB, 0, 0]),
                       "status": np.full(len(ops), 200)}, len(ops))
    aws = cost(rows, "aws-s3")
    assert aws["requests_class_a"] == 7 and aws["requests_class_b"] == 0 and aws["egress_gb"] == 0


def test_egress_is_priced_band_by_band_and_free_tiers_only_when_asked():
    rows = requests(20 * 1024 * 1024, MIB, 0, 0, 0)  # 20 TiB out in 1 MiB ranges
    aws = cost(rows, "aws-s3")
    assert aws["egress_usd"] == pytest.approx(10240 * 0.09 + 10240 * 0.085)
    free = cost(rows, "aws-s3", free_tier=True)
    assert aws["egress_usd"] - free["egress_usd"] == pytest.approx(100 * 0.09)


def test_requests_that_never_reached_the_store_are_not_billed():
    rows = requests(10, MIB, 0, 0, 0)
    rows.loc[:4, ["status", "curl_code"]] = [0, 7]  # connection refused
    assert cost(rows, "aws-s3")["requests_class_b"] == 5


def test_every_price_row_says_where_it_came_from_and_to_check_it():
    table = price_table()
    assert set(providers()) >= {"aws-s3", "r2", "r2-ia", "wasabi", "b2", "gcs"}
    assert table["source_url"].str.startswith("https://").all() and (table["check"] == "yes").all()


def test_cost_per_tib_against_request_size_draws():
    from objperf import plots

    table = cost_per_tib([MIB, 8 * MIB, 32 * MIB], ["aws-s3", "r2"], direction="write")
    assert table.loc[(table["provider"] == "r2") & (table["size"] == MIB), "usd_per_tib"].item() == \
        pytest.approx(1024 * 1024 * 4.50 / 1e6)
    ax = plots.cost_per_tib(table)
    assert len(ax.lines) >= 2


@pytest.mark.integration
def test_a_runs_summary_has_a_cost_section(store, tmp_path):
    proc = run_cli("objperf", "fetch", f"s3://{store.bucket}/data/odd.bin", "--endpoint", store.server.endpoint,
                   "--range-size", "1MiB", "-n", "12", "--price", "r2,aws-s3", "--json", "--out", str(tmp_path / "r"),
                   env=store.env())
    assert proc.returncode == 0, proc.stderr
    priced = json.loads(proc.stdout)["cost"]
    assert priced["r2"]["requests_class_b"] == 12 and priced["aws-s3"]["egress_usd"] > priced["r2"]["egress_usd"] == 0
    text = run_cli("objperf", "analyze", str(tmp_path / "r"), "--price", "wasabi")
    assert "cost wasabi" in text.stdout and "check them against https://wasabi.com/pricing" in text.stdout
    bad = run_cli("objperf", "fetch", "--price", "acme", env=store.env())
    assert bad.returncode == 2 and "the price tables know aws-s3" in bad.stderr


def test_a_whole_benchmark_counts_reads_as_egress_and_uploads_as_free():
    from objperf.analysis.cost import benchmark_cost

    tib = 1 << 40
    common = {"range_size": 8 << 20, "part_size": 32 << 20, "stored_bytes": 64 << 30, "hours": 2.0}
    uploads = benchmark_cost("aws-s3", read_bytes=0, written_bytes=10 * tib, **common)
    assert uploads["egress_usd"] == 0 and uploads["class_a_usd"] > 0
    reads = benchmark_cost("aws-s3", read_bytes=10 * tib, written_bytes=0, **common)
    assert reads["egress_usd"] > 500 and reads["class_a_usd"] == 0
    half = benchmark_cost("aws-s3", read_bytes=5 * tib, written_bytes=5 * tib, **common)
    assert half["egress_usd"] < reads["egress_usd"] / 1.9  # the first band is the dearest
    for result in (uploads, reads, half):
        items = sum(v for k, v in result.items() if k.endswith("_usd"))
        assert abs(result["usd"] - items) < 1e-9 and "check them" in result["prices"]
    assert benchmark_cost("r2", read_bytes=10 * tib, written_bytes=0, **common)["egress_usd"] == 0

"""Sharing datasets: any mix loads as one frame, a saved run is analysed and compared again from its rows
alone, a dataset proves it is whole and unaltered, and travels as one file."""

from __future__ import annotations

import json
import tarfile

import pytest

from conftest import RANGE, run_cli
from objperf import load
from objperf.dataset.directory import MANIFEST, DatasetError, read_manifest
from objperf.plan.reads import ReadWorkload
from objperf.plan.writes import WriteWorkload
from objperf.run.reads import run_read
from objperf.run.writes import run_write
from objperf.s3.target import resolve_read_target


def read_run(store, out, concurrency: int = 2, seconds: float = 1.5):
    target = resolve_read_target(f"s3://{store.bucket}/data/odd.bin", store.server.settings())
    return run_read(target, ReadWorkload(concurrency=concurrency, threads=1, range_size=RANGE, duration=seconds),
                    out=out)


@pytest.fixture(scope="module")
def runs(store, tmp_path_factory):
    """A read run at 2 in flight, one at 8, a write run and a quick study, saved."""
    where = tmp_path_factory.mktemp("datasets")
    read2, read8 = read_run(store, where / "read-c2", 2), read_run(store, where / "read-c8", 8)
    write = run_write(store.server.settings(), WriteWorkload(object_size=6 << 20, part_size=5 << 20, concurrency=2,
                                                             threads=1, buckets=(store.bucket,),
                                                             prefix="datasets/", requests=2, cleanup=True),
                      out=where / "write")
    study = where / "study"
    proc = run_cli("objperf", "study", "read-concurrency", f"s3://{store.bucket}/datasets-study/", "--endpoint",
                   store.server.endpoint, "--quick", "--grid", "concurrency=1,2", "--duration", "1s", "--out",
                   str(study), env=store.env(), timeout=240)
    assert proc.returncode == 0, proc.stderr
    return {"read2": read2, "read8": read8, "write": write, "study": study, "where": where}


@pytest.mark.integration
def test_a_study_a_read_run_and_a_write_run_load_as_one_frame(runs):
    """It failed with ArrowTypeError: Field run_id has incompatible types: large_string vs dictionary."""
    paths = [runs["study"], runs["read2"].dataset, runs["write"].dataset]
    both = load(paths)
    alone = [load(p) for p in paths]
    assert len(both) == sum(len(a) for a in alone)
    assert set(both["run_id"].astype(str)) == set().union(*(set(a["run_id"].astype(str)) for a in alone))
    manifests = both.attrs["manifests"]
    assert set(manifests) == set(both["run_id"].astype(str))
    assert manifests[runs["read2"].run_id]["path"] == str(runs["read2"].dataset)
    assert {manifests[r]["kind"] for r in alone[0]["run_id"].astype(str).unique()} == {"study"}
    assert both.loc[both["run_id"] == runs["write"].run_id, "op"].astype(str).isin(
        ["CREATE_MPU", "UPLOAD_PART", "COMPLETE_MPU", "PUT", "DELETE", "GET"]).all()


@pytest.mark.integration
def test_plain_runs_join_their_workload_settings(runs):
    from objperf.analysis.saved import with_settings

    rows = with_settings(load([runs["read2"].dataset, runs["read8"].dataset]))
    by_run = rows.groupby(rows["run_id"].astype(str))["concurrency"].unique()
    assert by_run[runs["read2"].run_id].tolist() == [2] and by_run[runs["read8"].run_id].tolist() == [8]
    assert (rows["range_size"] == RANGE).all()


@pytest.mark.integration
def test_analyze_gives_the_summary_the_run_printed(runs):
    proc = run_cli("objperf", "analyze", str(runs["read2"].dataset), "--json")
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)["summary"]
    recorded = read_manifest(runs["read2"].dataset)["summary"]
    for name in ("requests", "ok_requests", "error_requests", "cut_requests", "bytes", "gbps", "requests_per_s",
                 "ttfb_ms_p50", "ttfb_ms_p90", "ttfb_ms_p99", "rtt_ms", "status_counts", "client_cpu_s_per_gib",
                 "http_version_counts"):
        assert again[name] == pytest.approx(recorded[name]), name


@pytest.mark.integration
def test_analyze_filters_and_groups(runs):
    proc = run_cli("objperf", "analyze", str(runs["read2"].dataset), str(runs["read8"].dataset), "--by",
                   "concurrency", "--op", "GET", "--window", "0.5s..", "--json")
    assert proc.returncode == 0, proc.stderr
    groups = json.loads(proc.stdout)["groups"]
    assert [g["concurrency"] for g in groups] == [2, 8]
    rows = load([runs["read2"].dataset, runs["read8"].dataset])
    late = rows[rows["t_start"] >= rows["t_start"].min() + 0.5]
    assert sum(g["requests"] for g in groups) == len(late)


@pytest.mark.parametrize("args, message", [
    (["--window", "soon"], "bad --window 'soon'"),
    (["--op", "FETCH"], "bad --op 'FETCH'"),
    (["--host", "elsewhere"], "bad --host 'elsewhere'"),
    (["--by", "colour"], "bad --by 'colour'"),
])
@pytest.mark.integration
def test_analyze_bad_input_is_one_line(runs, args, message):
    proc = run_cli("objperf", "analyze", str(runs["read2"].dataset), *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.integration
def test_cmp_numbers_are_each_runs_own_and_mismatches_are_flagged(runs, tmp_path):
    a, b = runs["read2"], runs["read8"]
    proc = run_cli("objperf", "cmp", str(a.dataset), str(b.dataset), "--json", "--figures", str(tmp_path / "f"))
    assert proc.returncode == 0, proc.stderr
    table = json.loads(proc.stdout)
    rows = {r["metric"]: r for r in table["rows"]}
    names = table["runs"]
    for metric in ("gbps", "requests_per_s", "ttfb_ms_p50", "ttfb_ms_p99", "client_cpu_s_per_gib"):
        assert rows[metric][names[0]] == pytest.approx(a.summary[metric]), metric
        assert rows[metric][names[1]] == pytest.approx(b.summary[metric]), metric
    assert rows["gbps"]["change_pct"] == pytest.approx((b.summary["gbps"] / a.summary["gbps"] - 1) * 100)
    assert isinstance(rows["gbps"]["beyond_noise"], bool)
    assert table["mismatches"] == ["the runs differ in concurrency: 2 (read-c2) vs 8 (read-c8)"]
    assert "the comparison mixes workloads" in proc.stderr
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == ["changes.png", "throughput.png", "ttfb.png"]


@pytest.mark.integration
def test_cmp_needs_two_datasets():
    proc = run_cli("objperf", "cmp", "somewhere")
    assert proc.returncode == 2 and "diff needs two or more datasets" in proc.stderr


# -- integrity -----------------------------------------------------------------------------------


def copy_of(run, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run.dataset, copy)
    return copy


@pytest.mark.integration
def test_the_manifest_lists_every_part_with_its_sha256(runs):
    files = read_manifest(runs["read2"].dataset)["files"]
    assert "requests/part-00000.parquet" in files and any(name.startswith("samples/") for name in files)
    assert all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in files.values())
    assert "steps.parquet" in read_manifest(runs["study"])["files"]


@pytest.mark.integration
def test_an_altered_part_is_caught_in_one_line(runs, tmp_path):
    copy = copy_of(runs["read2"], tmp_path)
    part = copy / "requests" / "part-00000.parquet"
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match="requests/part-00000.parquet was altered"):
        load(copy)
    proc = run_cli("objperf", "analyze", str(copy))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "was altered" in proc.stderr


@pytest.mark.integration
def test_a_missing_or_truncated_part_is_caught(runs, tmp_path):
    copy = copy_of(runs["read2"], tmp_path)
    part = copy / "requests" / "part-00000.parquet"
    part.write_bytes(part.read_bytes()[:100])
    with pytest.raises(DatasetError, match="is truncated"):
        load(copy)
    part.unlink()
    with pytest.raises(DatasetError, match="requests/part-00000.parquet is missing"):
        load(copy)


@pytest.mark.integration
def test_a_killed_run_loads_with_a_warning(runs, tmp_path):
    copy = copy_of(runs["read2"], tmp_path)
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["status"] = "running"
    del manifest["files"]  # a killed run never wrote them
    (copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.warns(UserWarning, match="did not finish"):
        rows = load(copy)
    assert len(rows) == len(runs["read2"].rows)


# -- bundles -------------------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("name", ["run.tar", "run.tar.gz", "run.zip"])
def test_a_packed_run_loads_as_the_directory_does(runs, tmp_path, name):
    bundle = tmp_path / name
    proc = run_cli("objperf", "pack", str(runs["read2"].dataset), "-o", str(bundle))
    assert proc.returncode == 0, proc.stderr
    packed, directory = load(bundle), load(runs["read2"].dataset)
    assert packed.equals(directory) and packed.attrs["manifest"] == directory.attrs["manifest"]
    from objperf.dataset.directory import load_samples

    assert set(load_samples(bundle)) == set(load_samples(runs["read2"].dataset))


@pytest.mark.integration
def test_a_packed_study_and_an_altered_bundle(runs, tmp_path):
    bundle = tmp_path / "study.tar"
    assert run_cli("objperf", "pack", str(runs["study"]), "-o", str(bundle)).returncode == 0
    assert len(load(bundle)) == len(load(runs["study"]))
    altered = tmp_path / "altered.tar"
    with tarfile.open(bundle) as src, tarfile.open(altered, "w") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None
            if member.name.endswith("steps.parquet"):
                data = data[:-1] + bytes([data[-1] ^ 1])
            dst.addfile(member, __import__("io").BytesIO(data) if data is not None else None)
    with pytest.raises(DatasetError, match="steps.parquet was altered"):
        load(altered)


@pytest.mark.integration
def test_pack_bad_input_is_one_line(runs, tmp_path):
    proc = run_cli("objperf", "pack", str(runs["read2"].dataset), "-o", str(tmp_path / "x.rar"))
    assert proc.returncode == 2 and "end it with .tar" in proc.stderr
    proc = run_cli("objperf", "pack", str(tmp_path), "-o", str(tmp_path / "x.tar"))
    assert proc.returncode == 2 and "is not an objperf dataset" in proc.stderr


def test_a_row_read_back_from_a_dataset_is_the_row_the_engine_made():
    import numpy as np

    from objperf.core.schema import OP, empty_columns
    from objperf.dataset.directory import engine_columns, rows_to_table

    cols = empty_columns(4)
    cols["op"][:] = [OP["GET"], OP["UPLOAD_PART"], OP["DELETE"], OP["GET"]]
    cols["http_version"][:] = [11, 20, 0, 15]  # 15: a version the schema has no name for
    cols["remote_ip"][:] = [b"127.0.0.1", b"::1", b"", b"127.0.0.1"]
    cols["s3_error"][:] = [b"", b"SlowDown", b"", b""]
    cols["new_conn"][:] = [True, False, True, False]
    cols["tls_resumed"][:] = [-1, 0, 1, -1]
    cols["ttfb_s"][:] = [0.25, 0.5, np.nan, 1e-6]
    cols["bytes"][:] = [1 << 40, 0, 7, 3]
    back = engine_columns(rows_to_table(cols, run_id="r", host="h", buckets=["b"], keys=["k"]))
    assert set(back) == set(cols) - {"key_index"}  # bucket and key are labels: not the engine's index
    for name, values in back.items():
        if values.dtype.kind == "S":  # text comes back as wide as its longest value
            assert values.dtype.itemsize == (max(len(v) for v in cols[name].tolist()) or 1), name
        else:
            assert values.dtype == cols[name].dtype, name
        np.testing.assert_array_equal(values, cols[name], err_msg=name)


@pytest.mark.integration
def test_a_run_with_a_dataset_lets_its_rows_go_and_its_summary_counts_them_all(store, tmp_path):
    """A run of hours must not hold hours of rows in memory: once written, rows are let go.  The summary
    reads them back from the dataset, and ``rows`` gives every one of them."""
    from objperf.core.schema import first_byte_requests, ok_requests

    out = tmp_path / "long"
    result = read_run(store, out, concurrency=4, seconds=2.5)
    assert len(result.columns["offset"]) == 0 and result.rows_in_dataset > 0
    rows = result.rows
    assert len(rows) == result.rows_in_dataset == result.summary["requests"] == len(load(out))
    assert result.summary["bytes"] == int(rows["bytes"].sum())
    assert result.summary["ok_requests"] == int(ok_requests(rows["curl_code"], rows["status"]).sum())
    ttfb = rows.loc[first_byte_requests(rows["curl_code"], rows["status"], rows["ttfb_s"]), "ttfb_s"] * 1000
    assert result.summary["ttfb_ms_p50"] == pytest.approx(ttfb.quantile(0.5))
    assert result.summary["http_version_counts"] == {"1.1": int((rows["status"] > 0).sum())}


def test_arrow_columns_come_back_as_numpy_whatever_their_chunks_and_offsets():
    import numpy as np
    import pyarrow as pa

    from objperf.dataset import arrow

    flags = np.array([True, False, True, True, False, False, True, True, False, True, True])
    numbers = np.arange(11, dtype=np.int64) * 3
    for values in (flags, numbers):
        column = arrow.from_numpy(values)
        np.testing.assert_array_equal(arrow.to_numpy(column), values)
        np.testing.assert_array_equal(arrow.to_numpy(column.slice(3, 6)), values[3:9])  # a bit offset
        chunked = pa.chunked_array([column.slice(0, 5), column.slice(5)])
        np.testing.assert_array_equal(arrow.to_numpy(chunked), values)
    with pytest.raises(ValueError, match="nulls"):
        arrow.to_numpy(pa.array([1, None], pa.int32()))


def test_parts_are_compacted_a_row_group_at_a_time_in_order_and_in_one_schema(tmp_path, monkeypatch):
    """At the end of a long run the parts are joined into one file without holding every row at once:
    groups as long as Arrow's, rows in the order they were written, a column a part lacks as nulls."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from objperf.dataset import writer as dataset

    monkeypatch.setattr(dataset, "ROW_GROUP_ROWS", 10)
    writer = dataset.DatasetWriter(tmp_path / "d", {"run_id": "r"})
    for first, n in ((0, 7), (7, 7), (14, 7), (21, 4)):
        writer.append(pa.table({"n": pa.array(range(first, first + n), pa.int64())}))
    writer.append(pa.table({"n": pa.array([25, 26], pa.int64()), "note": pa.array(["late", None])}))
    writer.close("complete")
    files = list((tmp_path / "d" / dataset.ROWS_DIR).glob("*.parquet"))
    assert [f.name for f in files] == ["part-00000.parquet"]
    parquet = pq.ParquetFile(files[0])
    assert [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)] == [10, 10, 7]
    table = parquet.read()
    assert table.column("n").to_pylist() == list(range(27))
    assert table.column("note").to_pylist() == [None] * 25 + ["late", None]
    assert writer.manifest["rows"] == 27


@pytest.mark.integration
def test_a_large_manifest_rides_with_the_rows_uncopied(runs):
    """A 9.3 MB manifest (a 10-row run over a 100k-key prefix) made analyze take 3.9 s and diff 17 s: pandas
    deep-copied it on every operation."""
    rows = load(runs["read2"].dataset)
    manifest = rows.attrs["manifest"]
    assert rows[rows["bytes"] > 0].attrs["manifest"] is manifest
    assert rows.groupby("host", observed=True).head(1).attrs["manifest"] is manifest
    both = load([runs["read2"].dataset, runs["read8"].dataset])
    assert both[both["bytes"] >= 0].attrs["manifests"] is both.attrs["manifests"]

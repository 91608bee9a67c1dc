"""Datasets, bundles and other tools' files from someone else: a manifest names only its own files, a bundle
member expands only so far, an import is streamed and bounded, numbers are what they claim, and no secret
or URL password is kept or shown."""

from __future__ import annotations

import json
import os
import tarfile
import time

import numpy as np
import pyarrow as pa
import pytest
from hostile import HostileS3
from test_imports import NEW_HEADER, stamp, warp_ops, write_warp

from conftest import run_cli
from objperf import load
from objperf.dataset.bundle import pack
from objperf.dataset.directory import DatasetError, load_table, read_manifest
from objperf.imports import bounded, warp

pytestmark = pytest.mark.timeout(120)
PASSWORD = "pw-s3cr3t-in-url"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A small real dataset, from a run against the hostile server's well-behaved mode."""
    out = tmp_path_factory.mktemp("ds") / "run"
    with HostileS3("well-behaved", objects={"data/obj.bin": 2 << 20}) as s3:
        done = run_cli("objperf.fetch", f"{s3.endpoint}/hostile/data/obj.bin", "--range-size", "1MiB", "-c", "2",
                       "--out", str(out), timeout=60)
    assert done.returncode == 0, done.stderr
    return out


def copy_of(dataset, tmp_path, manifest_change):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest_change(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


# -- a manifest names only files of its own dataset ------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("name", ["/dev/zero", "../../../../etc/passwd", "requests/../../x.parquet",
                                  "requests/part-00000.parquet\0", "notes.txt", 5])
def test_a_manifest_naming_a_file_outside_its_dataset_is_refused(dataset, tmp_path, name):
    copy = copy_of(dataset, tmp_path, lambda m: m["files"].update({name: {"bytes": 1, "sha256": "0" * 64}}))
    started = time.monotonic()
    with pytest.raises(DatasetError, match="no file of an objperf dataset"):
        load(copy)
    assert time.monotonic() - started < 10
    done = run_cli("objperf", "analyze", str(copy), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert str(os.stat("/etc/passwd").st_size) not in done.stderr


@pytest.mark.integration
def test_a_fifo_where_a_part_should_be_never_hangs_a_load(dataset, tmp_path):
    copy = copy_of(dataset, tmp_path, lambda m: None)
    os.mkfifo(copy / "requests" / "part-00007.parquet")
    assert len(load(copy, verify=False)) == len(load(dataset))  # not a regular file: not a part
    copy2 = copy_of(dataset, tmp_path / "2", lambda m: m["files"].update(
        {"requests/part-00007.parquet": {"bytes": 0, "sha256": "0" * 64}}))
    os.mkfifo(copy2 / "requests" / "part-00007.parquet")
    with pytest.raises(DatasetError, match="not a regular file"):
        load(copy2)


@pytest.mark.integration
@pytest.mark.parametrize("manifest_text", ["[]", '"x"', '{"files": []}', '{"files": {"requests/part-0.parquet": 3}}',
                                           '{"files": {"requests/part-0.parquet": {"bytes": "9", "sha256": "x"}}}',
                                           '{"files": {"requests/part-0.parquet": {"bytes": -1, "sha256": "x"}}}',
                                           "[" * 100_000, "{" + '"a":' * 10, "\xff\xfe"])
def test_a_malformed_manifest_is_one_line(dataset, tmp_path, manifest_text):
    copy = copy_of(dataset, tmp_path, lambda m: None)
    (copy / "manifest.json").write_bytes(manifest_text.encode("latin-1"))
    with pytest.raises(DatasetError):
        load(copy)
    done = run_cli("objperf", "analyze", str(copy), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if "error" in line]) == 1


@pytest.mark.integration
def test_a_bundle_member_expands_no_further_than_the_cap(dataset, tmp_path, monkeypatch):
    bundle = pack(dataset, tmp_path / "b.tar.gz")
    assert len(load(bundle)) == len(load(dataset))
    import objperf.dataset.source

    monkeypatch.setattr(objperf.dataset.source, "MEMBER_MAX_BYTES", 1000)
    with pytest.raises(DatasetError, match="would expand to"):
        load(bundle)


@pytest.mark.integration
def test_a_damaged_bundle_is_refused_and_leaves_no_scratch_behind(dataset, tmp_path):
    import io
    import tempfile
    from pathlib import Path

    bomb = tmp_path / "bomb.tar"
    with tarfile.open(bomb, "w") as tar:
        tar.add(dataset / "manifest.json", "run/manifest.json")
        info = tarfile.TarInfo("run/requests/part-00000.parquet")
        data = b"\0" * (4 << 20)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    scratch = Path(tempfile.gettempdir())
    before = set(scratch.glob("objperf-bundle-*"))
    with pytest.raises(DatasetError):
        load(bomb)
    with pytest.raises(DatasetError, match="not a readable parquet file"):
        load(bomb, verify=False)
    assert set(scratch.glob("objperf-bundle-*")) == before


def test_steps_load_from_a_bundle_as_from_a_directory(tmp_path):
    import pandas as pd

    from objperf.imports.dataset import write_import

    out = write_import(tmp_path / "s", source="x", file="x", command="", tables={"steps": pd.DataFrame({"a": [1]})})
    bundle = pack(out, tmp_path / "s.tar")
    assert load_table(bundle, "steps")["a"].tolist() == [1]


# -- imports --------------------------------------------------------------------------------------------


def zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    stream = pa.CompressedOutputStream(sink, "zstd")
    stream.write(data)
    stream.close()
    return sink.getvalue().to_pybytes()


def test_a_zstd_import_past_the_cap_stops_with_one_line(tmp_path):
    line = "\t".join(["1", "0", "GET", "c", "1", "100", "h:1", "f", "", stamp(1), stamp(1.1), stamp(1.2), stamp(1.3),
                      "1", "0"])
    path = tmp_path / "bomb.csv.zst"
    path.write_bytes(zstd((NEW_HEADER + "\n" + (line + "\n") * 100_000).encode()))
    assert path.stat().st_size < 64 << 10
    with pytest.raises(bounded.UsageError, match="expands past"):
        warp.parse(path, cap=1 << 20)
    assert len(warp.parse(path)[0]) == 100_000  # under the real cap it imports


def test_a_line_without_end_is_refused_not_held(tmp_path):
    path = tmp_path / "long.csv.zst"
    path.write_bytes(zstd(NEW_HEADER.encode() + b"\n" + b"x" * (8 << 20)))
    with pytest.raises(bounded.UsageError, match="field larger than field limit"):
        warp.parse(path)


@pytest.mark.integration
@pytest.mark.parametrize("value", ["-5", "1e99", "nan", "3.5", "inf", "99999999999999999999"])
def test_an_import_with_a_byte_count_that_is_none_is_one_line(tmp_path, value):
    ops = warp_ops(5)
    ops[2] = (*ops[2][:2], value, *ops[2][3:])
    path = write_warp(tmp_path / "w.csv.zst", ops)
    done = run_cli("objperf", "import", "warp", str(path), "--out", str(tmp_path / "out"), timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "line 4: bad bytes" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_warp_error_quoted_across_lines_imports(tmp_path):
    ops = warp_ops(6)
    ops[3] = (*ops[3][:4], '"first line\nsecond line"', *ops[3][5:])
    path = write_warp(tmp_path / "w.csv", ops, zstd=False)
    rows, _ = warp.parse(path)
    assert len(rows) == 6 and rows.s3_error.iloc[3] == "first line\nsecond line"


@pytest.mark.integration
def test_secrets_on_an_imported_command_line_never_reach_the_manifest(tmp_path):
    path = write_warp(tmp_path / "w.csv.zst", warp_ops(4))
    text = pa.input_stream(str(path), compression="zstd").read().decode()
    text += ("# warp get --access-key=AKIDEXAMPLE --secret-key wJalrXUtnFEMI --host=https://u:hunter2@h:9000 "
             "--session-token=\"tok en\"\n")
    path.write_bytes(zstd(text.encode()))
    done = run_cli("objperf", "import", "warp", str(path), "--out", str(tmp_path / "out"), timeout=60)
    assert done.returncode == 0, done.stderr
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    for secret in ("AKIDEXAMPLE", "wJalrXUtnFEMI", "hunter2", "tok en"):
        assert secret not in manifest
    assert "--secret-key REDACTED" in read_manifest(tmp_path / "out")["command"]


# -- URL passwords -------------------------------------------------------------------------------------


@pytest.mark.integration
def test_a_password_in_a_url_never_reaches_a_dataset_figure_bundle_or_terminal(tmp_path):
    with HostileS3("well-behaved", objects={"data/obj.bin": 1 << 20}) as s3:
        url = s3.endpoint.replace("http://", f"http://user:{PASSWORD}@") + "/hostile/data/obj.bin"
        done = run_cli("objperf.fetch", url, "-c", "1", "--out", str(tmp_path / "r"), "--figures", timeout=60)
        assert done.returncode == 0, done.stderr
        missing = run_cli("objperf.fetch", url.replace("obj.bin", "none.bin"), "--no-save", timeout=60)
    assert missing.returncode != 0
    bundle = pack(tmp_path / "r", tmp_path / "r.tar")
    every_byte = [done.stdout, done.stderr, missing.stdout, missing.stderr]
    every_byte += [p.read_bytes().decode("latin-1") for p in (tmp_path / "r").rglob("*") if p.is_file()]
    every_byte.append(bundle.read_bytes().decode("latin-1"))
    assert not any(PASSWORD in text for text in every_byte)
    assert "REDACTED@127.0.0.1" in read_manifest(tmp_path / "r")["target"]["endpoint"]
    assert np.isfinite(load(tmp_path / "r").total_s).all()


@pytest.mark.integration
def test_control_bytes_in_an_imported_file_never_reach_the_terminal(tmp_path):
    ops = warp_ops(6)
    ops[1] = (*ops[1][:3], "obj/\x1b]0;pwned\x07\x1b[2J", "\x1b[31mSlowDown\x08", *ops[1][5:])
    path = write_warp(tmp_path / "w.csv", ops, zstd=False)
    done = run_cli("objperf", "import", "warp", str(path), "--out", str(tmp_path / "imp"), timeout=60)
    assert done.returncode == 0, done.stderr
    for args in (["--by", "key"], ["--by", "s3_error"], []):
        shown = run_cli("objperf", "analyze", str(tmp_path / "imp"), *args, timeout=60)
        assert shown.returncode == 0, shown.stderr
        text = shown.stdout + shown.stderr
        assert "\x1b" not in text and "\x07" not in text and "\x08" not in text
    assert "\\x1b" in run_cli("objperf", "analyze", str(tmp_path / "imp"), "--by", "key", timeout=60).stdout


# -- parquet parts that would expand without limit --------------------------------------------------------


def write_bomb(path, rows: int, *, columns=("t_start", "bytes", "op"), group: int = 1 << 20) -> None:
    """``rows`` rows of nulls in a few KB: every column null, a row group at a time (never all in memory)."""
    import pyarrow.parquet as pq

    types = {"t_start": pa.float64(), "bytes": pa.int64(), "op": pa.string()}
    schema = pa.schema([(name, types[name]) for name in columns])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for at in range(0, rows, group):
            n = min(group, rows - at)
            writer.write_table(pa.table({name: pa.nulls(n, types[name]) for name in columns}, schema=schema))


def with_part(dataset, tmp_path, write, *, rows_said=None, subdir="requests"):
    """A copy of ``dataset`` whose first part under ``subdir`` is what ``write`` writes, its manifest made to
    match it (sizes, SHA-256, and ``rows_said`` rows when given): a whole dataset someone crafted."""
    import hashlib
    import shutil

    copy = tmp_path / "crafted"
    shutil.copytree(dataset, copy)
    part = copy / subdir / "part-00000.parquet"
    part.parent.mkdir(parents=True, exist_ok=True)
    write(part)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"][f"{subdir}/part-00000.parquet"] = {
        "bytes": part.stat().st_size, "sha256": hashlib.sha256(part.read_bytes()).hexdigest()}
    if rows_said is not None:
        manifest["rows"] = rows_said
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return copy


def analyze_measured(*args: str):
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "objperf", "analyze", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    stdout, stderr = proc.communicate(timeout=100)
    rss = os.wait4(proc.pid, os.WNOHANG)[2].ru_maxrss * 1024 if proc.returncode is None else 0
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), rss


@pytest.mark.integration
@pytest.mark.parametrize("rows, columns", [(50_000_000, ("t_start", "bytes", "op")), (20_000_000, ("op",)),
                                           (300_000, ("t_start",))])
@pytest.mark.parametrize("how", ["load", "analyze", "scan", "bundle"])
def test_a_part_declaring_more_rows_than_its_size_holds_is_refused_from_its_footer(dataset, tmp_path, rows,
                                                                                     columns, how):
    """A few KB of nulls declaring millions of rows (a manifest that agrees): refused before its data is read,
    one line, exit 2, whether loaded, analyzed, scanned or in a bundle."""
    crafted = with_part(dataset, tmp_path, lambda p: write_bomb(p, rows, columns=columns), rows_said=rows)
    assert (crafted / "requests" / "part-00000.parquet").stat().st_size < 1_000_000
    started = time.monotonic()
    if how == "load":
        with pytest.raises(DatasetError, match=f"declares {rows:,} rows in"):
            load(crafted)
    else:
        target = str(pack(crafted, tmp_path / "b.tar")) if how == "bundle" else str(crafted)
        done, rss = analyze_measured(target, *(["--scan"] if how == "scan" else []))
        assert done.returncode == 2, done.stderr
        errors = [line for line in done.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and f"declares {rows:,} rows in" in errors[0], done.stderr
        assert "Traceback" not in done.stderr
        assert rss < 500 << 20, f"peak RSS {rss >> 20} MiB"
    assert time.monotonic() - started < 30


@pytest.mark.integration
def test_parts_declaring_more_rows_than_the_manifest_are_refused(dataset, tmp_path):
    """A part within what its size holds, and more rows than the manifest says the dataset has."""
    import pyarrow.parquet as pq

    def write(path):
        pq.write_table(pa.table({"t_start": np.random.default_rng(1).random(50_000)}), path)

    crafted = with_part(dataset, tmp_path, write)
    said = json.loads((crafted / "manifest.json").read_text())["rows"]
    for reading in (lambda: load(crafted), lambda: load(crafted, verify=False)):
        with pytest.raises(DatasetError, match=f"declare 50,0.. rows, more than the {said:,} its manifest says"):
            reading()
    done = run_cli("objperf", "analyze", str(crafted), "--scan", timeout=60)
    assert done.returncode == 2 and "its manifest says" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.integration
def test_a_part_that_would_expand_past_its_bytes_is_refused(dataset, tmp_path, monkeypatch):
    import objperf.dataset.source

    crafted = with_part(dataset, tmp_path, lambda p: write_bomb(p, 200_000, columns=("t_start", "bytes", "op")),
                        rows_said=200_000)
    monkeypatch.setattr(objperf.dataset.source, "PART_EXPANDED_FLOOR", 1 << 20)
    with pytest.raises(DatasetError, match=r"would expand to .* GiB from"):
        load(crafted)


@pytest.mark.integration
def test_a_samples_part_is_held_to_its_footer_too(dataset, tmp_path):
    from objperf.dataset.directory import load_samples

    crafted = with_part(dataset, tmp_path, lambda p: write_bomb(p, 20_000_000, columns=("t_start",)),
                        subdir="samples/nic")
    with pytest.raises(DatasetError, match="declares 20,000,000 rows in"):
        load_samples(crafted)


@pytest.mark.integration
def test_real_parts_load_within_their_bounds(dataset):
    """objperf's own parts are far inside what a part may declare."""
    from objperf.dataset.source import PART_ROWS_PER_BYTE, part_rows

    for part in (dataset / "requests").glob("part-*.parquet"):
        assert part_rows(part, dataset, part.name) <= part.stat().st_size * PART_ROWS_PER_BYTE / 4
    assert len(load(dataset)) > 0


# -- bundles of too many members -------------------------------------------------------------------------


def many_members_tar(path, count: int, mode: str = "w") -> None:
    import io

    with tarfile.open(path, mode) as tar:
        tar.addfile(tarfile.TarInfo("run/manifest.json"), io.BytesIO(b""))
        for i in range(count):
            tar.addfile(tarfile.TarInfo(f"run/e{i}"), io.BytesIO(b""))


def many_members_zip(path, count: int) -> None:
    import zipfile

    with zipfile.ZipFile(path, "w") as bundle:
        bundle.writestr("run/manifest.json", b"{}")
        for i in range(count):
            bundle.writestr(f"run/e{i}", b"")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", ["tar.xz", "tar", "zip"])
def test_a_bundle_of_a_great_many_members_is_refused_in_a_line_and_bounded(tmp_path, kind):
    from objperf.dataset.source import BUNDLE_MAX_MEMBERS

    bundle = tmp_path / f"many.{kind}"
    count = BUNDLE_MAX_MEMBERS * 2 if kind == "tar.xz" else BUNDLE_MAX_MEMBERS + 1
    if kind == "zip":
        many_members_zip(bundle, count)
    else:
        many_members_tar(bundle, count, "w:xz" if kind == "tar.xz" else "w")
    started = time.monotonic()
    done, rss = analyze_measured(str(bundle))
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and f"more than the {BUNDLE_MAX_MEMBERS:,} a dataset's bundle holds" in errors[0], errors
    assert rss < 400 << 20, f"peak RSS {rss >> 20} MiB"
    assert took < 30, f"took {took:.0f}s"


@pytest.mark.integration
def test_a_bundle_of_many_members_within_the_cap_still_opens(dataset, tmp_path):
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(dataset, copy)
    for i in range(2000):
        (copy / f"note-{i}.txt").write_bytes(b"")
    assert len(load(pack(copy, tmp_path / "b.zip"))) == len(load(dataset))
    assert len(load(pack(copy, tmp_path / "b.tar.gz"))) == len(load(dataset))


# -- manifests and parts of the wrong types ---------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from objperf.core.schema import COLUMNS  # noqa: E402

MANIFEST_FIELDS = ["workload", "target", "summary", "status", "kind", "run_id", "started_utc", "ended_utc", "rows",
                   "hosts", "tables", "steps"]

SOME = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
any_json = st.one_of(st.none(), st.booleans(), st.integers(-3, 1 << 70), st.floats(), st.text(max_size=5),
                     st.lists(st.integers(), max_size=2),
                     st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
# the fields objperf writes in a manifest's workload, target and summary, holding anything
FIELDS = ["read", "write", "range_size", "part_size", "object_size", "concurrency", "sink", "endpoint", "requests",
          "bytes", "gbps", "directions", "status", "wall_s"]
any_json = st.recursive(any_json, lambda inner: st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4),
                        max_leaves=8)
ARROW_TYPES = [pa.int64(), pa.int8(), pa.float64(), pa.string(), pa.bool_(), pa.null(), pa.binary(),
               pa.timestamp("s"), pa.list_(pa.int32()), pa.dictionary(pa.int32(), pa.string())]


def analyzed(path) -> tuple[int, str]:
    """``objperf analyze PATH`` in this process: its exit status and what it wrote to stderr."""
    import contextlib
    import io

    from objperf.commands.analyze import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main([str(path)])
    return code, err.getvalue()


def assert_loads_or_one_line(path) -> None:
    try:
        load(path)
    except DatasetError as exc:
        assert "\n" not in str(exc)
    code, stderr = analyzed(path)
    errors = [line for line in stderr.splitlines() if "error" in line]
    assert code in (0, 2) and len(errors) <= 1, stderr
    assert not any(word in stderr for word in ("Traceback", "KeyError", "AttributeError", "TypeError")), stderr


@pytest.mark.integration
@SOME
@given(st.dictionaries(st.sampled_from(MANIFEST_FIELDS), any_json, min_size=1, max_size=4))
def test_a_manifest_of_any_types_loads_or_is_one_line_exit_2(dataset, tmp_path_factory, changes):
    copy = copy_of(dataset, tmp_path_factory.mktemp("m"), lambda m: m.update(changes))
    assert_loads_or_one_line(copy)


@pytest.mark.integration
@SOME
@given(st.dictionaries(st.sampled_from(COLUMNS), st.sampled_from(ARROW_TYPES), min_size=1, max_size=6))
def test_a_part_of_any_schema_loads_or_is_one_line_exit_2(dataset, tmp_path_factory, schema):
    import pyarrow.parquet as pq

    def write(path):
        columns = {}
        for name, kind in schema.items():
            value = {pa.types.is_list(kind): [[1]], pa.types.is_timestamp(kind): [0]}.get(True)
            columns[name] = pa.array((value or [None]) * 3, kind) if not pa.types.is_dictionary(kind) \
                else pa.array(["x"] * 3).dictionary_encode()
        pq.write_table(pa.table(columns), path)

    crafted = with_part(dataset, tmp_path_factory.mktemp("p"), write, rows_said=3)
    assert_loads_or_one_line(crafted)


# -- directories that lead elsewhere -----------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("linked", ["requests", "samples", "samples/nic"])
def test_a_dataset_whose_directory_is_a_symlink_elsewhere_is_refused(dataset, tmp_path, linked):
    """Its parts would be read from wherever the link leads (another dataset, another user's files)."""
    import shutil

    elsewhere = tmp_path / "elsewhere"
    copy = copy_of(dataset, tmp_path, lambda m: None)
    (copy / "samples" / "nic").mkdir(parents=True, exist_ok=True)
    shutil.copytree(copy / linked, elsewhere)
    shutil.rmtree(copy / linked)
    (copy / linked).symlink_to(elsewhere, target_is_directory=True)
    from objperf.dataset.directory import load_samples

    readings = [lambda: load(copy), lambda: load(copy, verify=False)] if linked == "requests" else \
        [lambda: load_samples(copy)]
    for reading in readings:
        with pytest.raises(DatasetError, match="is a symlink, not a directory of the dataset's own"):
            reading()
    if linked == "requests":
        done = run_cli("objperf", "analyze", str(copy), timeout=60)
        assert done.returncode == 2 and "is a symlink" in done.stderr and "Traceback" not in done.stderr


# -- two runs given the same new --out at once -----------------------------------------------------------


@pytest.mark.parametrize("exists", [False, True])
def test_of_writers_started_together_on_one_new_dataset_one_writes_and_the_others_are_refused(tmp_path, exists):
    """Each found the place free (a run checks it before it starts); only one may then make it its own."""
    import threading

    from objperf.core.errors import UsageError
    from objperf.dataset.writer import DatasetWriter

    out = tmp_path / "out"
    if exists:
        out.mkdir()  # an empty directory is a free place too
    barrier, outcomes = threading.Barrier(16), []

    def start() -> None:
        barrier.wait()
        try:
            outcomes.append(DatasetWriter(out, {"run_id": threading.current_thread().name}))
        except UsageError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=start, name=f"run-{i}") for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    writers = [o for o in outcomes if not isinstance(o, str)]
    assert len(outcomes) == 16 and len(writers) == 1, outcomes
    said = ("being written by another run", "already holds a dataset", "is not empty")  # as late as it came
    assert all(any(words in o for words in said) for o in outcomes if isinstance(o, str)), outcomes
    writers[0].close("completed")
    assert json.loads((out / "manifest.json").read_text())["run_id"] == writers[0].manifest["run_id"]

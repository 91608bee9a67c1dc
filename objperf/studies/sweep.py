"""Sweeps: run one workload over a grid of parameter values, with repetitions,
one dataset per step, and assemble them into one study dataset whose rows carry
the grid values as columns.  Rerunning into the same directory skips the steps
that already finished.

Layout of a study directory::

    manifest.json            kind "study": name, grid, steps and how each ended
    requests/part-*.parquet  every step's rows + grid columns + step + rep
    samples/{nic,cpu}/       every step's samples + step + rep
    steps.parquet            one row per step and repetition: grid values and results
    steps/NNN-…-rK/          each step's own dataset
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from objperf.core.errors import UsageError
from objperf.core.sanitize import redacted
from objperf.dataset.directory import (
    MANIFEST,
    ROWS_DIR,
    SAMPLES_DIR,
    load,
    load_samples,
    load_steps,  # noqa: F401 - where notebooks and scripts have long found it
    read_manifest,
)
from objperf.dataset.writer import file_digests
from objperf.run.metadata import system_info, utc_now
from objperf.run.recorder import RunResult
from objperf.studies.grids import STEP_RESULTS


@dataclass
class Step:
    """One grid point: its values and how to run it into a dataset directory."""

    values: dict
    run: Callable[[Path], RunResult]
    measure: Callable[[pd.DataFrame, dict], dict] | None = None  # extra per-step statistics
    # The store refusing the step's requests is what it measures: failed so, it is a row and the study goes on
    refusal_measured: bool = False

    @property
    def slug(self) -> str:
        text = "-".join(f"{k}={v}" for k, v in self.values.items())
        return re.sub(r"[^A-Za-z0-9=._-]+", "_", text)[:80]


def expanded(steps: list[Step], name: str, values: list | None,
             run_for: Callable[[Step, object], Callable]) -> list[Step]:
    """Every step once per value of ``name`` (``--grid hosts=1,2,4``, ``--grid sources=1,2``), that value
    outermost; ``run_for(step, value)`` is how the step runs with it."""
    if not values:
        return steps
    return [Step({name: value, **step.values}, run_for(step, value), step.measure, step.refusal_measured)
            for value in values for step in steps]


def on_hosts(steps: list[Step], hosts: list[int] | None) -> list[Step]:
    """Every step on the first 1, 2, 4 … hosts of a cluster (``--grid hosts=1,2,4``)."""
    return expanded(steps, "hosts", hosts, lambda step, count: functools.partial(step.run, hosts=count))




def step_results(rows: pd.DataFrame, summary: dict, *, status: str = "complete") -> dict:
    """What every step reports, from its summary (the figures its run printed): requests, errors, throughput
    (reads received, writes acknowledged), TTFB, NIC, CPU; from its rows only what the summary does not hold
    (steady throughput, the ramp, the error codes); and why a figure is missing, when one is."""
    from objperf.analysis.stats import failure_codes, seconds_to_full_concurrency, steady_gbps

    data = rows[rows["slot"] >= 0]
    evidence = summary.get("evidence", {})
    wall = max(summary["wall_s"], 1e-9)
    directions = summary["directions"]
    finished = summary["requests"] - summary.get("cut_requests", 0)
    results = {
        "requests": int(summary["requests"]),
        "errors": int(summary["error_requests"]),
        "error_rate": summary["error_requests"] / finished if finished else float("nan"),
        "error_codes": json.dumps(failure_codes(rows)),
        "gbps": summary["gbps"],
        "read_gbps": directions.get("read", {}).get("gbps", 0.0),
        "write_gbps": directions.get("write", {}).get("gbps", 0.0),
        "steady_gbps": steady_gbps(data) if len(data) else float("nan"),
        "requests_per_s": summary["requests_per_s"],
        "ttfb_ms_p50": summary.get("ttfb_ms_p50", float("nan")),
        "ttfb_ms_p99": summary.get("ttfb_ms_p99", float("nan")),
        "rtt_ms": summary.get("rtt_ms", float("nan")),
        "ttfb_over_rtt": summary.get("ttfb_over_rtt", float("nan")),
        # NaN, not 0, where no part was acknowledged: a step too short for one measured nothing
        "write_acknowledged_gbps": acknowledged_gbps(summary),
        "seconds_to_full_concurrency": seconds_to_full_concurrency(data) if len(data) else float("nan"),
        "nic_rx_gbps": evidence.get("nic_rx_bytes", 0) * 8 / wall / 1e9,
        "nic_tx_gbps": evidence.get("nic_tx_bytes", 0) * 8 / wall / 1e9,
        "client_cores_busy": evidence.get("client_cores_busy", float("nan")),
        "client_cpu_s_per_gib": summary["client_cpu_s_per_gib"],
        "directions": "+".join(name for name in ("read", "write") if name in directions),
        "status": status,
        "note": "",
    }
    results["note"] = unmeasured(summary, status, json.loads(results["error_codes"]))
    assert tuple(results) == STEP_RESULTS
    return results


def unmeasured(summary: dict, status: str, codes: dict) -> str:
    """Why a step lacks a figure it set out to measure ("no part acknowledged in 1 s: 4 cut when the time was
    up"); "" when it has them all."""
    wall = summary.get("wall_s", 0.0)
    said = []
    if status == "interrupted":
        said.append(f"interrupted after {wall:.1f} s")
    elif status == "failed":
        said.append(f"failed: {summary.get('error') or 'see its dataset'}")
    if not summary.get("requests"):
        return "; ".join(said + ["no request was made"])
    directions = summary["directions"]
    for name, what in (("read", "no read succeeded"), ("write", "no part acknowledged")):
        d = directions.get(name)
        if d is None or d.get("acknowledged_bytes") or (name == "read" and d["requests"] > d["failed"] + d["cut"]):
            continue
        why = [f"{d['failed']} failed ({_codes(codes)})" if d["failed"] else "",
               f"{d['cut']} cut when the time was up" if d["cut"] else ""]
        said.append(f"{what} in {wall:.3g} s: " + ", ".join(w for w in why if w) if any(why) else
                    f"{what} in {wall:.3g} s")
    return "; ".join(said)


def _codes(codes: dict) -> str:
    if len(codes) == 1:
        return next(iter(codes))
    return ", ".join(f"{code} ×{count}" for code, count in sorted(codes.items(), key=lambda kv: -kv[1])[:3])


def acknowledged_gbps(summary: dict) -> float:
    """The write throughput the store acknowledged; NaN for a step that wrote but had no part acknowledged, and
    0.0 for one that did not write."""
    write = summary["directions"].get("write")
    if not write:
        return 0.0
    return write["acknowledged_gbps"] if write.get("acknowledged_bytes") else float("nan")


def failed_step(error: str) -> dict:
    """The results of a step that raised before it had a dataset: nothing measured, and why."""
    nan = float("nan")
    results = dict.fromkeys(STEP_RESULTS, nan)
    results.update(requests=0, errors=0, error_codes="{}", directions="", status="failed", note=f"failed: {error}")
    return results


def run_sweep(name: str, steps: list[Step], out: str | Path, *, repeat: int = 1, parameters: dict | None = None,
              say: Callable[[str], None] = print) -> Path:
    """Every step, ``repeat`` times, into ``out``; each step's line is its row of the study's table (the same
    results, ``studies.table.row_text``).  A step that ends interrupted or failed ends the study: its row says
    so, and the steps after it are not run; but a step whose point is whether the store takes its requests
    (``refusal_measured``) and that failed because the store refused them is a row like any other."""
    from objperf.core.errors import ObjperfError
    from objperf.studies.table import row_text

    out = Path(out)
    _check_resumable(out, name, parameters or {}, repeat)
    out.mkdir(parents=True, exist_ok=True)
    grid = sorted({k for step in steps for k in step.values})
    manifest = {"format": "objperf-dataset/1", "kind": "study", "study": name, "status": "running",
                "started_utc": utc_now(), "system": system_info(), "parameters": parameters or {},
                "grid": grid, "repeat": repeat, "steps_planned": len(steps) * repeat, "steps": []}
    _write_json(out / MANIFEST, manifest)
    total = len(steps) * repeat
    done = 0
    results: dict[tuple[int, int], dict] = {}
    for rep in range(repeat):
        for index, step in enumerate(steps):
            done += 1
            step_dir = out / "steps" / f"{index:03d}-{step.slug}-r{rep}"
            label = f"{name} step {done}/{total} {step_label(step.values)}" + (f" rep {rep + 1}/{repeat}"
                                                                             if repeat > 1 else "")
            if _finished(step_dir):
                results[index, rep] = _results(step, index, rep, step_dir)
                say(f"{label}: already done, kept: {row_text(results[index, rep])}")
            else:
                if step_dir.exists():
                    shutil.rmtree(step_dir)  # an unfinished earlier attempt
                try:
                    status = step.run(step_dir).status
                except ObjperfError as exc:  # the step could not run: its row says why, the study ends
                    status = "failed"
                    if not _has_rows(step_dir):
                        results[index, rep] = {"step": index, "rep": rep, **step.values, **failed_step(str(exc))}
                if (index, rep) not in results:
                    results[index, rep] = _results(step, index, rep, step_dir, status=status)
                say(f"{label}: {row_text(results[index, rep])}")
                refused = status == "failed" and step.refusal_measured and results[index, rep]["errors"] > 0
                if status != "complete" and not refused:
                    manifest["status"] = status
                    _assemble(out, steps, repeat, manifest, results)
                    return out
            manifest["steps"].append({"step": index, "rep": rep, **step.values, "dataset": str(step_dir.name)})
    manifest["status"] = "complete"
    _assemble(out, steps, repeat, manifest, results)
    return out


def step_label(values: dict) -> str:
    """A step's grid values in words: "part_size 8 MiB, concurrency 2"."""
    from objperf.core.sizes import format_size

    return ", ".join(f"{k} {format_size(v) if k in SIZE_VALUES and isinstance(v, int) else v}"
                     for k, v in values.items())


SIZE_VALUES = frozenset({"part_size", "object_size", "range_size"})


def _has_rows(step_dir: Path) -> bool:
    try:
        return "summary" in read_manifest(step_dir)
    except Exception:
        return False


def _results(step: Step, index: int, rep: int, step_dir: Path, *, status: str | None = None) -> dict:
    """A step's row of steps.parquet: its grid values, its results and its study's own measures."""
    rows = load(step_dir)
    manifest = rows.attrs["manifest"]
    summary = manifest["summary"]
    status = status or manifest.get("status", "complete")
    results = step_results(rows, summary, status=status)
    extra = dict(step.measure(rows, summary)) if step.measure else {}
    note = extra.pop("note", "")
    if note:
        results["note"] = "; ".join(n for n in (results["note"], note) if n)
    return {"step": index, "rep": rep, **step.values, **results, **extra}


def _check_resumable(out: Path, name: str, parameters: dict, repeat: int) -> None:
    """A study resumes into ``out`` only when it is the same study, against the same target, with the same
    options: otherwise old steps would be kept under a new label.  Anything else there is refused."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file, not a directory; choose another --out")
    if not out.is_dir() or not any(out.iterdir()):
        return
    try:
        earlier = read_manifest(out)
    except UsageError:
        raise UsageError(f"{out} is not empty and holds no study; choose another --out") from None
    same = (earlier.get("kind") == "study" and earlier.get("study") == name and earlier.get("repeat") == repeat
            and json.loads(json.dumps(earlier.get("parameters", {}), default=str))
            == json.loads(json.dumps(parameters, default=str)))
    if not same:
        was = earlier.get("parameters", {})
        raise UsageError(f"{out} holds a {earlier.get('study', 'other')} study against "
                         f"{was.get('endpoint', '?')} with other options; a study resumes only with the same "
                         "target and options: choose another --out")


def _finished(step_dir: Path) -> bool:
    try:
        return read_manifest(step_dir).get("status") == "complete"
    except Exception:
        return False


def _assemble(out: Path, steps: list[Step], repeat: int, manifest: dict, results: dict | None = None) -> None:
    """The study's rows, samples and steps.parquet from its steps' datasets: every step that ran, however it
    ended (its ``status`` says), each with the results ``results`` holds for it or made from its dataset."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    results = dict(results or {})
    rows_parts, nic_parts, cpu_parts, table = [], [], [], []
    for rep in range(repeat):
        for index, step in enumerate(steps):
            step_dir = out / "steps" / f"{index:03d}-{step.slug}-r{rep}"
            if (index, rep) not in results and not _finished(step_dir):
                continue
            tags = {"step": index, "rep": rep, **step.values}
            if (index, rep) not in results:
                results[index, rep] = _results(step, index, rep, step_dir)
            table.append(results[index, rep])
            if not _has_rows(step_dir):
                continue
            rows_parts.append(_tagged(load(step_dir), tags))
            samples = load_samples(step_dir)
            if "nic" in samples:
                nic_parts.append(_tagged(samples["nic"], tags))
            if "cpu" in samples:
                cpu_parts.append(_tagged(samples["cpu"], tags))
    for subdir, parts in ((ROWS_DIR, rows_parts), (f"{SAMPLES_DIR}/nic", nic_parts), (f"{SAMPLES_DIR}/cpu", cpu_parts)):
        directory = out / subdir
        if directory.exists():
            shutil.rmtree(directory)
        if parts:
            directory.mkdir(parents=True)
            frame = pa.Table.from_pandas(pd.concat(parts, ignore_index=True), preserve_index=False)
            pq.write_table(frame, directory / "part-00000.parquet", compression="zstd")
    pd.DataFrame(table).to_parquet(out / "steps.parquet", index=False)
    manifest.update(ended_utc=utc_now(), rows=int(sum(len(p) for p in rows_parts)), steps_done=len(table),
                    files=file_digests(out))
    _write_json(out / MANIFEST, manifest)


def _tagged(frame: pd.DataFrame, tags: dict) -> pd.DataFrame:
    frame = frame.copy()
    for column in frame.columns:  # one dictionary per file would clash across steps
        if isinstance(frame[column].dtype, pd.CategoricalDtype):
            frame[column] = frame[column].astype(str)
    for key, value in tags.items():
        frame[key] = value
    return frame


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(redacted(data), indent=2, default=str) + "\n")
    tmp.replace(path)



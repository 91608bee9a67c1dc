"""Every place that makes a summary makes the one record (``objperf.analysis.record.Summary``): a figure
none of them declares is caught here, not by a reader of a manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from objperf.analysis.cluster_summary import cluster_summary
from objperf.analysis.record import DIRECTION_KEYS, HOST_KEYS, OP_KEYS, STEADY_KEYS, SUMMARY_KEYS
from objperf.analysis.saved import summary_of
from objperf.dataset.directory import load

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "sample"


def undeclared(summary: dict) -> set[str]:
    wrong = set(summary) - SUMMARY_KEYS
    for name, direction in summary.get("directions", {}).items():
        wrong |= {f"directions.{name}.{k}" for k in set(direction) - DIRECTION_KEYS}
    for name, op in summary.get("ops", {}).items():
        wrong |= {f"ops.{name}.{k}" for k in set(op) - OP_KEYS}
    for label, host in summary.get("hosts", {}).items():
        wrong |= {f"hosts.{label}.{k}" for k in set(host) - HOST_KEYS}
    wrong |= {f"steady.{k}" for k in set(summary.get("steady", {})) - STEADY_KEYS}
    return wrong


def test_every_shipped_manifests_summary_is_the_record():
    summaries = [json.loads(p.read_text()).get("summary") for p in DATA.rglob("manifest.json")]
    summaries = [s for s in summaries if isinstance(s, dict)]
    assert len(summaries) > 10
    assert {k for s in summaries for k in undeclared(s)} == set()


@pytest.mark.parametrize("name", ["read-concurrency", "mixed", "write-part-size"])
def test_a_summary_of_rows_and_a_scan_of_files_are_the_record(name):
    from objperf.analysis.scan import scan_summary

    rows = load(SAMPLE / name)
    made = summary_of(rows)
    assert made["requests"] == len(rows) and undeclared(made) == set()
    scanned = scan_summary([str(SAMPLE / name)])
    assert scanned["requests"] == len(rows) and undeclared(scanned) == set()


def test_a_cluster_summary_is_the_record_and_each_host_a_host():
    rows = load(SAMPLE / "mixed")
    rows = rows.assign(host=["h0" if i % 2 else "h1" for i in range(len(rows))])
    results = {label: {"status": "complete", "summary": summary_of(part)} for label, part in rows.groupby("host")}
    merged = cluster_summary(rows, results, {})
    assert merged["requests"] == len(rows) and set(merged["hosts"]) == {"h0", "h1"}
    assert undeclared(merged) == set()


def test_a_keyed_ops_keys_are_those_of_its_rows_that_succeeded_loaded_or_scanned(tmp_path):
    """A LIST's length counts its page's keys, a DELETE_OBJECTS' its batch's: the run's summary, a summary of its
    saved rows and a scan of its files give each op's keys and keys/s, of the rows that succeeded only."""
    import numpy as np

    from objperf.analysis.scan import scan_summary
    from objperf.core.schema import OP, empty_columns
    from objperf.dataset.destination import Destination
    from objperf.run.recorder import Recorder

    cols = empty_columns(6)
    cols["op"][:] = [OP["LIST"]] * 3 + [OP["DELETE_OBJECTS"]] * 3
    cols["length"][:] = [1000, 1000, 999, 500, 500, 7]
    cols["status"][:] = [200, 200, 503, 200, 200, 200]
    cols["curl_code"][:] = [0, 0, 0, 0, 8, 0]  # a LIST refused, a batch whose answer broke the contract
    cols["t_start"][:] = 1.7e9 + np.arange(6) * 0.5
    cols["total_s"][:] = 0.01
    recorder = Recorder("list", target={}, workload={}, out=Destination.of(tmp_path / "d"), buckets=["b"],
                        keys=["p/"])
    recorder.start_clock()
    recorder.add(cols)
    ran = recorder.finish("complete").summary
    saved = summary_of(load(tmp_path / "d"))
    scanned = scan_summary([str(tmp_path / "d")])
    for summary in (ran, saved, scanned):
        assert undeclared(summary) == set()
        assert summary["ops"]["LIST"]["keys"] == 2000 and summary["ops"]["DELETE_OBJECTS"]["keys"] == 507
        assert summary["ops"]["LIST"]["requests"] == 3 and summary["ops"]["LIST"]["failed"] == 1
    for summary in (saved, scanned):  # over the rows' own span, as both count it
        assert summary["ops"]["LIST"]["keys_per_s"] == pytest.approx(2000 / summary["wall_s"])

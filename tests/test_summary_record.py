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

"""The shipped sample (``data/sample``) is what today's code writes: every study's step results, its quick
parameters, the row schema.  When this fails, ``make sample`` (``python -m objperf.commands.sample``) makes
the sample again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from objperf import load
from objperf.commands.sample import COMPARE
from objperf.core.schema import COLUMNS
from objperf.dataset.directory import load_steps
from objperf.studies.catalog import STUDIES
from objperf.studies.grids import STEP_RESULTS
from objperf.workflows.study import QUICK_OBJECT_SIZE, quick_duration

pytestmark = pytest.mark.timeout(120)
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
REMAKE = "data/sample is stale: make sample writes it again with today's code"


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_each_studys_sample_is_what_the_code_writes(name):
    manifest = json.loads((SAMPLE / name / "manifest.json").read_text())
    parameters = manifest["parameters"]
    assert manifest["status"] == "complete", REMAKE
    assert parameters["quick"] is True, REMAKE
    assert parameters["duration_s"] == quick_duration(name), REMAKE
    assert parameters["object_size"] == QUICK_OBJECT_SIZE, REMAKE
    steps = load_steps(SAMPLE / name)
    missing = [c for c in STEP_RESULTS if c not in steps.columns]
    assert not missing, f"{REMAKE} (its steps lack {missing})"
    rows = load(SAMPLE / name)
    assert list(rows.columns)[:len(COLUMNS)] == list(COLUMNS), REMAKE


def test_the_hot_object_sample_sweeps_replicas():
    steps = load_steps(SAMPLE / "hot-object")
    assert {"single", "replicas"} <= set(steps["variant"]), REMAKE
    assert sorted(steps[steps["variant"] == "replicas"]["replicas"]) == [2, 4, 8, 16, 32], REMAKE


def test_the_compare_sample_is_the_articles_object_and_rounds():
    manifest = json.loads((SAMPLE / "compare" / "manifest.json").read_text())
    assert manifest["size"] == 100 << 20 and manifest["repeat"] == COMPARE["repeat"], REMAKE

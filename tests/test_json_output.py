"""``--json`` is what a person or a script reads of a summary: its figures, not the latency sketches' hundreds
of buckets, which stay in the dataset's manifest and come back with ``--json-sketches`` — for every command
that prints a summary (fetch, put, mixed, analyze)."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

MAX_LINES = 200


def keys_anywhere(value, name: str) -> list:
    """Every value held under ``name``, however deep."""
    found = []
    if isinstance(value, dict):
        found += [v for k, v in value.items() if k == name]
        for v in value.values():
            found += keys_anywhere(v, name)
    elif isinstance(value, list):
        for v in value:
            found += keys_anywhere(v, name)
    return found


def bucket_count(sketches: list) -> int:
    return sum(len(sketch.get("keys", [])) for held in sketches for sketch in held.values())


RUNS = {
    "fetch": lambda s: ("objperf.commands.fetch", f"s3://{s.bucket}/data/even.bin", "-c", "4", "--range-size",
                        "64KiB", "--duration", "1s"),
    "put": lambda s: ("objperf.commands.put", f"s3://{s.bucket}/json-put/", "--object-size", "1MiB",
                      "-c", "2", "--duration", "1s", "--cleanup"),
    "mixed": lambda s: ("objperf.commands.mixed", f"s3://{s.bucket}/data/even.bin", "--write-to",
                        f"s3://{s.bucket}/json-mixed/", "--object-size", "1MiB", "-c", "4", "--range-size",
                        "64KiB", "--duration", "1s", "--cleanup"),
}


@pytest.mark.parametrize("kind", RUNS)
def test_the_json_of_a_run_and_of_its_reanalysis_holds_no_sketch_and_the_flag_brings_them_back(store, tmp_path,
                                                                                               kind):
    out = tmp_path / "run"
    module, *args = RUNS[kind](store)
    run = run_cli(module, *args, "--endpoint", store.server.endpoint, "--json", "--out", str(out),
                  env=store.env())
    assert run.returncode == 0, run.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert bucket_count(keys_anywhere(manifest, "sketches")) > 0  # the dataset keeps them
    again = run_cli("objperf", "analyze", str(out), "--json")
    assert again.returncode == 0, again.stderr
    for printed in (run.stdout, again.stdout):
        data = json.loads(printed)
        assert keys_anywhere(data, "sketches") == [], "a sketch in the default JSON"
        assert len(printed.splitlines()) < MAX_LINES
        assert keys_anywhere(data, "requests")  # the figures are all still there

    full = run_cli(module, *args, "--endpoint", store.server.endpoint, "--json-sketches", "--no-save",
                   env=store.env())
    assert full.returncode == 0, full.stderr
    assert bucket_count(keys_anywhere(json.loads(full.stdout), "sketches")) > 0
    again_full = run_cli("objperf", "analyze", str(out), "--json-sketches")
    assert again_full.returncode == 0, again_full.stderr
    assert keys_anywhere(json.loads(again_full.stdout), "sketches") == keys_anywhere(manifest["summary"], "sketches")

"""A study's steps as a terminal shows them."""

from __future__ import annotations

# The step results a study prints, under headers with their units; steps.parquet keeps all of them.
SHOWN_RESULTS = {"requests": "requests", "error_rate": "failed %", "steady_gbps": "steady read Gbps",
                 "read_gbps": "read Gbps", "write_acknowledged_gbps": "write Gbps (acked)",
                 "ttfb_ms_p50": "TTFB p50 ms", "ttfb_ms_p99": "TTFB p99 ms"}


def step_table(steps, width: int = 100) -> str:
    """The steps as a terminal shows them: the grid's values, then the results that were measured (a
    direction a study did not use is left out), units in the headers, ``width`` columns at most (the
    right-most results give way first)."""
    from objperf.sizes import format_size
    from objperf.studies.sweep import STEP_RESULTS

    grid = [c for c in steps.columns if c not in STEP_RESULTS and c not in ("step", "rep", "tags")]
    shown = steps[grid].copy()
    for name in ("part_size", "object_size", "range_size"):
        if name in shown:
            shown[name] = shown[name].map(format_size)
    for name, header in SHOWN_RESULTS.items():
        if name not in steps or (name in ("read_gbps", "write_acknowledged_gbps")
                                 and not (steps[name].fillna(0) > 0).any()):
            continue
        if name == "steady_gbps" and not (steps.get("read_gbps", 0) > 0).any():
            continue  # a study of writes: only acknowledged bytes count, and steady Gbps counts parts sent
        shown[header] = steps[name] * (100 if name == "error_rate" else 1)
        if name == "steady_gbps":  # counts every byte moved: a read rate only where a step only read
            shown[header] = shown[header].where((steps["read_gbps"] > 0) & (steps.get("write_gbps", 0) == 0))
    if "rep" in steps and steps["rep"].nunique() > 1:
        shown.insert(0, "rep", steps["rep"])
    while True:
        text = shown.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="-")  # not measured: "-"
        if max(map(len, text.splitlines())) <= width or len(shown.columns) <= len(grid) + 1:
            return text
        shown = shown.iloc[:, :-1]



"""Two or more saved runs side by side, per group: throughput (whole and steady), request rate, TTFB
percentiles, error rate and the commonest errors, client CPU per GiB — each run's figure, and the change
against the first in percent.  A throughput change is marked beyond noise only when it is larger than the
runs' own spread (the standard deviation of their per-second throughput), so noise is not read as a
regression; runs of different workloads are flagged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from objperf.analysis.saved import (
    SETTINGS,
    SIZE,
    run_settings,
    runs_by_size,
    summary_of,
    whole_run,
    with_settings,
)
from objperf.analysis.stats import failed_rows, steady_gbps, steady_window, throughput_timeline
from objperf.core.jsontext import dumps

METRICS = ("gbps", "steady_gbps", "requests_per_s", "ttfb_ms_p50", "ttfb_ms_p90", "ttfb_ms_p99", "error_rate",
           "client_cpu_s_per_gib")
NOISY = ("gbps", "steady_gbps")  # measured against the runs' per-second spread
COMPARED_SETTINGS = ("concurrency", "range_size", "part_size", "object_size", "sink")


def run_label(df: pd.DataFrame, path: str | None, index: int) -> str:
    return Path(path).name if path else f"run{index}"


def measure(df: pd.DataFrame, *, whole: bool = False) -> dict:
    """One run's figures (``whole``: as its own summary said, CPU included) or one group's."""
    s = whole_run(df) if whole else summary_of(df)
    finished = len(df) - int(df["curl_code"].eq(42).sum())
    failing = failed_rows(df)
    codes = df.loc[failing, "s3_error"].astype(str)
    codes = codes.where(codes != "", "HTTP " + df.loc[failing, "status"].astype(str))
    return {"gbps": s["gbps"], "steady_gbps": steady_gbps(df) if len(df) else float("nan"),
            "requests_per_s": s["requests_per_s"], "ttfb_ms_p50": s["ttfb_ms_p50"], "ttfb_ms_p90": s["ttfb_ms_p90"],
            "ttfb_ms_p99": s["ttfb_ms_p99"],
            "error_rate": float(failing.sum() / finished) if finished else float("nan"),
            "top_errors": ", ".join(f"{k}: {v}" for k, v in codes.value_counts().head(3).items()),
            "client_cpu_s_per_gib": s["client_cpu_s_per_gib"], "spread_gbps": spread(df)}


def spread(df: pd.DataFrame) -> float:
    """Standard deviation of the per-second throughput inside the steady window."""
    if len(df) < 2:
        return float("nan")
    start, end = steady_window(df)
    timeline = throughput_timeline(df)
    t0 = float(df["t_start"].min())
    steady = timeline[(timeline["t_s"] >= start - t0) & (timeline["t_s"] + 1 <= end - t0)]
    values = (steady if len(steady) >= 2 else timeline)["gbps"]
    return float(values.std()) if len(values) >= 2 else float("nan")


def beyond_noise(first: float, last: float, spreads: list[float]) -> bool | None:
    """Whether ``last`` differs from ``first`` by more than the runs' own per-second spread; None when it cannot
    be said: a figure not measured, or runs too short to have a spread (never "within noise" by default)."""
    spreads = [s for s in spreads if s == s]
    if first != first or last != last or not spreads:
        return None
    return bool(abs(last - first) > max(spreads))


def mismatches(runs: dict[str, pd.DataFrame]) -> list[str]:
    """The workload settings in which the runs differ, one line each."""
    found = []
    settings = {label: run_settings(df) for label, df in runs.items()}
    for name in COMPARED_SETTINGS:
        values = {label: sorted({str(v) for v in table[name].dropna()}) for label, table in settings.items()}
        shown = {label: ",".join(v) for label, v in values.items() if v}
        if len(set(shown.values())) > 1:
            found.append(f"the runs differ in {name}: " + " vs ".join(f"{v} ({label})" for label, v in shown.items()))
    return found


def load_runs(*datasets, labels: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Datasets (paths or loaded frames) by their labels (``labels``, else each directory's name), in order;
    labels made unique."""
    from objperf.dataset.directory import load

    frames, names = [], []
    for i, data in enumerate(datasets):
        path = None if isinstance(data, pd.DataFrame) else str(data)
        df = data if isinstance(data, pd.DataFrame) else load(data)
        frames.append(df)
        names.append(labels[i] if labels else run_label(df, path, i))
    if len(set(names)) < len(names):
        names = [f"{i}:{name}" for i, name in enumerate(names)]
    return dict(zip(names, frames))


def compare(*datasets, by: str | None = None, labels: list[str] | None = None) -> pd.DataFrame:
    """Datasets (paths or loaded frames), first is the reference: one row per group and metric, a column per
    run, ``change_pct`` of the last against the first, ``beyond_noise`` for throughput and ``noise_pct``, the
    change the runs' own per-second spread makes (in percent of the first).  ``df.attrs["mismatches"]`` lists
    the workload settings in which they differ."""
    if len(datasets) < 2:
        from objperf.core.errors import UsageError

        raise UsageError("compare needs two or more datasets")
    return compare_runs(load_runs(*datasets, labels=labels), by=by)


def compare_runs(runs: dict[str, pd.DataFrame], *, by: str | None = None) -> pd.DataFrame:
    """``compare`` of runs already loaded (``load_runs``), by label, the first the reference."""
    names = list(runs)
    records = []
    order = None
    if by == SIZE:  # one grouping for every run, so their groups line up
        runs, order = runs_by_size(runs)
    for label, df in runs.items():
        if by:
            grouped = with_settings(df) if by in SETTINGS and by not in df.columns else df
            if by not in grouped.columns:
                from objperf.core.errors import UsageError

                raise UsageError(f"bad --by {by!r}: group by one of "
                                 f"{', '.join(sorted(set(grouped.columns) | set(SETTINGS) | {SIZE}))}")
            for value, part in grouped.groupby(by, observed=True, dropna=False):
                records.append({"run": label, "group": value, **measure(part)})
        else:
            whole = "summary" in df.attrs.get("manifest", {})  # a single run: its summary's own wall time and CPU
            records.append({"run": label, "group": "all", **measure(df, whole=whole)})
    long = pd.DataFrame(records)
    if order is not None:  # smallest first, not in the order of their names
        long["group"] = pd.Categorical(long["group"], categories=order, ordered=True)
    rows = []
    for group, part in long.groupby("group", sort=True, dropna=False):
        per_run = part.set_index("run")
        for metric in (*METRICS, "top_errors"):
            row = {"group": group, "metric": metric}
            values = [per_run[metric].get(label, np.nan) for label in names]
            row.update(zip(names, values))
            first, last = values[0], values[-1]
            if metric != "top_errors" and isinstance(first, float) and first and not np.isnan(first):
                row["change_pct"] = (last - first) / first * 100
            else:
                row["change_pct"] = np.nan
            row["noise_pct"] = np.nan
            if metric in NOISY:
                spreads = [per_run["spread_gbps"].get(label, np.nan) for label in (names[0], names[-1])]
                row["beyond_noise"] = beyond_noise(first, last, spreads)
                known = [s for s in spreads if s == s]
                if known and isinstance(first, float) and first and first == first:
                    row["noise_pct"] = max(known) / abs(first) * 100
            else:
                row["beyond_noise"] = None
            rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["mismatches"] = mismatches(runs)
    table.attrs["runs"] = names
    return table


def as_json(table: pd.DataFrame) -> str:
    """The table as JSON; a figure not measured is null."""
    return dumps({"runs": table.attrs.get("runs", []), "mismatches": table.attrs.get("mismatches", []),
                  "rows": json.loads(table.to_json(orient="records"))}, indent=2)

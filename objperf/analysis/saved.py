"""Saved runs analysed again: a dataset's rows back into the columns ``summarize`` reads, filtered by
operation, host and time window, and summarised whole or per group — the same numbers a run printed when it
ended, from its rows alone.  Also each run's workload settings beside its rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from objperf.analysis.record import Summary
from objperf.analysis.steady import rule_of
from objperf.analysis.summary import SUMMARY_COLUMNS, summarize
from objperf.core.errors import UsageError
from objperf.core.schema import HTTP_VERSIONS, OP, ok_requests

SETTINGS = ("concurrency", "range_size", "part_size", "object_size", "threads", "sink", "http_version")


def rows_to_columns(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """A dataset's rows in the engine's column types (op codes, error codes as bytes, HTTP versions as codes)."""
    versions = {text: code for code, text in HTTP_VERSIONS.items()}
    # Every number column the run's own summary read (SUMMARY_COLUMNS): an open loop's due times, TLS resumption
    cols = {name: df[name].to_numpy() for name in SUMMARY_COLUMNS
            if name in df.columns and name not in ("op", "s3_error", "remote_ip", "http_version")}
    cols["op"] = df["op"].astype(str).map(OP).fillna(-1).to_numpy(np.int16)
    cols["s3_error"] = df["s3_error"].astype(str).str.encode("utf-8").to_numpy(dtype=object).astype(bytes) \
        if len(df) else np.array([], dtype=bytes)
    cols["remote_ip"] = df["remote_ip"].astype(str).to_numpy(dtype=object) if "remote_ip" in df.columns \
        else np.array([""] * len(df), dtype=object)
    if "http_version" in df.columns:
        cols["http_version"] = df["http_version"].astype(str).map(versions).fillna(0).to_numpy(np.int16)
    return cols


def parse_window(text: str | None) -> tuple[float, float] | None:
    """``10s..50s`` (seconds from the first request's start; either end may be left out) → (start, end)."""
    if not text:
        return None
    from objperf.core.sizes import parse_duration

    start, sep, end = text.partition("..")
    if not sep:
        raise UsageError(f"bad --window {text!r}: give START..END in seconds from the run's start, e.g. 10s..50s")
    try:
        bounds = (parse_duration(start) if start else 0.0, parse_duration(end) if end else float("inf"))
    except UsageError as exc:
        raise UsageError(f"bad --window {text!r}: {exc}") from None
    if bounds[1] <= bounds[0]:
        raise UsageError(f"bad --window {text!r}: its end must come after its start")
    return bounds


def select(df: pd.DataFrame, *, op: str | None = None, host: str | None = None,
           window: tuple[float, float] | None = None) -> pd.DataFrame:
    """The rows of one operation, one host, and those that started inside a window of the run."""
    if op:
        ops = {o.strip().upper() for o in op.split(",")}
        unknown = ops - set(OP)
        if unknown:
            raise UsageError(f"bad --op {op!r}: the operations are {', '.join(OP)}")
        df = df[df["op"].astype(str).isin(ops)]
    if host:
        hosts = set(df["host"].astype(str))
        if host not in hosts:
            raise UsageError(f"bad --host {host!r}: the dataset's hosts are {', '.join(sorted(hosts))}")
        df = df[df["host"].astype(str) == host]
    if window and len(df):
        t0 = float(df["t_start"].min())
        df = df[(df["t_start"] >= t0 + window[0]) & (df["t_start"] < t0 + window[1])]
    return df


def summary_of(df: pd.DataFrame, *, wall_s: float | None = None, cpu_s: float = float("nan")) -> Summary:
    """``summarize`` over saved rows; ``wall_s`` defaults to the rows' own span (first start to last end).  Steady
    state is judged by the rule the run's manifest names (its --steady-window and --steady-tolerance), as the run
    judged it."""
    if wall_s is None:
        wall_s = float((df["t_start"] + df["total_s"]).max() - df["t_start"].min()) if len(df) else 0.0
    manifest = df.attrs.get("manifest")
    rule = rule_of(manifest.get("workload") if isinstance(manifest, dict) else None)
    return summarize(rows_to_columns(df), wall_s=wall_s, cpu_s=cpu_s, steady=rule)


def whole_run(df: pd.DataFrame) -> dict:
    """A single saved run's summary as it ended: every figure from its rows again (over its own wall time, with
    its CPU from the manifest), and what rows cannot tell (its NIC and CPU evidence, its uploads completed and
    verified, ...) from the manifest's summary: the lines the run printed, every one."""
    manifest = df.attrs.get("manifest", {})
    recorded = manifest.get("summary") if isinstance(manifest.get("summary"), dict) else {}
    if isinstance(recorded.get("hosts"), dict) and "host" in df.columns:
        again = _cluster_again(df, recorded)
    else:
        again = summary_of(df, wall_s=_number(recorded.get("wall_s")),
                           cpu_s=_number(recorded.get("client_cpu_s"), float("nan")))
    return {**again, **recorded_facts(recorded)}


def _number(value, default=None):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value else default


def _cluster_again(df: pd.DataFrame, recorded: dict) -> dict:
    """A cluster run's summary again: each host's from its rows (over its own wall time, with its CPU), merged
    over the window every host ran in, as the driver merged them."""
    from objperf.analysis.cluster_summary import cluster_summary

    results, lost = {}, {}
    for label, host in recorded["hosts"].items():
        host = host if isinstance(host, dict) else {}
        mine = df[df["host"].astype(str) == str(label)]
        if host.get("status") == "lost" or not len(mine):
            lost[str(label)] = str(host.get("lost", "the host did not finish"))
            results[str(label)] = None
            continue
        results[str(label)] = {"status": host.get("status"), "summary": summary_of(
            mine, wall_s=_number(host.get("wall_s")), cpu_s=_number(host.get("client_cpu_s"), 0.0))}
    return cluster_summary(df, results, lost)


def _all(kind):
    return lambda value: isinstance(value, list) and all(isinstance(v, kind) for v in value)


def _numbers_and_words(value) -> bool:
    return isinstance(value, dict) and all(
        isinstance(v, (int, float, str, bool)) or _all((int, float))(v) for v in value.values())


# What a run's summary says that its rows cannot, kept from the manifest on re-analysis: each only when it is
# what the run wrote (a file may say anything).
RECORDED_FACTS = {
    "evidence": _numbers_and_words, "peak_rss_mib": lambda v: _number(v) is not None,
    "http_asked_for": lambda v: isinstance(v, str), "error": lambda v: isinstance(v, str),
    "verified": lambda v: isinstance(v, str), "cleaned_up": lambda v: isinstance(v, (int, str)),
    "uploads_left_open": _all(str), "skipped_objects": lambda v: isinstance(v, int),
    "listing_capped": lambda v: isinstance(v, dict) and isinstance(v.get("keys"), int) and _all(str)(
        v.get("prefixes")),
    "rows_unwritten": lambda v: isinstance(v, int), "rows_dropped": lambda v: isinstance(v, int),
    "kernel_tls": lambda v: isinstance(v, str) and len(v) < 200,
    "receive_buffers": lambda v: isinstance(v, dict) and set(v) == {"least", "median", "most"} and all(
        isinstance(n, int) and 0 < n <= 10 << 20 for n in v.values()),
    "until_steady": lambda v: v in ("steady", "bound"),
    "checksums": lambda v: isinstance(v, dict) and set(v) == {"verified", "mismatched", "unchecked", "absent"} and all(
        isinstance(n, int) and n >= 0 for n in v.values()),
    **{name: lambda v: isinstance(v, int) for name in ("objects_written", "objects_failed", "objects_cut",
                                                        "objects_unstarted", "objects_copied")},
    "copied_to": lambda v: isinstance(v, str),
}


def recorded_facts(recorded: dict) -> dict:
    """The facts of RECORDED_FACTS that ``recorded`` (a manifest's summary) holds, as the run wrote them."""
    return {name: recorded[name] for name, valid in RECORDED_FACTS.items()
            if name in recorded and not isinstance(recorded[name], bool) and valid(recorded[name])}


def run_settings(df: pd.DataFrame) -> pd.DataFrame:
    """One row per ``run_id``: the workload settings its manifest records (concurrency, range and part size,
    object size, threads, sink, HTTP version), to join to the rows."""
    manifests = df.attrs.get("manifests") or {}
    if not manifests and "manifest" in df.attrs:
        manifests = {run_id: df.attrs["manifest"] for run_id in set(df["run_id"].astype(str))}
    records = [{"run_id": run_id, **workload_settings(manifest)} for run_id, manifest in manifests.items()]
    return pd.DataFrame.from_records(records, columns=["run_id", *SETTINGS])


def workload_settings(manifest: dict) -> dict:
    """The workload settings (SETTINGS) a run's manifest records; a mixed run's read side's and write side's
    together, its concurrency their sum."""
    def record(value) -> dict:  # a file may say anything: what is not a JSON object records nothing
        return value if isinstance(value, dict) else {}

    workload = record(manifest.get("workload"))
    if "read" in workload or "write" in workload:
        sides = [record(workload.get(side)) for side in ("write", "read")]
        counts = [side["concurrency"] for side in sides if "concurrency" in side]
        workload = {**sides[0], **sides[1], "concurrency": sum(counts) if counts and all(
            isinstance(n, int) and not isinstance(n, bool) for n in counts) else None}
    return {name: value if isinstance(value := workload.get(name), (int, float, str)) and not isinstance(value, bool)
            else None for name in SETTINGS}


def with_settings(df: pd.DataFrame) -> pd.DataFrame:
    """The rows with their run's workload settings as columns; a study's own grid columns are kept."""
    settings = run_settings(df)
    if settings.empty:
        return df
    joined = df.assign(run_id=df["run_id"].astype(str)).merge(settings, on="run_id", how="left",
                                                             suffixes=("", "_of_run"))
    for name in SETTINGS:
        if f"{name}_of_run" in joined.columns:  # the study's own column wins; fill where it has none
            joined[name] = joined[name].where(joined[name].notna(), joined.pop(f"{name}_of_run"))
    joined.attrs = df.attrs
    return joined


SIZE = "size"  # --by size: a group per object size, or per power of two of them
EXACT_SIZES = 16  # at most this many object sizes are each a group of their own
UNKNOWN_SIZE_GROUP = "unknown"


def exact_sizes(known) -> bool:
    """Whether objects of the sizes ``known`` (each size the rows hold, once) are each a group of their own: at
    most EXACT_SIZES of them, each with a label of its own."""
    known = [int(n) for n in known]
    return len(known) <= EXACT_SIZES and len({size_label(n, exact=True) for n in known}) == len(known)


def size_label(key: int, *, exact: bool) -> str:
    """The label of a group of ``size_groups``: a size (``4KiB``), or the power of two [key, 2 key) that starts
    at ``key`` (``4KiB-8KiB``); ``0B``; ``unknown`` for a size not known (a negative key)."""
    from objperf.core.sizes import format_size

    if key < 0:
        return UNKNOWN_SIZE_GROUP
    if exact or key == 0:
        return format_size(int(key)).replace(" ", "")
    return f"{format_size(int(key)).replace(' ', '')}-{format_size(2 * int(key)).replace(' ', '')}"


def size_groups(object_size: pd.Series) -> pd.Categorical:
    """Each row's group by the size of its object (``object_size``), smallest first: each size its own when the
    rows' objects take at most EXACT_SIZES sizes (``4 KiB``, ``1 MiB``, ``64 MiB``), else a power of two of
    them, [2^k, 2^(k+1)) (``4 KiB-8 KiB``); an object of 0 bytes ``0 B``; a size not known ``unknown``."""
    sizes = object_size.to_numpy(dtype=np.float64, na_value=-1.0)
    known = np.unique(sizes[sizes >= 0]).astype(np.int64)
    exact = exact_sizes(known)
    keys = sizes if exact else np.where(sizes > 0, np.exp2(np.floor(np.log2(np.maximum(sizes, 1)))), sizes)
    order = [float(k) for k in np.unique(keys[keys >= 0])]
    labels = [size_label(int(k), exact=exact) for k in order] + ([UNKNOWN_SIZE_GROUP] if (sizes < 0).any() else [])
    codes = np.searchsorted(np.asarray(order, dtype=np.float64), keys)
    codes = np.where(sizes < 0, len(order), codes)
    return pd.Categorical.from_codes(codes, categories=labels, ordered=True)


def runs_by_size(runs: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Each run's rows with ``size``, grouped over every run's object sizes at once (so one scheme, exact or
    by powers of two, holds for all), and the groups in order."""
    held = {label: df for label, df in runs.items() if "object_size" in df.columns}
    if not held:
        return runs, []
    groups = size_groups(pd.concat([df["object_size"] for df in held.values()], ignore_index=True))
    out, start = dict(runs), 0
    for label, df in held.items():
        mine = groups[start:start + len(df)]
        out[label] = df.assign(**{SIZE: mine})
        start += len(df)
    return out, list(groups.categories)


def grouped(df: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group of ``by``: requests, errors, throughput over the group's own span, request rate, TTFB and
    latency (a request's whole time: what tells writes apart).
    ``by`` ``size``: per object size (``size_groups``)."""
    if by == SIZE and SIZE not in df.columns and "object_size" in df.columns:
        df = df.assign(**{SIZE: size_groups(df["object_size"])})
    df = with_settings(df) if by in SETTINGS and by not in df.columns else df
    if by not in df.columns:
        raise UsageError(f"bad --by {by!r}: group by one of {', '.join(sorted(set(df.columns) | set(SETTINGS)))}")
    rows = []
    for value, part in df.groupby(by, observed=True, dropna=False, sort=True):
        s = summary_of(part)
        figures = {**s, "failed": s["error_requests"], **_latency(part)}
        rows.append({by: value, **{name: figures[name] for name in GROUP_COLUMNS}})
    return pd.DataFrame(rows, columns=[by, *GROUP_COLUMNS])


# The figures of each group, after its value (a scan's groups, analysis.scan.groups_table, hold them too)
GROUP_COLUMNS = ("requests", "failed", "gbps", "requests_per_s", "ttfb_ms_p50", "ttfb_ms_p99", "latency_ms_p50",
                 "latency_ms_p99")


def _latency(rows: pd.DataFrame) -> dict[str, float]:
    """The whole time of the requests that succeeded, p50 and p99, in milliseconds."""
    ok = ok_requests(rows["curl_code"], rows["status"]).to_numpy()
    ms = rows["total_s"].to_numpy(dtype=np.float64)[ok] * 1000
    p50, p99 = np.percentile(ms, [50, 99]) if len(ms) else (float("nan"), float("nan"))
    return {"latency_ms_p50": float(p50), "latency_ms_p99": float(p99)}

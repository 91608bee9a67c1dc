"""Plot-free statistics over per-request rows (tidy pandas DataFrames)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from objperf.core.schema import DIRECTIONS, OPS, cut_requests, failed_requests, first_byte_requests, ok_requests

DIRECTION_OPS = {name: tuple(OPS[code] for code in codes) for name, codes in DIRECTIONS.items()}


def ok_rows(df: pd.DataFrame) -> pd.Series:
    """True where the request succeeded: no curl error and a 2xx status."""
    return ok_requests(df["curl_code"], df["status"])


def cut_rows(df: pd.DataFrame) -> pd.Series:
    """True where a request was cut in flight when the run's time was up, before any error status
    arrived: neither a success nor a failure, its ``bytes`` what moved until then."""
    return cut_requests(df["curl_code"], df["status"])


def first_byte_rows(df: pd.DataFrame) -> pd.Series:
    """True where the body's first byte arrived, so TTFB is known: successes, and GETs cut after it."""
    return first_byte_requests(df["curl_code"], df["status"], df["ttfb_s"])


def failed_rows(df: pd.DataFrame) -> pd.Series:
    """True where the request failed: neither a success nor cut in flight when the run ended."""
    return failed_requests(df["curl_code"], df["status"])


def _of_ops(op: pd.Series, codes: tuple[int, ...]) -> np.ndarray:
    """True where ``op`` (names, as loaded; or the engine's codes) is one of ``codes``."""
    names = [OPS[code] for code in codes]
    if isinstance(op.dtype, pd.CategoricalDtype):  # a dataset's ops: test the few categories, not every row
        wanted = [i for i, category in enumerate(op.cat.categories) if str(category) in names]
        return np.isin(op.cat.codes.to_numpy(), wanted)
    values = op.to_numpy()
    if np.issubdtype(values.dtype, np.integer):
        return np.isin(values, codes)
    return np.isin(values.astype(str), names)


def direction_of(df: pd.DataFrame) -> pd.Series:
    """Each row's direction, ``read`` or ``write`` (``schema.DIRECTIONS``); None for the control plane's rows
    (CREATE_MPU, COMPLETE_MPU, ...), which move no body."""
    found = np.full(len(df), None, dtype=object)
    if "op" in df:
        for name, codes in DIRECTIONS.items():
            found[_of_ops(df["op"], codes)] = name
    return pd.Series(found, index=df.index, name="direction")


def measured_bytes(df: pd.DataFrame) -> np.ndarray:
    """The bytes each row counts as done, as a run's own summary counts them (``analysis.summary.Tally``): a
    success's; a read cut by the run's end, what had arrived; a write only where the store acknowledged it
    (answered 2xx), so a part cut or refused counts nothing, whatever was sent of it; a failure's, none."""
    nbytes = df["bytes"].to_numpy(float)
    if not {"curl_code", "status"} <= set(df.columns):  # rows that say nothing of how they ended
        return nbytes
    curl_code, status = df["curl_code"].to_numpy(), df["status"].to_numpy()
    counted = np.asarray(ok_requests(curl_code, status))
    cut = np.asarray(cut_requests(curl_code, status))
    if cut.any():
        counted = counted | (cut & ~_of_ops(df["op"], DIRECTIONS["write"]) if "op" in df else cut)
    return np.where(counted, nbytes, 0.0)


def _binned_bytes(first: np.ndarray, end: np.ndarray, nbytes: np.ndarray, bin_s: float, count: int) -> np.ndarray:
    """Bytes per bin of ``bin_s`` (``count`` bins from 0), each request's bytes spread evenly from its first
    byte to its end: all in its bin where both lie in one (or the end comes first), else the part before its
    first bin's end, the part after its last bin's start, and its rate for the whole width of every bin
    between.  Each part a product, never a difference of large sums, so a request of no duration loses no
    byte; the scanned timeline (``analysis.scan.timeline``) places them the same way."""
    with np.errstate(invalid="ignore", divide="ignore"):
        bp, be = np.floor(first / bin_s), np.floor(end / bin_s)
    known = np.isfinite(bp) & np.isfinite(be)  # a time not measured places nothing
    bp, be, first, end, nbytes = bp[known], be[known], first[known], end[known], nbytes[known]
    low, high = np.clip(bp, 0, count - 1).astype(np.int64), np.clip(be, 0, count - 1).astype(np.int64)
    out = np.bincount(low[low >= high], weights=nbytes[low >= high], minlength=count).astype(float)
    span = low < high
    low, high, bp, be, first, end = low[span], high[span], bp[span], be[span], first[span], end[span]
    rate = nbytes[span] / (end - first)
    out += np.bincount(low, weights=rate * ((bp + 1) * bin_s - first), minlength=count)
    # an end on the last edge (the last end itself) is in the last bin, for all its width
    out += np.bincount(high, weights=rate * (end - be * bin_s) + rate * np.maximum(be - high, 0) * bin_s,
                       minlength=count)
    inner = high > low + 1
    between = np.bincount(low[inner] + 1, weights=rate[inner], minlength=count + 1)
    between -= np.bincount(high[inner], weights=rate[inner], minlength=count + 1)
    return out + np.cumsum(between)[:count] * bin_s


def throughput_timeline(df: pd.DataFrame, *, bin_s: float = 1.0, by: str | None = None,
                        aligned: bool = False) -> pd.DataFrame:
    """Gbps per time bin (``t_s`` from the first request's start), optionally per group ``by``; ``aligned``:
    each group's ``t_s`` from its own first start (runs made one after another, overlaid).  ``by="direction"``
    (a column the rows need not hold) gives a line per direction, read and write; the control plane's rows
    only place the start and the end.

    What a bin counts is what was done (``measured_bytes``): bytes received for reads, bytes the store
    acknowledged for writes.  A request's bytes are spread between its first byte (``t_start + ttfb_s``) and
    its last (``t_start + total_s``), so long transfers count in every bin they span."""
    if df.empty:
        return pd.DataFrame(columns=["t_s", "gbps"] + ([by] if by else []))
    measured = measured_bytes(df)  # arrays by position: the rows are not copied
    t_start, total = df["t_start"].to_numpy(float), df["total_s"].to_numpy(float)
    first = t_start + np.nan_to_num(df["ttfb_s"].to_numpy(float), nan=0.0)  # no first byte: from the start
    keys = direction_of(df) if by == "direction" and "direction" not in df else df[by] if by else None
    groups = pd.Series(keys).groupby(keys.to_numpy(), observed=True, sort=True).indices.items() if by else \
        [(None, slice(None))]
    frames = []
    for name, rows in groups:
        t0 = float((t_start[rows] if aligned else t_start).min())
        end = float(((t_start + total)[rows] if aligned else t_start + total).max()) - t0
        edges = np.arange(0.0, end + bin_s, bin_s)
        if len(edges) < 2:  # requests that took no time: one bin, as the scanned timeline has
            edges = np.array([0.0, bin_s])
        placed = _binned_bytes(first[rows] - t0, (t_start + total)[rows] - t0, measured[rows], bin_s, len(edges) - 1)
        frame = pd.DataFrame({"t_s": edges[:-1], "gbps": placed * 8 / bin_s / 1e9})
        if by:
            frame[by] = name
        frames.append(frame)
    if not frames:  # no row of any group (by="direction" of the control plane's rows alone)
        return pd.DataFrame(columns=["t_s", "gbps"] + ([by] if by else []))
    return pd.concat(frames, ignore_index=True)


def ttfb_percentiles(df: pd.DataFrame, *, by: str | list[str] | None = None,
                     percentiles: tuple[float, ...] = (50, 90, 99)) -> pd.DataFrame:
    """TTFB percentiles in milliseconds over requests whose first byte arrived."""
    ok = df[first_byte_rows(df)].assign(ttfb_ms=lambda d: d["ttfb_s"] * 1000)

    def stats(series: pd.Series) -> pd.Series:
        values = np.percentile(series, percentiles) if len(series) else [np.nan] * len(percentiles)
        return pd.Series(values, index=[f"p{p:g}" for p in percentiles])

    if by is None:
        return stats(ok["ttfb_ms"]).to_frame().T
    return ok.groupby(by, observed=True)["ttfb_ms"].apply(stats).unstack().reset_index()


def error_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Failed requests by HTTP status, S3 error code and curl code, with their share of all requests
    (requests cut in flight when the run ended are not failures)."""
    failed = df[failed_rows(df)]
    counts = (failed.groupby(["status", "s3_error", "curl_code"], observed=True).size()
              .rename("count").reset_index())
    counts["share"] = counts["count"] / max(len(df), 1)
    return counts.sort_values("count", ascending=False, ignore_index=True)


def failure_codes(df: pd.DataFrame) -> dict[str, int]:
    """The failed requests counted by what the store said: its S3 error code, else "HTTP <status>" (a study
    step's ``error_codes``), most first."""
    failed = df[failed_rows(df)]
    s3 = failed["s3_error"].astype(str)
    codes = s3.where(s3 != "", "HTTP " + failed["status"].astype(str))
    return {str(code): int(n) for code, n in codes.value_counts().items()}


def steady_window(df: pd.DataFrame) -> tuple[float, float]:
    """(start, end) in Unix seconds of the run's steady state: from when every slot has finished
    one request until the last slot starts its last.  The whole span if that window is empty."""
    data = df[df["slot"] >= 0]  # control-plane rows have no slot
    if data.empty:
        return float("nan"), float("nan")
    ends = data["t_start"] + data["total_s"]
    by_slot = data.assign(end=ends).groupby(["thread", "slot"], observed=True)
    start = float(by_slot["end"].min().max())
    end = float(by_slot["t_start"].max().min())
    if not end > start:
        start, end = float(data["t_start"].min()), float(ends.max())
    return start, end


def _inside(t_start, ttfb, end, nbytes, window_start, window_end) -> np.ndarray:
    """Each request's bytes inside its window, its bytes spread evenly from first to last byte.
    ``window_start``/``window_end`` may be scalars or per-row arrays (then reused as scratch)."""
    first = t_start + np.nan_to_num(ttfb)  # a request with no first byte moved no bytes
    duration = end - first
    np.maximum(duration, 1e-9, out=duration)
    low = np.maximum(first, window_start, out=window_start if isinstance(window_start, np.ndarray) else None)
    high = np.minimum(end, window_end, out=window_end if isinstance(window_end, np.ndarray) else None)
    high -= low
    np.clip(high, 0, None, out=high)
    high /= duration
    high *= nbytes
    return high


def overlap_bytes(df: pd.DataFrame, start, end) -> np.ndarray:
    """Each row's bytes that fall inside [start, end], its bytes spread evenly over its transfer."""
    t_start = df["t_start"].to_numpy(float)
    return _inside(t_start, df["ttfb_s"].to_numpy(float), t_start + df["total_s"].to_numpy(float),
                   df["bytes"].to_numpy(float), start, end)


def steady_gbps(df: pd.DataFrame) -> float:
    """Throughput within the steady window, each request's bytes spread over its transfer: bytes received for
    reads, bytes the store acknowledged for writes (``measured_bytes``)."""
    start, end = steady_window(df)
    data = df[df["slot"] >= 0]
    if data.empty or not end > start:
        return float("nan")
    t_start = data["t_start"].to_numpy(float)
    inside = _inside(t_start, data["ttfb_s"].to_numpy(float), t_start + data["total_s"].to_numpy(float),
                     measured_bytes(data), start, end)
    return float(inside.sum()) * 8 / (end - start) / 1e9


CHUNK_ROWS = 1 << 20  # big enough to vectorise, small enough that temporaries are reused, not faulted in


def _grid_codes(column: np.ndarray) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray]:
    """(rows → code, sorted distinct values) for a grid column: a lookup table for small integer
    ranges (no sorting, no hashing), else a hash table."""
    if np.issubdtype(column.dtype, np.integer) and len(column):
        low, high = int(column.min()), int(column.max())
        if high - low < 1 << 22:
            seen = np.zeros(high - low + 1, dtype=np.int64)
            for start in range(0, len(column), CHUNK_ROWS):
                seen += np.bincount(column[start:start + CHUNK_ROWS] - low, minlength=high - low + 1)
            present = np.flatnonzero(seen)
            lookup = np.zeros(high - low + 1, dtype=np.int64)
            lookup[present] = np.arange(len(present))
            return (lambda part: lookup[part - low]), present + low
    codes, uniques = pd.factorize(column, sort=True)
    mapping = pd.Index(np.asarray(uniques))
    return (lambda part: mapping.get_indexer(part)), np.asarray(uniques)


def concurrency_curve(df: pd.DataFrame, *, by: str = "concurrency") -> pd.DataFrame:
    """Steady-state and whole-run Gbps (reads' bytes received, writes' acknowledged) and request counts per
    value of ``by``: what
    ``plots.throughput_against_concurrency`` draws, straight from a study's rows.  Two passes over chunks of rows
    with bincounts and ufunc.at (no sorting), so ten million rows take well under a second."""
    data = df if (df["slot"] >= 0).all() else df[df["slot"] >= 0]
    code_of, values = _grid_codes(data[by].to_numpy())
    ngroups = len(values)
    thread, slot_no = data["thread"].to_numpy(), data["slot"].to_numpy()
    t_start, ttfb, total = (data[c].to_numpy(float) for c in ("t_start", "ttfb_s", "total_s"))
    nbytes = measured_bytes(data)  # a write's acknowledged bytes
    threads = int(thread.max()) + 1 if len(thread) else 1
    width = int(slot_no.max()) + 1 if len(slot_no) else 1
    cells = ngroups * threads * width  # one per (group, thread, slot)
    first_end, last_start = np.full(cells, np.inf), np.full(cells, -np.inf)
    t0, t1 = np.full(ngroups, np.inf), np.full(ngroups, -np.inf)
    total_bytes = np.zeros(ngroups)
    requests = np.zeros(ngroups, dtype=np.int64)
    chunks = [slice(i, i + CHUNK_ROWS) for i in range(0, len(data), CHUNK_ROWS)]
    for part in chunks:
        group = code_of(data[by].to_numpy()[part])
        cell = (group * threads + thread[part]) * width + slot_no[part]
        end = t_start[part] + total[part]
        np.minimum.at(first_end, cell, end)
        np.maximum.at(last_start, cell, t_start[part])
        np.minimum.at(t0, group, t_start[part])
        np.maximum.at(t1, group, end)
        total_bytes += np.bincount(group, weights=nbytes[part], minlength=ngroups)
        requests += np.bincount(group, minlength=ngroups)
    used = np.isfinite(first_end)
    cell_group = np.arange(cells) // (threads * width)
    start, stop = np.full(ngroups, -np.inf), np.full(ngroups, np.inf)
    np.maximum.at(start, cell_group[used], first_end[used])
    np.minimum.at(stop, cell_group[used], last_start[used])
    empty = ~(stop > start)  # too few requests for a steady window: the whole span
    start, stop = np.where(empty, t0, start), np.where(empty, t1, stop)
    steady_bytes = np.zeros(ngroups)
    for part in chunks:
        group = code_of(data[by].to_numpy()[part])
        inside = _inside(t_start[part], ttfb[part], t_start[part] + total[part], nbytes[part], start[group],
                         stop[group])
        steady_bytes += np.bincount(group, weights=inside, minlength=ngroups)
    return pd.DataFrame({
        by: values,
        "steady_gbps": steady_bytes * 8 / (stop - start) / 1e9,
        "gbps": total_bytes * 8 / (t1 - t0) / 1e9,
        "requests": requests,
    })


def seconds_to_full_concurrency(df: pd.DataFrame) -> float:
    """How long after its first request a run first had every slot busy (a write run ramps up while its
    uploads are opened); NaN if it never did."""
    data = df[df["slot"] >= 0]
    if data.empty:
        return float("nan")
    slots = int(data["slot"].max()) + 1
    starts = data["t_start"].to_numpy(dtype=float)
    ends = starts + data["total_s"].to_numpy(dtype=float)
    times = np.concatenate([starts, ends])
    steps = np.concatenate([np.ones(len(starts)), -np.ones(len(ends))])
    order = np.lexsort((steps, times))  # at equal times a request ends before the next begins
    busy = np.cumsum(steps[order])
    full = np.flatnonzero(busy >= slots)
    return float(times[order][full[0]] - starts.min()) if len(full) else float("nan")


TREND_MIN_BINS = 30  # a run shorter than this many full bins has no trend: its line would be noise


def drift_line(df: pd.DataFrame, *, bin_s: float = 1.0) -> tuple[pd.DataFrame, float, float]:
    """The throughput timeline without its partial first and last bins, and the least-squares line through
    it: (timeline, slope in Gbps per second, intercept in Gbps); NaNs when fewer than ``TREND_MIN_BINS``
    bins remain — a 4-second run has no trend to draw."""
    timeline = throughput_timeline(df, bin_s=bin_s)
    if len(timeline) > 2:
        timeline = timeline.iloc[1:-1]  # the first and last bins are partial
    if len(timeline) < TREND_MIN_BINS:
        return timeline, float("nan"), float("nan")
    slope, intercept = np.polyfit(timeline["t_s"], timeline["gbps"], 1)
    return timeline, float(slope), float(intercept)


def drift(df: pd.DataFrame, *, bin_s: float = 1.0) -> dict:
    """Throughput per ``bin_s`` over a long run: slope (Gbps per minute), spread (p95 - p5 Gbps), mean,
    and failed requests per minute."""
    timeline, slope_per_s, _ = drift_line(df, bin_s=bin_s)
    if np.isnan(slope_per_s):
        return dict.fromkeys(("drift_gbps_per_min", "first_minute_gbps", "last_minute_gbps", "lost_gbps",
                              "spread_gbps", "mean_gbps", "errors_per_min"), float("nan"))
    slope = slope_per_s * 60
    # As the article says it: Gbps lost from the first minute to the last (a third of a shorter run each).
    window = min(60.0, (timeline["t_s"].max() - timeline["t_s"].min()) / 3)
    first = timeline[timeline["t_s"] <= timeline["t_s"].min() + window]["gbps"].mean()
    last = timeline[timeline["t_s"] >= timeline["t_s"].max() - window]["gbps"].mean()
    span_min = max((df["t_start"].max() - df["t_start"].min()) / 60, 1e-9)
    return {
        "drift_gbps_per_min": float(slope),
        "first_minute_gbps": float(first),
        "last_minute_gbps": float(last),
        "lost_gbps": float(first - last),
        "spread_gbps": float(np.percentile(timeline["gbps"], 95) - np.percentile(timeline["gbps"], 5)),
        "mean_gbps": float(timeline["gbps"].mean()),
        "errors_per_min": float(failed_rows(df).sum() / span_min),
    }


def timing_table(df: pd.DataFrame, *, value: str = "seconds") -> pd.DataFrame:
    """Per-run times shaped like the S3-vs-R2 article: one row per run (and a ``mean`` row), one column
    per (client, operation, provider).  ``df`` holds client, provider, operation, run and ``value``."""
    wide = df.pivot_table(index="run", columns=["client", "operation", "provider"], values=value, aggfunc="first")
    wide.loc["mean"] = wide.mean()
    return wide


def client_means(df: pd.DataFrame, *, value: str = "seconds") -> pd.DataFrame:
    """Mean, spread and count of ``value`` per client, provider and operation."""
    grouped = df.groupby(["client", "provider", "operation"], observed=True)[value]
    return grouped.agg(mean="mean", std="std", runs="count").reset_index()


CURED_SHARE = 0.01  # a hot object counts as cured once fewer than 1 % of its requests fail


def replicas_that_cure(steps: pd.DataFrame, share: float = CURED_SHARE) -> int | None:
    """The fewest replicas (a hot-object study's ``replicas`` steps, at its highest concurrency) whose share of
    failed requests is under ``share``; None when no count tried cured it."""
    tried = steps[steps["variant"] == "replicas"].groupby("replicas")["error_rate"].mean()
    cured = tried[tried < share]
    return int(cured.index.min()) if len(cured) else None


def concurrency_for(steps: pd.DataFrame, gbps: float) -> dict:
    """Per delay of a wan study, the fewest requests in flight whose steady throughput reached ``gbps`` (NaN:
    none did)."""
    found = {}
    for delay, part in steps.groupby("delay_ms"):
        enough = part[part["steady_gbps"] >= gbps]["concurrency"]
        found[delay] = float(enough.min()) if len(enough) else float("nan")
    return found


# -- fixed-rate (open-loop) steps --------------------------------------------------------------------------------

KNEE = 2.0  # latency from the schedule at p99 this many times the lowest rate's: past the knee
ACHIEVED_SHARE = 0.95  # a step that started fewer than this share of the requests asked could not keep the rate


def open_loop_step(rows: pd.DataFrame, summary: dict) -> dict:
    """A fixed-rate step's results (a study step's ``measure``): the rate achieved, latency from when each
    request was due and the service time alone, at p50 and p99; NaN where the step had no schedule."""
    o = summary.get("open_loop") or {}
    nan = float("nan")
    return {"rate_achieved": o.get("rate_achieved", nan), "due_ms_p50": o.get("latency_ms_p50", nan),
            "due_ms_p99": o.get("latency_ms_p99", nan), "service_ms_p50": o.get("service_ms_p50", nan),
            "service_ms_p99": o.get("service_ms_p99", nan), "late_start_ms_p99": o.get("late_start_ms_p99", nan)}


THROTTLE_CODES = frozenset({"SlowDown", "ErrTooManyRequest", "ServiceUnavailable", "TooManyRequests"})


def request_rate_step(rows: pd.DataFrame, summary: dict) -> dict:
    """A request-rate step's results (a study step's ``measure``): requests finished a second, their latency
    p50 and p99, and the share the store refused for load (503 SlowDown, or its own name for it)."""
    nan = float("nan")
    ops = summary.get("ops") or {}
    latency = next(iter(ops.values()), None) or {}
    if not latency:  # GETs and PUTs: their direction's latency
        latency = next(iter((summary.get("directions") or {}).values()), {})
    refused = sum(n for code, n in (summary.get("s3_error_counts") or {}).items() if code in THROTTLE_CODES)
    requests = summary.get("requests") or 0
    return {"ops_per_s": summary.get("requests_per_s", nan), "latency_ms_p50": latency.get("latency_ms_p50", nan),
            "latency_ms_p99": latency.get("latency_ms_p99", nan),
            "throttled_pct": 100 * refused / requests if requests else nan}


def checksum_step(rows: pd.DataFrame, summary: dict, baseline: dict | None = None) -> dict:
    """A checksums step's results (a study step's ``measure``): its write throughput the store acknowledged and
    the client's CPU-seconds per GiB acknowledged, each as a ratio to ``baseline``'s (``checksum_baseline`` of
    the same writes with no checksum; 1.0 where ``baseline`` is None, the baseline itself), and the codes of
    the requests the store refused ("BadDigest×40", several joined by "/"; "" where none failed)."""
    mine = checksum_baseline(summary)
    base = mine if baseline is None else baseline
    codes = "/".join(f"{code.replace(' ', '')}×{n}" for code, n in failure_codes(rows).items())
    return {"gbps_vs_none": _ratio(mine["gbps"], base["gbps"]), "cpu_vs_none": _ratio(mine["cpu"], base["cpu"]),
            "s3_codes": codes}


def checksum_baseline(summary: dict) -> dict:
    """What a checksums step is measured beside: its acknowledged write Gbps and client CPU-s per GiB (NaN where
    no part was acknowledged)."""
    nan = float("nan")
    write = (summary.get("directions") or {}).get("write") or {}
    acknowledged = bool(write.get("acknowledged_bytes"))
    return {"gbps": write.get("acknowledged_gbps", nan) if acknowledged else nan,
            "cpu": summary.get("client_cpu_s_per_gib", nan) if acknowledged else nan}


def _ratio(value: float, base: float) -> float:
    return value / base if base and base == base and value == value else float("nan")


def saturation_rate(steps: pd.DataFrame) -> tuple[float, str] | None:
    """The lowest rate of a rate sweep at which the store saturated, and why: the first failures (1 % of
    requests), the rate asked no longer achieved (under 95 %), or latency from the schedule past its knee (p99
    twice the lowest rate's).  None when every rate tried held."""
    by_rate = steps.groupby("rate")[["error_rate", "rate_achieved", "due_ms_p99"]].mean().sort_index()
    if by_rate.empty:
        return None
    base = float(by_rate["due_ms_p99"].iloc[0])
    for rate, step in by_rate.iterrows():
        if step["error_rate"] >= CURED_SHARE:
            return float(rate), f"{step['error_rate']:.0%} of requests failed"
        if not step["rate_achieved"] >= ACHIEVED_SHARE * rate:  # NaN: none was started on time either
            return float(rate), f"only {step['rate_achieved']:.0f}/s started"
        if step["due_ms_p99"] > KNEE * base:
            knee = step["due_ms_p99"]
            return float(rate), f"p99 latency {knee:.1f} ms, {knee / base:.1f}× the lowest rate's"
    return None

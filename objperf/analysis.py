"""Plot-free statistics over per-request rows (tidy pandas DataFrames)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def ok_rows(df: pd.DataFrame) -> pd.Series:
    """True where the request succeeded: no curl error and a 2xx status."""
    return (df["curl_code"] == 0) & (df["status"] >= 200) & (df["status"] < 300)


def _cumulative_bytes(starts: np.ndarray, ends: np.ndarray, nbytes: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Bytes delivered by time ``at``, each request's bytes spread evenly over [start, end]."""
    ends = np.maximum(ends, starts + 1e-9)
    rate = nbytes / (ends - starts)

    def ramp_sum(points: np.ndarray) -> np.ndarray:
        # Σ over points p < t of rate·(t − p), for every t in ``at``, via sorted prefix sums.
        order = np.argsort(points)
        p, r = points[order], rate[order]
        cum_r = np.concatenate([[0.0], np.cumsum(r)])
        cum_rp = np.concatenate([[0.0], np.cumsum(r * p)])
        k = np.searchsorted(p, at, side="right")
        return at * cum_r[k] - cum_rp[k]

    return ramp_sum(starts) - ramp_sum(ends)


def throughput_timeline(df: pd.DataFrame, *, bin_s: float = 1.0, by: str | None = None) -> pd.DataFrame:
    """Gbps per time bin (``t_s`` from the first request's start), optionally per group ``by``.

    A request's bytes are spread between its first byte (``t_start + ttfb_s``) and its last
    (``t_start + total_s``), so long transfers count in every bin they span."""
    if df.empty:
        return pd.DataFrame(columns=["t_s", "gbps"] + ([by] if by else []))
    t0 = float(df["t_start"].min())
    groups = df.groupby(by, observed=True) if by else [(None, df)]
    frames = []
    end = float((df["t_start"] + df["total_s"]).max()) - t0
    edges = np.arange(0.0, end + bin_s, bin_s)
    for name, part in groups:
        starts = (part["t_start"] + part["ttfb_s"]).to_numpy(float) - t0
        ends = (part["t_start"] + part["total_s"]).to_numpy(float) - t0
        cumulative = _cumulative_bytes(starts, ends, part["bytes"].to_numpy(float), edges)
        frame = pd.DataFrame({"t_s": edges[:-1], "gbps": np.diff(cumulative) * 8 / bin_s / 1e9})
        if by:
            frame[by] = name
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def ttfb_percentiles(df: pd.DataFrame, *, by: str | list[str] | None = None,
                     percentiles: tuple[float, ...] = (50, 90, 99)) -> pd.DataFrame:
    """TTFB percentiles in milliseconds over successful requests."""
    ok = df[ok_rows(df)].assign(ttfb_ms=lambda d: d["ttfb_s"] * 1000)

    def stats(series: pd.Series) -> pd.Series:
        values = np.percentile(series, percentiles) if len(series) else [np.nan] * len(percentiles)
        return pd.Series(values, index=[f"p{p:g}" for p in percentiles])

    if by is None:
        return stats(ok["ttfb_ms"]).to_frame().T
    return ok.groupby(by, observed=True)["ttfb_ms"].apply(stats).unstack().reset_index()


def error_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Failed requests by HTTP status, S3 error code and curl code, with their share of all requests."""
    failed = df[~ok_rows(df)]
    counts = (failed.groupby(["status", "s3_error", "curl_code"], observed=True).size()
              .rename("count").reset_index())
    counts["share"] = counts["count"] / max(len(df), 1)
    return counts.sort_values("count", ascending=False, ignore_index=True)


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


def steady_gbps(df: pd.DataFrame) -> float:
    """Throughput within the steady window, each request's bytes spread over its transfer."""
    start, end = steady_window(df)
    data = df[df["slot"] >= 0]
    if data.empty or not end > start:
        return float("nan")
    starts = (data["t_start"] + data["ttfb_s"]).to_numpy(float)
    ends = (data["t_start"] + data["total_s"]).to_numpy(float)
    delivered = _cumulative_bytes(starts - start, ends - start, data["bytes"].to_numpy(float),
                                  np.array([0.0, end - start]))
    return float(delivered[1] - delivered[0]) * 8 / (end - start) / 1e9


def drift(df: pd.DataFrame, *, bin_s: float = 1.0) -> dict:
    """Throughput per ``bin_s`` over a long run: slope (Gbps per minute), spread (p95 - p5 Gbps), mean,
    and failed requests per minute."""
    timeline = throughput_timeline(df, bin_s=bin_s)
    if len(timeline) > 2:
        timeline = timeline.iloc[1:-1]  # the first and last bins are partial
    if len(timeline) < 2:
        return {"drift_gbps_per_min": float("nan"), "spread_gbps": float("nan"), "mean_gbps": float("nan"),
                "errors_per_min": float("nan")}
    slope = np.polyfit(timeline["t_s"], timeline["gbps"], 1)[0] * 60
    span_min = max((df["t_start"].max() - df["t_start"].min()) / 60, 1e-9)
    return {
        "drift_gbps_per_min": float(slope),
        "spread_gbps": float(np.percentile(timeline["gbps"], 95) - np.percentile(timeline["gbps"], 5)),
        "mean_gbps": float(timeline["gbps"].mean()),
        "errors_per_min": float((~ok_rows(df)).sum() / span_min),
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

"""A study's figures as its notebook draws them (``objperf.plots.studies``), as interactive charts: the same
data (its steps.parquet, its rows where a figure needs them) with the published figures on the same axes."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from objperf.analysis.published import AWS_REQUESTS_A_PREFIX, r2_figure
from objperf.core.sizes import format_size
from objperf.report.charts import Chart, Series, timeline, ttfb_distribution

PUBLISHED = "published (R2)"
BOUNDS = {"max": "≤ ", "min": "≥ ", "exact": ""}


def published(figure: str, metric: str, condition: str | None = None) -> float:
    rows = r2_figure(figure).query("metric == @metric")
    if condition is not None:
        rows = rows[rows["condition"] == condition]
    return float(rows["value"].iloc[0])


ONE_BOX_READS = ("load-generators", "read throughput", "any client with enough concurrent ranged GETs on one key")


def _mean_line(data: pd.DataFrame, x: str, y: str, name: str) -> Series:
    means = data.groupby(x, sort=True)[y].mean().dropna()
    return Series(name, [float(v) for v in means.index], [float(v) for v in means.values], mark="line")


def _lines(data: pd.DataFrame, x: str, y: str, hue: str | None, label: Callable = str) -> list[Series]:
    if not hue:
        return [_mean_line(data, x, y, "local")]
    return [_mean_line(part, x, y, label(value)) for value, part in data.groupby(hue, sort=True)]


def _level(value: float, label: str, axis: str = "y") -> Series:
    return Series(label, x=[value] if axis == "x" else [], y=[value] if axis == "y" else [],
                  mark="hline" if axis == "y" else "vline", reference=True)


def _bars(local: pd.DataFrame, theirs: pd.DataFrame, x: str, key: str, title: str, y_label: str) -> Chart:
    categories = list(dict.fromkeys([*map(str, local[x]), *map(str, theirs[x])]))
    series = []
    for name, data in (("local", local), (PUBLISHED, theirs)):
        if not len(data):
            continue
        means = data.groupby(data[x].astype(str), sort=False)["gbps"].mean()
        bound = data.groupby(data[x].astype(str), sort=False)["bound"].first() if "bound" in data else None
        text = [f"{BOUNDS.get(bound[c] if bound is not None else 'exact', '')}{means[c]:.2f}" for c in means.index]
        series.append(Series(name, list(means.index), [float(v) for v in means.values], mark="bar",
                             reference=name == PUBLISHED, text=text))
    return Chart(key, title, x.replace("_", " "), y_label, series, categories=categories,
                 note="a published bound is labelled ≤ or ≥ on hover")


def _read_concurrency(steps, rows, summary):
    charts = [Chart("concurrency", "GET throughput against concurrency", "concurrency (requests in flight)",
                    "steady throughput (Gbps)", [_mean_line(steps, "concurrency", "steady_gbps", "local (steady read)"),
                                                 _level(published(*ONE_BOX_READS),
                                                        f"{PUBLISHED}: one key, enough concurrent GETs")],
                    x_log=True)]
    ttfb = ttfb_distribution(rows(), summary, by="concurrency", key="ttfb", title="Time to first byte by concurrency",
                             published_ms=published("ttfb", "TTFB floor"), published_label=f"{PUBLISHED}: TTFB floor")
    return charts + ([ttfb] if ttfb else [])


def _write_part_size(steps, rows, summary):
    acknowledged = steps.dropna(subset=["write_acknowledged_gbps"])
    at, peak = published("part-size", "connections at peak"), published("part-size", "write throughput peak")
    series = _lines(acknowledged, "concurrency", "write_acknowledged_gbps", "part_size",
                    lambda v: f"parts of {format_size(v)}")
    series += [Series(f"{PUBLISHED}: 32 MiB peak at {at:g}", [at], [peak], mark="points", reference=True),
               _level(published("part-size", "write throughput (at most)", "8 MiB parts"),
                      f"{PUBLISHED}: 8 and 128 MiB under this")]
    missing = len(steps) - len(acknowledged)
    return [Chart("part-size", "Write throughput by part size (acknowledged)", "concurrency (requests in flight)",
                  "acknowledged throughput (Gbps)", series, x_log=True,
                  note=f"{missing} step(s) acknowledged no part: not drawn" if missing else "")]


def _key_fanout(steps, rows, summary):
    reads = steps[steps["direction"] == "read"].assign(
        keys=lambda d: d["keys"].map(lambda k: "1 key" if k == 1 else "many keys"), gbps=lambda d: d["steady_gbps"])
    r2 = r2_figure("key-fanout").query("metric == 'read throughput'").assign(
        keys=lambda d: d["condition"].map({"1 key": "1 key", "32 keys": "many keys"}), gbps=lambda d: d["value"])
    return [_bars(reads, r2, "keys", "keys", "Reads: one key against many (R2: 32 keys)", "throughput (Gbps)")]


def _bucket_fanout(steps, rows, summary):
    writes = steps[steps["direction"] == "write"].assign(
        buckets=lambda d: d["buckets"].map(lambda b: f"{b} bucket{'s' if b > 1 else ''}"),
        gbps=lambda d: d["write_acknowledged_gbps"])
    r2 = r2_figure("bucket-fanout").query("metric == 'write throughput'").assign(buckets="2 buckets",
                                                                               gbps=lambda d: d["value"])
    return [_bars(writes, r2, "buckets", "buckets", "Writes (acknowledged): one bucket against two",
                  "acknowledged throughput (Gbps)")]


def _ip_family(steps, rows, summary):
    family = steps.groupby("family")["steady_gbps"].mean()
    local = pd.DataFrame({"measure": ["IPv4 edge over IPv6"],
                          "gbps": [family.get("IPv4", float("nan")) - family.get("IPv6", float("nan"))]})
    r2 = r2_figure("ip-family").assign(measure=lambda d: d["metric"].str.replace("IPv4 edge over IPv6 ", "IPv4 edge "),
                                       gbps=lambda d: d["value"])
    return [_bars(local.dropna(), r2, "measure", "edge", "IPv4 against IPv6: how much faster IPv4 reads",
                  "throughput difference (Gbps)")]


def _mixed(steps, rows, summary):
    both = steps[steps["mode"] == "both"]
    read, write = both["read_gbps"].mean(), both["write_acknowledged_gbps"].mean()
    local = pd.DataFrame({"direction": ["read", "write", "total"], "gbps": [read, write, read + write]})
    r2 = r2_figure("mixed").assign(direction=lambda d: d["metric"].str.split().str[0], gbps=lambda d: d["value"])
    return [_bars(local.dropna(), r2, "direction", "mixed", "Reads and writes at once (writes: acknowledged)",
                  "throughput (Gbps)")]


def _sustained(steps, rows, summary):
    from objperf.analysis.stats import drift_line

    bin_s = float(steps["drift_bin_s"].iloc[0]) if "drift_bin_s" in steps and steps["drift_bin_s"].notna().any() \
        else 1.0
    chart = timeline(rows(), bin_s=bin_s, key="sustained", title="Sustained reads over time")
    value = published("sustained", "read throughput")
    chart.series.append(_level(value, f"{PUBLISHED}, 10 minutes: {value:g} Gbps"))
    inner, slope, intercept = drift_line(rows(), bin_s=bin_s)
    if slope == slope:
        t = inner["t_s"].astype(float)
        chart.series.append(Series(f"drift {slope * 60:+.2f} Gbps/min", t.tolist(),
                                   (slope * t + intercept).tolist(), reference=True))
    return [chart]


def _ttfb_size(steps, rows, summary):
    data = steps.sort_values("object_size")
    floor = published("ttfb", "TTFB floor")
    return [Chart("ttfb-size", "TTFB against object size", "object size (bytes)", "time to first byte p50 (ms)",
                  [_mean_line(data, "object_size", "ttfb_ms_p50", "local TTFB p50"),
                   _level(floor, f"{PUBLISHED}: TTFB floor {floor:g} ms")], x_log=True),
            Chart("size-throughput", "Throughput against object size", "object size (bytes)",
                  "steady throughput (Gbps)", [_mean_line(data, "object_size", "steady_gbps", "local")], x_log=True)]


def _hot_object(steps, rows, summary):
    from objperf.analysis.stats import CURED_SHARE

    single = steps[steps["variant"] == "single"].assign(error_pct=lambda d: d["error_rate"] * 100)
    threshold = published("hot-object", "503 SlowDown above")
    charts = [Chart("hot-object", "Hot object: failed requests against concurrency",
                    "concurrent requests on one range", "failed requests (%)",
                    [_mean_line(single, "concurrency", "error_pct", "local, one key"),
                     _level(threshold, f"published: 503s above {threshold:g}", axis="x")], x_log=True)]
    tried = steps[steps["variant"].isin(["single", "replicas"])]
    if (tried["variant"] == "replicas").any():
        hottest = tried[tried["variant"] == "replicas"]["concurrency"].max()
        data = tried[tried["concurrency"] == hottest].assign(error_pct=lambda d: d["error_rate"] * 100)
        charts.append(Chart("replicas", "Hot object: the same load over replicas",
                            "replicas the hot object is spread over", "failed requests (%)",
                            [_mean_line(data, "replicas", "error_pct", f"local, {hottest:g} in flight"),
                             _level(CURED_SHARE * 100, f"{CURED_SHARE:.0%} failed"),
                             _level(published("hot-object", "503s with replicas"),
                                    f"{PUBLISHED}: no 503 over duplicate keys")], x_log=True))
    return charts


def _wan(steps, rows, summary):
    data = steps.assign(rtt=(2 * steps["delay_ms"]))
    return [Chart("distance", "Reads by added distance", "concurrency (requests in flight)",
                  "steady throughput (Gbps)",
                  _lines(data, "concurrency", "steady_gbps", "rtt", lambda v: f"+{v:g} ms round trip")
                  + [_level(1.0, "target 1 Gbps")], x_log=True)]


def _ceiling_proof(steps, rows, summary):
    local = steps.assign(streams=steps["streams"].map({"store alone": "store alone",
                                                        "store + other HTTP": "store + other traffic"}),
                         gbps=steps["nic_rx_gbps"])
    r2 = r2_figure("ceiling-proof").query("metric == 'NIC receive' and condition != 'later test phase'").assign(
        streams="store + other traffic", gbps=lambda d: d["value"])
    return [_bars(local, r2, "streams", "nic", "NIC receive: the store alone, then beside other traffic",
                  "NIC receive (Gbps)")]


def _client_cpu(steps, rows, summary):
    local = steps.assign(threads=steps["threads"].map(lambda t: f"{t:g} thread(s)"), gbps=steps["steady_gbps"])
    chart = _bars(local, local.iloc[0:0], "threads", "threads", "Read throughput by engine threads",
                  "steady throughput (Gbps)")
    chart.series.append(_level(published(*ONE_BOX_READS), f"{PUBLISHED}: one box's reads"))
    return [chart]


def _rate_sweep(steps, rows, summary):
    from objperf.analysis.stats import saturation_rate

    series = [_mean_line(steps, "rate", "due_ms_p99", "p99 from when each request was due"),
              _mean_line(steps, "rate", "service_ms_p99", "p99 service time alone"),
              _level(published("ttfb", "TTFB floor"), f"{PUBLISHED}: TTFB floor")]
    found = saturation_rate(steps)
    if found is not None:
        series.append(_level(float(found[0]), f"saturated at {found[0]:g}/s: {found[1]}", axis="x"))
    return [Chart("rate", "Fixed-rate load: where the store saturates", "requests started a second (asked)",
                  "latency p99 (ms)", series, x_log=True, y_log=True,
                  note="" if found else f"no saturation up to {steps['rate'].max():g}/s")]


def _request_rate(steps, rows, summary):
    series = [_mean_line(part, "concurrency", "requests_per_s", f"{op}, {prefixes:g} prefix(es)")
              for (op, prefixes), part in steps.groupby(["op", "prefixes"], sort=False)]
    prefixes = float(steps["prefixes"].max())
    published = (("GET/HEAD", AWS_REQUESTS_A_PREFIX["GET"]), ("PUT/DELETE", AWS_REQUESTS_A_PREFIX["PUT"]))
    series += [_level(rate * prefixes, f"published (AWS S3): {ops} {rate:,}/s a prefix × {prefixes:g}")
               for ops, rate in published]
    return [Chart("request-rate", "Small-object requests a second against concurrency", "requests in flight",
                  "requests a second", series, x_log=True, y_log=True)]


def _checksums(steps, rows, summary):
    rest = steps[steps["checksum"] != "none"].assign(sent=lambda d: d["checksum"] + " " + d["mode"])
    base = steps[steps["checksum"] == "none"]
    categories = list(dict.fromkeys(rest["sent"]))
    series = []
    drawn = (("gbps_vs_none", "write_acknowledged_gbps", "write Gbps (acknowledged)", "Gbps"),
             ("cpu_vs_none", "client_cpu_s_per_gib", "client CPU-s per GiB", "CPU-s/GiB"))
    for ratio, measured, name, unit in drawn:
        means = rest.groupby("sent", sort=False)[[ratio, measured]].mean().dropna()
        series.append(Series(f"{name} ÷ none", list(means.index), [float(v) for v in means[ratio]], mark="bar",
                             text=[f"{v:.3f} {unit}" for v in means[measured]]))
    gbps, cpu = base["write_acknowledged_gbps"].mean(), base["client_cpu_s_per_gib"].mean()
    series.append(_level(1.0, f"no checksum (= 1): {gbps:.3f} Gbps, {cpu:.3f} CPU-s/GiB"))
    refused = rest[rest["gbps_vs_none"].isna() & (rest["errors"] > 0)]
    note = "; ".join(f"{row.sent} refused: {row.s3_codes or 'failed'}" for row in refused.itertuples())
    return [Chart("checksums", "What a checksum on every write costs, beside none",
                  "checksum, sent in a header or as a trailer", "ratio to no checksum (× none)",
                  [s for s in series if s.x or s.y], categories=categories, note=note)]


STUDY_CHARTS: dict[str, Callable] = {
    "read-concurrency": _read_concurrency, "write-part-size": _write_part_size, "key-fanout": _key_fanout,
    "bucket-fanout": _bucket_fanout, "ip-family": _ip_family, "mixed": _mixed, "sustained": _sustained,
    "ttfb-size": _ttfb_size, "hot-object": _hot_object, "wan": _wan, "ceiling-proof": _ceiling_proof,
    "client-cpu": _client_cpu, "rate-sweep": _rate_sweep, "request-rate": _request_rate, "checksums": _checksums,
}


def study_charts(name: str, steps: pd.DataFrame, rows: pd.DataFrame, summary: dict) -> list[Chart]:
    """The charts of study ``name`` (none for a study objperf draws no figure of)."""
    draw = STUDY_CHARTS.get(name)
    if draw is None or not len(steps):
        return []
    charts = draw(steps, lambda: rows, summary)
    for chart in charts:  # a level with no value measured (NaN) is left out, not drawn at 0
        chart.series = [s for s in chart.series if not (s.mark in ("hline", "vline") and not all(
            isinstance(v, float) and math.isfinite(v) for v in (s.x or s.y)))]
    return charts

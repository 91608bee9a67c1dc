"""A cluster run's summary: totals over the window in which every host was running (warp's rule: only strictly
overlapping time counts), with each host's own figures beside them."""

from __future__ import annotations

from collections import Counter

import numpy as np

from objperf.analysis.record import Summary
from objperf.analysis.sketch import merged as merged_sketch
from objperf.analysis.summary import GIB, percentiles
from objperf.core.schema import DIRECTIONS, OPS


def cluster_summary(df, results: dict[str, dict | None], lost: dict[str, str]) -> Summary:
    """Totals over the window every host ran in, with each host's own figures beside them.  ``df``: every host's
    rows (``cluster_rows``); ``results``: each host's status and summary (None for a host lost)."""
    hosts = {label: (result or {}).get("summary") for label, result in results.items()}
    statuses = {label: "lost" if label in lost else (result or {}).get("status", "?")
                for label, result in results.items()}
    from objperf.analysis.stats import direction_of, first_byte_rows, measured_bytes, ok_rows, overlap_bytes

    per_host = {label: df[df["host"].astype(str) == label] for label in hosts}
    ran = {label: rows for label, rows in per_host.items() if len(rows)}
    firsts = {label: float(rows["t_start"].min()) for label, rows in ran.items()}
    lasts = {label: _last_end(rows) for label, rows in ran.items()}
    start, end = (max(firsts.values()), min(lasts.values())) if ran else (0.0, 0.0)
    window = max(end - start, 1e-9)
    # what was done (reads received, writes acknowledged), and of writes what was sent
    in_window = {label: float(overlap_bytes(rows.assign(bytes=measured_bytes(rows)), start, end).sum())
                 if end > start else 0.0 for label, rows in ran.items()}
    sent_in_window = sum(float(overlap_bytes(rows[(direction_of(rows) == "write").to_numpy()], start, end).sum())
                         if end > start else 0.0 for rows in ran.values())
    summaries = [s for s in hosts.values() if s]
    total = sum(in_window.values())

    def add(name: str) -> int:
        return int(sum(s.get(name, 0) for s in summaries))

    def merged(name: str) -> dict:
        counts: Counter = Counter()
        for s in summaries:
            counts.update(s.get(name, {}))
        return dict(counts)

    gets = df[first_byte_rows(df) & (df["op"].astype(str) == "GET")]
    p50, p90, p99 = percentiles(gets["ttfb_s"].to_numpy(float) * 1000, [50, 90, 99])
    cpu = sum(s.get("client_cpu_s", 0.0) for s in summaries)
    nbytes = add("bytes")
    directions: dict[str, dict] = {}
    for s in summaries:
        for name, d in s.get("directions", {}).items():
            mine = directions.setdefault(name, Counter())
            mine.update({k: v for k, v in d.items() if k in ("requests", "failed", "cut", "bytes", "acknowledged_bytes",
                                                                "gbps", "acknowledged_gbps", "mib_per_s", "sent_bytes",
                                                                "sent_gbps", "sent_mib_per_s")})
    ok = df[ok_rows(df)]
    for name, d in directions.items():
        ops = [list(OPS)[code] for code in DIRECTIONS[name]]
        d["latency_ms_p50"], d["latency_ms_p99"] = percentiles(
            ok.loc[ok["op"].astype(str).isin(ops), "total_s"].to_numpy(float) * 1000, [50, 99])
    first_start = min(firsts.values(), default=0.0)
    writes = {name: add(name) for name in ("objects_written", "objects_failed", "objects_cut")
              if any(name in s for s in summaries)}
    if any("uploads_left_open" in s for s in summaries):
        writes["uploads_left_open"] = [u for s in summaries for u in s.get("uploads_left_open", [])]
    # Every host's sketches, merged exactly: what the cluster's percentiles are when its rows are too many to load.
    sketches = {name: merged_sketch([s["sketches"][name] for s in summaries if name in s.get("sketches", {})])
                for name in ("ttfb_ms", "latency_ms")}
    checks = [str(s["verified"]) for s in summaries if "verified" in s]
    if checks:
        writes["verified"] = checks[0] if len(set(checks)) == 1 else "; ".join(
            f"{label}: {(s or {}).get('verified')}" for label, s in hosts.items())
    steady = _steady(df, summaries)
    return {**writes, "evidence": merged_evidence(hosts), **({"steady": steady} if steady else {}),
        "requests": add("requests"), "ok_requests": add("ok_requests"), "error_requests": add("error_requests"),
        "cut_requests": add("cut_requests"), "wall_s": window if ran else 0.0,
        "bytes": nbytes, "gbps": total * 8 / window / 1e9 if ran else 0.0,
        "mib_per_s": total / window / (1 << 20) if ran else 0.0,
        **({"sent_bytes": add("sent_bytes"), "sent_gbps": sent_in_window * 8 / window / 1e9 if ran else 0.0,
            "sent_mib_per_s": sent_in_window / window / (1 << 20) if ran else 0.0}
           if any("sent_bytes" in s for s in summaries) else {}),
        "requests_per_s": sum(s.get("requests_per_s", 0.0) for s in summaries),
        "ttfb_ms_p50": p50, "ttfb_ms_p90": p90, "ttfb_ms_p99": p99,
        "ttfb_ms_p999": sketches["ttfb_ms"].quantile(0.999),
        "sketches": {name: sketch.to_json() for name, sketch in sketches.items()},
        "status_counts": merged("status_counts"), "s3_error_counts": merged("s3_error_counts"),
        "curl_error_counts": merged("curl_error_counts"),
        "client_cpu_s": cpu, "client_cpu_s_per_gib": cpu / (nbytes / GIB) if nbytes else float("nan"),
        "peak_rss_mib": max((s.get("peak_rss_mib") or 0 for s in summaries), default=0) or None,
        "directions": {name: dict(d) for name, d in directions.items()},
        "common_window_s": window if ran else 0.0,
        "start_spread_s": (max(firsts.values()) - first_start) if ran else float("nan"),
        "hosts": {label: {"status": statuses[label],
                          "gbps": (hosts[label] or {}).get("gbps", 0.0),
                          "window_gbps": in_window.get(label, 0.0) * 8 / window / 1e9,
                          "requests": (hosts[label] or {}).get("requests", int(len(per_host[label]))),
                          "failed": (hosts[label] or {}).get("error_requests", 0),
                          "first_request_s": firsts[label] - first_start if label in firsts else float("nan"),
                          # what its rows cannot tell, for re-analysis (objperf.analysis.saved)
                          "wall_s": (hosts[label] or {}).get("wall_s"),
                          "client_cpu_s": (hosts[label] or {}).get("client_cpu_s"),
                          **({"lost": lost[label]} if label in lost else {})}
                  for label in hosts},
    }



def _steady(df, summaries: list[dict]) -> dict | None:
    """The cluster's throughput judged as one: every host's rows on one grid of samples, by the rule its hosts
    judged theirs by (``objperf.analysis.steady``)."""
    from objperf.analysis.steady import Samples, rule_of, steady_state
    from objperf.core.schema import OP

    judged = next((s["steady"] for s in summaries if isinstance(s.get("steady"), dict)), None)
    if judged is None or not len(df):
        return None
    rule = rule_of({"steady_window": judged.get("window_s"), "steady_tolerance": judged.get("tolerance_pct")})
    samples = Samples(rule.sample_s)
    # the columns a cluster's rows have (objperf.cluster.merge.SUMMARY_COLUMNS), ops as the engine's codes
    samples.add({**{name: df[name].to_numpy() for name in ("t_start", "total_s", "bytes", "status", "curl_code")},
                 "op": df["op"].astype(str).map(OP).fillna(-1).to_numpy(np.int16)})
    return steady_state(samples, rule)


def _last_end(rows) -> float:
    """When a host's run ended: its data plane's last end (a write run's teardown, the uploads it aborts after
    its time was up, is no part of its run), else its rows' last."""
    from objperf.analysis.stats import direction_of

    data = direction_of(rows).notna().to_numpy()  # GETs, PUTs and parts: not the control plane's requests
    moved = rows[data] if data.any() else rows
    return float((moved["t_start"] + moved["total_s"]).max())


def merged_evidence(summaries: dict[str, dict | None]) -> dict:
    """The hosts' NIC and CPU evidence together: CPU summed over every host's process, NIC bytes summed over
    machines (workers sharing a machine, labelled ``machine/worker``, share its NIC: counted once)."""
    found = {label: (s or {}).get("evidence") or {} for label, s in summaries.items()}
    found = {label: e for label, e in found.items() if e}
    if not found:
        return {}
    report: dict = {}
    machines: dict[str, dict] = {}
    for label, e in found.items():
        if "nic" in e:
            machines.setdefault(label.split("/")[0], e)
    if machines:
        report["nic"] = ",".join(sorted({e["nic"] for e in machines.values()}))
        report["nic_rx_bytes"] = sum(e["nic_rx_bytes"] for e in machines.values())
        report["nic_tx_bytes"] = sum(e["nic_tx_bytes"] for e in machines.values())
    cores = {machine: e["cores_busy_pct"] for machine, e in ((label.split("/")[0], e) for label, e in found.items())
             if e.get("cores_busy_pct")}
    if len(cores) == 1:  # every host on one machine: its cores are the cluster's
        report["cores_busy_pct"] = next(iter(cores.values()))
    busy = [e["client_cores_busy"] for e in found.values() if "client_cores_busy" in e]
    if busy:
        report["client_cores_busy"] = sum(busy)
        report["client_cpu_bound"] = any(e.get("client_cpu_bound") for e in found.values())
    return report

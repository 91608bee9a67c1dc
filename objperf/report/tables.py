"""The report's tables as HTML: the summary (the lines the commands print), environment and provenance, errors
by status and S3 code, per-group breakdowns, and a comparison with its noise verdicts.  Every text that came
from a dataset (keys, error codes, host names) is made printable and escaped."""

from __future__ import annotations

import html
import math

import pandas as pd

from objperf.core.sanitize import printable


def esc(value: object) -> str:
    return html.escape(printable(value))


def table(header: list[str] | None, rows: list[list[object]], *, cls: str = "") -> str:
    head = "<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead>" if header else ""
    body = "".join("<tr>" + "".join(f"<td>{cell if isinstance(cell, Raw) else esc(cell)}</td>" for cell in row)
                   + "</tr>" for row in rows)
    return f'<table class="{cls}">{head}<tbody>{body}</tbody></table>'


class Raw(str):
    """HTML made here (already escaped), put in a cell as it is."""


def summary_table(summary: dict, workload: dict | None = None) -> str:
    """The summary as the commands print it: what the run asked for, one labelled line per fact, the one line."""
    from objperf.analysis.summary_text import one_line, summary_rows, workload_text

    rows = [["workload", workload_text(workload)]] if workload else []
    rows += [list(r) for r in summary_rows(summary)]
    rows.append(["in short", one_line(summary, workload)])
    return table(None, rows, cls="summary")


SYSTEM = (("objperf", "objperf"), ("libcurl", "libcurl_version"), ("TLS", "tls_version"),
          ("nghttp2", "nghttp2_version"), ("zlib", "zlib_version"), ("Python", "python"), ("host", "host"),
          ("kernel", "kernel"), ("platform", "platform"), ("CPU", "cpu_model"), ("CPU cores", "cpu_count"))


def _nics(nics: object) -> str:
    if not isinstance(nics, dict) or not nics:
        return ""
    return ", ".join(f"{name} ({f'{speed:,} Mbps' if isinstance(speed, (int, float)) else 'speed unknown'})"
                     for name, speed in nics.items())


def _endpoint(target: dict) -> str:
    from urllib.parse import urlsplit

    endpoint = str(target.get("endpoint") or "")
    if "://" in endpoint:
        parts = urlsplit(endpoint)
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"  # never a password
    return endpoint


def _setting(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "-"
    return "-" if value is None else str(value)


def environment_table(manifest: dict, label: str) -> str:
    """Where and how a dataset was made: versions, host, kernel, CPU, NIC; the command or workload asked for."""
    system = manifest.get("system") if isinstance(manifest.get("system"), dict) else {}
    rows = [["dataset", label], ["kind", manifest.get("study") or manifest.get("kind", "?")],
            ["status", manifest.get("status", "?")],
            ["started", manifest.get("started_utc", "?")], ["ended", manifest.get("ended_utc", "?")]]
    if manifest.get("run_id"):
        rows.append(["run id", manifest["run_id"]])
    rows += [[name, system[key]] for name, key in SYSTEM if key in system]
    if _nics(system.get("nics_mbps")):
        rows.append(["NICs", _nics(system.get("nics_mbps"))])
    command = manifest.get("command") or manifest.get("argv")
    if command:
        rows.append(["command", " ".join(map(str, command)) if isinstance(command, list) else command])
    target = manifest.get("target") if isinstance(manifest.get("target"), dict) else {}
    parameters = manifest.get("parameters") if isinstance(manifest.get("parameters"), dict) else {}
    where = _endpoint(target) or _endpoint(parameters)
    if where:
        rows.append(["endpoint", where])
    objects = target.get("objects")
    if isinstance(objects, list) and objects:
        first = objects[0] if isinstance(objects[0], dict) else {}
        rows.append(["objects", f"{len(objects):,}, first s3://{first.get('bucket', '?')}/{first.get('key', '?')}"])
    workload = manifest.get("workload") if isinstance(manifest.get("workload"), dict) else {}
    for side, settings in (workload.items() if "read" in workload or "write" in workload else [("", workload)]):
        if isinstance(settings, dict):
            said = "; ".join(f"{k}={_setting(v)}" for k, v in settings.items() if k not in ("seed",))
            rows.append([f"workload {side}".strip(), said])
    if parameters:
        rows.append(["parameters", "; ".join(f"{k}={_setting(v)}" for k, v in parameters.items()
                                             if k not in ("endpoint", "profile", "ca_bundle"))])
    if manifest.get("grid"):
        rows.append(["grid", _setting(manifest["grid"])])
    return table(None, rows, cls="environment")


def error_table(rows: pd.DataFrame) -> str:
    """Failed requests by HTTP status, S3 error code and libcurl code, with their share; '' when none failed."""
    from objperf.analysis.stats import error_counts

    counts = error_counts(rows)
    if counts.empty:
        return ""
    return table(["HTTP status", "S3 error code", "libcurl code", "requests", "share of all"],
                 [[r.status, r.s3_error or "-", r.curl_code, f"{r.count:,}", f"{r.share:.2%}"]
                  for r in counts.head(50).itertuples(index=False)], cls="numbers")


def _number(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


GROUP_COLUMNS = (("requests", "requests"), ("failed", "failed"), ("gbps", "Gbps"), ("mib_per_s", "MiB/s"),
                 ("requests_per_s", "requests/s"), ("ttfb_ms_p50", "TTFB p50 (ms)"), ("ttfb_ms_p99", "TTFB p99 (ms)"))


def group_table(groups: pd.DataFrame, by: str) -> str:
    """``objperf.analysis.saved.grouped``'s table: a line per value of ``by``, rates in Gbps and MiB/s."""
    from objperf.core.sizes import format_size

    groups = groups.assign(mib_per_s=groups["gbps"] * 1e9 / 8 / (1 << 20))
    sized = by in ("range_size", "part_size", "object_size")
    return table([by.replace("_", " ")] + [label for _, label in GROUP_COLUMNS],
                 [[format_size(row[by]) if sized and isinstance(row[by], (int, float)) else row[by]]
                  + [_number(row[name], 1 if name == "mib_per_s" else 3) for name, _ in GROUP_COLUMNS]
                  for _, row in groups.iterrows()], cls="numbers")


UNITS = {"gbps": "Gbps", "steady_gbps": "Gbps", "requests_per_s": "requests/s", "ttfb_ms_p50": "ms",
         "ttfb_ms_p90": "ms", "ttfb_ms_p99": "ms", "error_rate": "share failed", "client_cpu_s_per_gib": "CPU-s/GiB"}


def verdict(value: object) -> str:
    if value is True:
        return "beyond noise"
    if value is False:
        return "within noise"
    return "" if value is None else "cannot tell (too short to have a spread)"


def diff_table(diff: pd.DataFrame) -> str:
    """``objperf.analysis.diff.compare``'s table: each run's figure, the change of the last against the first,
    and for throughput whether that change is beyond the runs' own per-second spread."""
    runs = diff.attrs.get("runs", [])
    rows = []
    for _, row in diff.iterrows():
        noisy = row["metric"] in ("gbps", "steady_gbps")
        said = verdict(row["beyond_noise"]) if noisy and row["beyond_noise"] is not None else (
            "cannot tell (too short to have a spread)" if noisy else "")
        change = row["change_pct"]
        rows.append([row["group"], f"{row['metric']} ({UNITS[row['metric']]})" if row["metric"] in UNITS
                     else row["metric"]] + [_number(row[r]) for r in runs]
                    + ["-" if change != change else f"{change:+.1f}%", said])
    return table(["group", "metric", *runs, "change (last vs first)", "noise verdict"], rows, cls="numbers")

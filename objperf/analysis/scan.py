"""Datasets too large to load, summarised where they lie: DuckDB scans the parquet parts (only the columns
asked for, every core, within ``memory_limit``) and hands back per-group counts, sums and latency sketches
(``objperf.analysis.sketch``): a billion rows become a few thousand numbers.  The rules that say which rows
succeeded, were cut or failed are ``objperf.schema``'s, written as SQL here and held to them by a test."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from objperf.analysis.sketch import ZERO_KEY, Sketch, bucket_key_sql
from objperf.errors import UsageError
from objperf.schema import CUT_CURL_CODE, OP_GET, OPS, curl_error_text

OK = "(curl_code = 0 AND status >= 200 AND status < 300)"
CUT = f"(curl_code = {CUT_CURL_CODE} AND status < 300)"
FIRST_BYTE = f"((curl_code = 0 OR curl_code = {CUT_CURL_CODE}) AND status >= 200 AND status < 300 AND ttfb_s > 0)"
COLUMNS = ("op", "status", "curl_code", "bytes", "t_start", "ttfb_s", "total_s")
GROUPABLE = ("op", "status", "curl_code", "host", "run_id", "remote_ip", "http_version", "key_index", "thread")


def parts(paths: Sequence[str | Path]) -> list[str]:
    """The parquet parts of the dataset directories ``paths`` (bundles are loaded whole: unpack one first)."""
    found = []
    for path in map(Path, paths):
        if not (path / "requests").is_dir():
            raise UsageError(f"{path}: a dataset directory is scanned where it lies (requests/part-*.parquet); "
                             "unpack a bundle first")
        for part in sorted((path / "requests").glob("*.parquet")):
            if not part.resolve().is_relative_to(path.resolve()) or not part.resolve().is_file():
                from objperf.source import DatasetError

                raise DatasetError(f"{path}: {part.name} is not a file of the dataset")
            found.append(str(part))
    if not found:
        raise UsageError("no parquet parts in " + ", ".join(map(str, paths)))
    return found


def _listed(files: list[str]) -> str:
    """The parts as a SQL list of string literals (a view's definition takes no parameters)."""
    return "[" + ", ".join("'" + name.replace("'", "''") + "'" for name in files) + "]"


def connect(memory_limit: str = "1GB", threads: int | None = None):
    from objperf.extras import require

    require("duckdb", "analysing rows where they lie")
    import duckdb

    con = duckdb.connect(config={"memory_limit": memory_limit, **({"threads": threads} if threads else {})})
    con.execute("SET preserve_insertion_order = false")  # order is not needed, and it costs memory
    con.execute("SET enable_progress_bar = false")  # a command's output is its own
    return con


def scan(paths: Sequence[str | Path], *, by: str | None = None, memory_limit: str = "1GB",
         threads: int | None = None) -> list[dict]:
    """One summary per value of ``by`` (a row column; None: one for everything): requests, successes, cuts,
    failures, bytes, the time from first start to last end, Gbps, the failed share, and TTFB (GETs) and
    latency (successes) as mergeable sketches with their percentiles, all without loading the rows."""
    if by is not None and by not in GROUPABLE:
        raise UsageError(f"--by {by!r} cannot be scanned: choose from {', '.join(GROUPABLE)}")
    con = connect(memory_limit, threads)
    files = parts(paths)
    group = by or "NULL"
    source = f"read_parquet({_listed(files)}, union_by_name = true)"
    # Three scans, each of the columns it needs: faster here than one scan with three grouping sets.
    totals = con.execute(f"""
        SELECT {group} AS grp, count(*), count(*) FILTER (WHERE {OK}), count(*) FILTER (WHERE {CUT}),
               sum(bytes), min(t_start), max(t_start + total_s)
        FROM {source} GROUP BY grp ORDER BY grp""").fetchall()
    sketches = {}
    for name, value, where in (("ttfb_ms", "ttfb_s * 1000", f"{FIRST_BYTE} AND op = '{OPS[OP_GET]}'"),
                               ("latency_ms", "total_s * 1000", OK)):
        found = con.execute(f"SELECT {group} AS grp, {bucket_key_sql(value)} AS k, count(*) FROM {source} "
                            f"WHERE {where} GROUP BY grp, k").fetchall()
        for grp, key, count in found:
            sketch = sketches.setdefault((grp, name), Sketch())
            if key <= ZERO_KEY:
                sketch.zeros += count
            else:
                sketch.add_counts([key], [count])
    con.close()
    out = []
    for grp, requests, ok, cut, nbytes, first, last in totals:
        wall = max((last or 0.0) - (first or 0.0), 1e-9)
        failed = requests - ok - cut
        ttfb = sketches.get((grp, "ttfb_ms"), Sketch())
        latency = sketches.get((grp, "latency_ms"), Sketch())
        p50, p90, p99, p999 = ttfb.percentiles([50, 90, 99, 99.9])
        out.append({**({by: grp} if by else {}), "requests": requests, "ok_requests": ok, "cut_requests": cut,
                    "error_requests": failed, "error_share": failed / requests if requests else float("nan"),
                    "bytes": int(nbytes or 0), "wall_s": wall, "gbps": (nbytes or 0) * 8 / wall / 1e9,
                    "ttfb_ms_p50": p50, "ttfb_ms_p90": p90, "ttfb_ms_p99": p99, "ttfb_ms_p999": p999,
                    "latency_ms_p50": latency.quantile(0.5), "latency_ms_p99": latency.quantile(0.99),
                    "sketches": {"ttfb_ms": ttfb.to_json(), "latency_ms": latency.to_json()}})
    return out


def timeline(paths: Sequence[str | Path], *, bin_s: float = 1.0, memory_limit: str = "1GB",
             threads: int | None = None) -> list[tuple[float, float, int]]:
    """(second from the first start, Gbps, failed requests) per ``bin_s``: each request's bytes counted in the
    bin where it ended (the loaded path, ``stats.throughput_timeline``, spreads them over its transfer)."""
    con = connect(memory_limit, threads)
    rows = con.execute(f"""
        WITH r AS (SELECT bytes, t_start + total_s AS t_end, {OK} AS ok, {CUT} AS cut
                   FROM read_parquet(?, union_by_name = true)),
             t0 AS (SELECT min(t_end) AS t FROM r)
        SELECT floor((t_end - t0.t) / {bin_s!r}) AS b, sum(bytes), count(*) FILTER (WHERE NOT ok AND NOT cut)
        FROM r, t0 GROUP BY b ORDER BY b""", [parts(paths)]).fetchall()
    con.close()
    return [(float(b) * bin_s, float(n) * 8 / bin_s / 1e9, int(f)) for b, n, f in rows if b is not None]


def scan_summary(paths: Sequence[str | Path], *, memory_limit: str = "1GB", threads: int | None = None) -> dict:
    """A summary ``format_summary`` prints, from a scan: the totals, TTFB from the sketches (within 0.5 %), and
    the counts by status, S3 error and libcurl error.  What a scan cannot know is NaN (the client's CPU, the
    round trip), never 0."""
    summary = scan(paths, memory_limit=memory_limit, threads=threads)[0]
    con = connect(memory_limit, threads)
    files = parts(paths)

    def counts(sql: str) -> dict:
        return {key: n for key, n in con.execute(sql, [files]).fetchall() if key is not None}

    statuses = counts(f"SELECT status, count(*) FROM read_parquet(?, union_by_name = true) WHERE NOT {CUT} "
                      "GROUP BY status ORDER BY status")
    curl = counts(f"SELECT curl_code, count(*) FROM read_parquet(?, union_by_name = true) WHERE curl_code != 0 "
                  f"AND curl_code != {CUT_CURL_CODE} GROUP BY curl_code ORDER BY curl_code")
    s3 = counts("SELECT CAST(s3_error AS VARCHAR), count(*) FROM read_parquet(?, union_by_name = true) "
                "WHERE s3_error IS NOT NULL AND CAST(s3_error AS VARCHAR) != '' GROUP BY 1 ORDER BY 1")
    con.close()
    nan = float("nan")
    return {**summary, "requests_per_s": (summary["requests"] - summary["cut_requests"]) / summary["wall_s"],
            "status_counts": {str(k): v for k, v in statuses.items()},
            "curl_error_counts": {f"{k} {curl_error_text(k)}": v for k, v in curl.items()},
            "s3_error_counts": s3, "rtt_ms": nan, "ttfb_over_rtt": nan, "client_cpu_s": nan,
            "client_cpu_s_per_gib": nan, "scanned": True}

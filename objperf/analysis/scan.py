"""Datasets too large to load, summarised where they lie: DuckDB scans the parquet parts (only the columns
asked for, every core, within ``memory_limit``) and hands back per-group counts, sums and latency sketches
(``objperf.analysis.sketch``): a billion rows become a few thousand numbers.  The rules that say which rows
succeeded, were cut or failed are ``objperf.core.schema``'s, written as SQL here and held to them by a test."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from objperf.analysis.record import Summary
from objperf.analysis.sketch import ZERO_KEY, Sketch, bucket_key_sql
from objperf.analysis.summary import keys_figures, rate_figures
from objperf.core.errors import UsageError
from objperf.core.schema import (
    COLUMNS,
    CUT_CURL_CODE,
    DIRECTIONS,
    KEYED_OPS,
    METADATA_OPS,
    OP_GET,
    OPS,
    curl_error_text,
)
from objperf.dataset.layout import MANIFEST, ROWS_DIR

if TYPE_CHECKING:
    import pandas as pd

OK = "(curl_code = 0 AND status >= 200 AND status < 300)"
CUT = f"(curl_code = {CUT_CURL_CODE} AND status < 300)"
WRITE_OP_NAMES = frozenset(OPS[code] for code in DIRECTIONS["write"])
WRITE_OPS = ", ".join(f"'{name}'" for name in sorted(WRITE_OP_NAMES))
FIRST_BYTE = f"((curl_code = 0 OR curl_code = {CUT_CURL_CODE}) AND status >= 200 AND status < 300 AND ttfb_s > 0)"


def parts(paths: Sequence[str | Path]) -> list[str]:
    """The parquet parts of the dataset directories ``paths`` (bundles are loaded whole: unpack one first)."""
    found = []
    for path in map(Path, paths):
        if not (path / ROWS_DIR).is_dir():
            raise UsageError(f"{path}: a dataset directory is scanned where it lies (requests/part-*.parquet); "
                             "unpack a bundle first")
        for part in sorted((path / ROWS_DIR).glob("*.parquet")):
            if not part.resolve().is_relative_to(path.resolve()) or not part.resolve().is_file():
                from objperf.dataset.source import DatasetError

                raise DatasetError(f"{path}: {part.name} is not a file of the dataset")
            found.append(str(part))
    if not found:
        raise UsageError("no parquet parts in " + ", ".join(map(str, paths)))
    return found


def _check_footers(paths: Sequence[str | Path], found: list[str]) -> None:
    """Every part's footer read before DuckDB reads its data: the rows and bytes a part declares within what
    a part of its size holds, and a dataset's parts no more rows than its manifest says."""
    import pyarrow.parquet as pq

    from objperf.dataset.source import DatasetError, Source, check_rows, part_rows, row_schema_problem

    for part in found:
        if problem := row_schema_problem(pq.read_schema(part), f"requests/{Path(part).name}"):
            raise DatasetError(f"{', '.join(map(str, paths))}: the rows cannot be scanned ({problem})")
    for path in map(Path, paths):
        mine = [part for part in found if Path(part).parent == path / ROWS_DIR]
        declared = sum(part_rows(Path(part), path, f"requests/{Path(part).name}", loaded=False) for part in mine)
        source = Source(path)
        try:
            manifest = source.manifest() if source.exists(MANIFEST) else {}
        finally:
            source.close()
        check_rows(manifest, declared, path)


def _listed(files: list[str]) -> str:
    """The parts as a SQL list of string literals (a view's definition takes no parameters)."""
    return "[" + ", ".join("'" + name.replace("'", "''") + "'" for name in files) + "]"


def connect(memory_limit: str = "1GB", threads: int | None = None):
    from objperf.core.extras import require

    require("duckdb", "analysing rows where they lie")
    import duckdb

    con = duckdb.connect(config={"memory_limit": memory_limit, **({"threads": threads} if threads else {})})
    con.execute("SET preserve_insertion_order = false")  # order is not needed, and it costs memory
    con.execute("SET enable_progress_bar = false")  # a command's output is its own
    return con


# The columns a scan reads, with the type a part that lacks one reads it as: NULL, a value not held.
READ = {"op": "VARCHAR", "status": "INTEGER", "curl_code": "INTEGER", "bytes": "BIGINT", "length": "BIGINT",
        "t_start": "DOUBLE", "ttfb_s": "DOUBLE", "total_s": "DOUBLE", "s3_error": "VARCHAR"}


@contextlib.contextmanager
def scanning(paths: Sequence[str | Path], memory_limit: str, threads: int | None):
    """A DuckDB connection, the rows of ``paths``' parts as a relation (SQL) that has every column a scan reads
    (a column no part holds, in other tools' imports and older datasets, reads as NULL), the columns the parts
    hold, and the parts.  What DuckDB cannot read (a damaged part, a column of another type) is one line naming
    the datasets."""
    import duckdb

    from objperf.core.sanitize import printable
    from objperf.dataset.source import DatasetError

    files = parts(paths)
    try:
        present = set().union(*(_columns(part) for part in files))
    except OSError as exc:
        raise DatasetError(f"{', '.join(map(str, paths))}: a part cannot be read ({printable(exc)})") from None
    _check_footers(paths, files)
    missing = [f"NULL::{kind} AS {name}" for name, kind in READ.items() if name not in present]
    relation = f"read_parquet({_listed(files)}, union_by_name = true)"
    con = connect(memory_limit, threads)
    try:
        yield con, f"(SELECT *, {', '.join(missing)} FROM {relation})" if missing else relation, present, files
    except duckdb.Error as exc:
        detail = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        raise DatasetError(f"{', '.join(map(str, paths))}: the rows cannot be scanned ({detail})") from None
    finally:
        con.close()


def _columns(part: str) -> set[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return set(pq.read_schema(part).names)
    except pa.ArrowException as exc:
        raise OSError(str(exc).splitlines()[0] if str(exc) else "not a parquet file") from None


def scan(paths: Sequence[str | Path], *, by: str | None = None, memory_limit: str = "1GB",
         threads: int | None = None) -> list[dict]:
    """One summary per value of ``by`` (None: one for everything): requests, successes, cuts, failures, bytes,
    the time from first start to last end, Gbps, the failed share, TTFB (GETs) and latency (successes) as
    mergeable sketches with their percentiles, and requests by HTTP status and libcurl code, all without loading
    the rows.  ``by`` is a column the rows hold (a study's rows hold its grid: the concurrency curve), else a
    workload setting each dataset's manifest records (``analysis.saved.SETTINGS``)."""
    return _in_order(_scanned(paths, by, memory_limit, threads), by)


def groups_table(groups: list[dict], by: str) -> pd.DataFrame:
    """``scan``'s groups as a table: the columns a loaded analysis's groups have (``analysis.saved.grouped``),
    the same figures, then every other figure the scan has of each group but its sketches."""
    import pandas as pd

    from objperf.analysis.saved import GROUP_COLUMNS

    rows = [{"failed": g["error_requests"], **{k: v for k, v in g.items() if k != "sketches"}} for g in groups]
    table = pd.DataFrame(rows)
    if table.empty:
        return pd.DataFrame(columns=[by, *GROUP_COLUMNS])
    return table[[by, *GROUP_COLUMNS, *(c for c in table.columns if c not in (by, *GROUP_COLUMNS))]]


def _in_order(found: dict, by: str | None) -> list[dict]:
    return [{**({by: grp} if by else {}), **group.summary()} for grp, group in found.items()]


def _sorted(found: dict) -> dict:
    """Groups in the order of their values: numbers, then words, then the group of no value."""
    return {grp: found[grp] for grp in sorted(found, key=lambda g: (g is None, g if isinstance(g, (int, float))
                                                                       else str(g)))}


def _scanned(paths: Sequence[str | Path], by: str | None, memory_limit: str, threads: int | None) -> dict:
    """``scan``'s groups (_Group) by value of ``by``, in order (``size``: smallest first, as loaded)."""
    from objperf.analysis.saved import SETTINGS, SIZE

    with scanning(paths, memory_limit, threads) as (con, source, present, files):
        if by == SIZE and SIZE not in present:  # as loaded: a column of that name is grouped as it is
            group, label = _size_group(con, source, present)
            found = _grouped(con, source, files, group, None)
            return {label(key): found[key] for key in sorted(found, key=lambda k: (k < 0, k))}
        if by is None or by in present or (by in COLUMNS and by not in SETTINGS):  # a row column no part holds
            column = by if by in present else None  # is one group: not measured
            group = '"' + by.replace('"', '""') + '"' if column else None
            return _sorted(_grouped(con, source, files, group, column))
    return _sorted(_scanned_by_setting(paths, by, memory_limit, threads))


def _grouped(con, source: str, files: list[str], group: str | None, column: str | None) -> dict:
    """The groups (_Group) of the rows by the SQL expression ``group``: the column ``column``, or (``column``
    None) an expression of each row; None: every row in one group, None."""
    # Two scans.  Every row's latency bucket is grouped with its status and code, so that one scan gives the
    # totals, the latency sketch and the counts by status and code (a few thousand groups; which of them are
    # successes, whose buckets make the sketch, is told from the status and code of each); TTFB, of GETs only,
    # is the other.  The span (first start, last end) of each group comes from the parts' statistics where
    # every row group holds one group (the whole; a cluster host's parts), and the row groups that may
    # hold the last end: 0.3 s, where min and max over every row took 1.2.  The statistics also say whether any
    # latency is negative: where none is, the bucket key is taken with no test a row.  On 200 M rows the whole
    # summary takes 3.8 s, where three scans alone took 7.1.  The groups of an expression take their spans
    # from the rows, in the first scan.
    known = _statistics(files, column)
    spans = None if known is None or (group is not None and column is None) else \
        _spans_of(con, source, group if column else None, known)
    group = group or "NULL"
    rows = con.execute(f"""
        SELECT {group} AS grp, {_latency_key(known is not None and _least_total(known) >= 0)} AS k,
               op, status, curl_code, count(*), sum(bytes),
               sum(length) FILTER (WHERE op IN ({", ".join(f"'{op}'" for op in KEYED_OPS)})),
               {"min(t_start), max(t_start + total_s)" if spans is None else "NULL, NULL"}
        FROM {source} GROUP BY ALL""").fetchall()
    first_bytes = con.execute(f"""
        SELECT {group} AS grp, {bucket_key_sql('ttfb_s', scale=1000)} AS k, count(*) FROM {source}
        WHERE {FIRST_BYTE} AND op = '{OPS[OP_GET]}' GROUP BY ALL""").fetchall()
    found: dict = {}
    for grp, key, op, status, code, count, nbytes, keys, first, last in rows:
        found.setdefault(grp, _Group()).add_row(key, op, status, code, count, nbytes, first, last, keys)
    for grp, key, count in first_bytes:
        found.setdefault(grp, _Group()).ttfb.add_key(key, count)
    if spans is not None and not set(found) <= set(spans):  # a value the statistics name otherwise
        spans = dict((grp, (first, last)) for grp, first, last in con.execute(
            f"SELECT {group}, min(t_start), max(t_start + total_s) FROM {source} GROUP BY ALL").fetchall())
    for grp, (first, last) in (spans or {}).items():
        if grp in found:
            found[grp].first, found[grp].last = first, last
    return found


def _size_group(con, source: str, present: set[str]) -> tuple[str, Callable[[int], str]]:
    """``--by size`` as SQL: each row's group key (its object's size, or the power of two it lies in, as
    ``analysis.saved.size_groups`` chooses for these rows; -1 for a size not known), and each key's label."""
    from objperf.analysis.saved import EXACT_SIZES, exact_sizes, size_label

    if "object_size" not in present:
        raise UsageError("--by size: these rows hold no object size (a dataset from before objperf recorded it); "
                         "analyse it loaded, without --scan: loading recovers the sizes from its manifest")
    size = "TRY_CAST(object_size AS BIGINT)"  # a size that is no whole number (a file may say anything): unknown
    known = [n for (n,) in con.execute(f"SELECT DISTINCT {size} AS n FROM {source} WHERE n >= 0 "
                                       f"LIMIT {EXACT_SIZES + 1}").fetchall()]
    exact = exact_sizes(known)
    if exact:
        return f"coalesce(CASE WHEN {size} >= 0 THEN {size} END, -1)", lambda key: size_label(key, exact=True)
    # the power of two at or below the size, from its log corrected to the exact integer
    low = f"(1::BIGINT << CAST(floor(log2({size})) AS INTEGER))"
    power = f"CASE WHEN {low} > {size} THEN {low} >> 1 WHEN {low} <= {size} >> 1 THEN {low} << 1 ELSE {low} END"
    return (f"coalesce(CASE WHEN {size} > 0 THEN {power} WHEN {size} = 0 THEN 0 END, -1)",
            lambda key: size_label(key, exact=False))


def _scanned_by_setting(paths: Sequence[str | Path], by: str, memory_limit: str, threads: int | None) -> dict:
    """``scan``'s groups by a workload setting no row holds: each dataset scanned whole and put in the group
    of the value its manifest records; a group of several datasets spans from the first start to the last end."""
    from objperf.analysis.saved import SETTINGS, workload_settings
    from objperf.dataset.directory import read_manifest

    if by not in SETTINGS:
        raise UsageError(f"--by {by!r} is neither a column of the rows nor a workload setting "
                         f"({', '.join(SETTINGS)}): it cannot be scanned")
    values = {path: workload_settings(read_manifest(path))[by] for path in paths}  # all read before any row
    found: dict = {}
    for path, value in values.items():
        for group in _scanned([path], None, memory_limit, threads).values():
            found.setdefault(value, _Group()).merge(group)
    return found


def _latency_key(no_negative: bool) -> str:
    """A row's latency bucket (milliseconds), counted as ``Sketch.add`` counts it: a zero or a negative latency
    as a zero, a NULL or NaN one left out.  ``no_negative``: the parts' statistics say no latency is below 0."""
    if no_negative:
        return bucket_key_sql("total_s", scale=1000, zero_or_more=True)
    return f"CASE WHEN total_s <= 0 THEN '-inf'::DOUBLE ELSE {bucket_key_sql('total_s', scale=1000)} END"


class _Known(NamedTuple):
    """What the parts' row-group statistics say of every row of a group."""

    first: float  # the least start
    latest: float  # the latest start: no row ends before it
    longest: float  # the longest request
    least_total: float  # the least latency


def _least_total(known: dict) -> float:
    return min(group.least_total for group in known.values())


def _spans_of(con, source: str, group: str | None, known: dict) -> dict:
    """Each group's (first start, last end): the first start from the statistics, the last end from the rows
    that started within the group's longest request of its latest start (only they can end last)."""
    starts = {value: group_known.latest - max(group_known.longest, 0.0) for value, group_known in known.items()}
    if group is None:
        lasts = {None: con.execute(f"SELECT max(t_start + total_s) FROM {source} WHERE t_start >= ?",
                                   [starts[None]]).fetchone()[0]}
    else:  # one scan of the rows past the earliest of those starts (row groups before it are skipped)
        lasts = dict(con.execute(f"""
            SELECT s.{group}, max(s.t_start + s.total_s) FROM {source} AS s
            JOIN (SELECT unnest(?) AS value, unnest(?) AS since) AS g ON s.{group} = g.value
            WHERE s.t_start >= ? AND s.t_start >= g.since GROUP BY ALL""",
                                     [list(starts), list(starts.values()), min(starts.values())]).fetchall())
    return {value: (k.first, k.latest if lasts.get(value) is None else max(lasts[value], k.latest))
            for value, k in known.items()}


def _statistics(files: list[str], by: str | None = None) -> dict | None:
    """What the parts' row-group statistics say of each group of ``by`` (None: of every row, as one group
    None), as _Known; None where a part or row group has none, or holds more than one value of ``by`` (the
    scan then reads every row for the spans, and tests every latency before its log)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    found: dict = {}
    try:
        for name in files:
            with pq.ParquetFile(name) as parquet:
                meta = parquet.metadata
                paths = [meta.schema.column(i).path for i in range(meta.num_columns)]
                wanted = ["t_start", "total_s", *([by] if by else [])]
                if not all(column in paths for column in wanted):
                    return None
                at = [paths.index(column) for column in wanted]
                for index in range(meta.num_row_groups):
                    group = meta.row_group(index)
                    if group.num_rows == 0:
                        continue
                    stats = [group.column(i).statistics for i in at]
                    if not all(s is not None and s.has_min_max for s in stats):
                        return None
                    starts, totals = stats[:2]
                    value = None
                    if by:
                        held = stats[2]
                        if held.min != held.max or not held.has_null_count or held.null_count:
                            return None
                        value = held.min
                        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                            return None
                    mine = found.get(value)
                    found[value] = _Known(starts.min, starts.max, totals.max, totals.min) if mine is None else \
                        _Known(min(mine.first, starts.min), max(mine.latest, starts.max),
                               max(mine.longest, totals.max), min(mine.least_total, totals.min))
    except (pa.ArrowException, OSError, ValueError):  # a damaged part: the scan itself says what is wrong
        return None
    return found or None


class _Group:
    """One group's scanned counts, as the rows of its GROUP BY come."""

    def __init__(self):
        self.requests = self.ok = self.cut = self.bytes = 0
        self.sent_bytes: int | None = None  # writes' bytes sent, where the group holds writes
        self.first, self.last = float("inf"), float("-inf")
        self.latency, self.ttfb = _Buckets(), _Buckets()
        self.statuses: dict[int, int] = {}
        self.codes: dict[int, int] = {}
        self.ops: dict[str, _Op] = {}

    def merge(self, other: _Group) -> None:
        """Count ``other``'s requests in this group too."""
        self.requests, self.ok, self.cut = self.requests + other.requests, self.ok + other.ok, self.cut + other.cut
        self.bytes += other.bytes
        if other.sent_bytes is not None:
            self.sent_bytes = (self.sent_bytes or 0) + other.sent_bytes
        self.first, self.last = min(self.first, other.first), max(self.last, other.last)
        self.latency.sketch.merge(other.latency.sketch)
        self.ttfb.sketch.merge(other.ttfb.sketch)
        for mine, theirs in ((self.statuses, other.statuses), (self.codes, other.codes)):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + count
        for name, op in other.ops.items():
            self.ops.setdefault(name, _Op()).merge(op)

    def add_row(self, key, op, status, code, count: int, nbytes, first, last, keys=None) -> None:
        write = op in WRITE_OP_NAMES
        self.requests += count
        self.first = min(self.first, first) if first is not None else self.first
        self.last = max(self.last, last) if last is not None else self.last
        ok = code == 0 and status is not None and 200 <= status < 300
        cut = code == CUT_CURL_CODE and status is not None and status < 300
        if write:  # of writes only what the store acknowledged counts, as in a run's own summary
            self.sent_bytes = (self.sent_bytes or 0) + int(nbytes or 0)
        if ok or (cut and not write):  # as a run's own summary counts (objperf.analysis.summary.Tally)
            self.bytes += int(nbytes or 0)
        self.ok, self.cut = self.ok + count * ok, self.cut + count * cut
        if ok:
            self.latency.add_key(key, count)
        if op is not None:  # each op apart, shown where one moves no body, as a run's own summary counts them
            mine = self.ops.setdefault(op, _Op())
            mine.requests, mine.ok, mine.cut = mine.requests + count, mine.ok + count * ok, mine.cut + count * cut
            if op in KEYED_OPS:
                mine.keys = (mine.keys or 0) + (int(keys or 0) if ok else 0)
            if ok:
                mine.latency.add_key(key, count)
        if not cut and status is not None:
            self.statuses[status] = self.statuses.get(status, 0) + count
        if code is not None and code not in (0, CUT_CURL_CODE):
            self.codes[code] = self.codes.get(code, 0) + count

    def summary(self) -> dict:
        wall = max(self.last - self.first, 1e-9) if self.last >= self.first else 1e-9
        failed = self.requests - self.ok - self.cut
        ttfb, latency = self.ttfb.sketch, self.latency.sketch
        p50, p90, p99, p999 = ttfb.percentiles([50, 90, 99, 99.9])
        return {"requests": self.requests, "ok_requests": self.ok, "cut_requests": self.cut, "error_requests": failed,
                "error_share": failed / self.requests if self.requests else float("nan"),
                **rate_figures(self.bytes, wall),
                **(rate_figures(self.sent_bytes, wall, "sent_") if self.sent_bytes is not None else {}),
                "wall_s": wall, "requests_per_s": (self.requests - self.cut) / wall, "ttfb_ms_p50": p50,
                "ttfb_ms_p90": p90,
                "ttfb_ms_p99": p99, "ttfb_ms_p999": p999, "latency_ms_p50": latency.quantile(0.5),
                "latency_ms_p99": latency.quantile(0.99),
                "sketches": {"ttfb_ms": ttfb.to_json(), "latency_ms": latency.to_json()},
                "status_counts": dict(sorted(self.statuses.items())), "curl_codes": dict(sorted(self.codes.items())),
                **({"ops": {name: op.figures(wall) for name, op in sorted(self.ops.items(), key=_op_order)}}
                   if set(self.ops) & set(METADATA_OPS) else {})}


def _op_order(item) -> int:
    return OPS.index(item[0]) if item[0] in OPS else len(OPS)


class _Op:
    """One op's scanned counts, for the ops that move no body (METADATA_OPS)."""

    def __init__(self):
        self.requests = self.ok = self.cut = 0
        self.keys: int | None = None  # a keyed op's (KEYED_OPS) keys, of the rows that succeeded
        self.latency = _Buckets()

    def merge(self, other: _Op) -> None:
        self.requests, self.ok, self.cut = self.requests + other.requests, self.ok + other.ok, self.cut + other.cut
        if other.keys is not None:
            self.keys = (self.keys or 0) + other.keys
        self.latency.sketch.merge(other.latency.sketch)

    def figures(self, wall: float) -> dict:
        p50, p90, p99 = self.latency.sketch.percentiles([50, 90, 99])
        return {"requests": self.requests, "failed": self.requests - self.ok - self.cut, "cut": self.cut,
                "requests_per_s": (self.requests - self.cut) / wall, "latency_ms_p50": p50,
                "latency_ms_p90": p90, "latency_ms_p99": p99, **keys_figures(self.keys, wall)}


class _Buckets:
    """A sketch from bucket keys DuckDB computed (``bucket_key_sql``): a key at or below ZERO_KEY (-inf for 0)
    counts as a zero, a key that is no number (NaN, infinite: a latency not measured) is left out, as
    ``Sketch.add`` leaves such values out."""

    def __init__(self):
        self.sketch = Sketch()

    def add_key(self, key, count: int) -> None:
        if key is None or key != key or key == float("inf"):
            return
        if key <= ZERO_KEY:
            self.sketch.zeros += count
        else:
            self.sketch.add_counts([int(key)], [count])


def timeline(paths: Sequence[str | Path], *, bin_s: float = 1.0, memory_limit: str = "1GB",
             threads: int | None = None) -> list[tuple[float, float, int]]:
    """(second from the first start, Gbps, failed requests) per ``bin_s``, the loaded timeline's numbers
    (``stats.throughput_timeline``): each request's bytes spread evenly from its first byte to its end (those
    a summary counts: a read's received, a write's only where the store acknowledged it, a failure's none), and
    each failed request counted in the bin where it ended.

    One scan, and no row in memory: requests are grouped by the bins of their first byte and of their end (a
    few groups a bin), and each group's sums place its bytes: all in its bin where both lie in one, else the
    part before the first bin's end, the part after the last bin's start, and the rate in every bin between."""
    with scanning(paths, memory_limit, threads) as (con, source, _, files):
        known = _statistics(files)
        t0 = known[None].first if known is not None else \
            con.execute(f"SELECT min(t_start) FROM {source}").fetchone()[0]
        if t0 is None:
            return []
        w = repr(float(bin_s))
        # As the loaded path: no first byte (NULL) is the start.  What needs a test a row is left to the groups:
        # an end before its first byte (a group whose bins run backwards) puts every byte at the first byte.
        groups = con.execute(f"""
            WITH r AS (SELECT t_start - {t0!r} + coalesce(ttfb_s, 0) AS p, t_start - {t0!r} + total_s AS e,
                              CASE WHEN coalesce({OK} OR ({CUT} AND NOT coalesce(op IN ({WRITE_OPS}), false)),
                                                 false) THEN bytes ELSE 0 END AS done,
                              done / (e - p) AS rate, NOT {OK} AND NOT {CUT} AS failed FROM {source})
            SELECT floor(p / {w}) AS bp, floor(e / {w}) AS be, sum(done), sum(rate * ((bp + 1) * {w} - p)),
                   sum(rate * (e - be * {w})), sum(rate), count(*) FILTER (WHERE failed), max(e)
            FROM r GROUP BY bp, be""").fetchall()
    return _binned(groups, bin_s)


def _binned(groups: list[tuple], bin_s: float) -> list[tuple[float, float, int]]:
    """The timeline from ``timeline``'s groups: (first byte's bin, end's bin, bytes, bytes in the first bin,
    bytes in the last, rate, failed, last end)."""
    import numpy as np

    ends = [row[7] for row in groups if row[7] is not None and row[7] == row[7] and abs(row[7]) != float("inf")]
    if not ends:
        return []
    edges = np.arange(0.0, max(max(ends), 0.0) + bin_s, bin_s)  # one bin at least, whatever a file says
    count = max(len(edges) - 1, 1)
    delivered, failed, between = np.zeros(count), np.zeros(count, dtype=np.int64), np.zeros(count + 1)

    def bin_of(index: float) -> int:  # a point before the first start, or on the last edge, in the nearest bin
        return min(max(int(index), 0), count - 1)

    for bp, be, nbytes, head, tail, rate, bad, _ in groups:
        if any(key is None or key != key or abs(key) == float("inf") for key in (bp, be)):
            continue  # a time not measured (NULL, NaN)
        first, last = bin_of(bp), bin_of(be)
        failed[last] += bad
        if first >= last:
            delivered[first] += nbytes or 0
            continue
        delivered[first] += head
        # an end on the last edge (the last end itself, bins of bin_s across) is in the last bin, for all its width
        delivered[last] += tail + (rate * (be - last) * bin_s if be > last else 0.0)
        if last > first + 1:  # the bins strictly between get the rate for their whole width
            between[first + 1] += rate
            between[last] -= rate
    delivered += np.cumsum(between)[:count] * bin_s
    return [(float(edges[i]), float(delivered[i] * 8 / bin_s / 1e9), int(failed[i])) for i in range(count)]


def steady_scanned(paths: Sequence[str | Path], rule=None, *, memory_limit: str = "1GB",
                   threads: int | None = None) -> dict:
    """Where the rows' throughput held (``objperf.analysis.steady.steady_state``), from one scan: the rows
    counted by the sample they ended in, as a loaded summary counts them (the same grid, the same bytes)."""
    import numpy as np

    from objperf.analysis.steady import Samples, SteadyRule, steady_state

    rule = rule or SteadyRule()
    s = repr(float(rule.sample_s))
    with scanning(paths, memory_limit, threads) as (con, source, _, _):
        groups = con.execute(f"""
            WITH r AS (SELECT t_start, t_start + total_s AS e,
                              CASE WHEN coalesce({OK} OR ({CUT} AND NOT coalesce(op IN ({WRITE_OPS}), false)),
                                                 false) THEN bytes ELSE 0 END AS done,
                              coalesce({OK}, false) AS ok
                       FROM {source} WHERE isfinite(t_start) AND isfinite(t_start + total_s))
            SELECT floor(e / {s}), sum(done), count(*) FILTER (WHERE ok), min(t_start), max(e)
            FROM r GROUP BY 1""").fetchall()
    samples = Samples(rule.sample_s)
    if groups:
        index, nbytes, ok, first, last = (np.array(column, dtype=float) for column in zip(*groups))
        samples.add_binned(index, nbytes, ok, first_start=float(first.min()), last_end=float(last.max()))
    return steady_state(samples, rule)


def scan_summary(paths: Sequence[str | Path], *, memory_limit: str = "1GB", threads: int | None = None) -> Summary:
    """A summary ``format_summary`` prints, from a scan: the totals, TTFB from the sketches (within 0.5 %), and
    the counts by status, S3 error and libcurl error.  What a scan cannot know is NaN (the client's CPU, the
    round trip), never 0."""
    return scan_summary_by(paths, None, memory_limit=memory_limit, threads=threads)[0]


def scan_summary_by(paths: Sequence[str | Path], by: str | None, *, memory_limit: str = "1GB",
                    threads: int | None = None, steady=None) -> tuple[dict, list[dict]]:
    """``scan_summary`` and ``scan``'s groups of ``by`` (None: no group) from one scan of the rows: the summary
    is its groups merged, as sketches, counts and spans merge exactly.  Its steady state is judged by ``steady``
    (a ``SteadyRule``; None: the default), as a loaded summary's."""
    found = _scanned(paths, by, memory_limit, threads)
    whole = _Group()
    for group in found.values():
        whole.merge(group)
    summary = whole.summary()
    with scanning(paths, memory_limit, threads) as (con, source, present, _):
        s3 = {} if "s3_error" not in present else {key: n for key, n in con.execute(
            f"SELECT CAST(s3_error AS VARCHAR), count(*) FROM {source} WHERE s3_error IS NOT NULL "
            "AND CAST(s3_error AS VARCHAR) != '' GROUP BY 1 ORDER BY 1").fetchall() if key is not None}
    statuses, curl = summary.pop("status_counts"), summary.pop("curl_codes")
    nan = float("nan")
    return {**summary, "requests_per_s": (summary["requests"] - summary["cut_requests"]) / summary["wall_s"],
            "status_counts": {str(k): v for k, v in statuses.items()},
            "curl_error_counts": {f"{k} {curl_error_text(k)}": v for k, v in curl.items()},
            "s3_error_counts": s3, "rtt_ms": nan, "ttfb_over_rtt": nan, "client_cpu_s": nan,
            "client_cpu_s_per_gib": nan, "scanned": True,
            "steady": steady_scanned(paths, steady, memory_limit=memory_limit, threads=threads)}, \
        (_in_order(found, by) if by else [])


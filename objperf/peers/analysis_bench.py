"""The bench's analysis row: how long loading a study dataset of millions of rows and computing its
concurrency curve takes (``objperf bench --op analysis``)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from objperf.peers.tables import median


def bench_analysis(rows: int) -> str:
    """Time loading ``rows`` rows of a study dataset and computing its concurrency curve."""
    import numpy as np
    import pyarrow as pa

    from objperf.analysis.stats import concurrency_curve
    from objperf.core.schema import empty_columns
    from objperf.dataset.directory import load, rows_to_table
    from objperf.dataset.writer import DatasetWriter

    grid = np.array([1, 2, 4, 8, 16, 32, 64, 128])
    with tempfile.TemporaryDirectory(prefix="objperf-bench-rows-") as tmp:
        writer = DatasetWriter(Path(tmp) / "study", {"kind": "study"})
        chunk = 1_000_000
        rng = np.random.default_rng(1)
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            index = np.arange(start, start + n)
            concurrency = grid[index * len(grid) // rows]
            cols = empty_columns(n)
            cols["slot"][:] = index % concurrency
            cols["thread"][:] = cols["slot"] % 2
            cols["op"][:] = 0
            cols["bytes"][:] = cols["length"][:] = 8 << 20
            cols["status"][:] = 206
            cols["t_start"][:] = 1.8e9 + index * 0.001
            cols["ttfb_s"][:] = rng.uniform(0.01, 0.05, n)
            cols["total_s"][:] = cols["ttfb_s"] + rng.uniform(0.05, 0.2, n)
            table = rows_to_table(cols, run_id="bench", host="bench", buckets=["b"], keys=["k"])
            writer.append(table.append_column("concurrency", pa.array(concurrency)))
        writer.close("complete")
        timings = []
        for _ in range(3):
            t0 = time.perf_counter()
            data = load(Path(tmp) / "study", columns=["concurrency", "thread", "slot", "t_start", "ttfb_s",
                                                       "total_s", "bytes"])
            t1 = time.perf_counter()
            curve = concurrency_curve(data)
            t2 = time.perf_counter()
            timings.append((t1 - t0, t2 - t1))
        load_s, curve_s = (median([t[i] for t in timings]) for i in (0, 1))
    return (f"objperf bench analysis: {rows:,} rows, {len(curve)} grid points, median of 3: load {load_s:.2f} s + "
            f"concurrency curve {curve_s:.2f} s = {load_s + curve_s:.2f} s (goal: under 2 s)")

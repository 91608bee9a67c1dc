"""The options of ``objperf push``: a dataset, and where in a store it goes."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.options.groups import TargetOptions
from objperf.options.kinds import PATH
from objperf.options.spec import option


@dataclass(kw_only=True)
class PushOptions(TargetOptions):
    path: str = option(None, "the dataset or study directory to push", PATH, positional=True, required=True,
                       metavar="DIR")
    url: str = option(None, "s3://BUCKET/PREFIX/ it goes under (objperf.load reads it back from there)",
                      positional=True, required=True)

"""What the paths given to ``objperf report`` hold, loaded once: a single run, a study, or several datasets
(runs compared); their rows, manifests and the summary ``objperf analyze`` prints for the same paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


@dataclass
class Material:
    """The datasets of one report: ``kind`` is ``run``, ``study`` or ``runs`` (several, compared)."""

    kind: str
    paths: list[str]
    labels: list[str]
    rows: pd.DataFrame
    manifests: list[dict]
    summary: dict
    steps: pd.DataFrame | None = None
    extra: dict = field(default_factory=dict)

    @property
    def manifest(self) -> dict:
        return self.manifests[0]


def label_of(given: str) -> str:
    """A dataset's name as the page shows it: the last part of what was given (a path, an s3:// URL)."""
    return Path(given.rstrip("/")).name or given


def gather(paths: list[str | Path], labels: list[str] | None = None) -> Material:
    """Load local datasets (directories or bundles) and summarise them as ``objperf analyze`` does: a single run
    whole, as it ended (``whole_run``); a study or several datasets from their rows."""
    from objperf.analysis.saved import summary_of, whole_run
    from objperf.dataset.directory import load, read_manifest

    paths = [str(p) for p in paths]
    labels = labels or [label_of(p) for p in paths]
    manifests = [read_manifest(p) for p in paths]  # a path that is no dataset says so before any row is read
    rows = load(paths if len(paths) > 1 else paths[0])
    if not len(rows):
        from objperf.core.errors import UsageError

        raise UsageError(f"{', '.join(paths)}: no request rows to report")
    if len(paths) > 1:
        return Material("runs", paths, labels, rows, manifests, summary_of(rows))
    if manifests[0].get("kind") == "study":
        from objperf.dataset.directory import load_steps

        return Material("study", paths, labels, rows, manifests, summary_of(rows),
                        steps=load_steps(paths[0]))
    return Material("run", paths, labels, rows, manifests, whole_run(rows))

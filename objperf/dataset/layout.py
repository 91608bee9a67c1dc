"""Where a dataset's files go, and the check that a new one starts in an empty place.  Free of pyarrow, so
a run that keeps no rows never loads it (``objperf.dataset.directory`` writes and reads the files)."""

from __future__ import annotations

from pathlib import Path

from objperf.core.errors import UsageError

MANIFEST = "manifest.json"
ROWS_DIR = "requests"
SAMPLES_DIR = "samples"  # samples/nic/*.parquet, samples/cpu/*.parquet


def check_new_dataset(path: str | Path) -> Path:
    """``path`` as the place of a new dataset: refused in one line if it exists and is not an empty
    directory (another run's dataset, a killed run's parts, foreign files: nothing gets mixed)."""
    path = local_place(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path} is a file, not a directory; choose another --out")
    if path.is_dir() and any(path.iterdir()):
        what = "already holds a dataset" if (path / MANIFEST).exists() else "is not empty"
        raise UsageError(f"{path} {what}; choose another --out or remove it")
    return path


def local_place(path: str | Path) -> Path:
    """``path`` as a place on this machine: an ``s3://`` URL is refused in one line where only a directory will do
    (else it would become a directory named ``s3:``)."""
    if str(path).startswith("s3://"):
        raise UsageError(f"{path}: only fetch, put and mixed write their datasets straight to a store; write this "
                         "one to a directory and share it with objperf push")
    return Path(path)

"""``python -m objperf.commands.sample [DIR]`` — the shipped sample (``data/sample``) made again with today's code:
every study with ``--quick`` and the client comparison, on one embedded SeaweedFS, each into ``DIR/NAME``.
The old sample is replaced only once every new dataset is complete.  ``tests/test_sample.py`` fails when the
shipped sample no longer matches what the code writes, and names this command."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from objperf.studies.catalog import STUDIES

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "data" / "sample"
COMPARE = {"size": "100MiB", "repeat": 5}  # the S3-vs-R2 article's object and rounds
# The hot-object study throttles the shared server's reads per bucket: it runs last.
ORDER = sorted(STUDIES, key=lambda name: name == "hot-object")


def regenerate(where: str | Path = DEFAULT_DIR, *, say: Callable[[str], None] = print) -> Path:
    from objperf import api

    where = Path(where)
    fresh = where.with_name(where.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    with api.local_server():
        api.compare(out=fresh / "compare", progress=False, **COMPARE)
        say(f"compare: {fresh / 'compare'}")
        for name in ORDER:
            run = api.study(name, quick=True, out=fresh / name, progress=False)
            if run.status != "complete":
                raise SystemExit(f"{name} ended {run.status}: the sample is left as it was")
            say(f"{name}: {fresh / name}")
    shutil.rmtree(where, ignore_errors=True)
    fresh.rename(where)
    return where


if __name__ == "__main__":
    print(f"sample written to {regenerate(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR)}")

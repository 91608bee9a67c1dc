"""One host's part of a run, as a picklable call: what a command runs here and what every worker of a
cluster runs (``index`` is the worker's place in the cluster, None on a single host).  The target is
resolved where the job runs, so each host signs its own URLs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from objperf.dataset.destination import Destination
from objperf.plan.reads import ReadWorkload
from objperf.plan.writes import WriteWorkload, on_host
from objperf.run.recorder import RunResult
from objperf.s3.client import URL_LIFETIME_S, S3Settings
from objperf.s3.target import ResolvedTarget

Out = Destination | str | Path | None  # where a job's rows go (``Destination.of`` settles it)


@dataclass(frozen=True)
class ReadSource:
    """What to read, before it is resolved (HEAD, listing, presigned URLs)."""

    url: str
    settings: S3Settings
    keys: list[str] | int | None = None
    buckets: list[str] = field(default_factory=list)
    url_lifetime: int = URL_LIFETIME_S

    def resolve(self, *, sign: bool = True) -> ResolvedTarget:
        from objperf.s3.target import resolve_read_target

        return resolve_read_target(self.url, self.settings, keys=self.keys, buckets=self.buckets,
                                   url_lifetime=self.url_lifetime, sign=sign)


def read_job(source: ReadSource, workload: ReadWorkload, out: Out, *, index: int | None = None,
             on_progress=None, keep_rows: bool = True) -> RunResult:
    from objperf.run.reads import run_read

    return run_read(source.resolve(), workload, out=out, on_progress=on_progress, keep_rows=keep_rows)


def write_job(settings: S3Settings, workload: WriteWorkload, create_buckets: bool, out: Out, *,
              index: int | None = None, on_progress=None, keep_rows: bool = True) -> RunResult:
    from objperf.run.writes import run_write

    return run_write(settings, on_host(workload, index), out=out, on_progress=on_progress,
                     create_buckets=create_buckets, keep_rows=keep_rows)


def mixed_job(source: ReadSource, reads: ReadWorkload, writes: WriteWorkload, create_buckets: bool,
              out: Out, *, index: int | None = None, on_progress=None, keep_rows: bool = True) -> RunResult:
    from objperf.run.writes import run_mixed

    return run_mixed(source.resolve(), reads, source.settings, on_host(writes, index), out=out,
                     on_progress=on_progress, create_buckets=create_buckets, keep_rows=keep_rows)


def reads_together_job(pairs: list[tuple[ReadSource, ReadWorkload]], out: Out, *,
                       index: int | None = None, on_progress=None) -> RunResult:
    """Several read engines at once, one dataset (the ceiling proof's store beside another stream)."""
    from objperf.run.reads import run_reads_together

    return run_reads_together([(source.resolve(), workload) for source, workload in pairs], out=out)

"""A dataset written straight into a store (``--out s3://BUCKET/PREFIX/``): where it goes, as whom, and for a
cluster host the numbers its parts take so that no two hosts' names meet.  Free of pyarrow: a run that keeps
no rows never loads it (``objperf.dataset.store_writer`` writes the files).

Its layout is a dataset directory's, one object per file: ``manifest.json`` (written "running" before the first
request, and whole at the end), ``requests/part-N.parquet`` and ``samples/KIND/part-N.parquet``.  A single run
numbers its parts 00000, 00001 …; host ``i`` of a cluster numbers them ``iiiinnnnn`` (four digits of host, five
of part), so every host writes its own keys and none waits for another."""

from __future__ import annotations

from dataclasses import dataclass, replace

from objperf.core.errors import UsageError
from objperf.s3.settings import S3Settings

HOST_DIGITS = 4  # up to 10,000 hosts …
PART_DIGITS = 5  # … of up to 100,000 parts each (a part a second: 27 hours)


@dataclass(frozen=True)
class StorePrefix:
    bucket: str
    prefix: str  # empty, or ending in "/"
    settings: S3Settings
    host_index: int | None = None  # a cluster host's: it numbers its parts apart, and leaves the manifest alone
    host_label: str | None = None

    @classmethod
    def parse(cls, url: str, settings: S3Settings) -> StorePrefix:
        from objperf.dataset.store_reader import split_url

        bucket, prefix = split_url(url)
        return cls(bucket, prefix, settings)

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def __str__(self) -> str:
        return self.url

    def for_host(self, index: int, label: str) -> StorePrefix:
        if not 0 <= index < 10 ** HOST_DIGITS:
            raise UsageError(f"a dataset in a store takes at most {10 ** HOST_DIGITS:,} hosts")
        return replace(self, host_index=index, host_label=label)

    def part_name(self, subdir: str, number: int) -> str:
        if number >= 10 ** PART_DIGITS:
            raise OSError(f"more than {10 ** PART_DIGITS:,} parts under {subdir}")
        host = "" if self.host_index is None else f"{self.host_index:0{HOST_DIGITS}d}"
        return f"{subdir}/part-{host}{number:0{PART_DIGITS}d}.parquet"

    def key(self, name: str) -> str:
        return self.prefix + name

    def load(self, columns: list[str] | None = None):
        """The dataset's rows as a DataFrame (``objperf.dataset.directory.load``), from the store, checked."""
        from objperf.dataset.directory import load
        from objperf.dataset.store_reader import pulled

        with pulled(self.url, self.settings) as path:
            return load(path, columns, verify=False)  # pull has checked every file against the manifest

    def check_new(self) -> StorePrefix:
        """Refused in one line unless nothing is under the prefix yet (another run's dataset, a killed run's
        parts: nothing gets mixed), and the bucket is there."""
        from objperf.s3.client import S3Client

        if S3Client(self.settings).list_keys(self.bucket, self.prefix, limit=1):
            raise UsageError(f"{self.url} already holds objects; choose another --out or remove them")
        return self

    def check_apart(self, buckets: list[str], prefixes: list[str]) -> None:
        """Refused when the run reads or writes where its dataset goes: its own parts would be listed, read,
        overwritten or cleaned up as if they were the store's objects."""
        for bucket, prefix in zip(buckets, prefixes):
            if bucket == self.bucket and (prefix.startswith(self.prefix) or self.prefix.startswith(prefix)):
                raise UsageError(f"--out {self.url} lies inside s3://{bucket}/{prefix}, which the run reads or "
                                 "writes; give the dataset a prefix of its own")

"""Where a run's rows go: a new local directory, a new prefix in a store, or nowhere.  Settled once, at the door
(``Destination.of``), and handed down: the recorder, the cluster runner and the workflows ask it, never the type
of what the user gave.  Free of pyarrow (a run that keeps no rows never loads it).

Both dataset writers are a ``RowSink``: ``objperf.dataset.writer.DatasetWriter`` (a directory) and
``objperf.dataset.store_writer.StoreWriter`` (a store prefix)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from objperf.dataset.layout import check_new_dataset
from objperf.dataset.store_prefix import StorePrefix

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


class RowSink(Protocol):
    """A dataset being written: parts appended as the run flushes them, the manifest closed at its end."""

    path: Path | StorePrefix
    rows: int  # rows appended so far
    manifest: dict

    def append(self, table: pa.Table, subdir: str = ...) -> None: ...

    def row_groups(self, columns: list[str] | None = None) -> Iterator[pa.Table]: ...

    def close(self, status: str, **extra) -> None: ...

    def discard(self) -> None: ...


@dataclass(frozen=True)
class Destination:
    """One of: ``directory`` (a local directory), ``store`` (a prefix in a store), neither (nowhere)."""

    directory: Path | None = None
    store: StorePrefix | None = None

    @classmethod
    def of(cls, out: str | Path | StorePrefix | Destination | None) -> Destination:
        """What a caller gave as ``out``, as a destination checked new: a directory must be new or empty, a store
        prefix hold nothing yet (a cluster host's prefix is its driver's, checked there)."""
        if isinstance(out, Destination):
            return out
        if out is None or out == "":
            return NOWHERE
        if isinstance(out, StorePrefix):
            return cls(store=out if out.host_index is not None else out.check_new())
        return cls(directory=check_new_dataset(out))

    @property
    def place(self) -> Path | StorePrefix | None:
        """The dataset's place, as a run's result names it."""
        return self.directory or self.store

    def __bool__(self) -> bool:
        return self.place is not None

    def __str__(self) -> str:
        return str(self.place) if self else "nowhere"

    def open(self, manifest: dict) -> RowSink | None:
        """The writer of this destination's dataset, its manifest begun; None when rows go nowhere."""
        if self.directory is not None:
            from objperf.dataset.writer import DatasetWriter

            return DatasetWriter(self.directory, manifest)
        if self.store is not None:
            from objperf.dataset.store_writer import StoreWriter

            return StoreWriter(self.store, manifest)
        return None

    def check_apart(self, buckets: list[str], prefixes: list[str]) -> None:
        """Refused when the run reads or writes where its dataset goes (only a store's can lie there)."""
        if self.store is not None:
            self.store.check_apart(buckets, prefixes)

    def for_host(self, index: int, label: str) -> Destination:
        """Where cluster host ``index`` writes: into the store itself, under part numbers of its own."""
        return Destination(store=self.store.for_host(index, label)) if self.store is not None else NOWHERE

    def load(self, columns: list[str] | None = None, *, verify: bool = False) -> pd.DataFrame:
        """The dataset written here, as a DataFrame (``objperf.dataset.directory.load``)."""
        if self.store is not None:
            return self.store.load(columns)
        from objperf.dataset.directory import load

        return load(self.directory, columns, verify=verify)


    def load_samples(self) -> dict[str, pd.DataFrame]:
        """The NIC and CPU samples the run wrote here (``objperf.dataset.directory.load_samples``); none nowhere."""
        from objperf.dataset.directory import load_samples

        if self.store is not None:
            from objperf.dataset.store_reader import pulled

            with pulled(self.store.url, self.store.settings) as path:
                return load_samples(path)
        return load_samples(self.directory) if self.directory is not None else {}


NOWHERE = Destination()

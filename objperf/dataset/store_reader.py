"""Datasets kept in the store a team already uses: ``push`` uploads a dataset (checked against its manifest
first, the manifest last, so a reader never finds a manifest whose files are not all there) and ``pull``
brings one back, each file bounded by the size its manifest declares and checked against its SHA-256."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from objperf.core.errors import UsageError
from objperf.dataset.layout import MANIFEST
from objperf.s3.settings import CONTROL_BODY_CAP, S3Settings

CHUNK = 64 << 20  # a part of a file pushed in several (S3's parts are 5 MiB at least)
LISTED_PART_MAX_BYTES = 1 << 30  # a part of an unfinished dataset (one flush of rows: a few MiB)


def split_url(url: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` → (bucket, ``prefix/``): a dataset is a folder of objects."""
    from objperf.s3.target import split_s3_url

    if not url.startswith("s3://"):
        raise UsageError(f"{url!r} is not an s3://BUCKET/PREFIX URL")
    bucket, prefix = split_s3_url(url)
    return bucket, prefix if not prefix or prefix.endswith("/") else prefix + "/"


def push(path: str | Path, url: str, settings: S3Settings, *, say: Callable[[str], None] | None = None) -> int:
    """Upload the dataset at ``path`` under ``url``; the number of files sent."""
    from objperf.dataset.source import Source
    from objperf.s3.client import S3Client

    path = Path(path)
    if not (path / MANIFEST).is_file():
        raise UsageError(f"{path} is not a dataset directory (no {MANIFEST}); objperf pack's bundles are pushed "
                         "as they are, with any S3 client")
    source = Source(path)
    try:
        manifest = source.manifest()
        source.verify(manifest)
    finally:
        source.close()
    bucket, prefix = split_url(url)
    client = S3Client(settings)
    names = sorted(manifest.get("files", {}))
    for name in names:
        client.put_large_object(bucket, prefix + name, _chunks(path / name))
        if say:
            say(f"pushed {name} ({(path / name).stat().st_size:,} bytes)")
    client.put_object(bucket, prefix + MANIFEST, (path / MANIFEST).read_bytes())
    return len(names) + 1


def _chunks(path: Path):
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def pull(url: str, settings: S3Settings, into: str | Path) -> Path:
    """The dataset under ``url`` copied into the new directory ``into``, checked whole; its path."""
    from objperf.dataset.source import Source
    from objperf.s3.client import S3Client

    bucket, prefix = split_url(url)
    into = Path(into)
    into.mkdir(parents=True)
    client = S3Client(settings)
    manifest_bytes = client.get_object(bucket, prefix + MANIFEST, limit=CONTROL_BODY_CAP)
    if len(manifest_bytes) > CONTROL_BODY_CAP:
        raise UsageError(f"{url}{MANIFEST} is larger than a manifest can be ({CONTROL_BODY_CAP:,} bytes)")
    (into / MANIFEST).write_bytes(manifest_bytes)
    source = Source(into)
    try:
        manifest = source.manifest()  # checked: every name one a dataset can hold, every size a count
        files = manifest.get("files")
        if files is None and manifest.get("status") == "running":
            files = _listed_parts(client, bucket, prefix)  # its run died, or still goes: the parts sent so far
        for name, expected in (files or {}).items():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            body = client.get_object(bucket, prefix + name, limit=expected["bytes"])
            if "sha256" not in expected and len(body) != expected["bytes"]:
                raise UsageError(f"{url}{name} is not the size its listing says ({expected['bytes']:,} bytes)")
            with target.open("wb") as f:
                f.write(body)
        source.verify(manifest)  # a body longer than declared is one byte too long here, and refused
    finally:
        source.close()
    return into


def _listed_parts(client, bucket: str, prefix: str) -> dict[str, dict]:
    """The parts of an unfinished dataset, from the store's listing: only names of a dataset's own layout, each
    to be read no further than its listed size."""
    from objperf.dataset.source import DATA_NAME

    found = {}
    for folder in ("requests/", "samples/"):
        for key, size in client.list_keys(bucket, prefix + folder):
            name = key[len(prefix):]
            if not DATA_NAME.fullmatch(name):
                continue
            if size > LISTED_PART_MAX_BYTES:
                raise UsageError(f"s3://{bucket}/{key} is listed at {size:,} bytes, more than a part objperf sends "
                                 f"({LISTED_PART_MAX_BYTES:,})")
            found[name] = {"bytes": size}
    return found


@contextlib.contextmanager
def pulled(url: str, settings: S3Settings):
    """A context: the dataset under ``url`` in a private scratch directory while the block lasts."""
    import shutil

    from objperf.core import scratch

    where = scratch.make("pulled")
    try:
        yield pull(url, settings, where / "dataset")
    finally:
        shutil.rmtree(where, ignore_errors=True)


@contextlib.contextmanager
def local_copies(paths: list[str], settings: Callable[[], S3Settings]) -> Iterator[list[str]]:
    """A context: ``paths`` with each s3:// dataset pulled into scratch while the block lasts (``settings``
    is asked for once, and only if one is in a store)."""
    if not any(str(path).startswith("s3://") for path in paths):
        yield list(paths)
        return
    where = settings()
    with contextlib.ExitStack() as stack:
        yield [str(stack.enter_context(pulled(str(p), where))) if str(p).startswith("s3://") else p for p in paths]

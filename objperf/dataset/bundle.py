"""A dataset or study in one file to send (``.tar``, ``.tar.gz`` or ``.zip``), checked against its manifest
first; ``objperf.load`` and every command that reads datasets take the file as they take the directory."""

from __future__ import annotations

from pathlib import Path

SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")


def pack(path: str | Path, out: str | Path) -> Path:
    """Bundle the dataset at ``path`` (checked first) into ``out``, under a folder of the dataset's name."""
    import tarfile
    import zipfile

    from objperf.core.errors import UsageError
    from objperf.dataset.directory import MANIFEST, Source
    from objperf.dataset.layout import local_place

    path, out = Path(path), local_place(out)
    if not path.is_dir():
        raise UsageError(f"{path} is not a dataset directory")
    source = Source(path)
    try:
        source.verify(source.manifest())
    finally:
        source.close()
    if not out.name.endswith(SUFFIXES):
        raise UsageError(f"bad --out {str(out)!r}: end it with {', '.join(SUFFIXES)}")
    if out.exists():
        raise UsageError(f"{out} exists; choose another --out")
    files = sorted(f for f in path.rglob("*") if f.is_file() and not f.name.startswith("."))
    files.sort(key=lambda f: f.name != MANIFEST)  # the manifest first: a reader finds it at once
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        if out.name.endswith(".zip"):
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as bundle:  # parquet parts are compressed already
                for f in files:
                    bundle.write(f, f"{path.name}/{f.relative_to(path).as_posix()}")
        else:
            with tarfile.open(tmp, "w:gz" if out.name.endswith(("gz", "tgz")) else "w") as bundle:
                for f in files:
                    bundle.add(f, f"{path.name}/{f.relative_to(path).as_posix()}")
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {out}: {exc.strerror}") from None
    return out

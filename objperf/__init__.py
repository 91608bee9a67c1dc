"""objperf: how fast an object store really is, measured by a client that is never the bottleneck."""

import os

from objperf.core.version import __version__

# Arrow allocates through mimalloc, which by default commits its arenas whole, in transparent huge pages
# where the kernel allows them.  Here each huge page faulted in cost the kernel milliseconds: a first load
# of 10 M rows took 4.1 s (6 s of system CPU) against 0.7 s committed as used.  mimalloc reads it once,
# when pyarrow loads, which an objperf process does after this; a value the user set is kept.
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")


def load(path, columns=None, *, verify=True, **store):
    """Load a dataset (a directory, a bundle made by ``objperf pack``, or ``s3://BUCKET/PREFIX/`` where
    ``objperf push`` put one) as a pandas DataFrame (manifest in ``df.attrs["manifest"]``); ``columns`` reads
    only those.  A list of datasets loads them into one frame (manifests in ``df.attrs["manifests"]``, by
    run_id).  ``verify`` checks every file against the manifest.  ``store`` names the store of s3:// datasets
    as the commands' target options do: ``endpoint=``, ``profile=``, ``region=``, ``ca_bundle=``, ..."""
    from objperf.dataset.directory import load as _load

    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    remote = [p for p in paths if str(p).startswith("s3://")]
    if not remote:
        if store:
            from objperf.core.errors import UsageError

            raise UsageError(f"{', '.join(store)} name a store: give s3://BUCKET/PREFIX/ datasets to use them")
        return _load(path, columns, verify=verify)
    from objperf.dataset.store_reader import local_copies
    from objperf.options.groups import store_settings

    with local_copies([str(p) for p in paths], lambda: store_settings(store, "load()")) as local:
        return _load(local[0] if isinstance(path, (str, os.PathLike)) else local, columns, verify=verify)


def __getattr__(name: str):
    """``objperf.api`` and what notebooks reach for first, loaded when first used (``import objperf``
    stays light for a command)."""
    if name in ("api", "Run", "local_server"):
        import objperf.api

        return objperf.api if name == "api" else getattr(objperf.api, name)
    if name in ("import_warp", "import_elbencho"):
        import objperf.imports

        return getattr(objperf.imports, name)
    if name == "cost":
        from objperf.analysis.cost import cost

        return cost
    if name == "load_table":
        from objperf.dataset.directory import load_table

        return load_table
    if name in ("UsageError", "ObjperfError"):
        import objperf.core.errors

        return getattr(objperf.core.errors, name)
    raise AttributeError(f"module 'objperf' has no attribute {name!r}")


__all__ = ["ObjperfError", "Run", "UsageError", "__version__", "api", "cost", "import_elbencho", "import_warp", "load",
           "load_table", "local_server"]

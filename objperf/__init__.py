"""objperf: how fast an object store really is, measured by a client that is never the bottleneck."""

__version__ = "0.1.0"


def load(path, columns=None, *, verify=True):
    """Load a dataset (a directory, or a bundle made by ``objperf pack``) as a pandas DataFrame (manifest in
    ``df.attrs["manifest"]``); ``columns`` reads only those.  A list of datasets loads them into one frame
    (manifests in ``df.attrs["manifests"]``, by run_id).  ``verify`` checks every file against the manifest."""
    from objperf.dataset import load as _load

    return _load(path, columns, verify=verify)


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
        from objperf.dataset import load_table

        return load_table
    if name in ("UsageError", "ObjperfError"):
        import objperf.errors

        return getattr(objperf.errors, name)
    raise AttributeError(f"module 'objperf' has no attribute {name!r}")


__all__ = ["ObjperfError", "Run", "UsageError", "__version__", "api", "cost", "import_elbencho", "import_warp", "load",
           "load_table", "local_server"]

"""objperf: how fast an object store really is, measured by a client that is never the bottleneck."""

__version__ = "0.1.0"


def load(path, columns=None):
    """Load a dataset directory as a pandas DataFrame (manifest in ``df.attrs["manifest"]``);
    ``columns`` reads only those.  A list of directories loads them into one frame (manifests in
    ``df.attrs["manifests"]``, by path)."""
    from objperf.dataset import load as _load

    return _load(path, columns)


def __getattr__(name: str):
    """``objperf.api`` and what notebooks reach for first, loaded when first used (``import objperf``
    stays light for a command)."""
    if name in ("api", "Run", "local_server"):
        import objperf.api

        return objperf.api if name == "api" else getattr(objperf.api, name)
    if name in ("UsageError", "ObjperfError"):
        import objperf.errors

        return getattr(objperf.errors, name)
    raise AttributeError(f"module 'objperf' has no attribute {name!r}")


__all__ = ["ObjperfError", "Run", "UsageError", "__version__", "api", "load", "local_server"]

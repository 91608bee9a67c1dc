"""objperf: how fast an object store really is, measured by a client that is never the bottleneck."""

__version__ = "0.1.0"


def load(path, columns=None):
    """Load a dataset directory as a pandas DataFrame (manifest in ``df.attrs["manifest"]``);
    ``columns`` reads only those.  A list of directories loads them into one frame (manifests in
    ``df.attrs["manifests"]``, by path)."""
    from objperf.dataset import load as _load

    return _load(path, columns)


__all__ = ["__version__", "load"]

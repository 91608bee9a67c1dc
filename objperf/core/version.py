"""objperf's version, on the ground floor so that every room can name it without importing the package face."""

__version__ = "0.1.0"  # pyproject.toml's [project] version: bump both together

"""``python -m objperf.fetch``: the same as ``objperf fetch`` (``objperf.commands.fetch``), kept as the
entry point the published command lines use."""

from objperf.commands.fetch import main

__all__ = ["main"]

if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

"""``objperf COMMAND …`` and ``python -m objperf COMMAND …``: one command for every job, each a module of
``objperf.commands``."""

from __future__ import annotations

import importlib
import sys

from objperf.commands import ALIASES, COMMANDS
from objperf.commands.common import exit_now
from objperf.core.exits import EXIT_USAGE
from objperf.core.version import __version__


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()]
    return ("usage: objperf COMMAND [options]   (objperf COMMAND --help for its options)\n\ncommands:\n"
            + "\n".join(lines) + "\n\n  --version  objperf's, libcurl's and the TLS library's versions, and "
            "whether the kernel has TLS\n")


def versions() -> str:
    from objperf._curl.exchange import curl_versions
    from objperf.core.kernel_tls import kernel_tls

    found = curl_versions()
    return f"objperf {__version__}, libcurl {found['libcurl']}, TLS {found['tls']}, kernel TLS {kernel_tls()}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), end="")
        return 0 if args else EXIT_USAGE
    if args[0] == "--version":
        print(versions())
        return 0
    name, rest = ALIASES.get(args[0], args[0]), args[1:]
    if name not in COMMANDS:
        print(f"objperf: error: unknown command {args[0]!r}; the commands are {', '.join(COMMANDS)}", file=sys.stderr)
        return EXIT_USAGE
    return importlib.import_module(f"objperf.commands.{COMMANDS[name][0]}").main(rest)


def console() -> None:
    """The ``objperf`` console script."""
    exit_now(main())


if __name__ == "__main__":
    console()

"""``objperf COMMAND …`` and ``python -m objperf COMMAND …``: one command for every job; each
subcommand is the module of the same name (``python -m objperf.fetch`` keeps working)."""

from __future__ import annotations

import importlib
import sys

from objperf import __version__
from objperf.cli import EXIT_USAGE, exit_now

COMMANDS = {
    "fetch": "read from a store: concurrent ranged GETs, one row per request",
    "put": "write to a store: PUTs and multipart uploads from memory",
    "mixed": "read and write at the same time",
    "study": "one experiment of the published benchmark, as a sweep",
    "compare": "objperf against other S3 clients on the same objects",
    "bench": "objperf and its peers on one local server, ratios printed",
    "analyze": "a saved dataset summarised again: filtered, grouped, with figures",
    "cmp": "two or more datasets side by side: what changed, and whether it is more than noise",
    "import": "another tool's results (warp, elbencho) as an objperf dataset",
    "pack": "a dataset or study in one file (tar or zip) to send; objperf.load reads it",
    "cleanup": "what killed runs left: open multipart uploads in a store, scratch and servers here",
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {what}" for name, what in COMMANDS.items()]
    return ("usage: objperf COMMAND [options]   (objperf COMMAND --help for its options)\n\ncommands:\n"
            + "\n".join(lines) + "\n\n  --version  objperf's, libcurl's and the TLS library's versions\n")


def versions() -> str:
    from objperf._engine.core import curl_versions

    found = curl_versions()
    return f"objperf {__version__}, libcurl {found['libcurl']}, TLS {found['tls']}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), end="")
        return 0 if args else EXIT_USAGE
    if args[0] == "--version":
        print(versions())
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"objperf: error: unknown command {name!r}; the commands are {', '.join(COMMANDS)}", file=sys.stderr)
        return EXIT_USAGE
    module = {"import": "importer"}.get(name, name)  # ``import`` is Python's keyword
    return importlib.import_module(f"objperf.{module}").main(rest)


def console() -> None:
    """The ``objperf`` console script."""
    exit_now(main())


if __name__ == "__main__":
    console()

"""``objperf serve`` — a local S3 store for everything a single run cannot show: the embedded SeaweedFS on
loopback with a bucket and throwaway keys, up until Ctrl-C or SIGTERM, for ``objperf push``, ``--out s3://``,
``--local-cluster``, ``compare`` and other tools (the AWS CLI, s5cmd, warp).  It prints the ``export`` lines to
paste into another shell; stopped, it leaves nothing behind (unless ``--dir`` keeps its data)."""

from __future__ import annotations

import sys

from objperf.commands.common import command_main
from objperf.commands.parser import options_parser
from objperf.options.serve import ServeOptions
from objperf.run.invocation import Invocation

PROG = "objperf serve"

EXAMPLES = """examples:
  objperf serve                                   # bucket 'objperf' on a free port, until Ctrl-C
  objperf serve --bucket bench --port 8333        # a bucket and port of your choosing
  objperf serve --dir ~/objperf-store             # keep the data (and the keys) for the next time
"""


def build_parser():
    return options_parser(ServeOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, options=ServeOptions, pause_collector=False)


def execute(options: ServeOptions, invocation: Invocation):
    from objperf.workflows.serve import serve

    return serve(options, invocation.say, instructions)


def instructions(store) -> None:
    """What to paste into another shell, and what to try there: on stdout, at once (a pipe too)."""
    kept = f"data kept in {store.data_dir}" if store.kept else "data in a scratch directory, removed at exit"
    lines = [f"S3 endpoint {store.endpoint}, bucket {store.bucket!r} ({kept}); Ctrl-C stops it", "",
             "# in another shell:", *store.exports(), "", "# then, for example:", *store.examples()]
    print("\n".join(lines), flush=True)


def report(store, options: ServeOptions, invocation: Invocation) -> int:
    return 0


if __name__ == "__main__":
    sys.exit(main())

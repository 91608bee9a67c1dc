"""What every peer process of objperf's own driving shares (``obstore_peer``, ``s3torch_peer``): its command
line, and how it ends: ``done bytes=N`` on stdout once its transfer is over, before the library's teardown
(a process that dies after that line crashed on exit, its transfer done: ``Measured.outcome`` in
``objperf.peers.clients``), or one line on stderr and exit 1."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable

DONE = "done"


def arguments(module: str, argv: list[str] | None, *, concurrency: bool = True) -> argparse.Namespace:
    """``get|put URL PATH --endpoint E --region R [-c N] --part-size S``."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}")
    parser.add_argument("operation", choices=("get", "put"))
    parser.add_argument("url")
    parser.add_argument("path")
    parser.add_argument("--endpoint", default="")
    parser.add_argument("--region", default="us-east-1")
    if concurrency:
        parser.add_argument("-c", "--concurrency", type=int, default=16)
    parser.add_argument("--part-size", type=int, default=8 << 20)
    parser.add_argument("--passes", type=int, default=1, help="get: read the object this many times over")
    return parser.parse_args(argv)


def one_line(exc: BaseException) -> str:
    """An error as one line: its type, the start of its text (obstore's run to kilobytes, debug dumps and
    all) and the S3 error code the store answered with, if any."""
    text = " ".join(str(exc).split())
    code = re.search(r"<Code>([^<]{1,64})</Code>", text)
    return f"{type(exc).__name__}: {text.split(' Debug source:')[0][:240]}" + (f" ({code[1]})" if code else "")


def finish(name: str, operation: str, transfer: Callable[[], int]) -> int:
    """Run ``transfer`` (it returns the bytes moved) and say how it went: the done line, or the failure."""
    try:
        moved = transfer()
    except Exception as exc:  # one line, the library's words: the harness shows it as the failure
        print(f"{name} {operation} failed: {one_line(exc)}", file=sys.stderr)
        return 1
    print(f"{DONE} bytes={moved}", flush=True)
    return 0

"""``objperf fetch`` (and ``python -m objperf.fetch``) — concurrent ranged GETs against any S3-compatible
endpoint or plain HTTP URL; per-request rows to a dataset, a summary to the terminal.

With no URL it starts a local SeaweedFS, seeds an object and reads that."""

from __future__ import annotations

from objperf.commands.common import command_main, report
from objperf.commands.parser import options_parser
from objperf.options.runs import FetchOptions

PROG = "objperf fetch"

EXAMPLES = """examples:
  objperf fetch                                             # local SeaweedFS, 1 GiB object, read once
  objperf fetch s3://bucket/big.bin --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
      --region auto --profile r2-test --concurrency 64 --range-size 8MiB --duration 30s --out runs/r2-c64
  objperf fetch s3://bucket/shards/ --concurrency 256 --bytes 100GiB --sink discard
  objperf fetch s3://bucket/ --keys a.bin,b.bin --buckets b1,b2 --duration 1m
  objperf fetch https://example.test/file.bin --concurrency 8
"""


def build_parser():
    return options_parser(FetchOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.transfers import fetch

    return command_main(PROG, build_parser, fetch, report, argv, options=FetchOptions, transfers=True)


if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

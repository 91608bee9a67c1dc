"""``objperf copy`` — copy every object under a prefix (or the keys named) once, server-side, as many requests in
flight as asked: CopyObject for an object up to --part-size, a multipart copy (UploadPartCopy, a byte range a part)
above it; one row a request, each op's rate, latency and errors in the summary, and the bytes the store copied.

With no URL it seeds objects on the embedded local SeaweedFS and copies those."""

from __future__ import annotations

from objperf.commands.common import command_main, report
from objperf.commands.parser import options_parser
from objperf.options.copies import CopyOptions

PROG = "objperf copy"

EXAMPLES = """examples:
  objperf copy                                              # local SeaweedFS: 100 objects of 1 MiB
  objperf copy --objects 20 --object-size 100MiB --part-size 16MiB   # multipart copies, 7 parts each
  objperf copy s3://bucket/data/ --endpoint URL -c 32       # into s3://bucket/objperf-copy-RUN/
  objperf copy s3://bucket/data/ --to s3://other/data/ --endpoint URL --verify --cleanup
"""


def build_parser():
    return options_parser(CopyOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    from objperf.workflows.copies import copy

    return command_main(PROG, build_parser, copy, report, argv, options=CopyOptions, transfers=True)


if __name__ == "__main__":
    from objperf.commands.common import exit_now

    exit_now(main())

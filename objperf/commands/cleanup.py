"""``objperf cleanup [s3://BUCKET/PREFIX]`` — what killed runs left: objperf's multipart uploads still open
under a prefix (listed, then aborted unless ``--dry-run``), and on this machine the scratch directories and
local servers of objperf processes that are gone."""

from __future__ import annotations

import sys

from objperf.commands.common import command_main
from objperf.commands.parser import options_parser
from objperf.options.cleanup import CleanupOptions
from objperf.run.invocation import Invocation

PROG = "objperf cleanup"

EXAMPLES = """examples:
  objperf cleanup                                                  # this machine only
  objperf cleanup s3://bench/objperf/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com --dry-run
  objperf cleanup s3://bench/ --every-upload                       # any open upload, not only objperf's
"""


def build_parser():
    return options_parser(CleanupOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, options=CleanupOptions)


def execute(args: CleanupOptions, invocation: Invocation):
    from objperf import scratch
    from objperf.run.leftovers import Leftovers, abort_uploads, find_uploads
    from objperf.s3.target import split_s3_url

    found = Leftovers()
    if args.url:
        bucket, prefix = split_s3_url(args.url)
        settings = args.s3_settings()
        found = find_uploads(settings, bucket, prefix, every_upload=args.every_upload)
        if not args.dry_run:
            abort_uploads(settings, found)
    found.scratch_removed = scratch.sweep()  # directories (and servers) of objperf processes that are gone
    return found


def report(found, args, invocation: Invocation) -> int:
    say = invocation.say
    for path in found.scratch_removed:
        say(f"removed {path} (left by an objperf process that is gone)")
    if args.url:
        verb = "would abort" if args.dry_run else "open"
        for bucket, key, upload_id in found.uploads:
            say(f"{verb}: s3://{bucket}/{key} upload id {upload_id}")
        if not args.dry_run:
            say(f"aborted {found.aborted} of {len(found.uploads)} open multipart upload(s) under {args.url}")
    for line in found.not_aborted:
        print(f"{PROG}: error: not aborted: {line}", file=sys.stderr)
    return 1 if found.not_aborted else 0


if __name__ == "__main__":
    sys.exit(main())

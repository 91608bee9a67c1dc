"""``objperf cleanup [s3://BUCKET/PREFIX]`` — what killed runs left: objperf's multipart uploads still open
under a prefix (listed, then aborted unless ``--dry-run``), and on this machine the scratch directories and
local servers of objperf processes that are gone (listed, then removed unless ``--dry-run``).  It says what
it found and what it removed, or that there was nothing to clean."""

from __future__ import annotations

import sys

from objperf.commands.common import command_main
from objperf.commands.parser import options_parser
from objperf.options.cleanup import CleanupOptions
from objperf.run.invocation import Invocation

PROG = "objperf cleanup"

EXAMPLES = """examples:
  objperf cleanup                                                  # this machine only
  objperf cleanup --dry-run                                        # what it would remove, nothing removed
  objperf cleanup s3://bench/objperf/ --endpoint https://ACCOUNT.r2.cloudflarestorage.com --dry-run
  objperf cleanup s3://bench/ --every-upload                       # any open upload, not only objperf's
"""


def build_parser():
    return options_parser(CleanupOptions, PROG, __doc__, EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    return command_main(PROG, build_parser, execute, report, argv, options=CleanupOptions)


def execute(args: CleanupOptions, invocation: Invocation):
    from objperf.workflows.cleanup import cleanup

    return cleanup(args)


def report(done, args: CleanupOptions, invocation: Invocation) -> int:
    say = invocation.say
    for line in here_lines(done):
        say(line)
    if done.store is not None:
        for line in store_lines(done, args):
            say(line)
        for line in done.store.not_aborted:
            print(f"{PROG}: error: not aborted: {line}", file=sys.stderr)
        return 1 if done.store.not_aborted else 0
    return 0


def here_lines(done) -> list[str]:
    """This machine's part: each stranded directory (and server), what became of it; or that there was none."""
    if not done.stranded:
        return [f"nothing to clean on this machine: no scratch directory in {done.scratch_in} of an objperf "
                "process that is gone"]
    removed = {orphan.path for orphan in done.removed}
    lines = []
    for orphan in done.stranded:
        servers = f", and stop its server process(es) {', '.join(map(str, orphan.server_pids))}" \
            if orphan.servers else ""
        owner = f"process {orphan.owner}" if orphan.owner else "an objperf process"
        if done.dry_run:
            lines.append(f"would remove {orphan.path} (left by {owner}, which is gone){servers}")
        elif orphan.path in removed:
            stopped = f"; stopped its server process(es) {', '.join(map(str, orphan.server_pids))}" \
                if orphan.servers else ""
            lines.append(f"removed {orphan.path} (left by {owner}, which is gone){stopped}")
        else:
            lines.append(f"could not remove {orphan.path} (left by {owner}, which is gone)")
    verb = "would remove" if done.dry_run else "removed"
    count = len(done.stranded) if done.dry_run else len(done.removed)
    lines.append(f"{verb} {count} of {len(done.stranded)} scratch director{'y' if len(done.stranded) == 1 else 'ies'}"
                 f" left on this machine{' (dry run: nothing removed)' if done.dry_run else ''}")
    return lines


def store_lines(done, args: CleanupOptions) -> list[str]:
    """The store's part: each open upload, what became of it; or that there was none."""
    found = done.store
    whose = "" if args.every_upload else " of objperf's"
    if not found.uploads:
        return [f"nothing to clean in the store: no open multipart upload{whose} under {args.url}"]
    verb = "would abort" if done.dry_run else "open"
    lines = [f"{verb}: s3://{bucket}/{key} upload id {upload_id}" for bucket, key, upload_id in found.uploads]
    if done.dry_run:
        return [*lines, f"would abort {len(found.uploads)} open multipart upload(s){whose} under {args.url} "
                        "(dry run: nothing aborted)"]
    return [*lines, f"aborted {found.aborted} of {len(found.uploads)} open multipart upload(s){whose} under {args.url}"]


if __name__ == "__main__":
    sys.exit(main())

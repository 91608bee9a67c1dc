"""What killed runs left, found and (unless it is a dry run) removed: objperf's open multipart uploads under a
prefix of a store, and on this machine the scratch directories, and the servers still running in them, of
objperf processes that are gone.  A dry run changes nothing, here or in the store."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from objperf.core.scratch import Orphan
from objperf.options.cleanup import CleanupOptions
from objperf.run.leftovers import Leftovers


@dataclass
class Cleaned:
    """What was found, and what was removed (nothing, on a dry run)."""

    dry_run: bool
    scratch_in: Path  # where the scratch directories were looked for
    stranded: list[Orphan] = field(default_factory=list)
    removed: list[Orphan] = field(default_factory=list)
    store: Leftovers | None = None  # the uploads under the URL, when one was given


def cleanup(options: CleanupOptions, *, where: str | Path | None = None) -> Cleaned:
    """Look (and, unless ``options.dry_run``, clean) in the store ``options.url`` names, if any, and here."""
    import tempfile

    from objperf.core import scratch
    from objperf.run.leftovers import abort_uploads, find_uploads
    from objperf.s3.target import split_s3_url

    done = Cleaned(options.dry_run, Path(where or tempfile.gettempdir()))
    if options.url:
        bucket, prefix = split_s3_url(options.url)
        settings = options.s3_settings()
        done.store = find_uploads(settings, bucket, prefix, every_upload=options.every_upload)
        if not options.dry_run:
            abort_uploads(settings, done.store)
    done.stranded = scratch.stranded(done.scratch_in)
    if not options.dry_run:
        done.removed = scratch.remove(done.stranded)
    return done

"""LIST runs: listers paging through a prefix of the URL's store, or of objects seeded on the embedded server;
a ``RunResult`` whose rows are the pages."""

from __future__ import annotations

import contextlib

from objperf.options.runs import ListOptions
from objperf.run.invocation import Invocation, resolve_out
from objperf.workflows.transfers import EMBEDDED_BUCKET, fits_embedded, seed_embedded, with_figures


def seeded_keys(objects: int) -> list[str]:
    """The keys a LIST run on the embedded server lists: ``objects`` of them, a hundred a directory (so that
    ``--delimiter /`` has common prefixes to give), under a prefix of their own count."""
    return [f"list/{objects}/d{i // 100:05d}/object-{i:07d}" for i in range(objects)]


def list_objects(options: ListOptions, invocation: Invocation):
    """The LIST run ``options`` describe (of objects seeded on ``invocation``'s local server when no URL is
    given): a ``RunResult`` whose rows are the pages."""
    from objperf.core.errors import UsageError
    from objperf.run.listers import run_list
    from objperf.s3.target import split_s3_url

    options.check_target()
    options.check_output()
    if options.url and not options.url.startswith("s3://"):
        raise UsageError(f"objperf list lists a prefix of a store: give s3://BUCKET/PREFIX, not {options.url!r}")
    if options.buckets:
        raise UsageError("objperf list lists one prefix of one bucket: drop --buckets")
    bucket, prefix = split_s3_url(options.url) if options.url else (EMBEDDED_BUCKET, f"list/{options.objects}/")
    workload = options.workload(bucket, prefix)
    out = resolve_out(options, "list", invocation, store_ok=True)
    if out.store:
        out.check_apart([bucket], [prefix])  # the dataset's parts are not among what is listed
    with contextlib.ExitStack() as stack:
        if options.url:
            settings = options.s3_settings()
        else:
            fits_embedded(invocation, options.objects * options.object_size,
                          f"seeding {options.objects:,} objects to list")
            server = stack.enter_context(invocation.local_server())
            seed_embedded(server, options.object_size, seeded_keys(options.objects), [], invocation)
            settings = server.settings()
        with invocation.progress(workload.duration) as progress:
            result = run_list(settings, workload, out=out, on_progress=progress, keep_rows=options.rows_needed())
    return with_figures(result, options, invocation)

"""Server-side copies (``objperf copy``): a run on the URL's store, or on the embedded server with objects seeded
for it; a ``RunResult``."""

from __future__ import annotations

import contextlib

from objperf.core.errors import UsageError
from objperf.options.copies import CopyOptions
from objperf.options.runs import keys_asked
from objperf.run.invocation import Invocation, resolve_out
from objperf.workflows.transfers import EMBEDDED_BUCKET, fits_embedded, seed_embedded, with_figures

EMBEDDED_PREFIX = "copy/"


def copy(options: CopyOptions, invocation: Invocation):
    """Copy each object ``options`` name once, server-side (on ``invocation``'s local server, objects seeded for
    it, when no URL is given): a ``RunResult`` whose rows are the copies' requests."""
    from objperf.plan.copies import copy_run_prefix
    from objperf.run.copies import run_copy
    from objperf.s3.target import split_s3_url

    options.check_target()
    options.check_output()
    for name, given in (("URL", options.url), ("--to", options.to)):
        if given and not given.startswith("s3://"):
            raise UsageError(f"objperf copy copies objects of a store: give {name} as s3://BUCKET/PREFIX/, not "
                             f"{given!r}")
    if options.buckets:
        raise UsageError("objperf copy copies from the URL's bucket: drop --buckets (--to names where the copies go)")
    keys = keys_asked(options.keys)
    # The embedded server's objects under a prefix of their size, the first --objects of them copied: a server kept
    # across runs (objperf.api.local_server) may hold more, seeded by an earlier run
    bucket, prefix = split_s3_url(options.url) if options.url else \
        (EMBEDDED_BUCKET, f"{EMBEDDED_PREFIX}{options.object_size}/")
    if not options.url and keys is None:
        keys = options.objects
    if isinstance(keys, list) and prefix and not prefix.endswith("/"):
        raise UsageError("give either a key in the URL or a list of --keys, not both")
    to_bucket, to_prefix = split_s3_url(options.to) if options.to else ("", None)
    workload = options.workload(bucket, prefix, to_bucket, to_prefix)
    out = resolve_out(options, "copy", invocation, store_ok=True)
    if out.store:  # the dataset is neither among what is copied nor among the copies
        out.check_apart([bucket, workload.destination_bucket], [prefix, to_prefix or copy_run_prefix("").rstrip("/")])
    with contextlib.ExitStack() as stack:
        if options.url:
            settings, create = options.s3_settings(), False
        else:
            fits_embedded(invocation, 2 * options.objects * options.object_size,
                          f"seeding {options.objects:,} objects and copying them")
            server = stack.enter_context(invocation.local_server())
            seed_embedded(server, options.object_size, [f"{prefix}object-{i:06d}" for i in range(options.objects)],
                          [], invocation)
            settings, create = server.settings(), True
        with invocation.progress(workload.duration) as progress:
            result = run_copy(settings, workload, keys=keys, out=out, on_progress=progress, create_bucket=create,
                              keep_rows=options.rows_needed())
    return with_figures(result, options, invocation)

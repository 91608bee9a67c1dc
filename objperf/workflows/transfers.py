"""Reads, writes and both at once: a run on the URL's store, on the embedded server, or on every host of a
cluster; a ``RunResult``."""

from __future__ import annotations

import contextlib
import functools

from objperf.core.sizes import format_size
from objperf.dataset.destination import Destination
from objperf.options.runs import DeleteOptions, FetchOptions, MixedOptions, PutOptions, keys_asked
from objperf.run.invocation import Invocation, resolve_out

EMBEDDED_BUCKET = "objperf"


def fetch(options: FetchOptions, invocation: Invocation):
    """The read run ``options`` describe (on ``invocation``'s local server when no URL is given, on every host of a
    cluster with ``cluster``): a ``RunResult``."""
    from objperf.run.jobs import ReadSource, read_job
    from objperf.s3.target import split_s3_url

    out = _check(options, "fetch", invocation)
    workload = options.workload()
    keys = options.read_keys()
    buckets = list(options.buckets)
    if out.store:  # into the store it reads
        read_bucket, read_prefix = split_s3_url(options.url)
        out.check_apart(buckets or [read_bucket], [read_prefix] * max(1, len(buckets)))
    with contextlib.ExitStack() as stack:
        if options.url:
            url, settings = options.url, options.s3_settings()
        else:
            fits_embedded(invocation, options.object_size * max(1, len(buckets)) * (
                len(keys) if isinstance(keys, list) else 1), "seeding the objects to read")
            server = stack.enter_context(invocation.local_server())
            url = seed_embedded(server, options.object_size, keys if isinstance(keys, list) else None, buckets,
                                invocation, reseed=options.reseed)
            settings = server.settings()
        job = functools.partial(read_job, ReadSource(url, settings, keys, buckets, options.url_lifetime), workload,
                                keep_rows=options.rows_needed())
        if options.cluster_asked():
            from objperf.cluster.runner import run_across

            result = run_across(options, invocation, job, out=out, kind="read",
                                target={"url": url, **settings.describe()}, workload=workload.describe())
        else:
            with invocation.progress(workload.duration) as progress:
                result = job(out, on_progress=progress)
    return with_figures(result, options, invocation)


def put(options: PutOptions, invocation: Invocation):
    """The write run ``options`` describe (on ``invocation``'s local server when no URL is given, on every host of
    a cluster with ``cluster``, each under its own ``hostNN/`` prefix): a ``RunResult``."""
    from objperf.cluster.writes import abort_lost
    from objperf.run.jobs import write_job

    options.check_sizes()
    out = _check(options, "put", invocation)
    buckets, prefix = write_destination(options.url, options.buckets)
    out.check_apart(buckets, [prefix] * len(buckets))
    workload = options.write_workload(options.concurrency, buckets, prefix, requests=options.requests)
    with contextlib.ExitStack() as stack:
        if options.url:
            settings, create = options.s3_settings(), options.create_bucket
        else:
            objects = workload.requests or workload.keys * len(buckets)
            size = round(workload.distribution.mean())  # on average, when --sizes draws them
            fits_embedded(invocation, objects * size, f"writing {objects} object(s) of "
                          f"{'on average ' if workload.sizes else ''}{format_size(size)}")
            settings, create = stack.enter_context(invocation.local_server()).settings(), True
        job = functools.partial(write_job, settings, workload, create, keep_rows=options.rows_needed())
        if options.cluster_asked():
            from objperf.cluster.runner import run_across

            result = run_across(options, invocation, job, out=out, kind="write",
                                target={"kind": "s3", **settings.describe(), "buckets": buckets},
                                workload=workload.describe(), on_lost=functools.partial(abort_lost, settings,
                                                                                         workload))
        else:
            with invocation.progress(workload.duration) as progress:
                result = job(out, on_progress=progress)
    return with_figures(result, options, invocation)


def mixed(options: MixedOptions, invocation: Invocation):
    """The mixed run ``options`` describe (on ``invocation``'s local server when no URL is given, on every host of
    a cluster with ``cluster``): a ``RunResult``."""
    from objperf.cluster.writes import abort_lost
    from objperf.plan.reads import ReadWorkload
    from objperf.run.jobs import ReadSource, mixed_job
    from objperf.s3.target import split_s3_url

    out = _check(options, "mixed", invocation)
    if options.mix:
        return _mix(options, invocation, out)
    read_concurrency, write_concurrency = options.directions()
    reads = ReadWorkload(concurrency=read_concurrency, threads=options.threads, range_size=options.range_size,
                         sink=options.sink, duration=options.duration, **options.connection_kwargs(),
                         **options.steady_kwargs())
    reads.validate()
    destination = options.write_to or (f"s3://{split_s3_url(options.url)[0]}/objperf-mixed/" if options.url else None)
    buckets, prefix = write_destination(destination, options.buckets)
    writes = options.write_workload(write_concurrency, buckets, prefix)
    if out.store:
        read_bucket, read_prefix = split_s3_url(options.url)
        out.check_apart([*buckets, read_bucket], [prefix] * len(buckets) + [read_prefix])
    with contextlib.ExitStack() as stack:
        if options.url:
            url, settings, create = options.url, options.s3_settings(), False
        else:
            written = round(writes.distribution.mean()) * writes.keys * len(buckets)
            fits_embedded(invocation, options.object_size + written, "seeding the object to read and writing beside it")
            server = stack.enter_context(invocation.local_server())
            url = seed_embedded(server, options.object_size, None, [], invocation, reseed=options.reseed)
            settings, create = server.settings(), True
        job = functools.partial(mixed_job, ReadSource(url, settings, url_lifetime=options.url_lifetime), reads,
                                writes, create, keep_rows=options.rows_needed())
        if options.cluster_asked():
            from objperf.cluster.runner import run_across

            result = run_across(options, invocation, job, out=out, kind="mixed",
                                target={"url": url, **settings.describe()},
                                workload={"read": reads.describe(), "write": writes.describe()},
                                on_lost=functools.partial(abort_lost, settings, writes))
        else:
            with invocation.progress(options.duration) as progress:
                result = job(out, on_progress=progress)
    return with_figures(result, options, invocation)


def delete(options: DeleteOptions, invocation: Invocation):
    """DELETE each object ``options`` name once, or with ``batch`` name them in DeleteObjects of that many keys
    (on ``invocation``'s local server, objects seeded for it, when no URL is given): a ``RunResult`` whose rows
    are the DELETEs, or the batches."""
    from objperf.core.errors import UsageError
    from objperf.run.batches import batch_delete
    from objperf.run.jobs import ReadSource, read_job

    options.check_target()
    options.check_output()
    if options.url and not options.url.startswith("s3://"):
        raise UsageError(f"objperf delete deletes objects of a store: give s3://BUCKET/PREFIX/, not {options.url!r}")
    out = resolve_out(options, "delete", invocation, store_ok=True)
    workload = options.batch_workload() if options.batch else options.workload()
    keys = keys_asked(options.keys)
    if out.store and options.url:
        from objperf.s3.target import split_s3_url

        bucket, prefix = split_s3_url(options.url)
        out.check_apart([bucket], [prefix])  # the dataset is not among what is deleted
    with contextlib.ExitStack() as stack:
        if options.url:
            url, settings = options.url, options.s3_settings()
        else:
            fits_embedded(invocation, options.objects * options.object_size,
                          f"seeding {options.objects:,} objects to delete")
            server = stack.enter_context(invocation.local_server())
            seed_embedded(server, options.object_size, [f"delete/object-{i:06d}" for i in range(options.objects)],
                          [], invocation, reseed=True)
            url, settings = f"s3://{EMBEDDED_BUCKET}/delete/", server.settings()
        source = ReadSource(url, settings, keys, list(options.buckets), options.url_lifetime)
        job = functools.partial(batch_delete if options.batch else read_job, source, workload,
                                keep_rows=options.rows_needed())
        with invocation.progress(workload.duration) as progress:
            result = job(out, on_progress=progress)
    return with_figures(result, options, invocation)


def _mix(options: MixedOptions, invocation: Invocation, out: Destination):
    """``mixed --mix``: one engine drawing each request from the mix, in the URL's bucket under its prefix (the
    embedded server's ``mix/`` when no URL is given)."""
    from objperf.core.errors import UsageError
    from objperf.run.mix import run_mix
    from objperf.s3.target import split_s3_url

    if options.cluster_asked():
        raise UsageError("--mix runs on one host: drop --cluster and --local-cluster")
    bucket, prefix = split_s3_url(options.url) if options.url else (EMBEDDED_BUCKET, "mix/")
    if prefix and not prefix.endswith("/"):
        raise UsageError(f"--mix works under a prefix: give s3://{bucket}/{prefix}/ (ending in /), not one key")
    workload = options.mix_workload(bucket, prefix)
    if out.store:
        out.check_apart([bucket], [prefix])
    with contextlib.ExitStack() as stack:
        if options.url:
            settings, create = options.s3_settings(), False
        else:
            fits_embedded(invocation, 2 * workload.objects_seeded * workload.object_size,
                          f"seeding {workload.objects_seeded:,} objects for the mix")
            settings, create = stack.enter_context(invocation.local_server()).settings(), True
        with invocation.progress(workload.duration) as progress:
            result = run_mix(settings, workload, out=out, on_progress=progress, create_bucket=create,
                             keep_rows=options.rows_needed())
    return with_figures(result, options, invocation)


def with_figures(result, options, invocation: Invocation):
    """``result``, its figures drawn into its dataset first when ``figures`` asks."""
    if options.figures and result.dataset:
        from objperf.plots.figures import draw_run_figures

        for path in draw_run_figures(result.rows, result.dataset, result.manifest):
            invocation.say(f"figure {path}")
    return result


def _check(options, name: str, invocation: Invocation) -> Destination:
    """What can be refused before anything starts, and where the dataset goes (a directory, a store, None)."""
    options.check_cluster()
    options.check_target()
    options.check_output()
    return resolve_out(options, name, invocation, store_ok=True)


def write_destination(url: str | None, buckets: tuple[str, ...]) -> tuple[list[str], str]:
    from objperf.s3.target import split_s3_url

    bucket, prefix = split_s3_url(url) if url else (EMBEDDED_BUCKET, "")
    return list(buckets) or [bucket], prefix


def fits_embedded(invocation: Invocation, needed: int, what: str) -> None:
    """A run on a new embedded server whose objects its disk cannot hold is refused before the server starts."""
    from objperf.run.seed import check_room, embedded_data_dir

    if invocation.server is None:
        check_room(embedded_data_dir(), needed, what)


def seed_embedded(server, size: int, keys: list[str] | None, buckets: list[str], invocation: Invocation, *,
                  reseed: bool = False) -> str:
    """Create the bucket(s) and objects a run on the embedded server reads (unless a server kept across runs
    holds them already, and ``reseed`` is not asked); the URL to read."""
    from objperf.run.seed import seed_objects

    buckets = buckets or [EMBEDDED_BUCKET]
    seed_objects(server.settings(), buckets, keys or [f"seed/object-{size}"], size, create_buckets=True,
                 say=invocation.say, reseed=reseed, progress=invocation.seeding, room=server.workdir)
    return f"s3://{buckets[0]}/" if keys else f"s3://{buckets[0]}/seed/object-{size}"

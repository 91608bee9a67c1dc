"""Writes across hosts: what a host that died left open is aborted by the driver (each host writes under its
own prefix, ``objperf.plan.writes.host_prefix``, so no two hosts' keys can collide)."""

from __future__ import annotations

from objperf.plan.writes import WriteWorkload, host_prefix
from objperf.s3.client import S3Settings


def abort_lost(settings: S3Settings, workload: WriteWorkload, index: int, run_id: str) -> None:
    """After host ``index`` died mid-run: abort the uploads it left open (its own prefix, so nobody else's), and
    with ``cleanup`` delete the objects it finished, named after its run (``run_id``, set by the driver)."""
    from objperf.plan.writes import on_host, own_key_starts
    from objperf.s3.client import S3Client

    client = S3Client(settings.for_multipart())  # aborts wait up to --timeout, as the run's own do
    prefix = host_prefix(workload.prefix, index)
    # every key the host's run named starts so; named keys may hold earlier runs' objects: left alone
    mine = own_key_starts(on_host(workload, index), run_id) if workload.cleanup else []
    for bucket in workload.buckets:
        for key, upload_id in client.open_uploads(bucket, prefix):
            client.abort_upload(bucket, key, upload_id)
        for start in mine:
            for key, _ in client.list_keys(bucket, start):
                client.delete_object(bucket, key)

"""obstore (Rust ``object_store`` over hyper) as a peer, run in its own process and measured from outside:

    python -m objperf.peers.obstore_peer get URL PATH --endpoint E --region R -c N --part-size S [--passes P]
    python -m objperf.peers.obstore_peer put URL PATH --endpoint E --region R -c N --part-size S

``get`` reads the object as ranges of ``--part-size``, N ``get_range_async`` tasks at a time, each range
written into PATH at its offset (PATH ``ram``: each range held in memory as obstore's Bytes, counted and let
go: the counterpart of objperf's RAM sink; ``--passes``: every range that many times, pass after pass);
``put`` uploads PATH with ``put_async``, in parts of ``--part-size``, N at a time.  URL is ``s3://BUCKET/KEY``
(an S3Store: credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the CAs to trust from
AWS_CA_BUNDLE) or ``http(s)://HOST/PATH`` (an HTTPStore).

When the transfer is over it prints ``done bytes=N`` before the interpreter tears obstore's runtime down
(``objperf.peers.peer_process``): a process that dies after that line crashed on exit, its transfer done.
A failure before it is one line on stderr and exit 1."""

from __future__ import annotations

import asyncio
import os
import sys
from urllib.parse import urlsplit

from objperf.peers.peer_process import arguments, finish

RAM = "ram"  # the PATH of a get that keeps no file


def store_and_path(url: str, *, endpoint: str, region: str):
    """The obstore store an ``s3://`` or ``http(s)://`` URL names, and the object's path in it."""
    from obstore.store import HTTPStore, S3Store

    parts = urlsplit(url)
    options: dict = {"allow_http": True}
    if os.environ.get("AWS_CA_BUNDLE"):
        with open(os.environ["AWS_CA_BUNDLE"]) as f:
            options["root_certificate"] = f.read()
    if parts.scheme == "s3":
        credentials = {name: os.environ[variable] for name, variable in (
            ("access_key_id", "AWS_ACCESS_KEY_ID"), ("secret_access_key", "AWS_SECRET_ACCESS_KEY"),
            ("session_token", "AWS_SESSION_TOKEN")) if os.environ.get(variable)}
        store = S3Store(parts.netloc, region=region, virtual_hosted_style_request=False, client_options=options,
                        **({"endpoint": endpoint} if endpoint else {}), **credentials)
        return store, parts.path.lstrip("/")
    directory, _, name = parts.path.rpartition("/")
    return HTTPStore.from_url(f"{parts.scheme}://{parts.netloc}{directory}/", client_options=options), name


async def get(store, path: str, local: str, *, concurrency: int, part_size: int, passes: int = 1) -> int:
    """Every range of the object, ``concurrency`` tasks at a time.  Into the file ``local`` at its offset
    (written from a thread, so the event loop goes on starting requests meanwhile), or, when ``local`` is
    ``ram``, held as obstore's own Bytes in memory, counted and let go."""
    import obstore

    size = (await obstore.head_async(store, path))["size"]
    starts = (start for _ in range(passes) for start in range(0, size, part_size))
    fd = os.open(local, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if local != RAM else -1
    received = 0

    async def task() -> None:
        nonlocal received
        for start in starts:  # one iterator for every task: each range is taken once
            end = min(start + part_size, size)
            data = await obstore.get_range_async(store, path, start=start, end=end)
            if len(data) != end - start:
                raise OSError(f"range {start}-{end - 1}: {len(data)} bytes")
            if fd >= 0:
                await asyncio.to_thread(os.pwrite, fd, memoryview(data), start)
            received += len(data)

    try:
        await asyncio.gather(*(task() for _ in range(concurrency)))
    finally:
        if fd >= 0:
            os.close(fd)
    return received


async def put(store, path: str, local: str, *, concurrency: int, part_size: int) -> int:
    from pathlib import Path

    import obstore

    size = os.path.getsize(local)
    await obstore.put_async(store, path, Path(local), use_multipart=size > part_size, chunk_size=part_size,
                            max_concurrency=concurrency)
    return size


def main(argv: list[str] | None = None) -> int:
    args = arguments("objperf.peers.obstore_peer", argv)

    def transfer() -> int:
        store, path = store_and_path(args.url, endpoint=args.endpoint, region=args.region)
        if args.operation == "get":
            return asyncio.run(get(store, path, args.path, concurrency=args.concurrency, part_size=args.part_size,
                                   passes=args.passes))
        return asyncio.run(put(store, path, args.path, concurrency=args.concurrency, part_size=args.part_size))

    return finish("obstore", args.operation, transfer)


if __name__ == "__main__":
    sys.exit(main())

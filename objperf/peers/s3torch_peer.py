"""s3torchconnector (the AWS CRT through Mountpoint's client, as PyTorch users read S3) as a peer, run in its
own process and measured from outside:

    python -m objperf.peers.s3torch_peer get s3://BUCKET/KEY PATH --endpoint E --region R --part-size S
    python -m objperf.peers.s3torch_peer put s3://BUCKET/KEY PATH --endpoint E --region R --part-size S

``get`` reads the object through an S3Reader in pieces of ``--part-size`` into PATH (the CRT splits the GET
into ranged parts of that size and fetches them concurrently); ``put`` writes PATH through an S3Writer (the
CRT's multipart upload, parts of ``--part-size``).  Path-style addressing against the endpoint given.  The
CRT sets its own concurrency from its throughput target: it takes no count of requests in flight.

Like every peer it prints ``done bytes=N`` when its transfer is over, and a failure is one line on stderr
(``objperf.peers.peer_process``)."""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

from objperf.peers.peer_process import arguments, finish


def client(*, endpoint: str, region: str, part_size: int):
    from s3torchconnector._s3client import S3Client, S3ClientConfig

    if urlsplit(endpoint).scheme == "https" and os.environ.get("AWS_CA_BUNDLE"):
        # Its client builds its TLS context from the system's trust store alone.
        raise ValueError("s3torchconnector takes no CA bundle: it trusts the system's CAs only")
    config = S3ClientConfig(part_size=part_size, force_path_style=True)
    return S3Client(region, endpoint=endpoint or None, s3client_config=config)


def get(s3, bucket: str, key: str, local: str, part_size: int) -> int:
    received = 0
    with s3.get_object(bucket, key) as reader, open(local, "wb") as f:
        while piece := reader.read(part_size):
            f.write(piece)
            received += len(piece)
    return received


def put(s3, bucket: str, key: str, local: str, part_size: int) -> int:
    sent = 0
    with open(local, "rb") as f, s3.put_object(bucket, key) as writer:
        while piece := f.read(part_size):
            writer.write(piece)
            sent += len(piece)
    return sent


def main(argv: list[str] | None = None) -> int:
    args = arguments("objperf.peers.s3torch_peer", argv, concurrency=False)

    def transfer() -> int:
        parts = urlsplit(args.url)
        if parts.scheme != "s3":
            raise ValueError(f"s3torchconnector reads s3:// URLs only, not {parts.scheme}://")
        s3 = client(endpoint=args.endpoint, region=args.region, part_size=args.part_size)
        run = get if args.operation == "get" else put
        return run(s3, parts.netloc, parts.path.lstrip("/"), args.path, args.part_size)

    return finish("s3torchconnector", args.operation, transfer)


if __name__ == "__main__":
    sys.exit(main())

"""The AWS CRT or obstore uploading many objects, run in its own process and measured from outside:

    python -m objperf.peers.put_many aws-crt|obstore DIR s3://BUCKET/PREFIX/ --endpoint E --region R -c N
        --part-size S

Every file of DIR goes up as PREFIX + its name, N at a time: the CRT's requests all made at once on a client of
N connections at most, obstore's ``put_async`` from N tasks taking the files in turn.  A file no larger than
``--part-size`` goes up as one PUT (the CRT's multipart threshold is the part size), a larger one in parts.
Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the CAs to trust from AWS_CA_BUNDLE.

When every upload is over it prints ``done bytes=N`` (``objperf.peers.peer_process``); a failure is one line on
stderr and exit 1."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

from objperf.peers.peer_process import finish

CLIENTS = ("aws-crt", "obstore")


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m objperf.peers.put_many")
    parser.add_argument("client", choices=CLIENTS)
    parser.add_argument("directory", type=Path)
    parser.add_argument("url")
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("-c", "--concurrency", type=int, default=16)
    parser.add_argument("--part-size", type=int, default=8 << 20)
    return parser.parse_args(argv)


def crt_put(files: list[Path], bucket: str, prefix: str, *, endpoint: str, region: str, concurrency: int,
            part_size: int) -> None:
    from awscrt import auth, http, io, s3

    parts = urlsplit(endpoint)
    elg = io.EventLoopGroup()
    bootstrap = io.ClientBootstrap(elg, io.DefaultHostResolver(elg))
    trust = None
    if parts.scheme == "https" and os.environ.get("AWS_CA_BUNDLE"):
        options = io.TlsContextOptions()
        options.override_default_trust_store_from_path(None, os.environ["AWS_CA_BUNDLE"])
        trust = io.ClientTlsContext(options).new_connection_options()
    client = s3.S3Client(bootstrap=bootstrap, region=region,
                         credential_provider=auth.AwsCredentialsProvider.new_default_chain(bootstrap),
                         tls_mode=s3.S3RequestTlsMode.DISABLED if parts.scheme == "http" else
                         s3.S3RequestTlsMode.ENABLED, tls_connection_options=trust, part_size=part_size,
                         multipart_upload_threshold=part_size, throughput_target_gbps=10.0,
                         max_active_connections_override=concurrency)
    requests = []
    for path in files:
        headers = http.HttpHeaders([("Host", parts.netloc), ("Content-Length", str(path.stat().st_size))])
        request = http.HttpRequest("PUT", f"/{bucket}/{prefix}{path.name}", headers)
        requests.append(client.make_request(type=s3.S3RequestType.PUT_OBJECT, request=request,
                                            send_filepath=str(path)))
    for made in requests:
        made.finished_future.result()


async def obstore_put(files: list[Path], url: str, *, endpoint: str, region: str, concurrency: int,
                      part_size: int) -> None:
    import obstore

    from objperf.peers.obstore_peer import store_and_path

    store, prefix = store_and_path(url, endpoint=endpoint, region=region)
    turns = iter(files)

    async def task() -> None:
        for path in turns:  # one iterator for every task: each file is taken once
            size = path.stat().st_size
            await obstore.put_async(store, prefix + path.name, path, use_multipart=size > part_size,
                                    chunk_size=part_size)

    await asyncio.gather(*(task() for _ in range(concurrency)))


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)

    def transfer() -> int:
        files = sorted(path for path in args.directory.iterdir() if path.is_file())
        parts = urlsplit(args.url)
        if parts.scheme != "s3" or not parts.netloc:
            raise ValueError(f"give s3://BUCKET/PREFIX/, not {args.url!r}")
        if args.client == "aws-crt":
            crt_put(files, parts.netloc, parts.path.lstrip("/"), endpoint=args.endpoint, region=args.region,
                    concurrency=args.concurrency, part_size=args.part_size)
        else:
            asyncio.run(obstore_put(files, args.url, endpoint=args.endpoint, region=args.region,
                                    concurrency=args.concurrency, part_size=args.part_size))
        return sum(path.stat().st_size for path in files)

    return finish(args.client, "put", transfer)


if __name__ == "__main__":
    sys.exit(main())

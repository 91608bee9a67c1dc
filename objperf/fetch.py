"""``python -m objperf.fetch`` — concurrent ranged GETs against any S3-compatible
endpoint or plain HTTP URL; per-request rows to a dataset, a summary to the terminal.

With no URL it starts a local SeaweedFS, seeds an object and reads that."""

from __future__ import annotations

import json
import os
import sys
import time

from objperf.cli import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    OneLineParser,
    ProgressLine,
    duration_arg,
    embedded_server,
    positive_int,
    run_main,
    size_arg,
)

PROG = "objperf.fetch"
EMBEDDED_BUCKET = "objperf"

EXAMPLES = """examples:
  python -m objperf.fetch                                   # local SeaweedFS, 1 GiB object, read once
  python -m objperf.fetch s3://bucket/big.bin --endpoint https://ACCOUNT.r2.cloudflarestorage.com \\
      --region auto --profile r2-test --concurrency 64 --range-size 8MiB --duration 30s --out runs/r2-c64
  python -m objperf.fetch s3://bucket/shards/ --concurrency 256 --bytes 100GiB --sink discard
  python -m objperf.fetch https://example.test/file.bin --concurrency 8
"""


def build_parser() -> OneLineParser:
    p = OneLineParser(prog=PROG, description=__doc__.split("\n\n")[0], epilog=EXAMPLES,
                      formatter_class=lambda prog: __import__("argparse").RawDescriptionHelpFormatter(prog, width=100))
    p.add_argument("url", nargs="?", help="s3://BUCKET/KEY, s3://BUCKET/PREFIX/, or http(s)://HOST/PATH; "
                                          "omit to use the embedded local SeaweedFS")
    t = p.add_argument_group("target")
    t.add_argument("--endpoint", help="S3 endpoint URL (default: AWS, or AWS_ENDPOINT_URL)")
    t.add_argument("--region", help="signing region (R2: auto)")
    t.add_argument("--profile", help="credentials profile from ~/.aws")
    t.add_argument("--anonymous", action="store_true", help="send unsigned requests")
    t.add_argument("--addressing", choices=("auto", "path", "virtual"), default="auto", help="bucket addressing style")
    t.add_argument("--keys", help="comma-separated keys in the bucket, read round-robin")
    w = p.add_argument_group("workload")
    w.add_argument("--concurrency", "-c", type=positive_int, default=16, help="requests in flight (default 16)")
    w.add_argument("--threads", type=positive_int, default=os.cpu_count() or 1,
                   help="engine threads, each with its own libcurl multi handle (default: cores)")
    w.add_argument("--range-size", type=size_arg, default=8 << 20, help="bytes per ranged GET (default 8MiB)")
    w.add_argument("--random", action="store_true", help="random ranges instead of sequential")
    w.add_argument("--duration", "-d", type=duration_arg, help="stop issuing requests after this long (30s, 2m)")
    w.add_argument("--requests", "-n", type=positive_int, help="stop after this many requests")
    w.add_argument("--bytes", type=size_arg, help="stop after this many bytes (10GiB)")
    w.add_argument("--sink", choices=("ram", "discard", "file"), default="ram", help="where bodies go (default ram)")
    w.add_argument("--sink-dir", help="directory for --sink file")
    w.add_argument("--verify", action="store_true", help="CRC32 every body (column crc32)")
    c = p.add_argument_group("connection")
    c.add_argument("--ip", choices=("4", "6", "any"), default="any", help="address family (default any)")
    c.add_argument("--connect-to", action="append", default=[], metavar="HOST:PORT:ADDR:PORT",
                   help="pin connections to a server address (libcurl CONNECT_TO); repeatable")
    c.add_argument("--interface", help="local source address or NIC name")
    c.add_argument("--http", choices=("1.1", "2"), default="1.1", help="HTTP version (default 1.1)")
    c.add_argument("--timeout", type=duration_arg, default=300.0, help="per-request timeout (default 5m)")
    c.add_argument("--buffer-size", type=size_arg, default=1 << 20, help="libcurl receive buffer (default 1MiB)")
    c.add_argument("--engine", choices=("curl", "requests"), default="curl",
                   help="curl (default) or the pure-Python reference engine")
    o = p.add_argument_group("output")
    o.add_argument("--out", "-o", help="write the dataset (parquet + manifest) into this directory")
    o.add_argument("--figures", action="store_true", help="also draw figures into the dataset directory")
    o.add_argument("--json", action="store_true", help="print the summary as JSON")
    o.add_argument("--object-size", type=size_arg, default=1 << 30,
                   help="embedded server only: size of the seeded object (default 1GiB)")
    return p


def _say(text: str) -> None:
    print(f"{PROG}: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(PROG, lambda: _fetch(args))


def _fetch(args) -> int:
    from objperf.s3client import S3Settings
    from objperf.workload import ReadWorkload

    workload = ReadWorkload(
        concurrency=args.concurrency, threads=args.threads, range_size=args.range_size, random_ranges=args.random,
        sink=args.sink, sink_dir=args.sink_dir, duration=args.duration, requests=args.requests, bytes=args.bytes,
        ip=args.ip, connect_to=tuple(args.connect_to), interface=args.interface, http_version=args.http,
        verify=args.verify, timeout=args.timeout, buffer_size=args.buffer_size, engine=args.engine)
    workload.validate()
    keys = [k for k in args.keys.split(",") if k] if args.keys else None
    if args.url:
        settings = S3Settings(endpoint=args.endpoint, region=args.region, profile=args.profile,
                              anonymous=args.anonymous, addressing=args.addressing)
        return _run(args, workload, args.url, settings, keys)
    with embedded_server(_say) as server:
        url = _seed_embedded(server, args.object_size, keys)
        return _run(args, workload, url, server.settings(), keys)


def _seed_embedded(server, size: int, keys: list[str] | None) -> str:
    from objperf.payload import payload_parts
    from objperf.s3client import S3Client
    from objperf.sizes import format_size

    client = S3Client(server.settings())
    client.create_bucket(EMBEDDED_BUCKET)
    t0 = time.monotonic()
    for key in keys or [f"seed/object-{size}"]:
        client.put_large_object(EMBEDDED_BUCKET, key, payload_parts(size))
    _say(f"seeded {len(keys or [1])} object(s) of {format_size(size)} in {time.monotonic() - t0:.1f} s")
    return f"s3://{EMBEDDED_BUCKET}/" if keys else f"s3://{EMBEDDED_BUCKET}/seed/object-{size}"


def _run(args, workload, url, settings, keys) -> int:
    from objperf.run import run_read
    from objperf.summary import format_summary
    from objperf.target import resolve_read_target

    presign_s = int((workload.duration or 0) * 2 + 24 * 3600)
    target = resolve_read_target(url, settings, keys=keys, presign_seconds=presign_s)
    progress = ProgressLine(total_s=workload.duration)
    result = run_read(target, workload, out=args.out, on_progress=progress)
    progress.done()
    if args.json:
        print(json.dumps({"run_id": result.run_id, "status": result.status, **result.summary}, indent=2))
    else:
        print(format_summary(result.summary, title=f"{PROG} {result.run_id} ({result.status})"))
    if result.dataset:
        if args.figures:
            from objperf.figures import draw_run_figures

            for path in draw_run_figures(result.rows, result.dataset):
                _say(f"figure {path}")
        _say(f"dataset {result.dataset} ({result.summary['requests']} rows)")
    if result.status == "interrupted":
        return EXIT_INTERRUPTED
    return 0 if result.summary["requests"] else EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

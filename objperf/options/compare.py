"""The options of ``objperf compare``: objperf against other S3 clients on the same objects."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.options.kinds import COUNT, ITEMS, PATH, SIZE, TEXT
from objperf.options.names import CLIENTS
from objperf.options.spec import flag, option

TARGET = "target (one store)"
OUTPUT = "output"


@dataclass(kw_only=True)
class CompareOptions:
    """Download and upload the same object with every available client, interleaved, N repetitions."""

    url: str | None = option(None, "s3://BUCKET/PREFIX/ to compare on, with the target options below (several "
                             "stores: --target, repeatable)", positional=True)
    endpoint: str | None = option(None, "S3 endpoint URL (default: AWS)", flags=("--endpoint-url",), group=TARGET)
    region: str | None = option(None, "signing region (R2: auto; default us-east-1)", group=TARGET)
    profile: str | None = option(None, "credentials profile from ~/.aws", group=TARGET)
    ca_bundle: str | None = option(None, "the CAs every client trusts over TLS", PATH, metavar="FILE",
                                     group=TARGET)
    target: tuple[str, ...] = option((), "a store to compare on (repeatable; default: the URL's, else two buckets "
                                     "of the embedded server); ca_bundle: the CAs every client trusts over TLS",
                                     TEXT, repeat=True, metavar="'NAME s3://BUCKET/PREFIX/ [endpoint=URL] "
                                     "[profile=P] [region=R] [ca_bundle=FILE]'")
    clients: tuple[str, ...] = option(CLIENTS, "which clients", ITEMS)
    size: int = option(100 << 20, "object size", SIZE)
    repeat: int = option(5, "rounds", COUNT)
    concurrency: int = option(16, "requests in flight, for clients that take it", COUNT, flags=("-c",))
    part_size: int = option(8 << 20, "part / range size", SIZE)
    endpoint_for: tuple[str, ...] = option((), "send one client through another endpoint (a proxy, another host "
                                           "name)", TEXT, repeat=True, metavar="CLIENT=URL")
    out: str | None = option(None, "write the dataset into this new directory (default: runs/<UTC time>-compare)",
                             PATH, flags=("-o",), group=OUTPUT)
    no_save: bool = flag("keep no dataset (the tables only)", group=OUTPUT)
    figures: bool = flag("draw the timing figure into the dataset's directory", group=OUTPUT)

"""How many engine threads a run gets when none are asked for.

A remote store gets every core.  A server on this machine (every address the slots connect to is a loopback
one) competes with the client for the same cores, and a second engine thread takes the one the server needs
to encrypt and send: on 2 cores, TLS reads of 8 MiB ranges at 16 in flight from nginx moved about 10 % less
with two engine threads than with one, and the server spent 30 % more CPU per GiB.  So a local server gets
half the cores — unless the client's own work per request is what bounds the run, where more threads pay:
requests under 1 MiB (1 KiB objects at 256 in flight: a third more requests/s with two threads), and more
than 1024 transfers in flight per thread (4096 in flight: twice the throughput with two)."""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

BYTES_BOUND = 1 << 20  # requests at least this large: the server's work per byte sets the pace
TRANSFERS_PER_THREAD = 1024


def is_loopback(host: str) -> bool:
    """A loopback address or a name that can only mean this machine (no lookup: an unresolved name is remote)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _entry_address(entry: str) -> str:
    """ADDR of a CONNECT_TO entry HOST:PORT:ADDR:PORT (checked already); empty when the entry leaves it out."""
    head, _, _ = entry.rpartition(":")
    if head.endswith("]"):
        return head[head.rindex("["):]
    return head.rpartition(":")[2]


def server_is_local(urls: list[str], connect_to: tuple[str, ...] = (), spread_to: tuple[str, ...] = ()) -> bool:
    """Whether every server the slots connect to is on this machine: the ``spread_to`` servers (CONNECT_TO
    entries) if any, else the ``connect_to`` addresses, else the URLs' hosts."""
    pinned = [address for address in map(_entry_address, spread_to or connect_to) if address]
    hosts = pinned or [urlsplit(url).hostname or "" for url in urls]
    return bool(hosts) and all(is_loopback(host) for host in hosts)


def engine_threads(concurrency: int, request_size: int, local: bool, cores: int | None = None) -> int:
    """The default thread count: every core for a remote server; for a local one, half the cores while
    requests are of 1 MiB or more and each thread has at most 1024 in flight.  Never more threads than
    transfers in flight."""
    cores = cores or os.cpu_count() or 1
    wanted = cores
    if local and request_size >= BYTES_BOUND:
        wanted = max(cores // 2, -(-concurrency // TRANSFERS_PER_THREAD))
    return max(1, min(wanted, cores, concurrency))

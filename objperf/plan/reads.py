"""Read workloads: what to ask for, how hard, how long, where the bodies go."""

from __future__ import annotations

import re
import socket
from dataclasses import asdict, dataclass, replace

from objperf.core.errors import UsageError
from objperf.core.steady import CAP_S, TOLERANCE_PCT, WINDOW_S
from objperf.plan.bounds import check_run_numbers
from objperf.plan.threads import engine_threads, server_is_local

SINKS = ("ram", "discard", "file")
READ_OPS = ("get", "head", "delete")  # what a read plan's requests are (delete: each key once, by objperf delete)
ENGINES = ("curl", "requests")
# libcurl's receive buffer per slot: where each slot's starts, and the most it grows to while its reads
# fill it (the engine's adapt.pxi).  A stream whose reads fill the buffer (nginx from memory; a local store
# read by a client that shares its cores) grows to the most; one that trickles shrinks toward 8 KiB.
RECEIVE_BUFFER = 128 << 10
RECEIVE_BUFFER_MAX = 1 << 20
RECEIVE_BUFFERS_TOTAL = 32 << 20  # 256 slots of 128 KiB; what the slots may grow to together, too
# 4096 slots of 8 KiB, each stream a few hundred KiB/s: 32 MiB less peak RSS than 16 KiB, the same Gbps and
# CPU per GiB (256 KiB ranges from nginx, 3 rounds); 4 KiB saved 17 MiB more for 10% more CPU per GiB.
RECEIVE_BUFFER_MIN = 8 << 10
# libcurl's CONNECT_TO: HOST:PORT:ADDR:PORT, any part but the last pair may be empty, IPv6 in brackets.
_HOST, _PORT = r"(?:\[[0-9A-Za-z:.%]+\]|[^:\[\]]*)", r"(\d{0,5})"
_CONNECT_TO = re.compile(rf"{_HOST}:{_PORT}:({_HOST}):{_PORT}")


# A read at least this long (or timed) has the RAM sink's slot buffers in huge pages: cheaper to copy into by
# about 0.03 CPU-s/GiB, slower to fault before the first request by up to 0.25 s for 128 MiB (page_array).
HUGE_PAGES_FROM = 8 << 30


def huge_pages_pay(workload: ReadWorkload, sizes: list[int]) -> bool:
    """Whether the read ``workload`` plans is long enough to win back huge pages' slower fault: a timed run,
    or a budget of bytes or requests (else one pass over ``sizes``) of at least HUGE_PAGES_FROM."""
    if workload.duration:
        return True
    if workload.bytes:
        planned = workload.bytes
    elif workload.requests:
        planned = workload.requests * workload.range_size
    else:
        planned = sum(sizes)
    return planned >= HUGE_PAGES_FROM


def range_count(size: int, range_size: int) -> int:
    """How many ranged GETs read an object once (an empty object is still one GET).  The engine plans
    the same in C (plan.pxi)."""
    return max(1, -(-size // range_size))


class SequentialPlan:
    """One pass over every range of every object, each exactly once, keys taken in turn while they have
    ranges left (objects of different sizes included).  Layer j holds range j of each key with more than j
    ranges; layers with the same keys form a segment.  The engine plans the same in C (plan.pxi), from
    these tables."""

    def __init__(self, counts: list[int]):
        import bisect

        self.order = sorted(range(len(counts)), key=lambda key: -counts[key])  # most ranges first
        ascending = sorted(counts)
        self.segments: list[tuple[int, int, int]] = []  # (first layer, requests before, keys per layer)
        layer = before = 0
        for value in sorted(set(counts)):
            keys = len(counts) - bisect.bisect_left(ascending, value)  # those with at least ``value`` ranges
            self.segments.append((layer, before, keys))
            before += (value - layer) * keys
            layer = value
        self.total = before  # requests in one pass
        self._befores = [b for _, b, _ in self.segments]

    def __call__(self, n: int) -> tuple[int, int]:
        """Request ``n`` (passes repeat): (key, range index)."""
        import bisect

        m = n % self.total
        layer, before, keys = self.segments[bisect.bisect_right(self._befores, m) - 1]
        return self.order[(m - before) % keys], layer + (m - before) // keys


def check_connect_to(entries) -> None:
    """libcurl ignores a CONNECT_TO entry it cannot parse, and the run would measure the server that
    DNS gives instead of the one pinned: refuse it."""
    for entry in entries:
        match = _CONNECT_TO.fullmatch(entry)
        if not match or not (match[2] or match[3]) or any(p and int(p) > 65535 for p in (match[1], match[3])):
            raise UsageError(f"bad --connect-to {entry!r}: expected HOST:PORT:ADDR:PORT, as 127.0.0.1:9000:[::1]:9000 "
                             "(HOST and PORT may be empty to match any)")


_SERVER = re.compile(r"(\[[0-9A-Fa-f:.%]+\]|[^:\[\]]+):(\d{1,5})")


def spread_entries(servers) -> tuple[str, ...]:
    """``--spread-to`` servers (ADDR:PORT) as the CONNECT_TO entries the engine deals to its slots:
    every request of a slot goes to its server, whatever host and port the URL names."""
    entries = []
    for server in servers:
        match = _SERVER.fullmatch(server)
        if not match or int(match[2]) > 65535:
            raise UsageError(f"bad --spread-to {server!r}: expected ADDR:PORT, as 10.0.0.2:9000 or [fd00::2]:9000")
        entries.append(f"::{server}")
    return tuple(entries)


def check_interface(interface: str | None) -> None:
    """A source that this host does not have would fail every request (libcurl error 45) after the
    checks that come before a run had passed: refuse it now.  One source or several, comma-separated
    (the slots are dealt to them round robin); each in libcurl's forms: a NIC name or a local address,
    ``if!NAME`` (a NIC only), ``host!ADDRESS`` (an address only)."""
    if interface is not None and not [source for source in interface.split(",") if source]:
        raise UsageError("bad --interface: give a source address or NIC name (several: comma-separated)")
    for source in (interface or "").split(","):
        if not source:
            continue
        kind, _, name = source.partition("!") if source.startswith(("if!", "host!")) else ("", "", source)
        nic = kind != "host" and name in {n for _, n in socket.if_nameindex()}
        if not (nic or kind != "if" and _can_bind(name)):
            raise UsageError(f"bad --interface {source!r}: neither a network interface nor a local address "
                             "of this host")


def _can_bind(host: str) -> bool:
    try:
        found = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICSERV)
    except (OSError, UnicodeError):
        return False
    for family, kind, proto, _, address in found:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.bind(address)
            return True
        except OSError:
            continue
    return False


def default_receive_buffer(concurrency: int) -> int:
    """The receive buffer each of ``concurrency`` slots starts with when none is asked for."""
    return max(RECEIVE_BUFFER_MIN, min(RECEIVE_BUFFER, RECEIVE_BUFFERS_TOTAL // concurrency // 1024 * 1024))


def receive_buffer_max(concurrency: int) -> int:
    """The most each of ``concurrency`` slots' receive buffers grows to when none is asked for: together
    within RECEIVE_BUFFERS_TOTAL."""
    return max(default_receive_buffer(concurrency),
               min(RECEIVE_BUFFER_MAX, RECEIVE_BUFFERS_TOTAL // concurrency // 1024 * 1024))


@dataclass
class ReadWorkload:
    concurrency: int = 16
    threads: int | None = None  # None: settled per run by plan.threads (with_threads)
    range_size: int = 8 << 20
    random_ranges: bool = False
    op: str = "get"  # "get": ranged GETs; "head": each key's headers (a stat); "delete": each key deleted
    sink: str = "ram"
    sink_dir: str | None = None
    duration: float | None = None
    requests: int | None = None
    bytes: int | None = None
    ip: str = "any"
    connect_to: tuple[str, ...] = ()
    spread_to: tuple[str, ...] = ()  # servers (ADDR:PORT) the slots are dealt to, round robin
    interface: str | None = None
    http_version: str = "1.1"
    verify: bool = False
    checksum_mode: bool = False  # ask for each object's checksum (x-amz-checksum-mode) and check whole reads by it
    timeout: float = 300.0
    connect_timeout: float = 10.0
    buffer_size: int | None = None  # libcurl's receive buffer per slot; None: receive_buffer() chooses
    keepalive: bool = True  # False: a new connection (and TLS handshake) for every request
    engine: str = "curl"
    seed: int = 0x9E3779B97F4A7C15
    rate: float | None = None  # open loop: requests started a second on a schedule (wrk2's -R); None: closed loop
    max_rate: int | None = None  # bytes a second in all, shared by the slots
    until_steady: bool = False  # end once the throughput has held (objperf.analysis.steady); the budget still bounds
    steady_window: float = WINDOW_S  # steady: this long in a row, each sample within steady_tolerance % of the mean
    steady_tolerance: float = TOLERANCE_PCT

    def capped(self) -> ReadWorkload:
        """This workload, bounded: a run --until-steady with no duration, request or byte budget ends after
        ``core.steady.CAP_S`` at most, if its throughput never holds."""
        if self.until_steady and not (self.duration or self.requests or self.bytes):
            return replace(self, duration=CAP_S)
        return self

    def validate(self) -> None:
        if self.concurrency < 1:
            raise UsageError(f"concurrency must be at least 1, not {self.concurrency}")
        check_run_numbers(self)
        if self.threads is not None and self.threads < 1:
            raise UsageError(f"threads must be at least 1, not {self.threads}")
        if self.range_size < 1:
            raise UsageError("range size must be at least 1 byte")
        if self.op not in READ_OPS:
            raise UsageError(f"op must be one of {', '.join(READ_OPS)}, not {self.op!r}")
        if self.op != "get":
            asked = [name for name, given in (("--sink file", self.sink == "file"), ("--verify", self.verify),
                                              ("--checksum-mode", self.checksum_mode),
                                              ("--bytes", self.bytes is not None),
                                              ("--engine requests", self.engine == "requests")) if given]
            if asked:
                raise UsageError(f"a {self.op.upper()} has no body: {', '.join(asked)} go with GETs")
        if self.checksum_mode and self.engine == "requests":
            raise UsageError("--checksum-mode checks answers in the curl engine: not with --engine requests")
        if self.sink not in SINKS:
            raise UsageError(f"sink must be one of {', '.join(SINKS)}, not {self.sink!r}")
        if self.sink == "file" and not self.sink_dir:
            raise UsageError("the file sink needs --sink-dir")
        if self.ip not in ("any", "4", "6"):
            raise UsageError(f"ip must be 4, 6 or any, not {self.ip!r}")
        if self.http_version not in ("1.1", "2"):
            raise UsageError(f"http version must be 1.1 or 2, not {self.http_version!r}")
        if self.engine not in ENGINES:
            raise UsageError(f"engine must be one of {', '.join(ENGINES)}, not {self.engine!r}")
        if self.buffer_size is not None and not 1024 <= self.buffer_size <= 10 * 1024 * 1024:
            raise UsageError("buffer size must be between 1 KiB and 10 MiB (libcurl's limits)")
        for name in ("duration", "requests", "bytes"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise UsageError(f"{name} must be positive")
        check_connect_to(self.connect_to)
        spread_entries(self.spread_to)
        check_interface(self.interface)
        if self.rate is not None and not 0 < self.rate < 1e9:
            raise UsageError(f"rate must be a positive number of requests a second, not {self.rate}")
        if self.max_rate is not None and self.max_rate < 1:
            raise UsageError("max rate must be at least 1 byte a second")
        if self.engine == "requests" and (self.rate or self.max_rate):
            raise UsageError("the requests engine takes neither --rate nor --max-rate")
        if self.engine == "requests" and (self.ip != "any" or self.connect_to or self.spread_to or self.interface
                                          or self.http_version != "1.1" or not self.keepalive):
            raise UsageError("the requests engine supports neither --ip, --connect-to, --spread-to, --interface, "
                             "HTTP/2 nor --no-keepalive")

    @property
    def body_sink(self) -> str:
        """Where bodies go: the sink asked for, and none for HEADs (no buffer is made for them)."""
        return self.sink if self.op == "get" else "discard"

    @property
    def signed_headers(self) -> dict[str, str]:
        """The headers every request sends, signed in its URL: checksum mode's."""
        return {"x-amz-checksum-mode": "ENABLED"} if self.checksum_mode else {}

    def receive_buffer(self) -> int:
        """libcurl's receive buffer per slot: the one asked for, else, to start with, 128 KiB while the
        slots' buffers together stay within RECEIVE_BUFFERS_TOTAL, and less (down to 8 KiB) beyond.  libcurl
        allocates it per slot whatever the object's size, and many slots share the link: 4096 slots of
        128 KiB were 512 MiB of the client's memory for streams that each moved well under 1 MiB/s."""
        if self.buffer_size is not None:
            return self.buffer_size
        return default_receive_buffer(self.concurrency)

    def receive_buffer_max(self) -> int:
        """The most a slot's receive buffer grows to while its reads fill it: the one asked for stays."""
        if self.buffer_size is not None:
            return self.buffer_size
        return receive_buffer_max(self.concurrency)

    def with_threads(self, urls: list[str], largest_object: int) -> ReadWorkload:
        """This workload with its engine threads settled for the servers of ``urls``: the ones asked for,
        else ``plan.threads.engine_threads``'s choice."""
        if self.threads:
            return self
        local = server_is_local(urls, self.connect_to, self.spread_to)
        return replace(self, threads=engine_threads(self.concurrency, min(self.range_size, largest_object), local))

    def describe(self) -> dict:
        return {**asdict(self), "buffer_size": self.receive_buffer(), "buffer_max": self.receive_buffer_max()}

"""What an engine is built from, made and checked in Python and handed over whole: its configuration (how
many slots and threads, where bodies go, the connections' options) and its feed, either a read plan (the
objects whose ranges the engine requests itself) or a job queue (requests handed in one by one, uploads
sent from a payload)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SINKS = ("discard", "ram", "file")
PLAN_OPS = ("get", "head", "delete")  # what a plan's requests may be
RING_ROWS = 16384  # rows each engine thread's ring holds between two drains (state.pxi's RING_ROWS)


@dataclass(frozen=True)
class EngineConfig:
    """``spread_to``: CONNECT_TO entries dealt to the slots round robin, each ahead of ``connect_to`` in its
    slot's own list (a cluster's servers reached without a balancer).  ``interface``: a source address or NIC,
    or several separated by commas, dealt to the slots the same way.  ``keepalive=False`` closes each
    connection after its request.  Over TLS, ``ca_file`` replaces the system's CA certificates and
    ``verify_tls=False`` trusts any certificate."""

    concurrency: int = 16
    threads: int = 1
    range_size: int = 8 << 20
    op: str = "get"  # a plan's requests: "get" (ranges), "head" (each key's headers) or "delete" (each key)
    sink: str = "ram"
    random_ranges: bool = False
    max_requests: int = -1
    max_bytes: int = -1
    verify: bool = False
    ip: str = "any"
    connect_to: tuple[str, ...] = ()
    spread_to: tuple[str, ...] = ()
    interface: str | None = None
    http_version: str = "1.1"
    tls: bool = False
    buffer_size: int = 128 << 10
    buffer_max: int = 0  # > buffer_size: each slot's receive buffer follows its reads up to this (adapt.pxi)
    buffer_min: int = 8 << 10  # ... and down to this
    timeout: float = 300.0
    connect_timeout: float = 10.0
    seed: int = 0x9E3779B97F4A7C15
    ring_capacity: int = RING_ROWS
    ca_file: str | None = None
    verify_tls: bool = True
    keepalive: bool = True
    rate: float = 0.0  # open loop: requests started a second on a schedule (plan mode); 0: as answers allow
    max_rate: int = 0  # bytes a second in all, shared by the slots; 0: no cap
    headers: tuple[str, ...] = ()  # header lines every request sends ("x-amz-checksum-mode: ENABLED")
    checksum_mode: bool = False  # whole-object GETs are checked against the CRC-32 the store names (needs verify)
    huge_pages: bool = True  # the RAM sink's slot buffers in huge pages: slower to fault, cheaper to copy into

    @property
    def slot_speed(self) -> int:
        """Each slot's share of ``max_rate`` (libcurl caps each transfer; the slots together keep to it)."""
        return max(1, self.max_rate // self.concurrency) if self.max_rate > 0 else 0

    @property
    def receive_buffer_bounds(self) -> tuple[int, int]:
        """The least and the most a slot's receive buffer may be: equal when it stays ``buffer_size``.  It
        follows its reads over cleartext HTTP/1.1 alone: TLS hands libcurl a record (16 KiB) a read, and
        HTTP/2's frames reach a transfer through the connection's own buffers."""
        if self.buffer_max <= self.buffer_size or self.tls or self.http_version != "1.1":
            return self.buffer_size, self.buffer_size
        return min(self.buffer_min, self.buffer_size), self.buffer_max

    def check(self) -> None:
        if self.concurrency < 1 or self.threads < 1 or self.range_size < 1 or self.ring_capacity < 1:
            raise ValueError("concurrency, threads, range_size and ring_capacity must be positive")
        if self.sink not in SINKS:
            raise ValueError(f"sink must be one of {sorted(SINKS)}")
        if self.ip not in ("any", "4", "6"):
            raise ValueError("ip must be 'any', '4' or '6'")
        if self.op not in PLAN_OPS:
            raise ValueError(f"op must be one of {', '.join(PLAN_OPS)}")
        if self.op != "get" and self.sink == "file":
            raise ValueError(f"a {self.op.upper()} has no body to write to the file sink")
        if self.http_version not in ("1.1", "2"):
            raise ValueError("http_version must be '1.1' or '2'")
        if not 1024 <= self.buffer_size <= 10 << 20 or self.buffer_max > 10 << 20 or self.buffer_min < 1024:
            raise ValueError("receive buffers are 1 KiB to 10 MiB (libcurl's limits)")
        if not (self.rate >= 0 and self.max_rate >= 0):
            raise ValueError("rate and max_rate must not be negative")
        if any(not isinstance(h, str) or ":" not in h or any(c in h for c in "\r\n\0") for h in self.headers):
            raise ValueError("a header line is one 'name: value', without CR, LF or NUL")

    @property
    def sources(self) -> list[str]:
        """Source addresses or NICs (CURLOPT_INTERFACE), dealt to the slots round robin."""
        return [name for name in (self.interface or "").split(",") if name]


@dataclass(frozen=True)
class ReadPlan:
    """Plan mode: the engine reads every range of these objects (``urls[k]`` of ``sizes[k]`` bytes), each into
    ``fds[k]`` with the file sink."""

    urls: Sequence[Any]
    sizes: Sequence[int]
    fds: Sequence[int] | None = None

    def check(self, config: EngineConfig) -> None:
        if len(self.urls) == 0 or len(self.sizes) != len(self.urls):
            raise ValueError("urls and sizes must be non-empty and the same length")
        if config.sink == "file" and (self.fds is None or len(self.fds) != len(self.urls)):
            raise ValueError("the file sink needs one open file descriptor per key")
        if any(size < 0 for size in self.sizes):
            raise ValueError("object sizes must be >= 0")


@dataclass(frozen=True)
class JobQueue:
    """Queue mode: at most ``capacity`` jobs unfinished at a time, handed in with ``Engine.submit``; uploads send
    slices of ``payload`` (a C-contiguous uint8 array)."""

    capacity: int
    payload: Any = None

    def check(self, config: EngineConfig) -> None:
        if self.capacity < 1:
            raise ValueError("a job queue holds at least one job")
        if config.sink == "file":
            raise ValueError("the file sink needs plan mode")
        if config.rate:
            raise ValueError("an open-loop rate is for plan mode: a queue's jobs come as they are submitted")
        if config.op != "get":
            raise ValueError("a queue's jobs each say what they are: op is for plan mode")


def plan_engine(urls: Sequence[Any], sizes: Sequence[int], *, fds: Sequence[int] | None = None, **config: Any):
    """An engine that reads ``urls`` (plan mode), configured by ``config`` (``EngineConfig``'s fields)."""
    from objperf._engine.core import Engine

    return Engine(EngineConfig(**config), ReadPlan(urls, sizes, fds))


def queue_engine(capacity: int, *, payload: Any = None, **config: Any):
    """An engine fed jobs one by one (queue mode), configured by ``config`` (``EngineConfig``'s fields)."""
    from objperf._engine.core import Engine

    return Engine(EngineConfig(**config), JobQueue(capacity, payload))

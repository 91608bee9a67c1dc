"""What every queue-mode workload beyond GET and PUT shares (a LIST run, a batch delete, server-side copies, a
mix): how its engine connects, checked once, and the engine's settings made of it."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.core.errors import UsageError
from objperf.plan.bounds import check_run_numbers
from objperf.plan.reads import RECEIVE_BUFFER, check_connect_to, check_interface, spread_entries


@dataclass(kw_only=True)
class QueuedRun:
    concurrency: int = 1
    threads: int | None = None  # engine threads; None: one (its requests are small, their answers parsed here)
    duration: float | None = None
    requests: int | None = None
    ip: str = "any"
    connect_to: tuple[str, ...] = ()
    spread_to: tuple[str, ...] = ()
    interface: str | None = None
    http_version: str = "1.1"
    timeout: float = 300.0
    connect_timeout: float = 10.0
    buffer_size: int | None = None
    keepalive: bool = True
    max_rate: int | None = None

    def check_run(self) -> None:
        """The numbers and connection settings, one line for any that cannot be."""
        if self.concurrency < 1:
            raise UsageError(f"concurrency must be at least 1, not {self.concurrency}")
        check_run_numbers(self)
        if self.threads is not None and self.threads < 1:
            raise UsageError(f"threads must be at least 1, not {self.threads}")
        for name in ("duration", "requests"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise UsageError(f"{name} must be positive")
        if self.buffer_size is not None and not 1024 <= self.buffer_size <= 10 * 1024 * 1024:
            raise UsageError("buffer size must be between 1 KiB and 10 MiB (libcurl's limits)")
        if self.max_rate is not None and self.max_rate < 1:
            raise UsageError("max rate must be at least 1 byte a second")
        if self.ip not in ("any", "4", "6") or self.http_version not in ("1.1", "2"):
            raise UsageError("ip must be 4, 6 or any; http version 1.1 or 2")
        check_connect_to(self.connect_to)
        spread_entries(self.spread_to)
        check_interface(self.interface)

    def engine_settings(self, endpoint: str) -> dict:
        """``queue_engine``'s settings for this workload against ``endpoint`` (TLS settings aside)."""
        return dict(concurrency=self.concurrency, threads=self.threads or 1, sink="discard", ip=self.ip,
                    connect_to=tuple(self.connect_to), spread_to=tuple(spread_entries(self.spread_to)),
                    interface=self.interface, http_version=self.http_version, tls=endpoint.startswith("https://"),
                    buffer_size=self.buffer_size or RECEIVE_BUFFER, keepalive=self.keepalive,
                    max_rate=self.max_rate or 0, timeout=self.timeout, connect_timeout=self.connect_timeout)

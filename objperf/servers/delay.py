"""Distance on one machine: a TCP relay that holds every chunk a set delay in each direction, as a WAN
link of that one-way latency would (what toxiproxy's latency toxic does).  This kernel has no ``netem``;
the relay needs nothing but sockets.

``with DelayRelay(("127.0.0.1", port), one_way_s=0.02) as relay:`` — connect to ``relay.address``
instead of the server.  A chunk read at time t is written on at t + ``one_way_s``, in order; the
relay opens its connection to the server when the client connects to it, so a TCP connect ends at the
relay and measures no distance (objperf's summary then reads a round trip of well under a millisecond
while its TTFB carries two delays)."""

from __future__ import annotations

import contextlib
import heapq
import socket
import threading
import time

CHUNK = 256 << 10


class DelayRelay:
    def __init__(self, upstream: tuple[str, int], *, one_way_s: float, host: str = "127.0.0.1"):
        self.upstream = upstream
        self.one_way_s = one_way_s
        self._listener = socket.create_server((host, 0))
        self._stopping = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._accepting = threading.Thread(target=self._accept, name="delay-relay", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        return self._listener.getsockname()[:2]

    @property
    def endpoint(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def __enter__(self) -> DelayRelay:
        self._accepting.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=10)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                _Direction(source, sink, self.one_way_s, self._stopping).start()


class _Direction:
    """One direction of one connection: a reader that stamps each chunk with when it is due, and a writer that
    sends it then.  A closed source closes the sink's write side once everything read has been delivered."""

    def __init__(self, source: socket.socket, sink: socket.socket, delay: float, stopping: threading.Event):
        self.source, self.sink, self.delay, self.stopping = source, sink, delay, stopping
        self.pending: list[tuple[float, int, bytes]] = []
        self.count = 0
        self.ready = threading.Condition()
        self.ended = False

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True, name="delay-read").start()
        threading.Thread(target=self._write, daemon=True, name="delay-write").start()

    def _read(self) -> None:
        while True:
            try:
                data = self.source.recv(CHUNK)
            except OSError:
                data = b""
            with self.ready:
                if data:
                    self.count += 1
                    heapq.heappush(self.pending, (time.monotonic() + self.delay, self.count, data))
                else:
                    self.ended = True
                self.ready.notify()
            if not data:
                return

    def _write(self) -> None:
        while not self.stopping.is_set():
            with self.ready:
                while not self.pending and not self.ended:
                    self.ready.wait(0.5)
                if not self.pending and self.ended:
                    break
                due, _, data = self.pending[0]
                wait = due - time.monotonic()
                if wait > 0:
                    self.ready.wait(wait)
                    continue
                heapq.heappop(self.pending)
            try:
                self.sink.sendall(data)
            except OSError:
                break
        with contextlib.suppress(OSError):
            self.sink.shutdown(socket.SHUT_WR)

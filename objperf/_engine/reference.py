"""The reference engine: the same plan, rows and sinks as the libcurl engine,
built from ``requests`` and one thread per slot.  It is slow, simple and
obviously right; the tests run it beside the C engine on the same workloads and
compare bytes, statuses and row counts.  ``--engine requests`` exposes it.

What ``requests`` cannot see is left empty: DNS/connect/TLS phase times are
NaN, ``new_conn`` is False, ``ttfb_s`` is the time to the response headers."""

from __future__ import annotations

import errno
import os
import random
import threading
import time
import zlib

import numpy as np
import requests
import urllib3

from objperf.core.curl_codes import (
    CURLE_COULDNT_CONNECT,
    CURLE_OPERATION_TIMEDOUT,
    CURLE_PARTIAL_FILE,
    CURLE_RANGE_ERROR,
    CURLE_RECV_ERROR,
    CURLE_WRITE_ERROR,
)
from objperf.core.errors import UsageError
from objperf.core.sanitize import printable
from objperf.core.schema import CUT_CURL_CODE, ENGINE_COLUMNS, ETAG_BYTES, OP_GET, S3_ERROR_BYTES
from objperf.plan.reads import SequentialPlan, range_count
from objperf.s3.xml import element_text

_CHUNK = 1 << 20



def refuse_dot_segments(url: str) -> None:
    """urllib3 resolves a path's ``.`` and ``..`` segments, so a key holding them would be asked for as another
    object's path than the one named and signed: refused before any request (libcurl's engine sends it as is)."""
    from urllib.parse import unquote, urlsplit

    segments = unquote(urlsplit(url).path).split("/")
    if "." in segments or ".." in segments:
        raise UsageError(f"--engine requests cannot ask for {printable(urlsplit(url).path)!r} as named (its HTTP "
                         "library resolves '.' and '..' segments to another path); the curl engine can")


def range_as_asked(status: int, content_range: str | None, offset: int, length: int) -> bool:
    """Whether a 2xx answer to a GET of ``length`` bytes at ``offset`` is that range, by S3's contract: a 206 names
    it in Content-Range, and a 200 that names a range (some gateways send one) names it too."""
    if status == 206 and not content_range:
        return False
    if status not in (200, 206) or not content_range:
        return True
    unit, _, spec = content_range.strip().partition(" ")
    first, _, rest = spec.partition("-")
    last = rest.partition("/")[0]
    return unit == "bytes" and first.isdigit() and last.isdigit() and int(first) == offset \
        and int(last) == offset + length - 1


class _Plan:
    """Which request comes next: the sequential plan's (every range of every object once a pass), or a
    random range of key n % K."""

    def __init__(self, sizes, range_size, random_ranges, max_requests, max_bytes, seed):
        self.sizes = list(sizes)
        self.range_size = range_size
        self.nranges = [range_count(s, range_size) for s in self.sizes]
        self.sequential = SequentialPlan(self.nranges)
        self.random_ranges = random_ranges
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.seed = seed
        self.next_req = 0
        self.claimed = 0
        self.deadline = 0.0
        self.stopping = False
        self.lock = threading.Lock()

    def claim(self, rng: random.Random):
        with self.lock:
            if self.stopping or (self.deadline and time.monotonic() >= self.deadline):
                return None
            n = self.next_req
            self.next_req += 1
            if 0 <= self.max_requests <= n:
                return None
            if self.random_ranges:
                key = n % len(self.sizes)
                r = rng.randrange(self.nranges[key])
            else:
                key, r = self.sequential(n)
            offset = r * self.range_size
            length = min(self.range_size, self.sizes[key] - offset)
            if self.max_bytes >= 0:
                prev, self.claimed = self.claimed, self.claimed + length
                if prev >= self.max_bytes:
                    return None
            return key, offset, length


class RequestsEngine:
    """Drop-in for ``objperf._engine.core.Engine`` (same constructor keywords, same methods).
    A thread and a connection per slot: the caller checks the open-file limit for them."""

    def __init__(self, urls, sizes, *, concurrency=16, range_size=8 << 20, sink="ram", random_ranges=False,
                 fds=None, max_requests=-1, max_bytes=-1, verify=False, timeout=300.0, connect_timeout=10.0,
                 seed=0x9E3779B97F4A7C15, ca_file=None, verify_tls=True, **_curl_only):
        self.urls = [u.decode() if isinstance(u, bytes) else u for u in urls]
        for url in self.urls:
            refuse_dot_segments(url)
        self.plan = _Plan(sizes, range_size, random_ranges, max_requests, max_bytes, seed)
        self.concurrency = concurrency
        self.thread_count = concurrency
        self.sink = sink
        self.fds = fds
        self.verify = verify
        self.timeout = (connect_timeout, timeout)
        self.tls_verify = (ca_file or True) if verify_tls else False
        if not verify_tls:
            from objperf.s3.settings import quiet_insecure_warnings

            quiet_insecure_warnings()
        cap = min(range_size, max(max(sizes), 1))
        self._buffers = [np.empty(cap, dtype=np.uint8) for _ in range(concurrency)] if sink == "ram" else []
        self._rows: list[dict] = []
        self._rows_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._abort = False
        self._bytes = self._requests = self._errors = 0

    def start(self, duration: float = 0.0) -> None:
        if duration > 0:
            self.plan.deadline = time.monotonic() + duration
        for slot in range(self.concurrency):
            t = threading.Thread(target=self._worker, args=(slot,), name=f"objperf-ref-{slot}", daemon=True)
            self._threads.append(t)
            t.start()

    def stop(self, abort: bool = False) -> None:
        self.plan.stopping = True
        self._abort = self._abort or abort

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def join(self, timeout=None) -> bool:
        for t in self._threads:
            t.join(timeout)
        return not self.running

    def progress(self):
        return self._bytes, self._requests, self._errors

    def set_urls(self, urls) -> None:
        if len(urls) != len(self.urls):
            raise ValueError(f"set_urls needs {len(self.urls)} URLs, one per object, not {len(urls)}")
        self.urls = [u.decode() if isinstance(u, bytes) else u for u in urls]  # one assignment: workers see old or new

    def slot_buffer(self, index: int) -> np.ndarray:
        if not self._buffers:
            raise ValueError("slot buffers exist only with the RAM sink")
        return self._buffers[index]

    def drain(self):
        with self._rows_lock:
            rows, self._rows = self._rows, []
        if not rows:
            return None
        return {name: np.array([row[name] for row in rows], dtype=dtype) for name, dtype in ENGINE_COLUMNS.items()}

    fault = None  # requests starts every request it plans
    rows_dropped = 0
    receive_buffers: list[int] = []  # requests reads as urllib3 does: no buffer of objperf's

    def close(self, timeout: float = 10.0) -> None:
        if self.running:
            self.stop(abort=True)
            self.join(timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _worker(self, slot: int) -> None:
        session = requests.Session()
        rng = random.Random(self.plan.seed + slot)
        scratch = bytearray(_CHUNK)
        while not self._abort:
            job = self.plan.claim(rng)
            if job is None:
                break
            row = self._one_request(session, slot, *job, scratch)
            with self._rows_lock:
                self._rows.append(row)
        session.close()

    def _one_request(self, session, slot, key, offset, length, scratch):
        headers = {"Range": f"bytes={offset}-{offset + length - 1}"} if length > 0 else {}
        t_start = time.time()
        t0 = time.perf_counter()
        status, s3_error, curl_code, got, crc, etag = 0, b"", 0, 0, 0, b""
        remote_ip, remote_port, local_ip, local_port = b"", 0, b"", 0
        ttfb, total = float("nan"), 0.0  # no answer: no time to first byte
        try:
            # verify on each request: a session's would lose to REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE.
            # Never to another place: a redirect is the store's answer, a failed row, as libcurl's engine has it
            resp = session.get(self.urls[key], headers=headers, stream=True, timeout=self.timeout,
                               verify=self.tls_verify, allow_redirects=False)
            ttfb = time.perf_counter() - t0
            status = resp.status_code
            etag = resp.headers.get("ETag", "").encode()[:ETAG_BYTES]
            try:
                sock = resp.raw.connection.sock
                peer, local = sock.getpeername(), sock.getsockname()
                remote_ip, remote_port, local_ip, local_port = peer[0].encode(), peer[1], local[0].encode(), local[1]
            except (AttributeError, OSError):
                pass
            if status >= 300:
                s3_error = (element_text(resp.raw.read(64 << 10), "Code") or "").encode()[:S3_ERROR_BYTES]
            elif not range_as_asked(status, resp.headers.get("Content-Range"), offset, length):
                curl_code = CURLE_RANGE_ERROR  # the bytes are not the range's: none is kept (objperf._engine rows.pxi)
            else:
                got, crc, ended = self._sink_body(resp.raw, slot, key, offset, length, scratch)
                if ended:
                    curl_code = ended
                elif 200 <= status < 300 and got < length:
                    curl_code = CURLE_PARTIAL_FILE
                if curl_code in (CURLE_RANGE_ERROR, CURLE_PARTIAL_FILE):
                    got = 0
            resp.close()
        except requests.exceptions.Timeout:  # ConnectTimeout is both a Timeout and a ConnectionError
            curl_code = CURLE_OPERATION_TIMEDOUT
        except requests.exceptions.ConnectionError as exc:
            timed_out = any(isinstance(arg, urllib3.exceptions.TimeoutError) for arg in exc.args)
            curl_code = CURLE_OPERATION_TIMEDOUT if timed_out else CURLE_COULDNT_CONNECT
        except urllib3.exceptions.TimeoutError:  # while reading the body
            curl_code = CURLE_OPERATION_TIMEDOUT
        except urllib3.exceptions.HTTPError:
            curl_code = CURLE_RECV_ERROR
            curl_code = CURLE_OPERATION_TIMEDOUT
        except OSError as exc:
            curl_code = CURLE_WRITE_ERROR if exc.errno in (errno.ENOSPC, errno.EBADF) else CURLE_RECV_ERROR
        except requests.RequestException:
            curl_code = CURLE_RECV_ERROR
        total = time.perf_counter() - t0
        self._requests += 1
        self._errors += int(curl_code != CUT_CURL_CODE and (curl_code != 0 or status >= 400 or status == 0))
        family = 0 if not remote_ip else (6 if b":" in remote_ip else 4)
        nan = float("nan")
        return dict(thread=slot, slot=slot, op=OP_GET, key_index=key, offset=offset, length=length, attempt=0,
                    status=status, s3_error=s3_error, curl_code=curl_code, bytes=got, t_start=t_start, dns_s=nan,
                    connect_s=nan, tls_s=nan, pretransfer_s=nan, ttfb_s=ttfb, total_s=total, t_intended=t_start,
                    remote_ip=remote_ip,
                    remote_port=remote_port, local_ip=local_ip, local_port=local_port, ip_family=family,
                    http_version=11, new_conn=False, tls_resumed=-1, crc32=crc if self.verify else 0, etag=etag)

    def _time_is_up(self) -> bool:
        return self._abort or bool(self.plan.deadline and time.monotonic() >= self.plan.deadline)

    def _sink_body(self, raw, slot, key, offset, length, scratch):
        """(bytes received, their CRC, 0 or the curl code it ended early with: cut at an abort or the deadline,
        or more bytes than the range asked for, none of which land past it)"""
        got, crc = 0, 0
        view = memoryview(scratch)
        buf = memoryview(self._buffers[slot]) if self._buffers else None
        while True:
            if self._time_is_up():
                return got, crc, CUT_CURL_CODE
            n = raw.readinto(view)
            if not n:
                break
            if length < got + n:
                return got, crc, CURLE_RANGE_ERROR
            chunk = view[:n]
            if buf is not None and got < len(buf):
                room = min(n, len(buf) - got)
                buf[got:got + room] = chunk[:room]
            elif self.sink == "file":
                os.pwrite(self.fds[key], chunk, offset + got)
            if self.verify:
                crc = zlib.crc32(chunk, crc)
            got += n
            self._bytes += n
        return got, crc, 0

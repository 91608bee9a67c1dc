# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""objperf's load engine: libcurl multi handles driven without the GIL.

One multi handle per engine thread, exactly ``concurrency`` easy handles
("slots") spread over the threads, so libcurl never queues a request and the
time to first byte it reports is honest.  Every finished request writes one
row into a per-thread ring of preallocated NumPy columns; Python drains the
rings while the run goes, so no Python object is made per request.

The parts, one job each: ``state.pxi`` (the C state), ``callbacks.pxi`` (what libcurl calls), ``rows.pxi``
(a finished request's row), ``start.pxi`` (starting one), ``adapt.pxi`` (each slot's receive buffer sized to
its reads), ``plan.pxi`` and ``queue.pxi`` (where the next request comes from), ``loop.pxi`` (each thread's
gate and loop), ``options.pxi`` (each slot's options), ``memory.pxi`` (the RAM sink's pages), ``payload.pxi``
(the upload payload), ``ring.pxi`` (the row ring, generated from objperf/core/schema.py).  This file holds
``Engine``.

Teardown follows libcurl's order: remove each easy handle from its multi handle,
clean up the easy handles, then the multi handles (``Engine.close``).
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport calloc, free, malloc
from libc.errno cimport EINVAL, ENOSPC, errno
from libc.string cimport memcpy, strchr, strlen, strncpy, strstr
from posix.unistd cimport pwrite

cimport cython
cimport numpy as cnp
import mmap
import os
import threading
import time
import warnings

import numpy as np

from objperf._curl.curl cimport *
from objperf._engine.config import EngineConfig, JobQueue, ReadPlan
from objperf._engine.starting import stop_signals_deferred
from objperf.core.errors import EngineError, RunFailed, describe_os_error
from objperf.core.schema import (ENGINE_COLUMNS, OP_COPY, OP_DELETE, OP_DELETE_OBJECTS, OP_GET, OP_HEAD, OP_LIST, OP_PUT,
                                 OP_UPLOAD_PART, OP_UPLOAD_PART_COPY)
from objperf.plan.reads import SequentialPlan, range_count

cnp.import_array()
curl_global_init(CURL_GLOBAL_DEFAULT)

include "state.pxi"
include "callbacks.pxi"
include "rows.pxi"
include "start.pxi"
include "adapt.pxi"
include "plan.pxi"
include "queue.pxi"
include "loop.pxi"
include "options.pxi"
include "memory.pxi"
include "payload.pxi"

cdef uint64_t RNG_STRIDE = 0x2545F4914F6CDD1D
JOIN_POLL_S = 0.002


# The engine threads hold the engine (their target is its bound method) and it holds them: a cycle.  The
# collector must not clear the lists whose memory C points into before __del__ and __dealloc__ free the C side.
@cython.no_gc_clear
cdef class Engine:
    """Run one workload: ``Engine(config, feed)`` (``plan_engine`` and ``queue_engine`` in
    ``objperf._engine.config`` make one), then ``start()``, ``drain()`` rows while ``running``, ``stop()`` to
    end early, ``join()``, ``close()`` (or use it as a context manager).

    The caller checks resource policy (open files, memory) before it builds an engine: see
    ``objperf.plan.limits``."""

    cdef Shared shared
    cdef ThreadState *threads
    cdef Slot *slots
    cdef int nthreads
    cdef int nslots
    cdef bint closed
    cdef curl_slist *connect_to
    cdef curl_slist *headers
    cdef list _keep          # every object whose memory C points into
    cdef list _current_urls   # the strings the live URL table points into
    cdef list _retired_urls   # (table address, its strings, the generation that replaced it)
    cdef list _rings         # per thread: dict of column arrays
    cdef list _buffers       # per slot: RAM sink buffer (NumPy)
    cdef list _pythreads
    cdef JobTable _jobs      # queue mode: the job table
    cdef tuple _final        # progress() and rows_dropped, kept when close() frees the threads' state
    cdef list _final_rbufs   # receive_buffers, kept when close() frees the slots

    def __cinit__(self, config, feed):
        """``config``: an ``EngineConfig``; ``feed``: a ``ReadPlan`` (the engine makes the requests) or a
        ``JobQueue`` (requests are jobs handed in with ``submit``).  Both are checked whole before any C
        state is made (``objperf._engine.config``)."""
        # Everything __dealloc__ looks at is valid before anything can fail.
        self.shared.finished_fd = -1
        self._keep, self._retired_urls, self._rings, self._buffers, self._pythreads = [], [], [], [], []
        self._current_urls, self._jobs = [], JobTable()
        if not isinstance(config, EngineConfig) or not isinstance(feed, (ReadPlan, JobQueue)):
            raise TypeError("Engine(config: EngineConfig, feed: ReadPlan | JobQueue)")
        config.check()
        feed.check(config)
        self.nthreads = min(config.threads, config.concurrency)
        self.nslots = config.concurrency
        queue = isinstance(feed, JobQueue)
        urls, sizes, fds = ([b""], [0], None) if queue else (feed.urls, feed.sizes, feed.fds)
        self._setup_keys(config, urls, sizes, fds)
        if queue:
            self._setup_queue(feed.capacity, feed.payload)
        else:
            self._setup_sequential_plan(len(urls))
            self._setup_queue(0, None)
        for entry in config.connect_to:
            self.connect_to = curl_slist_append(self.connect_to, entry.encode())
        # An empty Expect: stops libcurl waiting up to a second for "100 Continue" before each body.
        self.headers = self.shared.headers = curl_slist_append(NULL, b"Expect:")
        for line in config.headers:
            self.headers = self.shared.headers = curl_slist_append(self.headers, line.encode())
        self._setup_threads(config)
        self._setup_slots(config, max(max(sizes), 1))

    cdef _setup_keys(self, config, urls, sizes, fds):
        cdef Shared *sh = &self.shared
        cdef int k, nkeys = len(urls)
        sh.max_requests = config.max_requests
        sh.max_bytes = config.max_bytes
        sh.nkeys = nkeys
        sh.range_size = config.range_size
        sh.random_ranges = config.random_ranges
        sh.plan_op = {"get": OPC_GET, "head": OPC_HEAD, "delete": OPC_DELETE}[config.op]
        sh.sink = SINKS[config.sink]
        sh.verify = config.verify
        sh.checksum_mode = config.checksum_mode
        sh.tls = config.tls
        sh.rbuf_min, sh.rbuf_max = config.receive_buffer_bounds
        sh.rate = config.rate
        sh.slot_speed = config.slot_speed
        sh.urls = <char **>calloc(nkeys, sizeof(char *))
        sh.sizes = <int64_t *>calloc(nkeys, sizeof(int64_t))
        sh.nranges = <int64_t *>calloc(nkeys, sizeof(int64_t))
        sh.fds = <int *>calloc(nkeys, sizeof(int))
        if sh.urls == NULL or sh.sizes == NULL or sh.nranges == NULL or sh.fds == NULL:
            raise MemoryError()
        for k in range(nkeys):
            url = urls[k] if isinstance(urls[k], bytes) else urls[k].encode()
            self._current_urls.append(url)
            sh.urls[k] = url
            sh.sizes[k] = sizes[k]
            # a GET plan reads every range of a key; any other op asks for each key once a pass
            sh.nranges[k] = range_count(sizes[k], config.range_size) if config.op == "get" else 1
            sh.fds[k] = fds[k] if fds is not None else -1

    cdef _setup_threads(self, config):
        """One libcurl multi handle, epoll set and row ring per engine thread."""
        cdef int i
        cdef ThreadState *ts
        cdef uint64_t seed = config.seed
        self.threads = <ThreadState *>calloc(self.nthreads, sizeof(ThreadState))
        self.slots = <Slot *>calloc(self.nslots, sizeof(Slot))
        if self.threads == NULL or self.slots == NULL:
            raise MemoryError()
        for i in range(self.nthreads):
            self.threads[i].epfd = self.threads[i].wakefd = -1
        for i in range(self.nslots):
            self.slots[i].job_entry = -1
        per_thread = (self.nslots + self.nthreads - 1) // self.nthreads
        for i in range(self.nthreads):
            ts = &self.threads[i]
            ts.index = i
            ts.shared = &self.shared
            ts.rng = (seed + <uint64_t>i * RNG_STRIDE) | 1  # C arithmetic: wraps, as a seed may
            ts.timer_at = -1.0
            ts.multi = curl_multi_init()
            if ts.multi == NULL:
                raise EngineError("curl_multi_init failed")
            ts.tls_share = op_tls_session_share() if config.tls else NULL
            if op_event_open(&ts.epfd, &ts.wakefd) != 0:
                raise EngineError("cannot create the engine thread's epoll set")
            curl_multi_setopt(ts.multi, CURLMOPT_SOCKETFUNCTION, <curl_socket_callback>on_socket)
            curl_multi_setopt(ts.multi, CURLMOPT_SOCKETDATA, <void *>ts)
            curl_multi_setopt(ts.multi, CURLMOPT_TIMERFUNCTION, <curl_multi_timer_callback>on_timer)
            curl_multi_setopt(ts.multi, CURLMOPT_TIMERDATA, <void *>ts)
            curl_multi_setopt(ts.multi, CURLMOPT_MAXCONNECTS, <long>(per_thread + 4))
            curl_multi_setopt(ts.multi, CURLMOPT_PIPELINING,
                              <long>(CURLPIPE_MULTIPLEX if config.http_version == "2" else CURLPIPE_NOTHING))
            self._rings.append(make_ring(&ts.ring, config.ring_capacity))

    cdef _setup_slots(self, config, int64_t largest):
        """``concurrency`` easy handles dealt to the threads, each with its RAM-sink buffer and options."""
        cdef int i
        cdef Slot *s
        cdef cnp.ndarray arr
        cdef int64_t slot_cap = 0
        spread_to, connect_to, sources = config.spread_to, config.connect_to, config.sources
        if config.sink == "ram":
            slot_cap = min(config.range_size, largest)
            self._buffers = slot_region(self.nslots, slot_cap, config.huge_pages)
        for i in range(self.nslots):
            s = &self.slots[i]
            s.index = i
            s.ts = &self.threads[i % self.nthreads]
            s.url_key = -1
            s.easy = curl_easy_init()
            if s.easy == NULL:
                raise EngineError("curl_easy_init failed")
            if config.sink == "ram":
                arr = self._buffers[i]
                s.buf = <char *>cnp.PyArray_DATA(arr)
                s.cap = slot_cap
            if spread_to:
                s.pin = curl_slist_append(NULL, spread_to[i % len(spread_to)].encode())
                for entry in connect_to:
                    s.pin = curl_slist_append(s.pin, entry.encode())
            s.rbuf = config.buffer_size
            configure_easy(s, self.headers, self.connect_to, self._keep, config.ip,
                           sources[i % len(sources)] if sources else None, config.http_version, config.tls,
                           config.buffer_size, config.timeout, config.connect_timeout, config.keepalive,
                           config.slot_speed)
            configure_tls(s.easy, config.ca_file, config.verify_tls, self._keep, s.ts.tls_share)
            if config.op != "get":  # every request of the plan: headers alone (HEAD), or a DELETE
                check_easy(curl_easy_setopt(s.easy, CURLOPT_NOBODY, <long>1), "CURLOPT_NOBODY")
            if config.op == "delete":
                check_easy(curl_easy_setopt(s.easy, CURLOPT_CUSTOMREQUEST, <char *>b"DELETE"),
                           "CURLOPT_CUSTOMREQUEST")

    cdef _setup_sequential_plan(self, int nkeys):
        cdef Shared *sh = &self.shared
        cdef int k, t
        plan = SequentialPlan([sh.nranges[k] for k in range(nkeys)])
        nsegs = len(plan.segments)
        sh.order = <int64_t *>calloc(nkeys, sizeof(int64_t))
        sh.seg_layer = <int64_t *>calloc(nsegs, sizeof(int64_t))
        sh.seg_before = <int64_t *>calloc(nsegs, sizeof(int64_t))
        sh.seg_keys = <int64_t *>calloc(nsegs, sizeof(int64_t))
        if sh.order == NULL or sh.seg_layer == NULL or sh.seg_before == NULL or sh.seg_keys == NULL:
            raise MemoryError()
        for k in range(nkeys):
            sh.order[k] = plan.order[k]
        for t in range(nsegs):
            sh.seg_layer[t], sh.seg_before[t], sh.seg_keys[t] = plan.segments[t]
        sh.nsegs = nsegs
        sh.plan_total = plan.total

    cdef _setup_queue(self, int capacity, payload):
        cdef Shared *sh = &self.shared
        sh.queue_mode = capacity > 0
        sh.job_cap = capacity
        if not sh.queue_mode:
            return
        sh.finished_fd = op_eventfd()
        if sh.finished_fd < 0:
            raise EngineError("cannot create the engine's job-finished eventfd")
        self._jobs.setup(sh, capacity, payload)

    def submit(self, url, int op, int key_index, int64_t offset, int64_t length, int64_t payload_offset=0,
               int attempt=0, headers=(), bytes before=b"", bytes after=b"", int64_t document=0):
        """Queue one job; its entry in the job table.  At most ``queue_capacity`` jobs are unfinished at a time
        (submitted, no row written yet): an entry is reused only once its job has finished.

        ``headers``: header lines (bytes) this request sends beside the engine's own.  ``before``/``after``:
        the body's bytes around its payload range (a PUT's or a part's; the whole body of other ops).
        ``document``: keep the answer's document, at most this many bytes (a longer one fails the row),
        until ``document(entry)`` takes it; until then the entry is not reused."""
        cdef Shared *sh = &self.shared
        cdef int64_t head = sh.job_head, j
        cdef bytes raw = url if isinstance(url, bytes) else url.encode()
        if not sh.queue_mode:
            raise RuntimeError("submit() needs an Engine made with queue_capacity > 0")
        if sends_payload(op) and (length < 0 or (length > 0 and not 0 <= payload_offset < sh.payload_len)):
            raise ValueError("an upload starts inside the payload (it wraps round past its end)")
        lines = tuple(line if isinstance(line, bytes) else line.encode() for line in headers)
        if any(b"\r" in line or b"\n" in line or b"\0" in line or b":" not in line for line in lines):
            raise ValueError("a header line is one 'name: value', without CR, LF or NUL")
        if document < 0:
            raise ValueError("a document's bound is a size in bytes")
        j = self._jobs.put(raw, op, key_index, offset, length, payload_offset, attempt, lines, before, after,
                           document)
        if j < 0:
            raise RuntimeError("job queue is full")
        op_atomic_store_int(&sh.job_busy[j], 1)
        sh.job_ring[head % sh.job_cap] = <int32_t>j
        op_atomic_store(&sh.job_head, head + 1)
        self._wake()
        return j

    def document(self, int64_t entry):
        """The answer's document of the finished job in ``entry`` (submitted with ``document``), as bytes."""
        return self._jobs.document(entry)

    def close_queue(self):
        """No more jobs will come: the engine ends once the queued ones are done."""
        op_atomic_store_int(&self.shared.closed, 1)
        self._wake()

    def wait_finished(self, double timeout):
        """Queue mode: block (without the GIL) until a job finishes or ``timeout`` seconds pass;
        True if one finished since the last call."""
        cdef int fd = self.shared.finished_fd, ms = <int>(timeout * 1000), got
        if fd < 0:
            raise RuntimeError("wait_finished() needs an Engine made with queue_capacity > 0")
        with nogil:
            got = op_event_wait_one(fd, ms)
        return bool(got)

    @property
    def queued(self):
        """Jobs submitted but not yet started."""
        return op_atomic_load(&self.shared.job_head) - op_atomic_load(&self.shared.job_tail)

    cdef _wake(self):
        cdef int i
        if self.threads == NULL:
            return
        for i in range(self.nthreads):
            op_event_wake(self.threads[i].wakefd)

    # -- running -----------------------------------------------------------

    def start(self, double duration=0.0):
        """Start the engine threads, all before the first request; ``duration`` > 0 ends the run after that
        many seconds, cutting the requests in flight (a queue's jobs not yet started are left)."""
        if self._pythreads or self.closed:
            raise RuntimeError("an Engine runs once")
        try:
            with stop_signals_deferred():
                for i in range(self.nthreads):
                    t = threading.Thread(target=self._thread_main, args=(i,), name=f"objperf-engine-{i}", daemon=True)
                    t.start()
                    self._pythreads.append(t)  # after: a thread that could not start never ends its loop
        except BaseException:
            self.stop(abort=True)  # the threads started wait at the gate: let them end
            raise
        with nogil:
            open_gate(&self.shared, self.threads, self.nthreads, duration)

    def _thread_main(self, int index):
        cdef ThreadState *ts = &self.threads[index]
        cdef Slot *slots = self.slots
        cdef int nslots = self.nslots, stride = self.nthreads
        with nogil:
            wait_for_go(ts)
            run_loop(ts, slots, nslots, stride)
            op_atomic_store_int(&ts.finished, 1)

    def stop(self, bint abort=False):
        """Issue no new requests; with ``abort`` also drop the ones in flight."""
        op_atomic_store_int(&self.shared.stop, STOP_ABORT if abort else STOP_DRAIN)
        self._wake()

    @property
    def running(self):
        """Whether a started thread is still in its loop.  Each thread says so itself: ``Thread.is_alive`` is
        not to be trusted, as Python 3.11's ``join`` interrupted by Ctrl-C notes a running thread as ended."""
        return self.threads != NULL and any_unfinished(self.threads, len(self._pythreads))

    def join(self, timeout=None):
        """Wait for the threads to end, ``timeout`` seconds at most (None: for ever); True once they have."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for t in self._pythreads:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        while self._not_yet_gone() and (deadline is None or time.monotonic() < deadline):
            time.sleep(JOIN_POLL_S)  # a join cut short above: the threads' own word decides
        return not self.running

    def _not_yet_gone(self):
        """A thread still in its loop, or past it but not yet out of Python's list of threads (a join cut
        short by Ctrl-C returns before the thread has left it: until then it still shows as running)."""
        if self.running:
            return True
        alive = set(threading.enumerate())
        return any(t in alive for t in self._pythreads)

    @property
    def fault(self):
        """Why the engine stopped a run itself (a request libcurl would not start), or None."""
        return fault_error(op_atomic_load_int(&self.shared.fault_kind), self.shared.fault_code)

    def progress(self):
        """(body bytes, finished requests, failed requests) so far; cheap, for progress lines."""
        cdef int i
        cdef int64_t b = 0, n = 0, e = 0
        if self.threads == NULL:
            return self._final[:3] if self._final else (0, 0, 0)
        for i in range(self.nthreads):
            b += self.threads[i].bytes_done
            n += self.threads[i].requests_done
            e += self.threads[i].errors
        return b, n, e

    @property
    def rows_dropped(self):
        """Rows an aborted run dropped because nobody drained its full row ring any more."""
        if self.threads == NULL:
            return self._final[3] if self._final else 0
        return sum(self.threads[i].rows_dropped for i in range(self.nthreads))

    @property
    def checksums(self):
        """Checksum mode's answers so far: whole-object reads verified and mismatched, answers whose checksum
        could not be checked (a range's, a composite, another algorithm), and answers that named none."""
        cdef int i, k
        counts = [0, 0, 0, 0]
        if self.threads == NULL:
            counts = list(self._final[4:8]) if self._final else counts
        else:
            for i in range(self.nthreads):
                for k in range(4):
                    counts[k] += self.threads[i].sums[k]
        return dict(zip(("verified", "mismatched", "unchecked", "absent"), counts))

    @property
    def receive_buffers(self):
        """Each slot's receive buffer in bytes: where it started, or where its reads have taken it."""
        if self.slots == NULL:
            return list(self._final_rbufs or [])
        return [self.slots[i].rbuf for i in range(self.nslots)]

    def drain(self):
        """Copy out the rows finished since the last drain, as a dict of NumPy columns (or None)."""
        cdef int i
        cdef int64_t head, tail
        cdef Ring *r
        parts = []
        if self.threads == NULL:
            return None
        for i in range(self.nthreads):
            r = &self.threads[i].ring
            head = op_atomic_load(&r.head)
            tail = r.tail
            if head == tail:
                continue
            idx = np.arange(tail, head, dtype=np.int64) % r.cap
            parts.append({name: col.take(idx) for name, col in self._rings[i].items()})
            op_atomic_store(&r.tail, head)
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return {name: np.concatenate([p[name] for p in parts]) for name in ENGINE_COLUMNS}

    def set_urls(self, urls):
        """Fetch from these URLs from now on, one per object as at the start (URLs signed afresh:
        a run outlives a presigned URL's life, or the temporary credentials it was signed with).
        Requests in flight finish on the URLs they started with."""
        cdef Shared *sh = &self.shared
        cdef char **table
        cdef int k
        cdef int64_t generation
        if self.shared.queue_mode:
            raise ValueError("set_urls is for plan mode; queued jobs carry their own URLs")
        if self.closed:
            raise RuntimeError("the engine is closed")
        if len(urls) != sh.nkeys:
            raise ValueError(f"set_urls needs {sh.nkeys} URLs, one per object, not {len(urls)}")
        encoded = [u if isinstance(u, bytes) else u.encode() for u in urls]
        table = <char **>calloc(sh.nkeys, sizeof(char *))
        if table == NULL:
            raise MemoryError()
        for k in range(sh.nkeys):
            table[k] = encoded[k]
        retired = <size_t>op_atomic_load_urls(&sh.urls)
        op_atomic_store_urls(&sh.urls, table)
        generation = op_atomic_add(&sh.url_generation, 1) + 1  # after the table: who sees it sees the new table
        self._retired_urls.append((retired, self._current_urls, generation))
        self._current_urls = encoded
        self._free_retired_urls()

    cdef _free_retired_urls(self):
        """Free the URL tables that no engine thread can still be reading: a thread reads the table only
        between two quiescent points, and says at each which generation it has seen, so a table replaced
        by generation g is unreachable once every thread has seen g."""
        cdef int i
        cdef int64_t oldest_seen = GENERATION_DONE
        for i in range(self.nthreads):
            oldest_seen = min(oldest_seen, op_atomic_load(&self.threads[i].seen_generation))
        still = []
        for address, strings, generation in self._retired_urls:
            if generation <= oldest_seen:
                free(<void *><size_t>address)
            else:
                still.append((address, strings, generation))
        self._retired_urls = still

    @property
    def retired_url_tables(self):
        """URL tables replaced but not yet freed (some engine thread may still read them)."""
        return len(self._retired_urls)

    def slot_buffer(self, int index):
        """The RAM-sink buffer of one slot, as a NumPy uint8 array (no copy)."""
        if not self._buffers:
            raise ValueError("slot buffers exist only with the RAM sink")
        return self._buffers[index]

    @property
    def concurrency(self):
        return self.nslots

    @property
    def thread_count(self):
        return self.nthreads

    # -- teardown ------------------------------------------------------------

    def close(self, double timeout=10.0):
        """Stop the threads (cutting what is in flight) and free every libcurl handle, in libcurl's order.
        Rows not drained by then are lost: drain first.  Idempotent; the slot buffers stay readable."""
        if self.closed:
            return
        if self._not_yet_gone():
            self.stop(abort=True)
            if not self.join(timeout):
                raise EngineError(f"the engine's threads did not stop within {timeout:g} s")
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    cdef _release(self):
        """Everything the engine holds, freed (Python may be called: from ``close`` and ``__del__``)."""
        if self.threads != NULL:
            self._final = (*self.progress(), self.rows_dropped, *self.checksums.values())
        if self.slots != NULL:
            self._final_rbufs = self.receive_buffers
        self.closed = True
        if self._retired_urls is not None:
            for address, _, _ in self._retired_urls:
                free(<void *><size_t>address)
            self._retired_urls = []
        self._free_c()

    cdef void _free_c(self) noexcept:
        """The C state, in libcurl's order; calls no Python, so ``__dealloc__`` may call it.  Idempotent."""
        cdef int i
        if self.slots != NULL:
            for i in range(self.nslots):
                if self.slots[i].easy != NULL:
                    if self.slots[i].busy:
                        curl_multi_remove_handle(self.slots[i].ts.multi, self.slots[i].easy)
                    curl_easy_cleanup(self.slots[i].easy)
                if self.slots[i].pin != NULL:
                    curl_slist_free_all(self.slots[i].pin)
                free(self.slots[i].errbuf)
            free(self.slots)
            self.slots = NULL
        if self.threads != NULL:
            for i in range(self.nthreads):
                if self.threads[i].multi != NULL:
                    curl_multi_cleanup(self.threads[i].multi)
                op_share_free(self.threads[i].tls_share)  # after the handles that used it
                op_event_close(self.threads[i].epfd, self.threads[i].wakefd)
            free(self.threads)
            self.threads = NULL
        if self.connect_to != NULL:
            curl_slist_free_all(self.connect_to)
            self.connect_to = NULL
        if self.headers != NULL:
            curl_slist_free_all(self.headers)
            self.headers = self.shared.headers = NULL
        if self._jobs is not None:
            self._jobs.free_c()
        if self.shared.finished_fd >= 0:
            op_event_close(-1, self.shared.finished_fd)
            self.shared.finished_fd = -1
        free(self.shared.urls)
        self.shared.urls = NULL
        free(self.shared.sizes)
        self.shared.sizes = NULL
        free(self.shared.nranges)
        self.shared.nranges = NULL
        free(self.shared.order)
        free(self.shared.seg_layer)
        free(self.shared.seg_before)
        free(self.shared.seg_keys)
        self.shared.order = self.shared.seg_layer = self.shared.seg_before = self.shared.seg_keys = NULL
        free(self.shared.fds)
        self.shared.fds = NULL

    def __del__(self):
        # Engine threads hold a reference to the engine: none can be running here.
        if self._pythreads and not self.closed:
            warnings.warn("objperf Engine was not closed", ResourceWarning)
        self._release()

    def __dealloc__(self):
        self._free_c()  # what __del__ freed is NULL by now; C only, as the object is half torn down

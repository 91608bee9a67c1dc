# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""objperf's load engine: libcurl multi handles driven without the GIL.

One multi handle per engine thread, exactly ``concurrency`` easy handles
("slots") spread over the threads, so libcurl never queues a request and the
time to first byte it reports is honest.  Every finished request writes one
row into a per-thread ring of preallocated NumPy columns; Python drains the
rings while the run goes, so no Python object is made per request.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport calloc, free
from libc.errno cimport EINVAL, errno
from libc.string cimport memcpy, strchr, strlen, strncpy, strstr
from posix.unistd cimport pwrite

cimport numpy as cnp
import mmap
import os
import threading

import numpy as np

from objperf._engine.curl cimport *
from objperf.limits import ensure_memory, ensure_open_files

cnp.import_array()
curl_global_init(CURL_GLOBAL_DEFAULT)

cdef enum:
    SINK_DISCARD = 0
    SINK_RAM = 1
    SINK_FILE = 2
    ERRBUF_CAP = 2048
    EVENTS_CAP = 64
    IDLE_WAIT_MS = 100
    S3ERR_CAP = 32
    IP_CAP = 46
    ETAG_CAP = 48
    OPC_GET = 0
    OPC_PUT = 1
    OPC_UPLOAD_PART = 2
    STOP_NONE = 0
    STOP_DRAIN = 1
    STOP_ABORT = 2

# Operation codes, in the order of objperf.schema.OPS.
OP_GET = OPC_GET
OP_PUT = OPC_PUT
OP_UPLOAD_PART = OPC_UPLOAD_PART
SINKS = {"discard": SINK_DISCARD, "ram": SINK_RAM, "file": SINK_FILE}
IP_RESOLVE = {"any": CURL_IPRESOLVE_WHATEVER, "4": CURL_IPRESOLVE_V4, "6": CURL_IPRESOLVE_V6}
PAGE = mmap.PAGESIZE
FAULT_SLICE = 16 << 20
cdef size_t PAGE_BYTES = PAGE
cdef int MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)  # Linux's value; Python names it from 3.13

# Columns the engine fills, in ring order; the dataset adds run_id, bucket, key.
ENGINE_COLUMNS = {
    "thread": np.int16,
    "slot": np.int32,
    "op": np.int8,
    "key_index": np.int32,
    "offset": np.int64,
    "length": np.int64,
    "attempt": np.int16,
    "status": np.int16,
    "s3_error": np.dtype(f"S{S3ERR_CAP}"),
    "curl_code": np.int32,
    "bytes": np.int64,
    "t_start": np.float64,
    "dns_s": np.float64,
    "connect_s": np.float64,
    "tls_s": np.float64,
    "pretransfer_s": np.float64,
    "ttfb_s": np.float64,
    "total_s": np.float64,
    "remote_ip": np.dtype(f"S{IP_CAP}"),
    "remote_port": np.int32,
    "local_ip": np.dtype(f"S{IP_CAP}"),
    "local_port": np.int32,
    "ip_family": np.int8,
    "http_version": np.int8,
    "new_conn": np.bool_,
    "crc32": np.uint32,
    "etag": np.dtype(f"S{ETAG_CAP}"),
}


class EngineError(Exception):
    """A libcurl call failed while setting the engine up."""


cdef inline void check_easy(CURLcode code, str what) except *:
    if code != CURLE_OK:
        raise EngineError(f"{what}: {curl_easy_strerror(code).decode()}")


ctypedef struct Ring:
    int64_t cap
    int64_t head
    int64_t tail
    int16_t *thread
    int32_t *slot
    int8_t *op
    int32_t *key_index
    int64_t *offset
    int64_t *length
    int16_t *attempt
    int16_t *status
    char *s3_error
    int32_t *curl_code
    int64_t *nbytes
    double *t_start
    double *dns_s
    double *connect_s
    double *tls_s
    double *pretransfer_s
    double *ttfb_s
    double *total_s
    char *remote_ip
    int32_t *remote_port
    char *local_ip
    int32_t *local_port
    int8_t *ip_family
    int8_t *http_version
    uint8_t *new_conn
    uint32_t *crc32
    char *etag


ctypedef struct Shared:
    int64_t next_req
    int64_t claimed_bytes
    int64_t max_requests
    int64_t max_bytes
    double deadline
    int stop
    int nkeys
    char **urls          # swapped whole by set_urls: read it with op_atomic_load_urls
    int64_t url_generation
    int64_t *sizes
    int64_t *nranges
    int64_t range_size
    int random_ranges
    int sink
    int verify
    int *fds
    # Queue mode: requests come from a job table that Python fills (uploads, explicit lists).
    int queue_mode
    int closed
    int64_t job_cap
    int64_t job_head
    int64_t job_tail
    char **job_url
    int8_t *job_op
    int32_t *job_key
    int64_t *job_offset
    int64_t *job_length
    int64_t *job_payload_offset
    int16_t *job_attempt
    char *payload
    int64_t payload_len
    int finished_fd      # queue mode: eventfd signalled whenever a job finishes (wait_finished)


ctypedef struct ThreadState:
    int index
    CURLM *multi
    Shared *shared
    Ring ring
    uint64_t rng
    int64_t bytes_done
    int64_t requests_done
    int64_t errors
    int epfd             # epoll set: libcurl's sockets and wakefd
    int wakefd           # eventfd: stop() and submit() wake the thread through it
    double timer_at      # when libcurl wants curl_multi_socket_action(CURL_SOCKET_TIMEOUT); < 0: never


ctypedef struct Slot:
    CURL *easy
    ThreadState *ts
    int index
    int busy
    int key_index
    int url_key
    int64_t url_generation
    curl_slist *pin      # this slot's own CONNECT_TO list (spread_to), or NULL for the engine's
    int64_t offset
    int64_t length
    double t_start
    char *buf
    int64_t cap
    int64_t got
    long status
    int status_known
    char errbuf[ERRBUF_CAP]
    int errlen
    unsigned long crc
    char range_spec[64]
    int op
    int attempt
    int64_t payload_offset
    int64_t sent
    char etag[ETAG_CAP]


cdef inline uint64_t xorshift(uint64_t *state) noexcept nogil:
    cdef uint64_t x = state[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    state[0] = x
    return x


cdef size_t on_body(char *data, size_t size, size_t nmemb, void *userdata) noexcept nogil:
    cdef Slot *s = <Slot *>userdata
    cdef Shared *sh = s.ts.shared
    cdef size_t total = size * nmemb
    cdef int64_t room
    cdef long code = 0
    if not s.status_known:
        curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, &code)
        s.status = code
        s.status_known = 1
    if s.status >= 300:
        # Error bodies carry the S3 error code; keep the head of it, never sink it.
        room = ERRBUF_CAP - 1 - s.errlen
        if room > 0:
            if <int64_t>total < room:
                room = total
            memcpy(s.errbuf + s.errlen, data, room)
            s.errlen += room
        return total
    if sh.sink == SINK_RAM:
        room = s.cap - s.got
        if room > 0:
            if <int64_t>total < room:
                room = total
            op_copy(s.buf + s.got, data, room)
    elif sh.sink == SINK_FILE:
        if pwrite(sh.fds[s.key_index], data, total, s.offset + s.got) != <ssize_t>total:
            return 0
    if sh.verify:
        s.crc = op_crc32(s.crc, data, total)
    s.got += total
    s.ts.bytes_done += total
    return total


cdef size_t on_header(char *data, size_t size, size_t nmemb, void *userdata) noexcept nogil:
    """Keep the ETag of the final response (a new status line forgets earlier ones)."""
    cdef Slot *s = <Slot *>userdata
    cdef size_t total = size * nmemb
    cdef size_t i = 5, n = 0
    if total >= 5 and data[0] == 72 and data[1] == 84 and data[2] == 84 and data[3] == 80 and data[4] == 47:
        s.etag[0] = 0  # "HTTP/": a new response begins
    elif total > 5 and (data[0] == 69 or data[0] == 101) and (data[1] == 84 or data[1] == 116) and \
            (data[2] == 65 or data[2] == 97) and (data[3] == 71 or data[3] == 103) and data[4] == 58:
        while i < total and data[i] == 32:
            i += 1
        while i < total and data[i] != 13 and data[i] != 10 and n < ETAG_CAP - 1:
            s.etag[n] = data[i]
            n += 1
            i += 1
        s.etag[n] = 0
    return total


cdef size_t on_upload(char *buffer, size_t size, size_t nitems, void *userdata) noexcept nogil:
    """Fill libcurl's upload buffer from the payload, which repeats: a body longer than the
    payload wraps round to its start."""
    cdef Slot *s = <Slot *>userdata
    cdef Shared *sh = s.ts.shared
    cdef int64_t room = s.length - s.sent
    cdef int64_t want = <int64_t>(size * nitems)
    cdef int64_t done = 0, at, n
    if want < room:
        room = want
    while done < room:
        at = (s.payload_offset + s.sent + done) % sh.payload_len
        n = sh.payload_len - at
        if n > room - done:
            n = room - done
        memcpy(buffer + done, sh.payload + at, n)
        done += n
    s.sent += room
    s.ts.bytes_done += room
    return <size_t>room


cdef bint claim_job(Shared *sh, int64_t *job) noexcept nogil:
    cdef int64_t t
    while True:
        t = op_atomic_load(&sh.job_tail)
        if t >= op_atomic_load(&sh.job_head):
            return False
        if op_atomic_cas(&sh.job_tail, t, t + 1):
            job[0] = t
            return True


cdef inline bint past_deadline(Shared *sh) noexcept nogil:
    return sh.deadline > 0 and op_now_mono() >= sh.deadline


cdef bint start_job(Slot *s) noexcept nogil:
    """Take the next job from the queue, if any, and start it on this slot."""
    cdef ThreadState *ts = s.ts
    cdef Shared *sh = ts.shared
    cdef int64_t job, j
    if op_atomic_load_int(&sh.stop) != STOP_NONE or past_deadline(sh) or not claim_job(sh, &job):
        return False
    j = job % sh.job_cap
    s.op = sh.job_op[j]
    s.key_index = sh.job_key[j]
    s.offset = sh.job_offset[j]
    s.length = sh.job_length[j]
    s.payload_offset = sh.job_payload_offset[j]
    s.attempt = sh.job_attempt[j]
    s.url_key = -1
    curl_easy_setopt(s.easy, CURLOPT_URL, sh.job_url[j])
    if s.op == OPC_GET:
        curl_easy_setopt(s.easy, CURLOPT_HTTPGET, <long>1)
        if s.length > 0:
            snprintf(s.range_spec, 64, "%lld-%lld", <long long>s.offset, <long long>(s.offset + s.length - 1))
            curl_easy_setopt(s.easy, CURLOPT_RANGE, s.range_spec)
        else:
            curl_easy_setopt(s.easy, CURLOPT_RANGE, <char *>NULL)
    else:
        curl_easy_setopt(s.easy, CURLOPT_RANGE, <char *>NULL)
        curl_easy_setopt(s.easy, CURLOPT_UPLOAD, <long>1)
        curl_easy_setopt(s.easy, CURLOPT_INFILESIZE_LARGE, <curl_off_t>s.length)
    return launch(s)


cdef inline bint launch(Slot *s) noexcept nogil:
    s.got = 0
    s.sent = 0
    s.status = 0
    s.status_known = 0
    s.errlen = 0
    s.crc = 0
    s.etag[0] = 0
    s.t_start = op_now_wall()
    if curl_multi_add_handle(s.ts.multi, s.easy) != CURLM_OK:
        return False
    s.busy = 1
    return True


cdef bint start_next(Slot *s) noexcept nogil:
    if s.ts.shared.queue_mode:
        return start_job(s)
    return start_plan(s)


cdef bint start_plan(Slot *s) noexcept nogil:
    cdef ThreadState *ts = s.ts
    cdef Shared *sh = ts.shared
    cdef int64_t n, key, nr, r, size, prev, generation
    if op_atomic_load_int(&sh.stop) != STOP_NONE:
        return False
    if past_deadline(sh):
        return False
    n = op_atomic_add(&sh.next_req, 1)
    if sh.max_requests >= 0 and n >= sh.max_requests:
        return False
    key = n % sh.nkeys
    nr = sh.nranges[key]
    if sh.random_ranges:
        r = <int64_t>(xorshift(&ts.rng) % <uint64_t>nr)
    else:
        r = (n // sh.nkeys) % nr
    size = sh.sizes[key]
    s.key_index = <int>key
    s.offset = r * sh.range_size
    s.length = size - s.offset
    if s.length > sh.range_size:
        s.length = sh.range_size
    if sh.max_bytes >= 0:
        prev = op_atomic_add(&sh.claimed_bytes, s.length)
        if prev >= sh.max_bytes:
            return False
    generation = op_atomic_load(&sh.url_generation)
    if s.url_key != key or s.url_generation != generation:
        curl_easy_setopt(s.easy, CURLOPT_URL, op_atomic_load_urls(&sh.urls)[key])  # libcurl copies it
        s.url_key = <int>key
        s.url_generation = generation
    if size > 0:
        snprintf(s.range_spec, 64, "%lld-%lld", <long long>s.offset, <long long>(s.offset + s.length - 1))
        curl_easy_setopt(s.easy, CURLOPT_RANGE, s.range_spec)
    else:
        curl_easy_setopt(s.easy, CURLOPT_RANGE, <char *>NULL)
    s.op = OPC_GET
    s.attempt = 0
    return launch(s)


cdef inline double info_seconds(CURL *easy, CURLINFO what) noexcept nogil:
    cdef curl_off_t us = 0
    curl_easy_getinfo(easy, what, &us)
    return us * 1e-6


cdef inline void copy_text(char *dst, const char *src, int cap) noexcept nogil:
    cdef int i = 0
    if src != NULL:
        while i < cap and src[i] != 0:
            dst[i] = src[i]
            i += 1
    while i < cap:
        dst[i] = 0
        i += 1


cdef void copy_s3_error(Slot *s, char *dst) noexcept nogil:
    cdef char *start
    cdef char *end
    cdef int n = 0
    s.errbuf[s.errlen] = 0
    start = strstr(s.errbuf, "<Code>")
    if start != NULL:
        start += 6
        end = strstr(start, "</Code>")
        if end != NULL:
            n = <int>(end - start)
    if n > S3ERR_CAP:
        n = S3ERR_CAP
    if n > 0:
        memcpy(dst, start, n)
    while n < S3ERR_CAP:
        dst[n] = 0
        n += 1


cdef void finish_request(Slot *s, CURLcode result) noexcept nogil:
    cdef ThreadState *ts = s.ts
    cdef Ring *r = &ts.ring
    cdef int64_t i
    cdef long code = 0, port = 0, conns = 0, version = 0
    cdef char *ip = NULL
    while r.head - op_atomic_load(&r.tail) >= r.cap:
        op_sleep_ms(1)  # the reader is behind; Python drains the ring every few ms
    i = r.head % r.cap
    curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, &code)
    r.thread[i] = <int16_t>ts.index
    r.slot[i] = s.index
    r.op[i] = <int8_t>s.op
    r.key_index[i] = s.key_index
    r.offset[i] = s.offset
    r.length[i] = s.length
    r.attempt[i] = <int16_t>s.attempt
    r.status[i] = <int16_t>code
    copy_s3_error(s, r.s3_error + i * S3ERR_CAP)
    r.curl_code[i] = <int32_t>result
    if code >= 300:
        r.nbytes[i] = 0
    elif s.op == OPC_GET:
        r.nbytes[i] = s.got
    else:
        r.nbytes[i] = s.sent
    copy_text(r.etag + i * ETAG_CAP, s.etag, ETAG_CAP)
    r.t_start[i] = s.t_start
    r.dns_s[i] = info_seconds(s.easy, CURLINFO_NAMELOOKUP_TIME_T)
    r.connect_s[i] = info_seconds(s.easy, CURLINFO_CONNECT_TIME_T)
    r.tls_s[i] = info_seconds(s.easy, CURLINFO_APPCONNECT_TIME_T)
    r.pretransfer_s[i] = info_seconds(s.easy, CURLINFO_PRETRANSFER_TIME_T)
    r.ttfb_s[i] = info_seconds(s.easy, CURLINFO_STARTTRANSFER_TIME_T)
    r.total_s[i] = info_seconds(s.easy, CURLINFO_TOTAL_TIME_T)
    if result == CURLE_ABORTED_BY_CALLBACK:  # cut in flight: libcurl's clock stopped at its last progress update
        r.total_s[i] = op_now_wall() - s.t_start
    curl_easy_getinfo(s.easy, CURLINFO_PRIMARY_IP, &ip)
    copy_text(r.remote_ip + i * IP_CAP, ip, IP_CAP)
    r.ip_family[i] = 0 if ip == NULL or ip[0] == 0 else (6 if strchr(ip, 58) != NULL else 4)
    curl_easy_getinfo(s.easy, CURLINFO_PRIMARY_PORT, &port)
    r.remote_port[i] = <int32_t>port
    ip = NULL
    curl_easy_getinfo(s.easy, CURLINFO_LOCAL_IP, &ip)
    copy_text(r.local_ip + i * IP_CAP, ip, IP_CAP)
    port = 0
    curl_easy_getinfo(s.easy, CURLINFO_LOCAL_PORT, &port)
    r.local_port[i] = <int32_t>port
    curl_easy_getinfo(s.easy, CURLINFO_HTTP_VERSION, &version)
    if version == CURL_HTTP_VERSION_1_0:
        r.http_version[i] = 10
    elif version == CURL_HTTP_VERSION_1_1:
        r.http_version[i] = 11
    elif version == CURL_HTTP_VERSION_2_0:
        r.http_version[i] = 20
    elif version == CURL_HTTP_VERSION_3:
        r.http_version[i] = 30
    else:
        r.http_version[i] = 0
    curl_easy_getinfo(s.easy, CURLINFO_NUM_CONNECTS, &conns)
    r.new_conn[i] = 1 if conns > 0 else 0
    r.crc32[i] = <uint32_t>s.crc
    op_atomic_store(&r.head, r.head + 1)
    if ts.shared.finished_fd >= 0:
        op_event_wake(ts.shared.finished_fd)
    ts.requests_done += 1
    if result == CURLE_ABORTED_BY_CALLBACK and code < 300:  # cut, not failed: see objperf.summary
        return
    if result != CURLE_OK or code >= 400 or code == 0:
        ts.errors += 1


cdef int fill_idle(ThreadState *ts, Slot *slots, int nslots, int stride) noexcept nogil:
    """Queue mode: start queued jobs on this thread's idle slots; how many started."""
    cdef int i = ts.index, started = 0
    cdef Shared *sh = ts.shared
    while i < nslots:
        if op_atomic_load(&sh.job_tail) >= op_atomic_load(&sh.job_head):
            break
        if not slots[i].busy and start_next(&slots[i]):
            started += 1
        i += stride
    return started


cdef int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) noexcept nogil:
    op_event_watch((<ThreadState *>userp).epfd, fd, what)
    return 0


cdef int on_timer(CURLM *multi, long timeout_ms, void *userp) noexcept nogil:
    cdef ThreadState *ts = <ThreadState *>userp
    ts.timer_at = -1.0 if timeout_ms < 0 else op_now_mono() + timeout_ms * 1e-3
    return 0


cdef void wait_and_act(ThreadState *ts, int cap_ms) noexcept nogil:
    """Wait for ready sockets (or libcurl's timer, or a wake-up) and let libcurl act on them."""
    cdef int fds[EVENTS_CAP]
    cdef int flags[EVENTS_CAP]
    cdef int i, n, running = 0, wait_ms = cap_ms
    cdef double left
    if ts.timer_at >= 0:
        left = (ts.timer_at - op_now_mono()) * 1e3
        wait_ms = 0 if left <= 0 else (<int>left + 1 if left + 1 < cap_ms else cap_ms)
    n = op_event_wait(ts.epfd, ts.wakefd, fds, flags, EVENTS_CAP, wait_ms)
    for i in range(n):
        curl_multi_socket_action(ts.multi, fds[i], flags[i], &running)
    if ts.timer_at >= 0 and op_now_mono() >= ts.timer_at:
        ts.timer_at = -1.0
        curl_multi_socket_action(ts.multi, CURL_SOCKET_TIMEOUT, 0, &running)


cdef inline int wait_cap_ms(Shared *sh) noexcept nogil:
    """How long a thread may sleep: not past the run's deadline, when the requests in flight are cut."""
    cdef double left
    if sh.deadline <= 0:
        return IDLE_WAIT_MS
    left = (sh.deadline - op_now_mono()) * 1e3
    return 0 if left <= 0 else (<int>left + 1 if left + 1 < IDLE_WAIT_MS else IDLE_WAIT_MS)


cdef void run_loop(ThreadState *ts, Slot *slots, int nslots, int stride) noexcept nogil:
    """Keep every slot of this thread busy until the plan, the queue's end, the deadline or a stop ends it.
    Requests still in flight when the deadline passes, or at an abort, are cut: each leaves a row with
    curl code CURLE_ABORTED_BY_CALLBACK and the bytes moved until then, so a run lasts its duration and
    counts every byte it moved."""
    cdef Shared *sh = ts.shared
    cdef int i, left = 0, active = 0
    cdef CURLMsg *msg
    cdef CURL *easy
    cdef CURLcode result
    cdef void *priv = NULL
    cdef Slot *s
    i = ts.index
    while i < nslots:
        if start_next(&slots[i]):
            active += 1
        i += stride
    while True:
        if op_atomic_load_int(&sh.stop) == STOP_ABORT or past_deadline(sh):
            break
        if sh.queue_mode:
            active += fill_idle(ts, slots, nslots, stride)
            if active == 0:
                if op_atomic_load_int(&sh.stop) != STOP_NONE or (
                        op_atomic_load_int(&sh.closed) and op_atomic_load(&sh.job_tail) >= op_atomic_load(&sh.job_head)):
                    break
                wait_and_act(ts, wait_cap_ms(sh))
                continue
        elif active == 0:
            break
        wait_and_act(ts, wait_cap_ms(sh))
        while True:
            msg = curl_multi_info_read(ts.multi, &left)
            if msg == NULL:
                break
            if msg.msg != CURLMSG_DONE:
                continue
            easy = msg.easy_handle
            result = op_msg_result(msg)
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv)
            s = <Slot *>priv
            finish_request(s, result)
            curl_multi_remove_handle(ts.multi, easy)
            s.busy = 0
            active -= 1
            if start_next(s):
                active += 1
        if active == 0 and not sh.queue_mode:
            break
    i = ts.index
    while i < nslots:
        if slots[i].busy:
            finish_request(&slots[i], CURLE_ABORTED_BY_CALLBACK)
            curl_multi_remove_handle(ts.multi, slots[i].easy)
            slots[i].busy = 0
        i += stride


cdef extern from "<sys/mman.h>" nogil:
    int madvise(void *addr, size_t length, int advice)


cdef int fault_in(char *start, size_t length) noexcept nogil:
    """0, or the errno that says the pages cannot be had (touching them would wake the OOM killer)."""
    cdef size_t at = 0
    if madvise(start, length, MADV_POPULATE_WRITE) == 0:
        return 0
    if errno != EINVAL:
        return errno
    while at < length:  # kernels before 5.14: write one byte per page
        start[at] = 0
        at += PAGE_BYTES
    return 0


def _fault_in_slice(cnp.ndarray part, list failures):
    cdef int err
    with nogil:
        err = fault_in(<char *>cnp.PyArray_DATA(part), <size_t>part.shape[0])
    if err:
        failures.append(err)


def page_array(int64_t nbytes):
    """A zeroed uint8 array on fresh anonymous memory, its pages faulted in now.

    Private pages: a shared anonymous mapping (mmap's default) is backed by shmem, whose
    pages cost half as much again to fault and three times as much to free.
    Small pages, asked for up front (MADV_POPULATE_WRITE, Linux 5.14+): on virtual machines
    a fresh transparent huge page costs more to fault than 512 small ones (NumPy asks for
    huge pages), and populating skips the write pass that touching every page would be.
    Faulting costs about 0.6 ms of CPU per MiB on a VM, so large arrays are faulted by one thread per
    core (each at least FAULT_SLICE bytes): 128 MiB of slot buffers in half the time on two."""
    region = mmap.mmap(-1, max(nbytes, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        region.madvise(mmap.MADV_NOHUGEPAGE)
    whole = np.frombuffer(region, dtype=np.uint8)
    workers = max(1, min(os.cpu_count() or 1, len(whole) // FAULT_SLICE))
    step = -(-len(whole) // workers // PAGE) * PAGE
    parts = [whole[at:at + step] for at in range(0, len(whole), step)]
    failures = []
    helpers = [threading.Thread(target=_fault_in_slice, args=(part, failures)) for part in parts[1:]]
    for helper in helpers:
        helper.start()
    _fault_in_slice(parts[0], failures)
    for helper in helpers:
        helper.join()
    if failures:
        del whole, parts
        try:
            region.close()
        except BufferError:  # a helper thread not yet gone still holds its slice; the collector frees it
            pass
        raise MemoryError(f"cannot have {nbytes:,} bytes of memory: {os.strerror(failures[0])}")
    return whole[:nbytes]


def slot_region(int nslots, int64_t slot_cap):
    """The RAM sink's slot buffers: one mapping, a page-aligned slice per slot."""
    stride = (slot_cap + PAGE - 1) // PAGE * PAGE
    whole = page_array(stride * nslots)
    return [whole[i * stride:i * stride + slot_cap] for i in range(nslots)]


cdef class Engine:
    """Run one read workload: ``Engine(urls, sizes, ...)``, then ``start()``,
    ``drain()`` rows while ``running``, ``stop()`` to end early, ``join()``."""

    cdef Shared shared
    cdef ThreadState *threads
    cdef Slot *slots
    cdef int nthreads
    cdef int nslots
    cdef curl_slist *connect_to
    cdef curl_slist *headers
    cdef list _keep          # every object whose memory C points into
    cdef list _current_urls   # the strings the live URL table points into
    cdef list _replaced_urls  # the URL table set_urls last replaced, and its strings: a slot may still read it
    cdef list _rings         # per thread: dict of column arrays
    cdef list _buffers       # per slot: RAM sink buffer (NumPy)
    cdef list _pythreads
    cdef dict _jobs          # queue mode: column arrays of the job table
    cdef list _job_urls      # queue mode: the URL bytes each job-table entry points at
    cdef object _payload

    def __cinit__(self):
        self.threads = NULL
        self.slots = NULL
        self.connect_to = NULL
        self.headers = NULL
        self.shared.urls = NULL
        self.shared.sizes = NULL
        self.shared.nranges = NULL
        self.shared.fds = NULL
        self.shared.finished_fd = -1
        self.nthreads = 0
        self.nslots = 0

    def __init__(self, urls, sizes, *, int concurrency=16, int threads=1, int64_t range_size=8 << 20,
                 str sink="ram", bint random_ranges=False, fds=None, int64_t max_requests=-1,
                 int64_t max_bytes=-1, bint verify=False, str ip="any", connect_to=(), interface=None,
                 str http_version="1.1", bint tls=False, int64_t buffer_size=128 << 10,
                 double timeout=300.0, double connect_timeout=10.0, uint64_t seed=0x9E3779B97F4A7C15,
                 int ring_capacity=1 << 16, int queue_capacity=0, payload=None, ca_file=None,
                 bint verify_tls=True, spread_to=()):
        """Plan mode (reads): ``urls``/``sizes`` name the objects and the engine makes the requests.
        Queue mode (``queue_capacity`` > 0): requests are jobs handed in with ``submit``; uploads
        send slices of ``payload`` (a C-contiguous uint8 array).  Over TLS, ``ca_file`` replaces the
        system's CA certificates; ``verify_tls=False`` trusts any certificate.  ``spread_to``: CONNECT_TO
        entries dealt to the slots round robin, each ahead of ``connect_to`` in its slot's own list
        (a cluster's servers reached without a balancer)."""
        cdef int i, k, nkeys = len(urls)
        cdef Slot *s
        cdef ThreadState *ts
        cdef cnp.ndarray arr
        if queue_capacity > 0:
            if sink == "file":
                raise ValueError("the file sink needs plan mode")
            if nkeys == 0:
                urls, sizes, nkeys = [b""], [0], 1
        if nkeys == 0 or len(sizes) != nkeys:
            raise ValueError("urls and sizes must be non-empty and the same length")
        if concurrency < 1 or threads < 1 or range_size < 1 or ring_capacity < 1:
            raise ValueError("concurrency, threads, range_size and ring_capacity must be positive")
        if sink not in SINKS:
            raise ValueError(f"sink must be one of {sorted(SINKS)}")
        if ip not in IP_RESOLVE:
            raise ValueError("ip must be 'any', '4' or '6'")
        if sink == "file" and (fds is None or len(fds) != nkeys):
            raise ValueError("the file sink needs one open file descriptor per key")
        # a socket per slot; per thread an epoll set, an eventfd and a few idle connections
        ensure_open_files(concurrency, extra=8 * min(threads, concurrency))
        if sink == "ram":
            ensure_memory(concurrency, (min(range_size, max(max(sizes), 1)) + PAGE - 1) // PAGE * PAGE)
        self._keep = []
        self._replaced_urls = []
        self._rings = []
        self._buffers = []
        self._pythreads = []
        self.nthreads = min(threads, concurrency)
        self.nslots = concurrency

        cdef Shared *sh = &self.shared
        sh.next_req = 0
        sh.url_generation = 0
        sh.claimed_bytes = 0
        sh.max_requests = max_requests
        sh.max_bytes = max_bytes
        sh.deadline = 0
        sh.stop = STOP_NONE
        sh.nkeys = nkeys
        sh.range_size = range_size
        sh.random_ranges = random_ranges
        sh.sink = SINKS[sink]
        sh.verify = verify
        sh.urls = <char **>calloc(nkeys, sizeof(char *))
        sh.sizes = <int64_t *>calloc(nkeys, sizeof(int64_t))
        sh.nranges = <int64_t *>calloc(nkeys, sizeof(int64_t))
        sh.fds = <int *>calloc(nkeys, sizeof(int))
        if sh.urls == NULL or sh.sizes == NULL or sh.nranges == NULL or sh.fds == NULL:
            raise MemoryError()
        self._current_urls = []
        for k in range(nkeys):
            url = urls[k] if isinstance(urls[k], bytes) else urls[k].encode()
            self._current_urls.append(url)
            sh.urls[k] = url
            sh.sizes[k] = sizes[k]
            if sizes[k] < 0:
                raise ValueError("object sizes must be >= 0")
            sh.nranges[k] = max(1, (sizes[k] + range_size - 1) // range_size)
            sh.fds[k] = fds[k] if fds is not None else -1

        for entry in connect_to:
            self.connect_to = curl_slist_append(self.connect_to, entry.encode())
        # An empty Expect: stops libcurl waiting up to a second for "100 Continue" before each body.
        self.headers = curl_slist_append(NULL, b"Expect:")
        self._setup_queue(queue_capacity, payload)

        self.threads = <ThreadState *>calloc(self.nthreads, sizeof(ThreadState))
        self.slots = <Slot *>calloc(self.nslots, sizeof(Slot))
        if self.threads == NULL or self.slots == NULL:
            raise MemoryError()
        for i in range(self.nthreads):
            self.threads[i].epfd = self.threads[i].wakefd = -1
        for i in range(self.nthreads):
            ts = &self.threads[i]
            ts.index = i
            ts.shared = sh
            ts.rng = (seed + <uint64_t>i * 0x2545F4914F6CDD1D) | 1
            ts.timer_at = -1.0
            ts.multi = curl_multi_init()
            if ts.multi == NULL:
                raise EngineError("curl_multi_init failed")
            if op_event_open(&ts.epfd, &ts.wakefd) != 0:
                raise EngineError("cannot create the engine thread's epoll set")
            curl_multi_setopt(ts.multi, CURLMOPT_SOCKETFUNCTION, <curl_socket_callback>on_socket)
            curl_multi_setopt(ts.multi, CURLMOPT_SOCKETDATA, <void *>ts)
            curl_multi_setopt(ts.multi, CURLMOPT_TIMERFUNCTION, <curl_multi_timer_callback>on_timer)
            curl_multi_setopt(ts.multi, CURLMOPT_TIMERDATA, <void *>ts)
            per_thread = (self.nslots + self.nthreads - 1) // self.nthreads
            curl_multi_setopt(ts.multi, CURLMOPT_MAXCONNECTS, <long>(per_thread + 4))
            curl_multi_setopt(ts.multi, CURLMOPT_PIPELINING,
                              <long>(CURLPIPE_MULTIPLEX if http_version == "2" else CURLPIPE_NOTHING))
            self._rings.append(self._make_ring(ts, ring_capacity))

        slot_cap = range_size if sink == "ram" else 0
        if sink == "ram":
            slot_cap = min(range_size, max(max(sizes), 1))
            self._buffers = slot_region(self.nslots, slot_cap)
        for i in range(self.nslots):
            s = &self.slots[i]
            s.index = i
            s.ts = &self.threads[i % self.nthreads]
            s.url_key = -1
            s.easy = curl_easy_init()
            if s.easy == NULL:
                raise EngineError("curl_easy_init failed")
            if sink == "ram":
                arr = self._buffers[i]
                s.buf = <char *>cnp.PyArray_DATA(arr)
                s.cap = slot_cap
            if spread_to:
                s.pin = curl_slist_append(NULL, spread_to[i % len(spread_to)].encode())
                for entry in connect_to:
                    s.pin = curl_slist_append(s.pin, entry.encode())
            self._configure_easy(s, ip, interface, http_version, tls, buffer_size, timeout, connect_timeout)
            self._configure_tls(s.easy, ca_file, verify_tls)

    cdef _setup_queue(self, int capacity, payload):
        cdef Shared *sh = &self.shared
        cdef cnp.ndarray data
        sh.queue_mode = capacity > 0
        sh.closed = 0
        sh.job_cap = capacity
        sh.job_head = 0
        sh.job_tail = 0
        sh.job_url = NULL
        sh.payload = NULL
        sh.payload_len = 0
        sh.finished_fd = -1
        self._job_urls = []
        self._jobs = {}
        if not sh.queue_mode:
            return
        sh.finished_fd = op_eventfd()
        if sh.finished_fd < 0:
            raise EngineError("cannot create the engine's job-finished eventfd")
        self._jobs = {"url": np.zeros(capacity, dtype=np.uintp), "op": np.zeros(capacity, dtype=np.int8),
                      "key": np.zeros(capacity, dtype=np.int32), "offset": np.zeros(capacity, dtype=np.int64),
                      "length": np.zeros(capacity, dtype=np.int64),
                      "payload_offset": np.zeros(capacity, dtype=np.int64),
                      "attempt": np.zeros(capacity, dtype=np.int16)}
        self._job_urls = [None] * capacity
        sh.job_url = <char **>cnp.PyArray_DATA(self._jobs["url"])
        sh.job_op = <int8_t *>cnp.PyArray_DATA(self._jobs["op"])
        sh.job_key = <int32_t *>cnp.PyArray_DATA(self._jobs["key"])
        sh.job_offset = <int64_t *>cnp.PyArray_DATA(self._jobs["offset"])
        sh.job_length = <int64_t *>cnp.PyArray_DATA(self._jobs["length"])
        sh.job_payload_offset = <int64_t *>cnp.PyArray_DATA(self._jobs["payload_offset"])
        sh.job_attempt = <int16_t *>cnp.PyArray_DATA(self._jobs["attempt"])
        if payload is not None:
            data = np.ascontiguousarray(payload, dtype=np.uint8)
            self._payload = data
            sh.payload = <char *>cnp.PyArray_DATA(data)
            sh.payload_len = data.shape[0]

    def submit(self, url, int op, int key_index, int64_t offset, int64_t length, int64_t payload_offset=0,
               int attempt=0):
        """Queue one job.  The caller keeps fewer than ``queue_capacity`` jobs unfinished
        (submitted, but no row drained yet): an entry is reused once its job has finished."""
        cdef Shared *sh = &self.shared
        cdef int64_t head = sh.job_head, j
        cdef bytes raw = url if isinstance(url, bytes) else url.encode()
        if not sh.queue_mode:
            raise RuntimeError("submit() needs an Engine made with queue_capacity > 0")
        if op != OPC_GET and (length < 0 or (length > 0 and not 0 <= payload_offset < sh.payload_len)):
            raise ValueError("an upload starts inside the payload (it wraps round past its end)")
        if head - op_atomic_load(&sh.job_tail) >= sh.job_cap:
            raise RuntimeError("job queue is full")
        j = head % sh.job_cap
        self._job_urls[j] = raw
        sh.job_url[j] = <char *>raw
        sh.job_op[j] = op
        sh.job_key[j] = key_index
        sh.job_offset[j] = offset
        sh.job_length[j] = length
        sh.job_payload_offset[j] = payload_offset
        sh.job_attempt[j] = attempt
        op_atomic_store(&sh.job_head, head + 1)
        self._wake()

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
        for i in range(self.nthreads):
            op_event_wake(self.threads[i].wakefd)

    cdef dict _make_ring(self, ThreadState *ts, int capacity):
        cdef Ring *r = &ts.ring
        cols = {name: np.zeros(capacity, dtype=dtype) for name, dtype in ENGINE_COLUMNS.items()}
        r.cap = capacity
        r.head = 0
        r.tail = 0
        r.thread = <int16_t *>cnp.PyArray_DATA(cols["thread"])
        r.slot = <int32_t *>cnp.PyArray_DATA(cols["slot"])
        r.op = <int8_t *>cnp.PyArray_DATA(cols["op"])
        r.key_index = <int32_t *>cnp.PyArray_DATA(cols["key_index"])
        r.offset = <int64_t *>cnp.PyArray_DATA(cols["offset"])
        r.length = <int64_t *>cnp.PyArray_DATA(cols["length"])
        r.attempt = <int16_t *>cnp.PyArray_DATA(cols["attempt"])
        r.status = <int16_t *>cnp.PyArray_DATA(cols["status"])
        r.s3_error = <char *>cnp.PyArray_DATA(cols["s3_error"])
        r.curl_code = <int32_t *>cnp.PyArray_DATA(cols["curl_code"])
        r.nbytes = <int64_t *>cnp.PyArray_DATA(cols["bytes"])
        r.t_start = <double *>cnp.PyArray_DATA(cols["t_start"])
        r.dns_s = <double *>cnp.PyArray_DATA(cols["dns_s"])
        r.connect_s = <double *>cnp.PyArray_DATA(cols["connect_s"])
        r.tls_s = <double *>cnp.PyArray_DATA(cols["tls_s"])
        r.pretransfer_s = <double *>cnp.PyArray_DATA(cols["pretransfer_s"])
        r.ttfb_s = <double *>cnp.PyArray_DATA(cols["ttfb_s"])
        r.total_s = <double *>cnp.PyArray_DATA(cols["total_s"])
        r.remote_ip = <char *>cnp.PyArray_DATA(cols["remote_ip"])
        r.remote_port = <int32_t *>cnp.PyArray_DATA(cols["remote_port"])
        r.local_ip = <char *>cnp.PyArray_DATA(cols["local_ip"])
        r.local_port = <int32_t *>cnp.PyArray_DATA(cols["local_port"])
        r.ip_family = <int8_t *>cnp.PyArray_DATA(cols["ip_family"])
        r.http_version = <int8_t *>cnp.PyArray_DATA(cols["http_version"])
        r.new_conn = <uint8_t *>cnp.PyArray_DATA(cols["new_conn"])
        r.crc32 = <uint32_t *>cnp.PyArray_DATA(cols["crc32"])
        r.etag = <char *>cnp.PyArray_DATA(cols["etag"])
        return cols

    cdef _configure_easy(self, Slot *s, str ip, interface, str http_version, bint tls,
                         int64_t buffer_size, double timeout, double connect_timeout):
        cdef CURL *e = s.easy
        cdef long version
        check_easy(curl_easy_setopt(e, CURLOPT_PRIVATE, <void *>s), "CURLOPT_PRIVATE")
        check_easy(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, <curl_data_callback>on_body), "CURLOPT_WRITEFUNCTION")
        check_easy(curl_easy_setopt(e, CURLOPT_WRITEDATA, <void *>s), "CURLOPT_WRITEDATA")
        check_easy(curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, <curl_data_callback>on_header), "CURLOPT_HEADERFUNCTION")
        check_easy(curl_easy_setopt(e, CURLOPT_HEADERDATA, <void *>s), "CURLOPT_HEADERDATA")
        check_easy(curl_easy_setopt(e, CURLOPT_READFUNCTION, <curl_data_callback>on_upload), "CURLOPT_READFUNCTION")
        check_easy(curl_easy_setopt(e, CURLOPT_READDATA, <void *>s), "CURLOPT_READDATA")
        check_easy(curl_easy_setopt(e, CURLOPT_HTTPHEADER, self.headers), "CURLOPT_HTTPHEADER")
        check_easy(curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, <long>min(buffer_size, 2 << 20)),
                   "CURLOPT_UPLOAD_BUFFERSIZE")
        check_easy(curl_easy_setopt(e, CURLOPT_NOSIGNAL, <long>1), "CURLOPT_NOSIGNAL")
        check_easy(curl_easy_setopt(e, CURLOPT_TCP_NODELAY, <long>1), "CURLOPT_TCP_NODELAY")
        check_easy(curl_easy_setopt(e, CURLOPT_BUFFERSIZE, <long>buffer_size), "CURLOPT_BUFFERSIZE")
        check_easy(curl_easy_setopt(e, CURLOPT_IPRESOLVE, <long>IP_RESOLVE[ip]), "CURLOPT_IPRESOLVE")
        check_easy(curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, <long>(timeout * 1000)), "CURLOPT_TIMEOUT_MS")
        check_easy(curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, <long>(connect_timeout * 1000)),
                   "CURLOPT_CONNECTTIMEOUT_MS")
        if s.pin != NULL or self.connect_to != NULL:
            check_easy(curl_easy_setopt(e, CURLOPT_CONNECT_TO, s.pin if s.pin != NULL else self.connect_to),
                       "CURLOPT_CONNECT_TO")
        if interface:
            name = interface.encode()
            self._keep.append(name)
            check_easy(curl_easy_setopt(e, CURLOPT_INTERFACE, <char *>name), "CURLOPT_INTERFACE")
        if http_version == "1.1":
            version = CURL_HTTP_VERSION_1_1
        elif http_version == "2":
            version = CURL_HTTP_VERSION_2TLS if tls else CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        else:
            raise ValueError("http_version must be '1.1' or '2'")
        check_easy(curl_easy_setopt(e, CURLOPT_HTTP_VERSION, version), "CURLOPT_HTTP_VERSION")

    cdef _configure_tls(self, CURL *e, ca_file, bint verify_tls):
        cdef bytes path = os.fsencode(ca_file) if ca_file else None
        if path is not None:
            self._keep.append(path)
        check_easy(op_configure_tls(e, <char *>path if path is not None else NULL, verify_tls), "TLS options")

    def __dealloc__(self):
        cdef int i
        if self.slots != NULL:
            for i in range(self.nslots):
                if self.slots[i].easy != NULL:
                    if self.slots[i].busy:
                        curl_multi_remove_handle(self.slots[i].ts.multi, self.slots[i].easy)
                    curl_easy_cleanup(self.slots[i].easy)
                if self.slots[i].pin != NULL:
                    curl_slist_free_all(self.slots[i].pin)
            free(self.slots)
        if self.threads != NULL:
            for i in range(self.nthreads):
                if self.threads[i].multi != NULL:
                    curl_multi_cleanup(self.threads[i].multi)
                op_event_close(self.threads[i].epfd, self.threads[i].wakefd)
            free(self.threads)
        if self.connect_to != NULL:
            curl_slist_free_all(self.connect_to)
        if self.headers != NULL:
            curl_slist_free_all(self.headers)
        if self.shared.finished_fd >= 0:
            op_event_close(-1, self.shared.finished_fd)
        free(self.shared.urls)
        if self._replaced_urls is not None:
            for address, _ in self._replaced_urls:
                free(<void *><size_t>address)
        free(self.shared.sizes)
        free(self.shared.nranges)
        free(self.shared.fds)

    # -- running -----------------------------------------------------------

    def start(self, double duration=0.0):
        """Start the engine threads; ``duration`` > 0 ends the run after that many seconds, cutting the
        requests in flight (a queue's jobs not yet started are left, and the threads end)."""
        import threading
        if self._pythreads:
            raise RuntimeError("an Engine runs once")
        if duration > 0:
            self.shared.deadline = op_now_mono() + duration
        for i in range(self.nthreads):
            t = threading.Thread(target=self._thread_main, args=(i,), name=f"objperf-engine-{i}", daemon=True)
            self._pythreads.append(t)
            t.start()

    def _thread_main(self, int index):
        cdef ThreadState *ts = &self.threads[index]
        cdef Slot *slots = self.slots
        cdef int nslots = self.nslots, stride = self.nthreads
        with nogil:
            run_loop(ts, slots, nslots, stride)

    def stop(self, bint abort=False):
        """Issue no new requests; with ``abort`` also drop the ones in flight."""
        op_atomic_store_int(&self.shared.stop, STOP_ABORT if abort else STOP_DRAIN)
        self._wake()

    @property
    def running(self):
        return any(t.is_alive() for t in self._pythreads)

    def join(self, timeout=None):
        for t in self._pythreads:
            t.join(timeout)
        return not self.running

    def progress(self):
        """(body bytes, finished requests, failed requests) so far; cheap, for progress lines."""
        cdef int i
        cdef int64_t b = 0, n = 0, e = 0
        for i in range(self.nthreads):
            b += self.threads[i].bytes_done
            n += self.threads[i].requests_done
            e += self.threads[i].errors
        return b, n, e

    def drain(self):
        """Copy out the rows finished since the last drain, as a dict of NumPy columns (or None)."""
        cdef int i
        cdef int64_t head, tail
        cdef Ring *r
        parts = []
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
        if self.shared.queue_mode:
            raise ValueError("set_urls is for plan mode; queued jobs carry their own URLs")
        if len(urls) != sh.nkeys:
            raise ValueError(f"set_urls needs {sh.nkeys} URLs, one per object, not {len(urls)}")
        encoded = [u if isinstance(u, bytes) else u.encode() for u in urls]
        table = <char **>calloc(sh.nkeys, sizeof(char *))
        if table == NULL:
            raise MemoryError()
        for k in range(sh.nkeys):
            table[k] = encoded[k]
        self._replaced_urls.append((<size_t>op_atomic_load_urls(&sh.urls), self._current_urls))
        self._current_urls = encoded
        op_atomic_store_urls(&sh.urls, table)
        op_atomic_add(&sh.url_generation, 1)  # after the table: a slot that sees it sees the new table
        # A slot reads a table only between loading it and libcurl copying one string out of it; the
        # table replaced one call ago has had a whole renewal period for that, so memory stays bounded.
        while len(self._replaced_urls) > 1:
            address, _ = self._replaced_urls.pop(0)
            free(<void *><size_t>address)

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


cdef object text(const char *p):
    return p.decode() if p != NULL else None


def curl_versions():
    """libcurl's own version strings (libcurl, TLS library, zlib, nghttp2)."""
    cdef curl_version_info_data *v = curl_version_info(CURLVERSION_NOW)
    return {
        "libcurl": text(v.version),
        "tls": text(v.ssl_version),
        "zlib": text(v.libz_version),
        "nghttp2": text(v.nghttp2_version),
    }


def curl_strerror(int code):
    """libcurl's one-line description of a CURLcode."""
    return curl_easy_strerror(<CURLcode>code).decode()


cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


def fill_payload(unsigned char[::1] out not None, uint64_t seed, int64_t start=0):
    """Fill ``out`` with bytes ``start:start+len(out)`` of the payload stream of ``seed``.

    Word i (8 bytes, little-endian) of the stream is splitmix64(seed·2^32 + i): incompressible,
    random-access (so parts can be made one at a time and still join up) and about 0.15 s/GiB."""
    cdef int64_t n = out.shape[0], i, word, first
    cdef uint64_t value
    cdef unsigned char *dst = &out[0] if n > 0 else NULL
    cdef uint64_t base = seed << 32
    if start < 0:
        raise ValueError("start must be >= 0")
    with nogil:
        i = 0
        while i < n:
            word = (start + i) >> 3
            first = (start + i) & 7
            value = splitmix64(base + <uint64_t>word)
            if first == 0 and n - i >= 8:
                memcpy(dst + i, &value, 8)  # little-endian hosts: byte k of the word is value >> 8k
                i += 8
                continue
            while first < 8 and i < n:
                dst[i] = <unsigned char>(value >> (8 * first))
                first += 1
                i += 1

# Each slot's receive buffer sized from what its reads deliver.  A buffer that every read fills costs a
# syscall and a loop turn per buffer's worth of a fast stream; one that reads never fill holds memory (and
# cache) for nothing.  Between transfers a slot's buffer doubles while most of its reads filled it, and
# halves while none came near it, within the engine's bounds (Shared.rbuf_min and rbuf_max).
#
# libcurl hands a read to the body callback in pieces of at most CURL_MAX_WRITE_SIZE: a read is the whole
# pieces in a row and the short one that ends them, or a buffer's worth of whole pieces.

cdef extern from "curl/curl.h":
    enum: CURL_MAX_WRITE_SIZE


cdef inline void count_read(Slot *s, size_t piece) noexcept nogil:
    """Account one piece of a body, as libcurl handed it over, to the reads of the slot's buffer."""
    cdef int64_t whole = CURL_MAX_WRITE_SIZE if s.rbuf > CURL_MAX_WRITE_SIZE else s.rbuf
    cdef int64_t read
    if <int64_t>piece == whole:
        s.rbuf_run += <int64_t>piece
        if s.rbuf_run < s.rbuf:
            return
        read = s.rbuf_run
    else:
        read = s.rbuf_run + <int64_t>piece
    s.rbuf_run = 0
    s.rbuf_reads += 1
    if read >= s.rbuf:
        s.rbuf_fills += 1
    if read > s.rbuf_big:
        s.rbuf_big = read


cdef inline bint adapt_buffer(Slot *s) noexcept nogil:
    """Before the slot's next transfer: its buffer resized from what the last one's reads delivered.  False
    when libcurl refused the size (the request is not started; its row says so)."""
    cdef Shared *sh = s.ts.shared
    cdef int64_t size = s.rbuf
    cdef CURLcode rc
    if s.rbuf_reads == 0:
        return True
    if s.rbuf_fills * 2 >= s.rbuf_reads:
        size = s.rbuf * 2
        if size > sh.rbuf_max:
            size = sh.rbuf_max
    elif s.rbuf_fills == 0 and s.rbuf_big * 4 <= s.rbuf:
        size = s.rbuf // 2
        if size < sh.rbuf_min:
            size = sh.rbuf_min
    s.rbuf_run = s.rbuf_big = 0
    s.rbuf_reads = s.rbuf_fills = 0
    if size == s.rbuf:
        return True
    rc = curl_easy_setopt(s.easy, CURLOPT_BUFFERSIZE, <long>size)
    if rc != CURLE_OK:
        return fail_start(s, FAULT_SETOPT, rc, rc)
    s.rbuf = size
    return True

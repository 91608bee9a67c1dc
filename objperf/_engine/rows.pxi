# One row per finished request, written into the thread's ring of preallocated columns.
from libc.math cimport NAN  # a missing time to first byte

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
    start = NULL
    if s.errbuf != NULL:
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


cdef bint wait_for_room(ThreadState *ts) noexcept nogil:
    """Wait while the ring is full (Python drains it every few ms).  False once the run is aborted
    and nobody has drained for ABANDON_MS: the caller then drops its row instead of waiting for ever."""
    cdef Ring *r = &ts.ring
    cdef int64_t tail = op_atomic_load(&r.tail), now_tail
    cdef double since
    if r.head - tail < r.cap:
        return True  # the common case: no clock read per row
    since = op_now_mono()
    while r.head - tail >= r.cap:
        if op_atomic_load_int(&ts.shared.stop) == STOP_ABORT and (op_now_mono() - since) * 1e3 >= ABANDON_MS:
            return False
        op_sleep_ms(1)
        now_tail = op_atomic_load(&r.tail)
        if now_tail != tail:
            tail = now_tail
            since = op_now_mono()
    return True


cdef inline int8_t http_version_of(long version) noexcept nogil:
    if version == CURL_HTTP_VERSION_1_0:
        return 10
    if version == CURL_HTTP_VERSION_1_1:
        return 11
    if version == CURL_HTTP_VERSION_2_0:
        return 20
    if version == CURL_HTTP_VERSION_3:
        return 30
    return 0


op_find_ssl_session_reused()  # rows say which TLS connections resumed a session


cdef void write_transfer_info(Slot *s, Ring *r, int64_t i) noexcept nogil:
    """What libcurl knows of the transfer that just ended on this slot: phase times, peers, version."""
    cdef long port = 0, conns = 0, version = 0
    cdef char *ip = NULL
    r.dns_s[i] = info_seconds(s.easy, CURLINFO_NAMELOOKUP_TIME_T)
    r.connect_s[i] = info_seconds(s.easy, CURLINFO_CONNECT_TIME_T)
    r.tls_s[i] = info_seconds(s.easy, CURLINFO_APPCONNECT_TIME_T)
    r.pretransfer_s[i] = info_seconds(s.easy, CURLINFO_PRETRANSFER_TIME_T)
    r.ttfb_s[i] = info_seconds(s.easy, CURLINFO_STARTTRANSFER_TIME_T)
    if r.ttfb_s[i] == 0:
        r.ttfb_s[i] = NAN  # no byte of an answer came: its time to first byte is missing, not 0
    r.total_s[i] = info_seconds(s.easy, CURLINFO_TOTAL_TIME_T)
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
    r.http_version[i] = http_version_of(version)
    curl_easy_getinfo(s.easy, CURLINFO_NUM_CONNECTS, &conns)
    r.new_conn[i] = 1 if conns > 0 else 0
    r.tls_resumed[i] = s.tls_resumed if conns > 0 else -1


cdef void clear_transfer_info(Ring *r, int64_t i) noexcept nogil:
    """A request that never went out: no times, no peers (the handle still holds its last transfer's)."""
    r.dns_s[i] = r.connect_s[i] = r.tls_s[i] = r.pretransfer_s[i] = r.total_s[i] = 0
    r.ttfb_s[i] = NAN
    copy_text(r.remote_ip + i * IP_CAP, NULL, IP_CAP)
    copy_text(r.local_ip + i * IP_CAP, NULL, IP_CAP)
    r.remote_port[i] = r.local_port[i] = 0
    r.ip_family[i] = r.http_version[i] = 0
    r.new_conn[i] = 0
    r.tls_resumed[i] = -1


cdef CURLcode checked_against_its_checksum(Slot *s, CURLcode result) noexcept nogil:
    """A whole GET in checksum mode: its bytes' CRC-32 (sh.verify computes it) against the one the store named;
    a mismatch fails the row (8: not the object the store says it holds).  Each answer counted by what it said."""
    cdef Shared *sh = s.ts.shared
    cdef bint whole = not sh.queue_mode and s.offset == 0 and s.length == sh.sizes[s.key_index]
    if s.sum_told == SUM_TOLD_NONE:
        s.ts.sums[SUM_ABSENT] += 1
    elif s.sum_told == SUM_TOLD_OTHER or not whole or not sh.verify:
        s.ts.sums[SUM_UNCHECKED] += 1
    elif <uint32_t>s.crc != s.sum_crc32:
        s.ts.sums[SUM_MISMATCHED] += 1
        return CURLE_WEIRD_SERVER_REPLY
    else:
        s.ts.sums[SUM_VERIFIED] += 1
    return result


cdef CURLcode held_to_contract(Slot *s, CURLcode result, long code) noexcept nogil:
    """``result``, or the error of an answer S3 would not give to this request: a GET's bytes that are not
    the range asked (a 206 naming another range or none, more bytes than the range: 33; fewer: 18), a
    PUT or part answered 2xx before all its body was sent (55) or with no ETag to complete the upload with (8)."""
    cdef curl_off_t uploaded = 0, told = -1
    if s.overrun or s.range_told < 0:
        return CURLE_RANGE_ERROR  # not a write error of ours: the server did not deliver the range
    if s.doc_too_long:
        return CURLE_FILESIZE_EXCEEDED  # an answer's document past the bound the job set for it
    if result != CURLE_OK or code < 200 or code >= 300:
        return result
    if s.op == OPC_GET:
        if code == 206 and s.range_told == 0:
            return CURLE_RANGE_ERROR
        if s.got < s.length:
            return CURLE_PARTIAL_FILE
        if s.ts.shared.checksum_mode:
            return checked_against_its_checksum(s, result)
    elif s.op == OPC_HEAD:
        # A stat that names another size than the object's (its row's length), or no ETag, is not the object's.
        curl_easy_getinfo(s.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &told)
        if told != s.length or s.etag[0] == 0:
            return CURLE_WEIRD_SERVER_REPLY
    elif uploads(s.op):
        # Answered before its body was all sent (libcurl stops sending at a final answer): the store cannot
        # hold what it was asked to.  What libcurl wrote to the connection, not only what it took from us.
        curl_easy_getinfo(s.easy, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        if s.upos < s.upload_len or uploaded < s.upload_len:
            return CURLE_SEND_ERROR
        if sends_payload(s.op) and s.etag[0] == 0:
            return CURLE_WEIRD_SERVER_REPLY
    return result


cdef void finish_request(Slot *s, CURLcode result, bint ran) noexcept nogil:
    """The row of the request on slot ``s``; ``ran``: libcurl ran it (else it could not be started)."""
    cdef ThreadState *ts = s.ts
    cdef Shared *sh = ts.shared
    cdef Ring *r = &ts.ring
    cdef int64_t i
    cdef long code = 0
    cdef CURLcode answered = result
    ts.requests_done += 1
    if ran:
        curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, &code)
    result = held_to_contract(s, result, code)
    if not (result == CURLE_ABORTED_BY_CALLBACK and code < 300):  # cut, not failed: see objperf.core.schema
        if result != CURLE_OK or code >= 400 or code == 0:
            ts.errors += 1
    if s.job_entry >= 0:
        # The job's entry is done with before its row is handed over: whoever reads the row finds its document
        # (and the entry free once that is taken); nothing reads the entry after this.
        if s.doc_cap > 0:
            sh.job_doc_len[s.job_entry] = s.got
        op_atomic_store_int(&sh.job_busy[s.job_entry], 0)
        s.job_entry = -1
    if wait_for_room(ts):
        i = r.head % r.cap
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
        if code >= 300 or result != answered:  # an error's body, or bytes that are not what was asked
            r.nbytes[i] = 0
        elif result != CURLE_OK and result != CURLE_ABORTED_BY_CALLBACK:  # failed on the way: nothing was done
            r.nbytes[i] = 0
        elif s.op == OPC_GET or s.op == OPC_LIST:
            r.nbytes[i] = s.got
        elif s.op == OPC_COPY or s.op == OPC_UPLOAD_PART_COPY:
            # What the store copied, once it answered 2xx (the caller fails the row if its document says
            # otherwise); a copy cut in flight copied nothing anyone can count.
            r.nbytes[i] = s.length if result == CURLE_OK and 200 <= code < 300 else 0
        else:
            r.nbytes[i] = s.sent
        copy_text(r.etag + i * ETAG_CAP, s.etag, ETAG_CAP)
        r.t_start[i] = s.t_start
        r.t_intended[i] = s.t_intended
        if ran:
            write_transfer_info(s, r, i)
        else:
            clear_transfer_info(r, i)
        if result == CURLE_ABORTED_BY_CALLBACK:  # cut in flight: libcurl's clock stopped at its last progress
            r.total_s[i] = op_now_wall() - s.t_start
        r.crc32[i] = <uint32_t>s.crc
        op_atomic_store(&r.head, r.head + 1)
    else:
        ts.rows_dropped += 1
    if sh.finished_fd >= 0:
        op_event_wake(sh.finished_fd)

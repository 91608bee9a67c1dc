# What libcurl calls back into, without the GIL and never raising: bodies, headers, upload data,
# sockets to watch and timers to keep.

cdef size_t on_body(char *data, size_t size, size_t nmemb, void *userdata) noexcept nogil:
    cdef Slot *s = <Slot *>userdata
    cdef Shared *sh = s.ts.shared
    cdef size_t total = size * nmemb
    cdef int64_t room
    cdef ssize_t written
    cdef long code = 0
    if not s.status_known:
        curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, &code)
        s.status = code
        s.status_known = 1
    if s.status >= 300:
        # Error bodies carry the S3 error code; keep the head of it, never sink it.
        if s.errbuf == NULL:
            s.errbuf = <char *>malloc(ERRBUF_CAP)
            if s.errbuf == NULL:
                return total  # no room for the head: the row has its status, without the S3 code
        room = ERRBUF_CAP - 1 - s.errlen
        if room > 0:
            if <int64_t>total < room:
                room = total
            memcpy(s.errbuf + s.errlen, data, room)
            s.errlen += room
        return total
    if s.doc_cap > 0:
        # The answer's document (a listing's page, a batch's or a copy's result) lands in the job's own
        # buffer, which bounds it: a longer one ends the transfer and fails its row.
        if s.got + <int64_t>total > s.doc_cap:
            s.doc_too_long = 1
            return 0
        memcpy(s.doc + s.got, data, total)
        s.got += total
        return total
    if s.op == OPC_GET and s.got + <int64_t>total > s.length:
        # More than the range: the server ignored Range and is sending the whole object (or more than
        # the object's size it gave).  No byte of it lands past the slot's range; the transfer ends here
        # and its row says so.
        s.overrun = 1
        return 0
    if sh.rbuf_min < sh.rbuf_max:
        count_read(s, total)
    if sh.sink == SINK_RAM:
        room = s.cap - s.got
        if room > 0:
            if <int64_t>total < room:
                room = total
            op_copy(s.buf + s.got, data, room)
    elif sh.sink == SINK_FILE:
        written = pwrite(sh.fds[s.key_index], data, total, s.offset + s.got)
        if written != <ssize_t>total:
            # A sink that cannot be written (a full disk) ends the run: every further request would fail.
            # A short write sets no errno: a regular file is short of room.
            if op_atomic_cas_int(&sh.fault_kind, FAULT_NONE, FAULT_SINK):
                sh.fault_code = errno if written < 0 else ENOSPC
            op_atomic_store_int(&sh.stop, STOP_ABORT)
            return 0
    if sh.verify:
        s.crc = op_crc32(s.crc, data, total)
    s.got += total
    s.ts.bytes_done += total
    return total


cdef inline bint header_is(const char *data, size_t total, const char *name, size_t n) noexcept nogil:
    """Whether the header line ``data`` is the header ``name`` (lower case, with its colon)."""
    cdef size_t i
    if total <= n:
        return False
    for i in range(n):
        if (data[i] | 32) != name[i]:  # ASCII lower case; ':' and '-' are unchanged by | 32
            return False
    return True


cdef inline int64_t parse_int(const char *data, size_t total, size_t *i) noexcept nogil:
    """Decimal digits at ``data[i]``; -1 for none or more than 18 (``i`` moves past them)."""
    cdef int64_t value = 0
    cdef int digits = 0
    while i[0] < total and 48 <= data[i[0]] <= 57:
        if digits == 18:
            return -1
        value = value * 10 + (data[i[0]] - 48)
        digits += 1
        i[0] += 1
    return value if digits else -1


cdef int content_range_matches(Slot *s, const char *data, size_t total) noexcept nogil:
    """A 206's ``Content-Range: bytes FIRST-LAST/SIZE``: 1 when it is the range asked, -1 otherwise."""
    cdef size_t i = 14
    cdef int64_t first, last
    while i < total and data[i] == 32:
        i += 1
    if total - i < 6 or not header_is(data + i, total - i, b"bytes ", 6):
        return -1
    i += 6
    first = parse_int(data, total, &i)
    if first < 0 or i >= total or data[i] != 45:  # '-'
        return -1
    i += 1
    last = parse_int(data, total, &i)
    if last < 0 or i >= total or data[i] != 47:  # '/'
        return -1
    return 1 if first == s.offset and last == s.offset + s.length - 1 else -1


cdef inline int base64_digit(char c) noexcept nogil:
    if 65 <= c <= 90:
        return c - 65
    if 97 <= c <= 122:
        return c - 71
    if 48 <= c <= 57:
        return c + 4
    if c == 43:
        return 62
    if c == 47:
        return 63
    return -1


cdef int8_t told_checksum(Slot *s, const char *data, size_t total) noexcept nogil:
    """An answer's ``x-amz-checksum-*`` header: SUM_TOLD_CRC32 with ``s.sum_crc32`` set when it is a CRC-32 of
    the whole object (eight base64 characters, the last two "="), SUM_TOLD_OTHER for any other value or algorithm
    (a composite of parts, "…-3"; CRC-32C, CRC-64/NVME, SHA), SUM_TOLD_NONE for the checksum's type header."""
    cdef size_t i = 15, start, n = 0
    cdef uint32_t value = 0
    cdef int digit, k
    if header_is(data, total, b"x-amz-checksum-type:", 20):
        return SUM_TOLD_NONE
    if not header_is(data, total, b"x-amz-checksum-crc32:", 21):
        return SUM_TOLD_OTHER
    i = 21
    while i < total and data[i] == 32:
        i += 1
    start = i
    while i < total and data[i] != 13 and data[i] != 10 and data[i] != 32:
        i += 1
    n = i - start
    if n != 8 or data[start + 6] != 61 or data[start + 7] != 61:
        return SUM_TOLD_OTHER
    for k in range(6):  # 36 bits, the last four of them zero
        digit = base64_digit(data[start + k])
        if digit < 0:
            return SUM_TOLD_OTHER
        value = (value << 6) | <uint32_t>digit if k < 5 else (value << 2) | <uint32_t>(digit >> 4)
    s.sum_crc32 = value
    return SUM_TOLD_CRC32


cdef size_t on_header(char *data, size_t size, size_t nmemb, void *userdata) noexcept nogil:
    """Keep the ETag of the final response (a new status line forgets earlier ones); end a GET whose 206
    names another range than the one asked (its bytes are not the range's)."""
    cdef Slot *s = <Slot *>userdata
    cdef size_t total = size * nmemb
    cdef size_t i = 5, n = 0
    cdef long code = 0
    if total >= 5 and data[0] == 72 and data[1] == 84 and data[2] == 84 and data[3] == 80 and data[4] == 47:
        s.etag[0] = 0  # "HTTP/": a new response begins
        s.range_told = 0
        s.sum_told = SUM_TOLD_NONE
        if s.ts.shared.tls:
            s.tls_resumed = <int8_t>op_tls_resumed(s.easy)  # libcurl detaches the connection before the row
    elif s.op == OPC_GET and s.ts.shared.checksum_mode and header_is(data, total, b"x-amz-checksum-", 15):
        code = told_checksum(s, data, total)
        if code != SUM_TOLD_NONE and s.sum_told == SUM_TOLD_NONE:
            s.sum_told = <int8_t>code
    elif s.op == OPC_GET and header_is(data, total, b"content-range:", 14):
        curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, &code)
        if code == 206 or code == 200:  # some gateways answer 200 with the range and its Content-Range
            s.range_told = content_range_matches(s, data, total)
            if s.range_told < 0:
                return 0  # libcurl ends the transfer; the row names the range error
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


cdef inline int64_t copy_part(char *buffer, const char *part, int64_t part_len, int64_t at, int64_t room) noexcept nogil:
    """Bytes of ``part`` from ``at`` into ``buffer``, at most ``room``; how many."""
    cdef int64_t n = part_len - at
    if n <= 0 or room <= 0:
        return 0
    if n > room:
        n = room
    memcpy(buffer, part + at, n)
    return n


cdef size_t on_upload(char *buffer, size_t size, size_t nitems, void *userdata) noexcept nogil:
    """Fill libcurl's upload buffer with the body: the job's bytes before its payload range, the range (the
    payload repeats: a range longer than the payload wraps round to its start), then the job's bytes after."""
    cdef Slot *s = <Slot *>userdata
    cdef Shared *sh = s.ts.shared
    cdef int64_t room = s.upload_len - s.upos
    cdef int64_t want = <int64_t>(size * nitems)
    cdef int64_t done = 0, at, n, ranged = s.length if sends_payload(s.op) else 0
    if want < room:
        room = want
    if s.upos < s.before_len:
        done += copy_part(buffer, s.before, s.before_len, s.upos, room)
    while done < room and s.upos + done < s.before_len + ranged:
        at = (s.payload_offset + s.sent) % sh.payload_len
        n = sh.payload_len - at
        if n > room - done:
            n = room - done
        if n > ranged - s.sent:
            n = ranged - s.sent
        memcpy(buffer + done, sh.payload + at, n)
        done += n
        s.sent += n
        s.ts.bytes_done += n
    if done < room:
        done += copy_part(buffer + done, s.after, s.after_len, s.upos + done - s.before_len - ranged, room - done)
    s.upos += done
    return <size_t>done


cdef int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp) noexcept nogil:
    op_event_watch((<ThreadState *>userp).epfd, fd, what)
    return 0


cdef int on_timer(CURLM *multi, long timeout_ms, void *userp) noexcept nogil:
    cdef ThreadState *ts = <ThreadState *>userp
    ts.timer_at = -1.0 if timeout_ms < 0 else op_now_mono() + timeout_ms * 1e-3
    return 0

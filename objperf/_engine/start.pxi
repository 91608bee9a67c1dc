# Starting a request on a slot: reset it, set its options, add it to the thread's multi handle.
# A request that cannot be started still leaves a row, and ends the run loudly (Engine.fault).

cdef inline void reset_slot(Slot *s) noexcept nogil:
    s.got = 0
    s.overrun = 0
    s.range_told = 0
    s.sent = 0
    s.upos = 0
    s.doc_too_long = 0
    s.sum_told = SUM_TOLD_NONE
    s.status = 0
    s.status_known = 0
    s.errlen = 0
    s.crc = 0
    s.etag[0] = 0
    s.tls_resumed = -1
    s.t_start = op_now_wall()
    s.t_intended = s.t_start


cdef bint fail_start(Slot *s, int kind, int code, CURLcode row_code) noexcept nogil:
    """The request on ``s`` could not be started: its row says so, and the engine stops (the first
    fault is kept for Engine.fault).  Always False: no request started."""
    cdef Shared *sh = s.ts.shared
    s.url_key = -1  # the handle's URL is unknown now
    finish_request(s, row_code, False)
    if op_atomic_cas_int(&sh.fault_kind, FAULT_NONE, kind):
        sh.fault_code = code
    op_atomic_store_int(&sh.stop, STOP_ABORT)
    return False


def fault_error(int kind, int code):
    """The error of a run the engine stopped itself (``Shared.fault_kind`` and ``fault_code``), or None."""
    if kind == FAULT_SETOPT:
        return EngineError(f"libcurl refused a request's options: {curl_easy_strerror(<CURLcode>code).decode()}",
                           code=code)
    if kind == FAULT_SINK:
        return RunFailed(f"cannot write the file sink: {describe_os_error(OSError(code, os.strerror(code)))}",
                         code=CURLE_WRITE_ERROR)
    if kind == FAULT_ADD:
        return EngineError(f"libcurl refused to start a request: {curl_multi_strerror(<CURLMcode>code).decode()}",
                           code=CURLE_FAILED_INIT)
    return None


cdef inline bint set_range(Slot *s, bint whole) noexcept nogil:
    cdef CURLcode rc
    if whole:
        rc = curl_easy_setopt(s.easy, CURLOPT_RANGE, <char *>NULL)
    else:
        snprintf(s.range_spec, 64, "%lld-%lld", <long long>s.offset, <long long>(s.offset + s.length - 1))
        rc = curl_easy_setopt(s.easy, CURLOPT_RANGE, s.range_spec)
    return rc == CURLE_OK or fail_start(s, FAULT_SETOPT, rc, rc)


cdef inline bint set_url(Slot *s, const char *url) noexcept nogil:
    cdef CURLcode rc = curl_easy_setopt(s.easy, CURLOPT_URL, url)  # libcurl copies it
    return rc == CURLE_OK or fail_start(s, FAULT_SETOPT, rc, rc)


cdef inline bint launch(Slot *s) noexcept nogil:
    cdef CURLMcode rc
    if s.ts.shared.rbuf_min < s.ts.shared.rbuf_max and not adapt_buffer(s):
        return False
    rc = curl_multi_add_handle(s.ts.multi, s.easy)
    if rc != CURLM_OK:
        return fail_start(s, FAULT_ADD, rc, CURLE_FAILED_INIT)
    s.busy = 1
    s.start_mono = op_now_mono()
    s.paced_len = s.length
    return True


cdef inline bint past_deadline(Shared *sh) noexcept nogil:
    return sh.deadline > 0 and op_now_mono() >= sh.deadline


cdef bint start_next(Slot *s) noexcept nogil:
    if s.ts.shared.queue_mode:
        return start_job(s)
    return start_plan(s)

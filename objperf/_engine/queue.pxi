# Queue mode (uploads, explicit request lists): the engine takes jobs that Python submits.
# An entry of the job table is the caller's again only once its job's row is written.

JOB_COLUMNS = {"url": np.uintp, "op": np.int8, "key": np.int32, "offset": np.int64, "length": np.int64,
               "payload_offset": np.int64, "attempt": np.int16, "ring": np.int32, "busy": np.intc}

cdef bint claim_job(Shared *sh, int64_t *position) noexcept nogil:
    cdef int64_t t
    while True:
        t = op_atomic_load(&sh.job_tail)
        if t >= op_atomic_load(&sh.job_head):
            return False
        if op_atomic_cas(&sh.job_tail, t, t + 1):
            position[0] = t
            return True


cdef bint start_job(Slot *s) noexcept nogil:
    """Take the next job from the queue, if any, and start it on this slot."""
    cdef Shared *sh = s.ts.shared
    cdef int64_t position, j
    cdef CURLcode rc
    cdef const char *method = NULL
    if op_atomic_load_int(&sh.stop) != STOP_NONE or past_deadline(sh) or not claim_job(sh, &position):
        return False
    j = sh.job_ring[position % sh.job_cap]
    s.job_entry = j
    s.op = sh.job_op[j]
    s.key_index = sh.job_key[j]
    s.offset = sh.job_offset[j]
    s.length = sh.job_length[j]
    s.payload_offset = sh.job_payload_offset[j]
    s.attempt = sh.job_attempt[j]
    reset_slot(s)
    s.url_key = -1
    if not set_url(s, sh.job_url[j]):
        return False
    # The handle's last request may have been any op: its method, body and Range are set anew each time.
    rc = curl_easy_setopt(s.easy, CURLOPT_HTTPGET, <long>1)  # a GET, with a body, no upload
    if s.op == OPC_DELETE:
        method = "DELETE"
    if rc == CURLE_OK:
        rc = curl_easy_setopt(s.easy, CURLOPT_CUSTOMREQUEST, method)
    if rc == CURLE_OK and (s.op == OPC_HEAD or s.op == OPC_DELETE):  # headers alone: a HEAD, or the DELETE's
        rc = curl_easy_setopt(s.easy, CURLOPT_NOBODY, <long>1)
    if rc == CURLE_OK and (s.op == OPC_PUT or s.op == OPC_UPLOAD_PART):
        rc = curl_easy_setopt(s.easy, CURLOPT_UPLOAD, <long>1)
        if rc == CURLE_OK:
            rc = curl_easy_setopt(s.easy, CURLOPT_INFILESIZE_LARGE, <curl_off_t>s.length)
    if rc != CURLE_OK:
        return fail_start(s, FAULT_SETOPT, rc, rc)
    if not set_range(s, s.op != OPC_GET or s.length <= 0):
        return False
    return launch(s)


cdef int fill_idle(ThreadState *ts, Slot *slots, int nslots, int stride) noexcept nogil:
    """Start queued jobs on this thread's idle slots; how many started."""
    cdef int i = ts.index, started = 0
    cdef Shared *sh = ts.shared
    while i < nslots:
        if op_atomic_load(&sh.job_tail) >= op_atomic_load(&sh.job_head):
            break
        if not slots[i].busy and start_next(&slots[i]):
            started += 1
        i += stride
    return started

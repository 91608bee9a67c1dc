# Queue mode (uploads, explicit request lists, the workloads beyond GET and PUT): the engine takes jobs that
# Python submits.  An entry of the job table is the caller's again only once its job's row is written; an entry
# whose answer's document the caller asked for stays the caller's until it has taken the document (``document``).

JOB_COLUMNS = {"url": np.uintp, "op": np.int8, "key": np.int32, "offset": np.int64, "length": np.int64,
               "payload_offset": np.int64, "attempt": np.int16, "ring": np.int32, "busy": np.intc,
               "headers": np.uintp, "before": np.uintp, "before_len": np.int64, "after": np.uintp,
               "after_len": np.int64, "doc": np.uintp, "doc_cap": np.int64, "doc_len": np.int64}

# Ops whose body is a range of the payload; ops whose answer is a document the caller reads.
cdef inline bint sends_payload(int op) noexcept nogil:
    return op == OPC_PUT or op == OPC_UPLOAD_PART


cdef inline bint uploads(int op) noexcept nogil:
    return op == OPC_PUT or op == OPC_UPLOAD_PART or op == OPC_DELETE_OBJECTS or op == OPC_COPY or \
        op == OPC_UPLOAD_PART_COPY


@cython.final
cdef class JobTable:
    """The job table's entries: their columns (which the engine's threads read), and what each entry's C
    pointers point into (its URL, its header list, its body's bytes and its document buffer)."""
    cdef Shared *sh
    cdef dict columns
    cdef list urls, befores, afters, docs
    cdef list free_entries   # entries known to be free
    cdef set held            # entries whose document the caller has not taken yet
    cdef int64_t cursor
    cdef object payload      # the bytes uploads send ranges of (the engine points into them)

    def __cinit__(self):
        self.sh = NULL
        self.columns = {}
        self.urls, self.befores, self.afters, self.docs, self.free_entries = [], [], [], [], []
        self.held = set()

    cdef setup(self, Shared *sh, int64_t capacity, payload):
        cdef cnp.ndarray data
        self.sh = sh
        sh.job_cap = capacity
        self.columns = {name: np.zeros(capacity, dtype=dtype) for name, dtype in JOB_COLUMNS.items()}
        self.urls, self.befores, self.afters, self.docs = ([None] * capacity for _ in range(4))
        self.free_entries = list(range(capacity - 1, -1, -1))
        sh.job_url = <char **>cnp.PyArray_DATA(self.columns["url"])
        sh.job_op = <int8_t *>cnp.PyArray_DATA(self.columns["op"])
        sh.job_key = <int32_t *>cnp.PyArray_DATA(self.columns["key"])
        sh.job_offset = <int64_t *>cnp.PyArray_DATA(self.columns["offset"])
        sh.job_length = <int64_t *>cnp.PyArray_DATA(self.columns["length"])
        sh.job_payload_offset = <int64_t *>cnp.PyArray_DATA(self.columns["payload_offset"])
        sh.job_attempt = <int16_t *>cnp.PyArray_DATA(self.columns["attempt"])
        sh.job_ring = <int32_t *>cnp.PyArray_DATA(self.columns["ring"])
        sh.job_busy = <int *>cnp.PyArray_DATA(self.columns["busy"])
        sh.job_headers = <curl_slist **>cnp.PyArray_DATA(self.columns["headers"])
        sh.job_before = <char **>cnp.PyArray_DATA(self.columns["before"])
        sh.job_before_len = <int64_t *>cnp.PyArray_DATA(self.columns["before_len"])
        sh.job_after = <char **>cnp.PyArray_DATA(self.columns["after"])
        sh.job_after_len = <int64_t *>cnp.PyArray_DATA(self.columns["after_len"])
        sh.job_doc = <char **>cnp.PyArray_DATA(self.columns["doc"])
        sh.job_doc_cap = <int64_t *>cnp.PyArray_DATA(self.columns["doc_cap"])
        sh.job_doc_len = <int64_t *>cnp.PyArray_DATA(self.columns["doc_len"])
        if payload is not None:
            data = np.ascontiguousarray(payload, dtype=np.uint8)
            self.payload = data
            sh.payload = <char *>cnp.PyArray_DATA(data)
            sh.payload_len = data.shape[0]

    cdef int64_t free_entry(self) except -2:
        """An entry whose job has finished (its row written) and whose document was taken, or -1 if none is."""
        cdef int64_t n
        if self.free_entries:
            return self.free_entries.pop()
        for n in range(self.sh.job_cap):
            self.cursor = (self.cursor + 1) % self.sh.job_cap
            if op_atomic_load_int(&self.sh.job_busy[self.cursor]) == 0 and self.cursor not in self.held:
                return self.cursor
        return -1

    cdef int64_t put(self, bytes url, int op, int key_index, int64_t offset, int64_t length, int64_t payload_offset,
                     int attempt, headers, bytes before, bytes after, int64_t document) except -2:
        """Fill a free entry with a job; its index, or -1 if none is free."""
        cdef Shared *sh = self.sh
        cdef int64_t j = self.free_entry()
        cdef curl_slist *own = NULL
        cdef cnp.ndarray doc
        if j < 0:
            return -1
        if sh.job_headers[j] != NULL:
            curl_slist_free_all(sh.job_headers[j])
            sh.job_headers[j] = NULL
        if headers:
            own = curl_slist_append(NULL, b"Expect:")  # the engine's own header, which this list replaces
            for line in headers:
                if own == NULL:
                    break
                own = curl_slist_append(own, <char *>line)
            if own == NULL:
                raise MemoryError()
        sh.job_headers[j] = own
        self.urls[j], self.befores[j], self.afters[j] = url, before, after
        sh.job_url[j] = <char *>url
        sh.job_before[j] = <char *>before if before else NULL
        sh.job_before_len[j] = len(before) if before else 0
        sh.job_after[j] = <char *>after if after else NULL
        sh.job_after_len[j] = len(after) if after else 0
        sh.job_doc[j] = NULL
        sh.job_doc_cap[j] = sh.job_doc_len[j] = 0
        if document > 0:
            doc = self.docs[j]
            if doc is None or doc.shape[0] < document:
                doc = self.docs[j] = np.empty(document, dtype=np.uint8)
            sh.job_doc[j] = <char *>cnp.PyArray_DATA(doc)
            sh.job_doc_cap[j] = document
            self.held.add(j)
        sh.job_op[j] = op
        sh.job_key[j] = key_index
        sh.job_offset[j] = offset
        sh.job_length[j] = length
        sh.job_payload_offset[j] = payload_offset
        sh.job_attempt[j] = attempt
        return j

    def document(self, int64_t entry):
        """The answer's document of a finished job that asked for one (its bytes, at most what was asked
        for); the entry is free for another job from now on."""
        if entry not in self.held:
            raise ValueError(f"entry {entry} holds no document")
        if op_atomic_load_int(&self.sh.job_busy[entry]) != 0:
            raise RuntimeError(f"entry {entry}'s job has not finished")
        self.held.discard(entry)
        return self.docs[entry][:self.sh.job_doc_len[entry]].tobytes()

    cdef void free_c(self) noexcept:
        cdef int64_t j
        if self.sh == NULL or self.sh.job_headers == NULL:
            return
        for j in range(self.sh.job_cap):
            if self.sh.job_headers[j] != NULL:
                curl_slist_free_all(self.sh.job_headers[j])
                self.sh.job_headers[j] = NULL


cdef bint claim_job(Shared *sh, int64_t *position) noexcept nogil:
    cdef int64_t t
    while True:
        t = op_atomic_load(&sh.job_tail)
        if t >= op_atomic_load(&sh.job_head):
            return False
        if op_atomic_cas(&sh.job_tail, t, t + 1):
            position[0] = t
            return True


cdef const char *method_of(int op) noexcept nogil:
    """The method, where libcurl's own (GET, HEAD with NOBODY, PUT with UPLOAD) is not the op's."""
    if op == OPC_DELETE:
        return "DELETE"
    if op == OPC_DELETE_OBJECTS:
        return "POST"
    return NULL


cdef bint start_job(Slot *s) noexcept nogil:
    """Take the next job from the queue, if any, and start it on this slot."""
    cdef Shared *sh = s.ts.shared
    cdef int64_t position, j
    cdef CURLcode rc
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
    s.before, s.before_len = sh.job_before[j], sh.job_before_len[j]
    s.after, s.after_len = sh.job_after[j], sh.job_after_len[j]
    s.doc, s.doc_cap = sh.job_doc[j], sh.job_doc_cap[j]
    s.upload_len = s.before_len + (s.length if sends_payload(s.op) else 0) + s.after_len
    reset_slot(s)
    s.url_key = -1
    if not set_url(s, sh.job_url[j]):
        return False
    # The handle's last request may have been any op: its method, body, headers and Range are set anew each time.
    rc = curl_easy_setopt(s.easy, CURLOPT_HTTPGET, <long>1)  # a GET, with a body, no upload
    if rc == CURLE_OK:
        rc = curl_easy_setopt(s.easy, CURLOPT_CUSTOMREQUEST, method_of(s.op))
    if rc == CURLE_OK:
        rc = curl_easy_setopt(s.easy, CURLOPT_HTTPHEADER, sh.job_headers[j] if sh.job_headers[j] != NULL else
                              sh.headers)
    if rc == CURLE_OK and (s.op == OPC_HEAD or s.op == OPC_DELETE):  # headers alone: a HEAD, or the DELETE's
        rc = curl_easy_setopt(s.easy, CURLOPT_NOBODY, <long>1)
    if rc == CURLE_OK and uploads(s.op):
        rc = curl_easy_setopt(s.easy, CURLOPT_UPLOAD, <long>1)
        if rc == CURLE_OK:
            rc = curl_easy_setopt(s.easy, CURLOPT_INFILESIZE_LARGE, <curl_off_t>s.upload_len)
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

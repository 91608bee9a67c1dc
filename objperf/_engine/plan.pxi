# Plan mode (reads): the engine makes the requests itself — every range of every object in turn
# (or at random), until the request, byte or time budget or a stop ends the run.

cdef inline uint64_t xorshift(uint64_t *state) noexcept nogil:
    cdef uint64_t x = state[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    state[0] = x
    return x


cdef inline void sequential_range(Shared *sh, int64_t m, int64_t *key, int64_t *r) noexcept nogil:
    """The ``m``-th request of a pass: range ``r`` of ``key``.  Keys are taken in turn, each while it has
    ranges left, so objects of different sizes each have every range read exactly once per pass."""
    cdef int64_t lo = 0, hi = sh.nsegs - 1, mid, into
    while lo < hi:  # the last segment starting at or before m
        mid = (lo + hi + 1) // 2
        if sh.seg_before[mid] <= m:
            lo = mid
        else:
            hi = mid - 1
    into = m - sh.seg_before[lo]
    r[0] = sh.seg_layer[lo] + into // sh.seg_keys[lo]
    key[0] = sh.order[into % sh.seg_keys[lo]]


cdef bint start_plan(Slot *s) noexcept nogil:
    cdef ThreadState *ts = s.ts
    cdef Shared *sh = ts.shared
    cdef int64_t n, key, r, size, prev, generation
    cdef double due, paced
    if op_atomic_load_int(&sh.stop) != STOP_NONE:
        return False
    if past_deadline(sh):
        return False
    n = op_atomic_add(&sh.next_req, 1)
    if sh.max_requests >= 0 and n >= sh.max_requests:
        return False
    if sh.random_ranges:
        key = n % sh.nkeys
        r = <int64_t>(xorshift(&ts.rng) % <uint64_t>sh.nranges[key])
    else:
        sequential_range(sh, n % sh.plan_total, &key, &r)
    size = sh.sizes[key]
    s.key_index = <int>key
    s.offset = r * sh.range_size
    s.length = size - s.offset
    if s.length > sh.range_size:
        s.length = sh.range_size
    if sh.plan_op != OPC_GET:  # a key's headers, or the key deleted: the whole object, no range, no body
        s.offset, s.length = 0, size
    if sh.max_bytes >= 0:
        prev = op_atomic_add(&sh.claimed_bytes, s.length)
        if prev >= sh.max_bytes:
            return False
    s.op = sh.plan_op
    s.attempt = 0
    reset_slot(s)
    # The table is read only here, between two of this thread's quiescent points (see run_loop).
    generation = op_atomic_load(&sh.url_generation)
    if s.url_key != key or s.url_generation != generation:
        if not set_url(s, op_atomic_load_urls(&sh.urls)[key]):
            return False
        s.url_key = <int>key
        s.url_generation = generation
    # In checksum mode a read of a whole object asks for it whole, as an SDK's GetObject does: a store names the
    # object's checksum on such an answer, and on no answer to a Range.
    if not set_range(s, size == 0 or s.op != OPC_GET or (sh.checksum_mode and s.length == size)):
        return False
    due = 0.0
    if sh.rate > 0:  # open loop: the n-th request's time, kept even when it starts late (a backlog)
        s.t_intended = sh.go_wall + n / sh.rate
        due = sh.go_mono + n / sh.rate
    if sh.slot_speed > 0 and s.paced_len > 0:  # --max-rate: this slot's last bytes at its share first
        paced = s.start_mono + s.paced_len / sh.slot_speed
        if paced > due:
            due = paced
    if due > 0 and op_now_mono() < due:
        s.due_mono = due
        s.waiting = 1  # launched by launch_due when its time comes
        return True
    return launch(s)

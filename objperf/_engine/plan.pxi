# Plan mode (reads): the engine makes the requests itself — every range of every object in turn
# (or at random), until the request, byte or time budget or a stop ends the run.

cdef inline uint64_t xorshift(uint64_t *state) noexcept nogil:
    cdef uint64_t x = state[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    state[0] = x
    return x


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
    s.op = OPC_GET
    s.attempt = 0
    reset_slot(s)
    # The table is read only here, between two of this thread's quiescent points (see run_loop).
    generation = op_atomic_load(&sh.url_generation)
    if s.url_key != key or s.url_generation != generation:
        if not set_url(s, op_atomic_load_urls(&sh.urls)[key]):
            return False
        s.url_key = <int>key
        s.url_generation = generation
    if not set_range(s, size == 0):
        return False
    return launch(s)

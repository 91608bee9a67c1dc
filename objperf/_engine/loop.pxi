# Each engine thread's loop: wait on its epoll set, let libcurl act, turn finished transfers into
# rows and start the next request on the freed slot.

cdef inline long long wait_until_us(double at, long long cap_us) noexcept nogil:
    """Microseconds from now until ``at`` (monotonic seconds; 0 or less: no time), at most ``cap_us``."""
    cdef double left
    if at <= 0:
        return cap_us
    left = (at - op_now_mono()) * 1e6
    return 0 if left <= 0 else (<long long>left + 1 if left + 1 < cap_us else cap_us)


cdef void wait_and_act(ThreadState *ts, long long cap_us) noexcept nogil:
    """Wait for ready sockets (or libcurl's timer, or a wake-up) and let libcurl act on them."""
    cdef int fds[EVENTS_CAP]
    cdef int flags[EVENTS_CAP]
    cdef int i, n, running = 0
    cdef long long wait_us = cap_us
    if ts.timer_at >= 0:
        wait_us = wait_until_us(ts.timer_at, cap_us)
    n = op_event_wait(ts.epfd, ts.wakefd, fds, flags, EVENTS_CAP, wait_us)
    for i in range(n):
        curl_multi_socket_action(ts.multi, fds[i], flags[i], &running)
    if ts.timer_at >= 0 and op_now_mono() >= ts.timer_at:
        ts.timer_at = -1.0
        curl_multi_socket_action(ts.multi, CURL_SOCKET_TIMEOUT, 0, &running)


cdef inline long long wait_cap_us(Shared *sh) noexcept nogil:
    """How long a thread may sleep: not past the run's deadline, when the requests in flight are cut."""
    return wait_until_us(sh.deadline, IDLE_WAIT_MS * 1000)


cdef int launch_due(ThreadState *ts, Slot *slots, int nslots, int stride, double *next_due) noexcept nogil:
    """Open loop: launch this thread's requests whose time has come; ``next_due`` the earliest still waiting
    (0 for none).  The change in the number of slots active."""
    cdef int i = ts.index, change = 0
    cdef double now = op_now_mono()
    cdef bint stopping = op_atomic_load_int(&ts.shared.stop) != STOP_NONE  # no new request after a stop
    next_due[0] = 0.0
    while i < nslots:
        if slots[i].waiting:
            if stopping:
                slots[i].waiting = 0  # never sent: no row
                change -= 1
            elif slots[i].due_mono <= now:
                slots[i].waiting = 0
                slots[i].t_start = op_now_wall()
                if not launch(&slots[i]):
                    change -= 1
            elif next_due[0] == 0.0 or slots[i].due_mono < next_due[0]:
                next_due[0] = slots[i].due_mono
        i += stride
    return change


cdef inline void quiescent(ThreadState *ts) noexcept nogil:
    """This thread holds no pointer into a URL table here: say which generation it has seen, so
    set_urls may free the tables every thread has moved past."""
    op_atomic_store(&ts.seen_generation, op_atomic_load(&ts.shared.url_generation))


cdef int take_finished(ThreadState *ts) noexcept nogil:
    """Rows for the transfers libcurl has finished, and the next request on each freed slot;
    the change in the number of slots busy."""
    cdef int left = 0, change = 0
    cdef CURLMsg *msg
    cdef CURL *easy
    cdef CURLcode result
    cdef void *priv = NULL
    cdef Slot *s
    while True:
        msg = curl_multi_info_read(ts.multi, &left)
        if msg == NULL:
            return change
        if msg.msg != CURLMSG_DONE:
            continue
        easy = msg.easy_handle
        result = op_msg_result(msg)
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv)
        s = <Slot *>priv
        finish_request(s, result, True)
        curl_multi_remove_handle(ts.multi, easy)
        s.busy = 0
        change -= 1
        if start_next(s):
            change += 1


cdef void wait_for_go(ThreadState *ts) noexcept nogil:
    """Wait at the start gate until Engine.start opens it (or a stop).  Threads start one after another,
    milliseconds apart on a busy box: without the gate the first ones would take a short run's every
    request, and the run's first moments would be measured with part of its concurrency."""
    cdef Shared *sh = ts.shared
    op_atomic_add_int(&sh.at_gate, 1)
    while not op_atomic_load_int(&sh.go) and op_atomic_load_int(&sh.stop) == STOP_NONE:
        op_event_wait_one(ts.wakefd, GATE_POLL_MS)


cdef void open_gate(Shared *sh, ThreadState *threads, int nthreads, double duration) noexcept nogil:
    """Once every thread waits at the gate, start the run's clock and let them go."""
    cdef int i
    while op_atomic_load_int(&sh.at_gate) < nthreads and op_atomic_load_int(&sh.stop) == STOP_NONE:
        op_sleep_ms(1)
    sh.go_mono = op_now_mono()
    sh.go_wall = op_now_wall()
    if duration > 0:
        sh.deadline = sh.go_mono + duration
    op_atomic_store_int(&sh.go, 1)
    for i in range(nthreads):
        op_event_wake(threads[i].wakefd)


cdef void run_loop(ThreadState *ts, Slot *slots, int nslots, int stride) noexcept nogil:
    """Keep every slot of this thread busy until the plan, the queue's end, the deadline or a stop ends it.
    Requests still in flight when the deadline passes, or at an abort, are cut: each leaves a row with
    curl code CURLE_ABORTED_BY_CALLBACK and the bytes moved until then, so a run lasts its duration and
    counts every byte it moved."""
    cdef Shared *sh = ts.shared
    cdef int i, active = 0
    cdef double next_due = 0.0
    quiescent(ts)
    i = ts.index
    while i < nslots:
        if start_next(&slots[i]):
            active += 1
        i += stride
    while True:
        quiescent(ts)
        if op_atomic_load_int(&sh.stop) == STOP_ABORT or past_deadline(sh):
            break
        if sh.queue_mode:
            active += fill_idle(ts, slots, nslots, stride)
            if active == 0:
                if op_atomic_load_int(&sh.stop) != STOP_NONE or (
                        op_atomic_load_int(&sh.closed) and op_atomic_load(&sh.job_tail) >= op_atomic_load(&sh.job_head)):
                    break
                wait_and_act(ts, wait_cap_us(sh))
                continue
        elif active == 0:
            break
        if sh.rate > 0 or sh.slot_speed > 0:
            active += launch_due(ts, slots, nslots, stride, &next_due)
            if active == 0:
                break
        wait_and_act(ts, wait_until_us(next_due, wait_cap_us(sh)))
        active += take_finished(ts)
        if active == 0 and not sh.queue_mode:
            break
    i = ts.index
    while i < nslots:
        slots[i].waiting = 0  # a request whose time had not come when the run ended was never sent: no row
        if slots[i].busy:
            finish_request(&slots[i], CURLE_ABORTED_BY_CALLBACK, True)
            curl_multi_remove_handle(ts.multi, slots[i].easy)
            slots[i].busy = 0
        i += stride
    op_atomic_store(&ts.seen_generation, GENERATION_DONE)


cdef bint any_unfinished(ThreadState *threads, int started) noexcept nogil:
    """Whether one of the first ``started`` threads has not yet said its loop has ended."""
    cdef int i
    for i in range(started):
        if not op_atomic_load_int(&threads[i].finished):
            return True
    return False

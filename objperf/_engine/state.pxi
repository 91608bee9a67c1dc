# The engine's C state: the shared run, each thread, each slot, and each thread's row ring.

cdef enum:
    SINK_DISCARD = 0
    SINK_RAM = 1
    SINK_FILE = 2
    ERRBUF_CAP = 2048
    EVENTS_CAP = 64
    IDLE_WAIT_MS = 100
    GATE_POLL_MS = 1
    S3ERR_CAP = 64
    IP_CAP = 46
    ETAG_CAP = 48
    OPC_GET = 0
    OPC_PUT = 1
    OPC_UPLOAD_PART = 2
    OPC_HEAD = 6         # objperf.core.schema's OPS: a stat of the object, its headers alone
    OPC_DELETE = 7       # ... and the object deleted
    OPC_LIST = 8         # a page of a listing: its document lands in the job's own buffer
    OPC_DELETE_OBJECTS = 9  # a batch deleted: the request's document sent, the answer's kept
    OPC_COPY = 10        # a copy made by the store: the answer's document kept
    OPC_UPLOAD_PART_COPY = 11
    SUM_VERIFIED = 0     # a whole-object read whose bytes' CRC-32 is the one the store named
    SUM_MISMATCHED = 1   # ... is not: the row fails
    SUM_UNCHECKED = 2    # the answer named a checksum objperf cannot check: a range's, a composite, another algorithm
    SUM_ABSENT = 3       # the answer named none
    SUM_TOLD_NONE = 0
    SUM_TOLD_CRC32 = 1
    SUM_TOLD_OTHER = 2
    STOP_NONE = 0
    STOP_DRAIN = 1
    STOP_ABORT = 2
    FAULT_NONE = 0
    FAULT_SETOPT = 1      # curl_easy_setopt refused a request's option: fault_code is its CURLcode
    FAULT_ADD = 2         # curl_multi_add_handle refused a request: fault_code is its CURLMcode
    FAULT_SINK = 3        # the file sink could not be written: fault_code is the errno
    # After an abort, a thread whose row ring stays full this long (nobody drains it any more)
    # drops its remaining rows, counted, rather than wait for ever.
    ABANDON_MS = 1000
    # Rows each thread's ring holds between drains (every 0.1 s): 0.4 s of 40,000 rows/s per thread.  Its
    # pages are touched as rows land, so a larger ring was memory a run gained for its first tens of seconds
    # (2 threads × 65,536 rows of 319 bytes: 40 MiB) and page faults the engine paid in the measured window.
    RING_ROWS = 16384

# Published by a thread that has ended: it reads no URL table any more.
cdef int64_t GENERATION_DONE = (<int64_t>1) << 62


include "ring.pxi"  # the row ring, generated from objperf/core/schema.py (ringgen.py)


ctypedef struct Shared:
    int64_t next_req
    int64_t claimed_bytes
    int64_t max_requests
    int64_t max_bytes
    double deadline
    # Open loop (plan mode): the n-th request is due at go + n / rate, whatever the answers' pace; 0: closed loop.
    double rate
    double slot_speed    # --max-rate's share of a slot, bytes a second (0: none): reads are paced to it
    double go_wall       # when the gate opened, on each clock
    double go_mono
    int at_gate          # threads waiting for the start: no request is made until every one is (see wait_for_go)
    int go
    int stop
    int fault_kind       # the first request the engine could not start (FAULT_*), which ends the run
    int fault_code
    int nkeys
    char **urls          # swapped whole by set_urls: read it with op_atomic_load_urls
    int64_t url_generation
    int64_t *sizes
    int64_t *nranges
    # The sequential plan: one pass reads every range of every object once, keys taken in turn while they
    # have ranges left.  Layer j holds range j of each key with more than j ranges; the layers fall into
    # segments with the same keys (by range count), found by binary search (see start_plan).
    int64_t *order       # keys by range count, most first
    int64_t nsegs
    int64_t *seg_layer   # the segment's first layer
    int64_t *seg_before  # requests in the pass before the segment
    int64_t *seg_keys    # keys in each of its layers: the first seg_keys of order
    int64_t plan_total   # requests in one pass
    int64_t range_size
    int random_ranges
    int plan_op          # what the plan's requests are: OPC_GET (ranges), OPC_HEAD or OPC_DELETE (each key)
    int sink
    int verify
    int checksum_mode    # GETs ask for the object's checksum (x-amz-checksum-mode): whole-object reads check it
    int *fds
    # Queue mode: requests are jobs that Python puts in a table of entries; job_ring lists the
    # entries queued, in order.  An entry stays busy from submit until its job's row is written.
    int queue_mode
    int tls              # https: requests note whether their connection resumed a TLS session
    # Each slot's receive buffer (CURLOPT_BUFFERSIZE) follows what its reads deliver, between these two
    # (adapt.pxi); equal: fixed.
    int64_t rbuf_min
    int64_t rbuf_max
    int closed
    int64_t job_cap
    int64_t job_head
    int64_t job_tail
    int32_t *job_ring
    int *job_busy
    char **job_url
    int8_t *job_op
    int32_t *job_key
    int64_t *job_offset
    int64_t *job_length
    int64_t *job_payload_offset
    int16_t *job_attempt
    # Each entry's own request: headers (NULL: the engine's), the body's bytes before and after its payload
    # range, and where the answer's document lands (a listing's page, a batch's or a copy's result).
    curl_slist **job_headers
    char **job_before
    int64_t *job_before_len
    char **job_after
    int64_t *job_after_len
    char **job_doc
    int64_t *job_doc_cap
    int64_t *job_doc_len
    curl_slist *headers  # the engine's own headers, which every request without its own sends
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
    int64_t rows_dropped   # rows an aborted run's full ring could not take
    int64_t sums[4]        # checksum mode's answers: SUM_VERIFIED, SUM_MISMATCHED, SUM_UNCHECKED, SUM_ABSENT
    int64_t seen_generation  # the URL generation this thread saw last at a point where it held no table
    int epfd             # epoll set: libcurl's sockets and wakefd
    int wakefd           # eventfd: stop() and submit() wake the thread through it
    double timer_at      # when libcurl wants curl_multi_socket_action(CURL_SOCKET_TIMEOUT); < 0: never
    CURLSH *tls_share    # TLS sessions its slots resume from one another (one thread: no locks), or NULL
    int finished         # set by the thread itself once its loop has ended: nothing of the engine is used after


ctypedef struct Slot:
    CURL *easy
    ThreadState *ts
    int index
    int busy
    int key_index
    int url_key
    int64_t url_generation
    int64_t job_entry    # queue mode: the job-table entry this slot's request came from, or -1
    curl_slist *pin      # this slot's own CONNECT_TO list (spread_to), or NULL for the engine's
    int64_t offset
    int64_t length
    double t_start
    double t_intended    # when the request was due (open loop), else its start
    double due_mono      # open loop: when a slot waiting for its request's time may launch it
    int waiting          # open loop: the request is set up and waits for its time (not yet in libcurl)
    double start_mono    # when the slot's last request went to libcurl, and the bytes it asked for: with
    int64_t paced_len    # --max-rate, the slot's next read waits until those bytes at its share have passed
    char *buf
    int64_t cap
    int64_t got
    int overrun          # the server sent more than the range asked for (it ignored Range)
    int range_told       # a GET's answer named its range (Content-Range): 1 the one asked, -1 another
    long status
    int status_known
    char *errbuf         # the head of an error body (ERRBUF_CAP), made on a slot's first one: 2 KiB in every
                         # slot touched 8 MiB of pages at 4096 in flight that only failures need
    int errlen
    unsigned long crc
    char range_spec[64]
    int op
    int attempt
    int64_t payload_offset
    int64_t sent         # bytes of the payload range sent
    int64_t upos         # bytes of the whole body sent: before, the payload range, after
    int64_t upload_len   # the whole body
    const char *before   # queue mode: the job's body bytes around its payload range (or NULL)
    int64_t before_len
    const char *after
    int64_t after_len
    char *doc            # queue mode: where the answer's document lands (or NULL), at most doc_cap bytes
    int64_t doc_cap
    int doc_too_long     # the answer's document was longer than doc_cap: the row fails
    char etag[ETAG_CAP]
    uint32_t sum_crc32   # the CRC-32 the answer named (x-amz-checksum-crc32), when sum_told is SUM_TOLD_CRC32
    int8_t sum_told      # what checksum the answer named: SUM_TOLD_NONE, SUM_TOLD_CRC32, SUM_TOLD_OTHER
    int8_t tls_resumed   # how this request's TLS connection began, read while it was attached (rows.pxi)
    int64_t rbuf         # the receive buffer libcurl reads this slot's bodies into, and what its reads
    int64_t rbuf_run     # delivered since it was set (adapt.pxi): bytes of whole pieces in a row,
    int64_t rbuf_big     # the largest read,
    int32_t rbuf_reads   # reads,
    int32_t rbuf_fills   # and reads that filled the buffer


SINKS = {"discard": SINK_DISCARD, "ram": SINK_RAM, "file": SINK_FILE}
# The C state and objperf.core.schema's rows agree, or the engine is stale.
if (OP_GET, OP_PUT, OP_UPLOAD_PART, OP_HEAD, OP_DELETE, OP_LIST, OP_DELETE_OBJECTS, OP_COPY, OP_UPLOAD_PART_COPY) != \
        (OPC_GET, OPC_PUT, OPC_UPLOAD_PART, OPC_HEAD, OPC_DELETE, OPC_LIST, OPC_DELETE_OBJECTS, OPC_COPY,
         OPC_UPLOAD_PART_COPY) or \
        (ENGINE_COLUMNS["s3_error"].itemsize, ENGINE_COLUMNS["remote_ip"].itemsize,
         ENGINE_COLUMNS["etag"].itemsize) != (S3ERR_CAP, IP_CAP, ETAG_CAP):
    raise ImportError("objperf.core.schema and the compiled engine disagree: rebuild the engine")

/* Small C helpers for the objperf engine: things Cython cannot spell directly
 * (the anonymous union in CURLMsg, GCC atomics) or should not call per chunk
 * through Python-visible wrappers. */
#ifndef OBJPERF_HELPERS_H
#define OBJPERF_HELPERS_H

#include <stdint.h>
#include <time.h>
#include <zlib.h>
#include <string.h>
#include <curl/curl.h>
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <unistd.h>
#include <dlfcn.h>
#ifndef RTLD_DEFAULT
#define RTLD_DEFAULT ((void *)0)
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline CURLcode op_msg_result(CURLMsg *msg) { return msg->data.result; }

static inline int64_t op_atomic_add(int64_t *p, int64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
static inline int64_t op_atomic_load(int64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void op_atomic_store(int64_t *p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline int op_atomic_cas(int64_t *p, int64_t expected, int64_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static inline int op_atomic_add_int(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
static inline int op_atomic_load_int(int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void op_atomic_store_int(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline int op_atomic_cas_int(int *p, int expected, int desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static inline char **op_atomic_load_urls(char ***p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void op_atomic_store_urls(char ***p, char **v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

static inline double op_now_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double op_now_wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline unsigned long op_crc32(unsigned long crc, const char *buf, size_t len) {
    while (len > 0) {
        uInt chunk = len > 0x40000000u ? 0x40000000u : (uInt)len;
        crc = crc32(crc, (const Bytef *)buf, chunk);
        buf += chunk;
        len -= chunk;
    }
    return crc;
}

/* Copy a received chunk into a RAM-sink buffer.  The buffers are far larger than
 * the caches and are not read back during the run, so large copies use
 * non-temporal stores: no read-for-ownership of the destination, no eviction of
 * the hot socket and libcurl buffers.  About half the cost of memcpy here.
 * The streamed part starts on a cache line: libcurl hands the body over in
 * pieces of at most 16 KiB that start anywhere in a line (after the headers, and
 * wherever a recv ended), and the line a piece's tail wrote with plain stores,
 * in the cache, is the one the next piece's first stream would write.  Streaming
 * only whole lines, 16 KiB pieces after a 300-byte skew cost 0.046 CPU-s/GiB
 * against 0.121 (a C receiver from nginx here, 0.049 for one memcpy). */
static inline void op_copy(char *dst, const char *src, size_t n) {
#if defined(__SSE2__)
    if (n >= 4096) {
        size_t head = (64 - ((uintptr_t)dst & 63)) & 63;
        memcpy(dst, src, head);
        dst += head; src += head; n -= head;
        for (; n >= 64; n -= 64, src += 64, dst += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)src);
            __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));
            _mm_stream_si128((__m128i *)dst, a);
            _mm_stream_si128((__m128i *)(dst + 16), b);
            _mm_stream_si128((__m128i *)(dst + 32), c);
            _mm_stream_si128((__m128i *)(dst + 48), d);
        }
        memcpy(dst, src, n);
        _mm_sfence();
        return;
    }
#endif
    memcpy(dst, src, n);
}

/* Each engine thread waits on its own epoll set: the sockets libcurl asks it to
 * watch (CURLMOPT_SOCKETFUNCTION) and an eventfd that wakes it for stops and
 * new jobs.  Readiness goes back to libcurl with curl_multi_socket_action, so
 * libcurl neither polls every transfer's socket on every pass nor walks every
 * transfer when one socket has data. */
static inline int op_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/* Take the wake-ups an eventfd has collected, so it reads as idle again. */
static inline void op_event_reset(int fd) {
    uint64_t count;
    ssize_t ignored = read(fd, &count, sizeof count);
    (void)ignored;
}

static inline int op_event_open(int *epfd, int *wakefd) {
    struct epoll_event ev = {0};
    *epfd = epoll_create1(EPOLL_CLOEXEC);
    *wakefd = op_eventfd();
    if (*epfd < 0 || *wakefd < 0) return -1;
    ev.events = EPOLLIN;
    ev.data.fd = *wakefd;
    return epoll_ctl(*epfd, EPOLL_CTL_ADD, *wakefd, &ev);
}

static inline void op_event_close(int epfd, int wakefd) {
    if (epfd >= 0) close(epfd);
    if (wakefd >= 0) close(wakefd);
}

/* What libcurl's socket callback asked for: CURL_POLL_IN/OUT/INOUT, or REMOVE. */
static inline void op_event_watch(int epfd, int fd, int what) {
    struct epoll_event ev = {0};
    if (what == CURL_POLL_REMOVE || (what & (CURL_POLL_IN | CURL_POLL_OUT)) == 0) {
        epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);  /* the socket may be closed already */
        return;
    }
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
    ev.data.fd = fd;
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
        epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static inline void op_event_wake(int wakefd) {
    uint64_t one = 1;
    ssize_t ignored = write(wakefd, &one, sizeof one);
    (void)ignored;
}

/* epoll_wait with a timeout in microseconds: epoll_pwait2 (Linux 5.11, glibc 2.35) where
 * there is one, else rounded up to epoll_wait's milliseconds.  An open-loop request waits for
 * its time here: in milliseconds it went up to 1 ms late, and that lateness would be counted
 * as the store's in the latency from the intended time. */
static int op_no_pwait2 = 0;
static inline int op_epoll_wait_us(int epfd, struct epoll_event *evs, int max, long long timeout_us) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    if (!op_no_pwait2) {
        struct timespec ts = {(time_t)(timeout_us / 1000000), (long)(timeout_us % 1000000) * 1000L};
        int n = epoll_pwait2(epfd, evs, max, timeout_us < 0 ? NULL : &ts, NULL);
        if (n >= 0 || errno != ENOSYS) return n;
        op_no_pwait2 = 1;
    }
#endif
    return epoll_wait(epfd, evs, max, timeout_us < 0 ? -1 : (int)((timeout_us + 999) / 1000));
}

/* Wait up to timeout_us; fills fds/flags (CURL_CSELECT_*) with the sockets that are
 * ready, leaving out the eventfd (emptied here).  Returns how many. */
static inline int op_event_wait(int epfd, int wakefd, int *fds, int *flags, int max, long long timeout_us) {
    struct epoll_event evs[64];
    int n, i, out = 0;
    if (max > 64) max = 64;
    n = op_epoll_wait_us(epfd, evs, max, timeout_us);
    for (i = 0; i < n; i++) {
        if (evs[i].data.fd == wakefd) {
            op_event_reset(wakefd);
            continue;
        }
        fds[out] = evs[i].data.fd;
        flags[out] = ((evs[i].events & (EPOLLIN | EPOLLHUP)) ? CURL_CSELECT_IN : 0)
                   | ((evs[i].events & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
                   | ((evs[i].events & EPOLLERR) ? CURL_CSELECT_ERR : 0);
        out++;
    }
    return out;
}

/* Block until wakefd is signalled or timeout_ms passes; 1 if it was signalled (and is now reset). */
static inline int op_event_wait_one(int wakefd, int timeout_ms) {
    struct pollfd p = {wakefd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return 0;
    op_event_reset(wakefd);
    return 1;
}

static inline void op_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Whom a handle trusts over TLS, the same for the engine's slots and the control plane's
 * handle: any certificate (verify == 0), the CAs in ca_file, or (NULL) the system's. */
static inline CURLcode op_configure_tls(CURL *easy, const char *ca_file, int verify) {
    CURLcode rc;
    if (!verify) {
        rc = curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
        return rc != CURLE_OK ? rc : curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    return ca_file ? curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file) : CURLE_OK;
}

/* OpenSSL's SSL_session_reused, looked up in the process (libcurl has loaded libssl: objperf does not link
 * it), or NULL. */
typedef int (*op_ssl_reused_fn)(const void *ssl);
static op_ssl_reused_fn op_ssl_session_reused = NULL;

static inline void op_find_ssl_session_reused(void) {
    op_ssl_session_reused = (op_ssl_reused_fn)dlsym(RTLD_DEFAULT, "SSL_session_reused");
}

/* How the TLS connection of a transfer in progress began: 1 it resumed a session, 0 a full handshake,
 * -1 unknown (no TLS connection attached, or a TLS library other than OpenSSL). */
static inline int op_tls_resumed(CURL *easy) {
    struct curl_tlssessioninfo *info = NULL;
    if (op_ssl_session_reused == NULL)
        return -1;
    if (curl_easy_getinfo(easy, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || info == NULL ||
        info->backend != CURLSSLBACKEND_OPENSSL || info->internals == NULL)
        return -1;
    return op_ssl_session_reused(info->internals) ? 1 : 0;
}

/* A share of TLS sessions for one engine thread's handles, so that a new connection of any slot resumes
 * a session another slot got.  One thread uses it: no lock callbacks.  NULL if libcurl refuses. */
static inline CURLSH *op_tls_session_share(void) {
    CURLSH *share = curl_share_init();
    if (share != NULL && curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
        curl_share_cleanup(share);
        return NULL;
    }
    return share;
}

static inline void op_share_free(CURLSH *share) {
    if (share != NULL)
        curl_share_cleanup(share);
}

#endif

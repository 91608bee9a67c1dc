/* Small C helpers for the objperf engine: things Cython cannot spell directly
 * (the anonymous union in CURLMsg, GCC atomics) or should not call per chunk
 * through Python-visible wrappers. */
#ifndef OBJPERF_HELPERS_H
#define OBJPERF_HELPERS_H

#include <stdint.h>
#include <time.h>
#include <zlib.h>
#include <curl/curl.h>

static inline CURLcode op_msg_result(CURLMsg *msg) { return msg->data.result; }

static inline int64_t op_atomic_add(int64_t *p, int64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
static inline int64_t op_atomic_load(int64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void op_atomic_store(int64_t *p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline int op_atomic_load_int(int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void op_atomic_store_int(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

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

static inline void op_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif

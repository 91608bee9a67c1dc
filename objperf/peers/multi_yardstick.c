/* libcurl's own cost of many transfers in flight: the yardstick of objperf's memory at high concurrency.
 *
 * One multi handle and CONCURRENCY easy handles, each with the options objperf's engine gives its slots
 * (no signals, TCP_NODELAY, the path as given, an empty Expect:, HTTP/1.1, the receive buffer objperf would
 * start with), reading ranges of RANGE bytes of URL (an object of SIZE bytes) in turn, bodies counted and
 * dropped, for SECONDS.  It prints "requests bytes failed" and exits 0 when no request failed.
 *
 * usage: multi_yardstick URL SIZE RANGE CONCURRENCY BUFFER SECONDS
 * Built by objperf bench with the system's cc and curl-config; nothing of objperf is linked in. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

struct slot {
    CURL *easy;
    long long got;
    char range[64];
};

static size_t discard(char *data, size_t size, size_t nmemb, void *userdata) {
    (void)data;
    ((struct slot *)userdata)->got += (long long)(size * nmemb);
    return size * nmemb;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long long next_offset, size, range_size;

static void start(CURLM *multi, struct slot *s) {
    long long first = next_offset, last = first + range_size - 1;
    if (last >= size)
        last = size - 1;
    next_offset = last + 1 >= size ? 0 : last + 1;
    snprintf(s->range, sizeof s->range, "%lld-%lld", first, last);
    curl_easy_setopt(s->easy, CURLOPT_RANGE, s->range);
    curl_multi_add_handle(multi, s->easy);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s URL SIZE RANGE CONCURRENCY BUFFER SECONDS\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    size = atoll(argv[2]);
    range_size = atoll(argv[3]);
    int n = atoi(argv[4]);
    long buffer = atol(argv[5]);
    double seconds = atof(argv[6]);
    if (size < 1 || range_size < 1 || n < 1 || buffer < 1024 || seconds <= 0) {
        fprintf(stderr, "%s: SIZE, RANGE, CONCURRENCY, BUFFER (>= 1024) and SECONDS must be positive\n", argv[0]);
        return 2;
    }
    struct rlimit files;  /* a socket a handle: as many open files as the hard limit allows, as objperf asks */
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
    struct slot *slots = calloc((size_t)n, sizeof *slots);
    if (!multi || !headers || !slots)
        return 1;
    for (int i = 0; i < n; i++) {
        CURL *e = slots[i].easy = curl_easy_init();
        if (!e)
            return 1;
        curl_easy_setopt(e, CURLOPT_URL, url);
        curl_easy_setopt(e, CURLOPT_PRIVATE, &slots[i]);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &slots[i]);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
        curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(e, CURLOPT_BUFFERSIZE, buffer);
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
        start(multi, &slots[i]);
    }
    long long requests = 0, bytes = 0, failed = 0;
    double end = now() + seconds;
    int running = n;
    while (running > 0) {
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct slot *s;
            long status = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
            requests++;
            if (msg->data.result != CURLE_OK || status != 206)
                failed++;
            bytes += s->got;
            s->got = 0;
            curl_multi_remove_handle(multi, s->easy);
            if (now() < end) {
                start(multi, s);
                running++;
            }
        }
        if (running > 0)
            curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    printf("%lld %lld %lld\n", requests, bytes, failed);
    for (int i = 0; i < n; i++)
        curl_easy_cleanup(slots[i].easy);
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    free(slots);
    return failed ? 1 : 0;
}

# libcurl, declared once (easy + multi interfaces, the parts objperf drives).
from libc.stdint cimport int64_t

cdef extern from "curl/curl.h" nogil:
    ctypedef void CURL
    ctypedef void CURLM
    ctypedef void CURLSH
    ctypedef int64_t curl_off_t

    ctypedef enum CURLcode:
        CURLE_OK
        CURLE_FAILED_INIT
        CURLE_WEIRD_SERVER_REPLY
        CURLE_PARTIAL_FILE
        CURLE_RANGE_ERROR
        CURLE_WRITE_ERROR
        CURLE_READ_ERROR
        CURLE_SEND_ERROR
        CURLE_ABORTED_BY_CALLBACK
        CURLE_OPERATION_TIMEDOUT
        CURLE_PEER_FAILED_VERIFICATION
        CURLE_FILESIZE_EXCEEDED

    ctypedef enum CURLMcode:
        CURLM_OK

    ctypedef enum CURLMSG:
        CURLMSG_DONE

    ctypedef enum CURLoption:
        CURLOPT_URL
        CURLOPT_PRIVATE
        CURLOPT_WRITEFUNCTION
        CURLOPT_WRITEDATA
        CURLOPT_READFUNCTION
        CURLOPT_READDATA
        CURLOPT_HEADERFUNCTION
        CURLOPT_HEADERDATA
        CURLOPT_NOSIGNAL
        CURLOPT_PATH_AS_IS
        CURLOPT_BUFFERSIZE
        CURLOPT_UPLOAD_BUFFERSIZE
        CURLOPT_IPRESOLVE
        CURLOPT_CONNECT_TO
        CURLOPT_INTERFACE
        CURLOPT_HTTP_VERSION
        CURLOPT_RANGE
        CURLOPT_TIMEOUT_MS
        CURLOPT_MAX_RECV_SPEED_LARGE
        CURLOPT_MAX_SEND_SPEED_LARGE
        CURLOPT_CONNECTTIMEOUT_MS
        CURLOPT_HTTPHEADER
        CURLOPT_UPLOAD
        CURLOPT_INFILESIZE_LARGE
        CURLOPT_CUSTOMREQUEST
        CURLOPT_NOBODY
        CURLOPT_HTTPGET
        CURLOPT_TCP_NODELAY
        CURLOPT_SSL_VERIFYPEER
        CURLOPT_SSL_VERIFYHOST
        CURLOPT_CAINFO
        CURLOPT_PIPEWAIT
        CURLOPT_ACCEPT_ENCODING
        CURLOPT_POSTFIELDS
        CURLOPT_POSTFIELDSIZE_LARGE
        CURLOPT_ERRORBUFFER
        CURLOPT_LOW_SPEED_LIMIT
        CURLOPT_LOW_SPEED_TIME
        CURLOPT_NOPROGRESS
        CURLOPT_XFERINFOFUNCTION
        CURLOPT_XFERINFODATA
        CURLOPT_NOPROXY
        CURLOPT_SHARE
        CURLOPT_FORBID_REUSE

    ctypedef enum CURLMoption:
        CURLMOPT_MAXCONNECTS
        CURLMOPT_MAX_HOST_CONNECTIONS
        CURLMOPT_PIPELINING
        CURLMOPT_SOCKETFUNCTION
        CURLMOPT_SOCKETDATA
        CURLMOPT_TIMERFUNCTION
        CURLMOPT_TIMERDATA

    ctypedef enum CURLINFO:
        CURLINFO_PRIVATE
        CURLINFO_RESPONSE_CODE
        CURLINFO_NAMELOOKUP_TIME_T
        CURLINFO_CONNECT_TIME_T
        CURLINFO_APPCONNECT_TIME_T
        CURLINFO_PRETRANSFER_TIME_T
        CURLINFO_STARTTRANSFER_TIME_T
        CURLINFO_TOTAL_TIME_T
        CURLINFO_PRIMARY_IP
        CURLINFO_PRIMARY_PORT
        CURLINFO_LOCAL_IP
        CURLINFO_LOCAL_PORT
        CURLINFO_NUM_CONNECTS
        CURLINFO_HTTP_VERSION
        CURLINFO_CONTENT_LENGTH_DOWNLOAD_T
        CURLINFO_SIZE_UPLOAD_T

    enum:
        CURL_GLOBAL_DEFAULT
        CURL_IPRESOLVE_WHATEVER
        CURL_IPRESOLVE_V4
        CURL_IPRESOLVE_V6
        CURL_HTTP_VERSION_1_1
        CURL_HTTP_VERSION_2TLS
        CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
        CURL_HTTP_VERSION_1_0
        CURL_HTTP_VERSION_2_0
        CURL_HTTP_VERSION_3
        CURLPIPE_NOTHING
        CURLPIPE_MULTIPLEX
        CURL_READFUNC_ABORT
        CURLVERSION_NOW
        CURL_ERROR_SIZE

    struct curl_slist:
        char *data
        curl_slist *next

    ctypedef struct CURLMsg:
        CURLMSG msg
        CURL *easy_handle

    ctypedef struct curl_version_info_data:
        const char *version
        const char *ssl_version
        const char *libz_version
        const char *nghttp2_version
        int features

    CURLcode curl_global_init(long flags)
    curl_version_info_data *curl_version_info(int age)

    CURL *curl_easy_init()
    void curl_easy_cleanup(CURL *handle)
    CURLcode curl_easy_setopt(CURL *handle, CURLoption option, ...)
    CURLcode curl_easy_getinfo(CURL *handle, CURLINFO info, ...)
    const char *curl_easy_strerror(CURLcode code)
    CURLcode curl_easy_perform(CURL *handle)
    void curl_easy_reset(CURL *handle)

    # The header API (libcurl 7.84+): a header of the last answer by name.
    struct curl_header:
        char *name
        char *value
    ctypedef enum CURLHcode:
        CURLHE_OK
    enum:
        CURLH_HEADER
    CURLHcode curl_easy_header(CURL *easy, const char *name, size_t index, unsigned int origin, int request,
                               curl_header **hout)

    CURLM *curl_multi_init()
    CURLMcode curl_multi_cleanup(CURLM *multi)
    CURLMcode curl_multi_setopt(CURLM *multi, CURLMoption option, ...)
    CURLMcode curl_multi_add_handle(CURLM *multi, CURL *easy)
    CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *easy)
    ctypedef int curl_socket_t
    enum:
        CURL_SOCKET_TIMEOUT
        CURL_POLL_IN
        CURL_POLL_OUT
        CURL_POLL_REMOVE
        CURL_CSELECT_IN
        CURL_CSELECT_OUT
        CURL_CSELECT_ERR
    CURLMcode curl_multi_socket_action(CURLM *multi, curl_socket_t s, int ev_bitmask, int *running)
    CURLMsg *curl_multi_info_read(CURLM *multi, int *msgs_in_queue)
    const char *curl_multi_strerror(CURLMcode code)

    curl_slist *curl_slist_append(curl_slist *lst, const char *s)
    void curl_slist_free_all(curl_slist *lst)


ctypedef size_t (*curl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata) noexcept nogil
ctypedef int (*curl_socket_callback)(CURL *easy, curl_socket_t s, int what, void *userp,
                                     void *socketp) noexcept nogil
ctypedef int (*curl_xferinfo_callback)(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                                      curl_off_t ulnow) noexcept nogil
ctypedef int (*curl_multi_timer_callback)(CURLM *multi, long timeout_ms, void *userp) noexcept nogil


cdef extern from "objperf_helpers.h" nogil:
    CURLcode op_msg_result(CURLMsg *msg)
    int64_t op_atomic_add(int64_t *p, int64_t v)
    int64_t op_atomic_load(int64_t *p)
    void op_atomic_store(int64_t *p, int64_t v)
    int op_atomic_cas(int64_t *p, int64_t expected, int64_t desired)
    int op_atomic_add_int(int *p, int v)
    int op_atomic_load_int(int *p)
    void op_atomic_store_int(int *p, int v)
    int op_atomic_cas_int(int *p, int expected, int desired)
    char **op_atomic_load_urls(char ***p)
    void op_atomic_store_urls(char ***p, char **v)
    double op_now_mono()
    double op_now_wall()
    unsigned long op_crc32(unsigned long crc, const char *buf, size_t len)
    void op_sleep_ms(int ms)
    void op_copy(char *dst, const char *src, size_t n)
    CURLcode op_configure_tls(CURL *easy, const char *ca_file, int verify)
    void op_find_ssl_session_reused()
    int op_tls_resumed(CURL *easy)
    CURLSH *op_tls_session_share()
    void op_share_free(CURLSH *share)
    int op_event_open(int *epfd, int *wakefd)
    int op_eventfd()
    void op_event_close(int epfd, int wakefd)
    void op_event_watch(int epfd, int fd, int what)
    void op_event_wake(int wakefd)
    int op_event_wait_one(int wakefd, int timeout_ms)
    int op_event_wait(int epfd, int wakefd, int *fds, int *flags, int max, long long timeout_us)

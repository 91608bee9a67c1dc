# cython: language_level=3
"""One HTTP request at a time over a kept libcurl easy handle: the control plane's calls
(HEAD, CreateMultipartUpload, CompleteMultipartUpload, aborts) beside the engine's load.

Through libcurl rather than http.client, a command imports neither http.client nor email
nor ssl (some 30 ms of every run's start-up), and over TLS it trusts exactly what the engine
trusts.  The handle keeps its connection for the next call, as a write run's multipart calls
would otherwise pay a handshake each.  No NumPy here: the control plane needs none."""

from libc.stdlib cimport free, realloc
from libc.string cimport memcpy
from cpython.exc cimport PyErr_CheckSignals

import os

from objperf._curl.curl cimport *
from objperf.core.errors import EngineError, TransferFailed

curl_global_init(CURL_GLOBAL_DEFAULT)

include "versions.pxi"


cdef enum:
    CONTENT_RANGE_CAP = 96


cdef inline int check(CURLcode code, str what) except -1:
    """Every option the control plane sets, TLS trust among them, is set or the call fails here."""
    if code != CURLE_OK:
        raise EngineError(f"libcurl refused {what}: {curl_easy_strerror(code).decode()}", code=code)
    return 0


cdef struct Received:
    char *data
    size_t size
    size_t capacity
    size_t limit        # keep at most this many body bytes, then end the transfer
    int truncated
    char content_range[CONTENT_RANGE_CAP]


cdef size_t on_body(char *chunk, size_t size, size_t nmemb, void *userdata) noexcept nogil:
    cdef Received *got = <Received *>userdata
    cdef size_t n = size * nmemb
    cdef size_t capacity = got.capacity
    cdef char *grown
    if got.size + n > got.limit:
        got.truncated = 1
        n = got.limit - got.size
    if got.size + n > capacity:
        capacity = max(2 * capacity, got.size + n, <size_t>4096)
        grown = <char *>realloc(got.data, capacity)
        if grown == NULL:
            return 0  # libcurl ends the transfer with a write error
        got.data, got.capacity = grown, capacity
    memcpy(got.data + got.size, chunk, n)
    got.size += n
    return 0 if got.truncated else size * nmemb


cdef size_t on_header(char *line, size_t size, size_t nmemb, void *userdata) noexcept nogil:
    """Keep the final answer's Content-Range (a new status line forgets an earlier one)."""
    cdef Received *got = <Received *>userdata
    cdef size_t n = size * nmemb, i, k = 0
    cdef const char *name = b"content-range:"
    if n >= 5 and line[0] == 72 and line[1] == 84 and line[2] == 84 and line[3] == 80 and line[4] == 47:
        got.content_range[0] = 0  # "HTTP/"
        return n
    if n < 14:
        return n
    for i in range(14):
        if (line[i] | 32) != name[i]:  # ASCII lower case; ':' is unchanged by | 32
            return n
    i = 14
    while i < n and line[i] == 32:
        i += 1
    while i < n and k < CONTENT_RANGE_CAP - 1 and line[i] != 13 and line[i] != 10:
        got.content_range[k] = line[i]
        i += 1
        k += 1
    got.content_range[k] = 0
    return n


cdef int on_progress(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                     curl_off_t ulnow) noexcept nogil:
    # Ctrl-C (or SIGTERM) while a call is on the wire: Python's handler runs here, in the
    # main thread, and the call ends at once instead of after the server's answer.  A call on
    # another thread ends when ``cancel`` is called (signals reach the main thread only).
    if (<Exchange>userp).cancelled:
        return 1
    with gil:
        try:
            PyErr_CheckSignals()
        except BaseException as exc:
            (<Exchange>userp).interrupted = exc
            return 1
    return 0


cdef class Exchange:
    """``request(method, url, body)`` → (status, Content-Length or -1, body); ``content_range``
    is the last answer's Content-Range header ('' without one).  ``proxy_from_env``: go through
    the proxy that http_proxy / https_proxy name, as the engine does (the S3 control plane never
    does: a proxied endpoint takes botocore's path)."""

    cdef CURL *easy
    cdef curl_slist *headers
    cdef bytes ca_file
    cdef bint verify_tls
    cdef long connect_timeout_ms
    cdef long idle_timeout_s
    cdef char errbuf[CURL_ERROR_SIZE]
    cdef public object interrupted
    cdef readonly long connections_made  # a kept connection serves the next call; this counts new ones
    cdef readonly long local_port        # of the connection the last call went over
    cdef readonly str content_range
    cdef readonly str bucket_region     # the last answer's x-amz-bucket-region ('' without one)
    cdef bint proxy_from_env
    cdef readonly bint cancelled        # ``cancel`` was called: the call on the wire ends, later ones too
    cdef readonly bint truncated        # the last answer's body was longer than ``body_limit`` and was cut

    def __cinit__(self, ca_file=None, bint verify_tls=True, double connect_timeout=10.0,
                  double idle_timeout=120.0, bint proxy_from_env=False):
        self.easy = curl_easy_init()
        if self.easy == NULL:
            raise MemoryError("curl_easy_init failed")
        # No "Expect: 100-continue" wait before a body; no form Content-Type on one.
        self.headers = curl_slist_append(NULL, b"Expect:")
        self.headers = curl_slist_append(self.headers, b"Content-Type:")
        self.ca_file = os.fsencode(ca_file) if ca_file else None
        self.verify_tls = verify_tls
        self.connect_timeout_ms = <long>(connect_timeout * 1000)
        self.idle_timeout_s = max(1, <long>idle_timeout)
        self.proxy_from_env = proxy_from_env
        self.content_range = ""
        self.bucket_region = ""

    def __dealloc__(self):
        if self.easy != NULL:
            curl_easy_cleanup(self.easy)
        if self.headers != NULL:
            curl_slist_free_all(self.headers)

    def cancel(self):
        """End the call on the wire now (from any thread) and refuse later ones: ``TransferFailed``
        with CURLE_ABORTED_BY_CALLBACK.  For calls whose answer is no longer wanted."""
        self.cancelled = True

    def request(self, str method, str url, bytes body=b"", *, str byte_range="", long long body_limit=-1,
                double deadline=0.0, headers=()):
        """``byte_range`` ("0-0") asks for part of the body; past ``body_limit`` bytes the answer's body is
        cut off (a server that ignores a Range header sends the whole object) and ``truncated`` says so.
        ``deadline``: seconds the whole call may take (0: no bound but the idle timeout's).  ``headers``:
        header lines ("name: value") this call sends beside the exchange's own."""
        cdef curl_slist *own = NULL
        cdef Received got
        cdef CURLcode code
        cdef long status = 0
        cdef curl_off_t length = -1, pretransfer = 0
        cdef long connects = 0
        cdef bytes url_bytes = url.encode()
        cdef bytes method_bytes = method.encode()
        cdef bytes range_bytes = byte_range.encode()
        got.data, got.size, got.capacity = NULL, 0, 0
        got.limit = <size_t>body_limit if body_limit >= 0 else <size_t>-1
        got.truncated = 0
        got.content_range[0] = 0
        self.interrupted = None
        self.truncated = False
        self.errbuf[0] = 0
        if self.cancelled:
            raise TransferFailed(CURLE_ABORTED_BY_CALLBACK, "cancelled", False)
        self._configure(url_bytes)
        if headers:
            own = self._headers_with(headers)
            check(curl_easy_setopt(self.easy, CURLOPT_HTTPHEADER, own), "CURLOPT_HTTPHEADER")
        if deadline > 0:
            check(curl_easy_setopt(self.easy, CURLOPT_TIMEOUT_MS, <long>max(1.0, deadline * 1000)),
                  "CURLOPT_TIMEOUT_MS")
        if method == "HEAD":
            check(curl_easy_setopt(self.easy, CURLOPT_NOBODY, <long>1), "CURLOPT_NOBODY")
        elif method == "GET":
            check(curl_easy_setopt(self.easy, CURLOPT_HTTPGET, <long>1), "CURLOPT_HTTPGET")
        else:
            check(curl_easy_setopt(self.easy, CURLOPT_CUSTOMREQUEST, <char *>method_bytes), "CURLOPT_CUSTOMREQUEST")
            if body or method in ("POST", "PUT"):
                check(curl_easy_setopt(self.easy, CURLOPT_POSTFIELDS, <char *>body), "CURLOPT_POSTFIELDS")
                check(curl_easy_setopt(self.easy, CURLOPT_POSTFIELDSIZE_LARGE, <curl_off_t>len(body)),
                      "CURLOPT_POSTFIELDSIZE_LARGE")
        if byte_range:
            check(curl_easy_setopt(self.easy, CURLOPT_RANGE, <char *>range_bytes), "CURLOPT_RANGE")
        check(curl_easy_setopt(self.easy, CURLOPT_WRITEFUNCTION, <curl_data_callback>on_body), "CURLOPT_WRITEFUNCTION")
        check(curl_easy_setopt(self.easy, CURLOPT_WRITEDATA, <void *>&got), "CURLOPT_WRITEDATA")
        check(curl_easy_setopt(self.easy, CURLOPT_HEADERFUNCTION, <curl_data_callback>on_header),
              "CURLOPT_HEADERFUNCTION")
        check(curl_easy_setopt(self.easy, CURLOPT_HEADERDATA, <void *>&got), "CURLOPT_HEADERDATA")
        try:
            with nogil:
                code = curl_easy_perform(self.easy)
            curl_easy_getinfo(self.easy, CURLINFO_NUM_CONNECTS, &connects)
            self.connections_made += connects
            curl_easy_getinfo(self.easy, CURLINFO_LOCAL_PORT, &self.local_port)
            self.content_range = got.content_range.decode("latin-1")
            self.bucket_region = self._header(b"x-amz-bucket-region") if code == CURLE_OK else ""
            if self.interrupted is not None:
                raise self.interrupted
            if code == CURLE_WRITE_ERROR and got.truncated:
                code = CURLE_OK  # the body was cut off on purpose
                self.truncated = True
            if code != CURLE_OK:
                curl_easy_getinfo(self.easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
                detail = self.errbuf.decode(errors="replace") or curl_easy_strerror(code).decode()
                detail = detail.split("?", 1)[0]  # were a URL ever quoted, its signed query stays out
                raise TransferFailed(code, detail, pretransfer > 0)
            curl_easy_getinfo(self.easy, CURLINFO_RESPONSE_CODE, &status)
            curl_easy_getinfo(self.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            return int(status), int(length), got.data[:got.size] if got.size else b""
        finally:
            free(got.data)
            self.interrupted = None
            if own != NULL:
                curl_easy_setopt(self.easy, CURLOPT_HTTPHEADER, self.headers)
                curl_slist_free_all(own)

    cdef curl_slist *_headers_with(self, headers) except NULL:
        """The exchange's own header lines and ``headers``, each one line without CR, LF or NUL."""
        cdef curl_slist *lines = NULL, *more
        cdef bytes line
        for text in (b"Expect:", b"Content-Type:", *(h.encode() if isinstance(h, str) else h for h in headers)):
            line = text
            if b"\r" in line or b"\n" in line or b"\0" in line:
                curl_slist_free_all(lines)
                raise ValueError("a header line is one 'name: value', without CR, LF or NUL")
            more = curl_slist_append(lines, <char *>line)
            if more == NULL:
                curl_slist_free_all(lines)
                raise MemoryError()
            lines = more
        return lines

    cdef str _header(self, bytes name):
        cdef curl_header *found = NULL
        if curl_easy_header(self.easy, <char *>name, 0, CURLH_HEADER, -1, &found) != CURLHE_OK or found == NULL:
            return ""
        return (<bytes>found.value).decode("latin-1").strip()

    cdef int _configure(self, bytes url) except -1:
        cdef CURL *e = self.easy
        curl_easy_reset(e)  # keeps the connection, the DNS cache and TLS sessions
        check(curl_easy_setopt(e, CURLOPT_URL, <char *>url), "CURLOPT_URL")
        check(curl_easy_setopt(e, CURLOPT_NOSIGNAL, <long>1), "CURLOPT_NOSIGNAL")
        # The path as signed: libcurl would squash "." and ".." segments of a key into another object's path
        check(curl_easy_setopt(e, CURLOPT_PATH_AS_IS, <long>1), "CURLOPT_PATH_AS_IS")
        if not self.proxy_from_env:
            check(curl_easy_setopt(e, CURLOPT_NOPROXY, b"*"), "CURLOPT_NOPROXY")
        check(curl_easy_setopt(e, CURLOPT_HTTPHEADER, self.headers), "CURLOPT_HTTPHEADER")
        check(curl_easy_setopt(e, CURLOPT_ERRORBUFFER, self.errbuf), "CURLOPT_ERRORBUFFER")
        check(curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, self.connect_timeout_ms), "CURLOPT_CONNECTTIMEOUT_MS")
        # No byte for idle_timeout_s: as a socket read timeout would, not a limit on the whole call.
        check(curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, <long>1), "CURLOPT_LOW_SPEED_LIMIT")
        check(curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, self.idle_timeout_s), "CURLOPT_LOW_SPEED_TIME")
        check(curl_easy_setopt(e, CURLOPT_NOPROGRESS, <long>0), "CURLOPT_NOPROGRESS")
        check(curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, <curl_xferinfo_callback>on_progress),
              "CURLOPT_XFERINFOFUNCTION")
        check(curl_easy_setopt(e, CURLOPT_XFERINFODATA, <void *>self), "CURLOPT_XFERINFODATA")
        check(op_configure_tls(e, <char *>self.ca_file if self.ca_file is not None else NULL, self.verify_tls),
              "TLS options")
        return 0

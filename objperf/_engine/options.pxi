# The options each slot's easy handle keeps for the whole run.

IP_RESOLVE = {"any": CURL_IPRESOLVE_WHATEVER, "4": CURL_IPRESOLVE_V4, "6": CURL_IPRESOLVE_V6}

cdef inline void check_easy(CURLcode code, str what) except *:
    """The one conversion of a CURLcode met while setting the engine up."""
    if code != CURLE_OK:
        raise EngineError(f"{what}: {curl_easy_strerror(code).decode()}", code=code)


cdef configure_easy(Slot *s, curl_slist *headers, curl_slist *connect_to, list keep, str ip, interface,
                    str http_version, bint tls, int64_t buffer_size, double timeout, double connect_timeout,
                    bint keepalive, int64_t max_speed):
    """Every option a slot's easy handle keeps for the whole run; ``keep`` holds the strings libcurl
    points into."""
    cdef CURL *e = s.easy
    cdef long version
    check_easy(curl_easy_setopt(e, CURLOPT_PRIVATE, <void *>s), "CURLOPT_PRIVATE")
    check_easy(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, <curl_data_callback>on_body), "CURLOPT_WRITEFUNCTION")
    check_easy(curl_easy_setopt(e, CURLOPT_WRITEDATA, <void *>s), "CURLOPT_WRITEDATA")
    check_easy(curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, <curl_data_callback>on_header), "CURLOPT_HEADERFUNCTION")
    check_easy(curl_easy_setopt(e, CURLOPT_HEADERDATA, <void *>s), "CURLOPT_HEADERDATA")
    check_easy(curl_easy_setopt(e, CURLOPT_READFUNCTION, <curl_data_callback>on_upload), "CURLOPT_READFUNCTION")
    check_easy(curl_easy_setopt(e, CURLOPT_READDATA, <void *>s), "CURLOPT_READDATA")
    check_easy(curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers), "CURLOPT_HTTPHEADER")
    check_easy(curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, <long>min(buffer_size, 2 << 20)),
               "CURLOPT_UPLOAD_BUFFERSIZE")
    check_easy(curl_easy_setopt(e, CURLOPT_NOSIGNAL, <long>1), "CURLOPT_NOSIGNAL")
    # The path as signed: libcurl would squash "." and ".." segments of a key into another object's path
    check_easy(curl_easy_setopt(e, CURLOPT_PATH_AS_IS, <long>1), "CURLOPT_PATH_AS_IS")
    check_easy(curl_easy_setopt(e, CURLOPT_TCP_NODELAY, <long>1), "CURLOPT_TCP_NODELAY")
    check_easy(curl_easy_setopt(e, CURLOPT_BUFFERSIZE, <long>buffer_size), "CURLOPT_BUFFERSIZE")
    check_easy(curl_easy_setopt(e, CURLOPT_IPRESOLVE, <long>IP_RESOLVE[ip]), "CURLOPT_IPRESOLVE")
    check_easy(curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, <long>(timeout * 1000)), "CURLOPT_TIMEOUT_MS")
    check_easy(curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, <long>(connect_timeout * 1000)),
               "CURLOPT_CONNECTTIMEOUT_MS")
    if s.pin != NULL or connect_to != NULL:
        check_easy(curl_easy_setopt(e, CURLOPT_CONNECT_TO, s.pin if s.pin != NULL else connect_to),
                   "CURLOPT_CONNECT_TO")
    if interface:
        name = interface.encode()
        keep.append(name)
        check_easy(curl_easy_setopt(e, CURLOPT_INTERFACE, <char *>name), "CURLOPT_INTERFACE")
    if http_version == "1.1":
        version = CURL_HTTP_VERSION_1_1
    else:
        # Over TLS, ALPN; over cleartext, the Upgrade: h2c offer, which a server that has no HTTP/2 declines
        # by answering 1.1.  Prior knowledge would fail every request to such a server (most S3 stores).
        version = CURL_HTTP_VERSION_2TLS if tls else CURL_HTTP_VERSION_2_0
    check_easy(curl_easy_setopt(e, CURLOPT_HTTP_VERSION, version), "CURLOPT_HTTP_VERSION")
    if http_version == "2":
        # A request waits for a connection that may multiplex it rather than open its own: without this, the
        # first requests of a run each open a connection (and a handshake) before any has learnt HTTP/2.
        check_easy(curl_easy_setopt(e, CURLOPT_PIPEWAIT, <long>1), "CURLOPT_PIPEWAIT")
    if not keepalive:
        check_easy(curl_easy_setopt(e, CURLOPT_FORBID_REUSE, <long>1), "CURLOPT_FORBID_REUSE")
    if max_speed > 0:  # this slot's share of the run's --max-rate, each way
        check_easy(curl_easy_setopt(e, CURLOPT_MAX_RECV_SPEED_LARGE, <curl_off_t>max_speed),
                   "CURLOPT_MAX_RECV_SPEED_LARGE")
        check_easy(curl_easy_setopt(e, CURLOPT_MAX_SEND_SPEED_LARGE, <curl_off_t>max_speed),
                   "CURLOPT_MAX_SEND_SPEED_LARGE")

cdef configure_tls(CURL *e, ca_file, bint verify_tls, list keep, CURLSH *tls_share):
    cdef bytes path = os.fsencode(ca_file) if ca_file else None
    if path is not None:
        keep.append(path)
    check_easy(op_configure_tls(e, <char *>path if path is not None else NULL, verify_tls), "TLS options")
    if tls_share != NULL:
        check_easy(curl_easy_setopt(e, CURLOPT_SHARE, tls_share), "CURLOPT_SHARE")

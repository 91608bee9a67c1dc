# The versions of libcurl and the libraries it was built with, as objperf --version says them.

cdef object text(const char *p):
    return p.decode() if p != NULL else None


def curl_versions():
    """libcurl's own version strings (libcurl, TLS library, zlib, nghttp2)."""
    cdef curl_version_info_data *v = curl_version_info(CURLVERSION_NOW)
    return {
        "libcurl": text(v.version),
        "tls": text(v.ssl_version),
        "zlib": text(v.libz_version),
        "nghttp2": text(v.nghttp2_version),
    }

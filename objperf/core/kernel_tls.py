"""Whether this kernel can hold a connection's TLS itself (kernel TLS: the ``tls`` upper-layer protocol of TCP),
asked the way a TLS library does, on a connected loopback socket.  A run over TLS names the answer in its
summary, so that a figure measured with TLS in user space is not read as one measured with it in the kernel."""

from __future__ import annotations

import errno
import os
import socket
from functools import cache

TCP_ULP = 31  # linux/tcp.h; Python names it from no version yet


@cache
def kernel_tls() -> str:
    """One line: "available (...)" or "not available (why)"."""
    try:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            with socket.create_connection(listener.getsockname(), timeout=2) as client:
                accepted, _ = listener.accept()
                accepted.close()
                client.setsockopt(socket.IPPROTO_TCP, TCP_ULP, b"tls")
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return "not available (this kernel has no tls module: TCP_ULP \"tls\" gives ENOENT)"
        if exc.errno == errno.ENOPROTOOPT:
            return "not available (this kernel has no TCP upper-layer protocols)"
        return f"not available ({os.strerror(exc.errno) if exc.errno else exc})"
    return "available in this kernel; objperf's libcurl keeps TLS in user space (OpenSSL)"

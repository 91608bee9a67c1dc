"""libcurl's result codes that objperf's Python code names (curl/curl.h; stable since 7.x).  The compiled
engine reads them from ``objperf/_curl/curl.pxd``; their words are ``objperf.core.schema.CURL_ERRORS``."""

CURLE_OK = 0
CURLE_COULDNT_RESOLVE_HOST = 6
CURLE_COULDNT_CONNECT = 7
CURLE_WEIRD_SERVER_REPLY = 8  # objperf's code, too, for an answer S3 would not give (objperf.core.schema)
CURLE_PARTIAL_FILE = 18
CURLE_HTTP_RETURNED_ERROR = 22  # objperf's code too, for a 200 that refuses what it was asked (a batch's keys)
CURLE_WRITE_ERROR = 23
CURLE_OPERATION_TIMEDOUT = 28
CURLE_RANGE_ERROR = 33  # the server sent more than the range (it ignored Range)
CURLE_SSL_CONNECT_ERROR = 35
CURLE_ABORTED_BY_CALLBACK = 42  # objperf raises it no other way: a request cut by the run's end or a stop
CURLE_PEER_FAILED_VERIFICATION = 60
CURLE_FILESIZE_EXCEEDED = 63
CURLE_RECV_ERROR = 56

# A request that never left: the name did not resolve, or the connection was refused.  Nothing reached the
# store (nothing to bill, no upload part to abort), and many of them in a row say the server is gone.
NEVER_SENT = (CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT)

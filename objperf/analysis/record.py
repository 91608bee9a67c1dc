"""The summary of a run as a typed record: every figure a summary may hold, its type and what it means.

Three places make one: a run's rows counted as they come (``objperf.analysis.summary``), a dataset scanned
without loading it (``objperf.analysis.scan``), and a cluster's hosts merged over their common window
(``objperf.analysis.cluster_summary``); the recorder adds what only the run knows (``error``, ``verified``, …).
It stays a ``dict`` at run time (it is written into every manifest as JSON); the record is what they all
promise, and ``tests/test_summary_record.py`` holds every builder to it.  Its words are
``objperf.analysis.summary_text``'s."""

from __future__ import annotations

from typing import TypedDict


class Direction(TypedDict, total=False):
    """One direction's figures ("read", "write", "control"): a read counts bytes received, a write those the
    store acknowledged, with the bytes sent beside them."""

    requests: int
    failed: int
    cut: int
    bytes: int
    gbps: float
    mib_per_s: float
    acknowledged_bytes: int
    acknowledged_gbps: float
    sent_bytes: int
    sent_gbps: float
    sent_mib_per_s: float
    latency_ms_p50: float
    latency_ms_p99: float


class Op(TypedDict, total=False):
    """The requests of one op that moves no body (a HEAD, a DELETE, a LIST): how many, how fast, how long, and of
    a LIST or a DELETE_OBJECTS the keys (``objperf.core.schema.KEYED_OPS``)."""

    requests: int
    failed: int
    cut: int
    requests_per_s: float
    latency_ms_p50: float
    latency_ms_p90: float
    latency_ms_p99: float
    keys: int  # a LIST's keys and common prefixes listed, a DELETE_OBJECTS' keys deleted: of the rows that succeeded
    keys_per_s: float
    bytes: int  # a copy's (objperf.core.schema.COPY_OPS): what the store copied, in the rows that succeeded
    gbps: float
    mib_per_s: float


class Steady(TypedDict, total=False):
    """Where a run's throughput held (``objperf.analysis.steady``): the rule it was judged by, and either the
    steady window with the warm-up before it, or how long the run was watched without one."""

    reached: bool
    window_s: float  # the rule: ``samples`` samples of ``sample_s`` in a row, each within ``tolerance_pct`` %
    samples: int
    sample_s: float
    tolerance_pct: float
    by: str  # "bytes" done per sample, or "requests" (a run that moved no bytes)
    warmup_s: float  # left out before the steady window: from the first request's start to the window's
    start_s: float  # the steady window, from the first request's start
    end_s: float
    gbps: float  # within the steady window
    mib_per_s: float
    requests_per_s: float
    spread_pct: float  # the farthest sample from the window's mean
    measured_s: float  # not reached: how long the rows were watched


class Host(TypedDict, total=False):
    """One host of a cluster run, beside the cluster's totals."""

    status: str
    gbps: float  # over its own wall time
    window_gbps: float  # over the window every host ran in
    requests: int
    failed: int
    first_request_s: float  # after the first host's first request
    wall_s: float | None
    client_cpu_s: float | None
    lost: str  # why, for a host that did not finish


class Summary(TypedDict, total=False):
    """A run's summary: counts, rates, latencies, errors and what the client spent."""

    # what was asked and answered
    requests: int
    ok_requests: int
    error_requests: int
    cut_requests: int  # ended by the run's end or a stop, not by the store
    error_share: float
    requests_per_s: float  # requests that finished, over the wall time
    # amounts: reads received, writes acknowledged; what writes sent beside them
    bytes: int
    gbps: float
    mib_per_s: float
    sent_bytes: int
    sent_gbps: float
    sent_mib_per_s: float
    wall_s: float
    directions: dict[str, Direction]
    ops: dict[str, Op]  # by op name, the requests that move no body (objperf.core.schema.METADATA_OPS)
    # time to first byte and latency, in milliseconds
    ttfb_ms_p50: float
    ttfb_ms_p90: float
    ttfb_ms_p99: float
    ttfb_ms_p999: float
    latency_ms_p50: float
    latency_ms_p99: float
    sketches: dict[str, dict]  # "ttfb_ms", "latency_ms": mergeable quantile sketches (objperf.analysis.sketch)
    rtt_ms: float
    rtt_connects: int
    rtt_loopback: bool
    ttfb_over_rtt: float
    open_loop: dict  # a run at a fixed rate: latency from when each request was due
    steady: Steady  # where the throughput held, and the warm-up before it
    until_steady: str  # --until-steady: "steady" (the run ended once it held) or "bound" (its bound came first)
    # how the store answered
    status_counts: dict[str, int]
    s3_error_counts: dict[str, int]
    curl_error_counts: dict[str, int]
    ranged_gets_answered_200: int
    http_version_counts: dict[str, int]
    http_asked_for: str
    tls: dict | None
    connections_opened: int
    servers: dict[str, dict]  # by server address, when more than one answered
    # what the client spent, and the machine's evidence of who was the bottleneck
    client_cpu_s: float
    client_cpu_s_per_gib: float
    peak_rss_mib: float | None
    evidence: dict
    # writes
    objects_written: int
    objects_failed: int
    objects_cut: int
    objects_unstarted: int
    uploads_left_open: list
    written: list
    verified: str
    cleaned_up: int | str
    # a LIST run's, a batch delete's: what the answers' documents said
    passes: int  # passes through the listing its listers completed
    keys_deleted: int  # keys the store said it deleted, in every batch (those of a batch that refused some too)
    keys_refused: int  # keys the store refused in a batch's answer (an <Error> each)
    broken_answers: str  # how many answers broke the S3 contract, and the first said in a line
    # server-side copies (objects_failed, objects_cut, uploads_left_open, verified, cleaned_up as for writes)
    objects_copied: int
    copied_to: str  # s3://BUCKET/PREFIX/ the copies went under
    # a cluster's
    common_window_s: float
    start_spread_s: float
    hosts: dict[str, Host]
    # how the run ended, and what its dataset lacks
    error: str
    rows_unwritten: int
    rows_dropped: int
    receive_buffers: dict[str, int]  # the slots' receive buffers as the run ended: least, median, most
    checksums: dict[str, int]  # --checksum-mode's answers: verified, mismatched, unchecked, absent
    kernel_tls: str  # a TLS run: whether the kernel could have held its TLS (objperf.core.kernel_tls)
    # re-analysis
    scanned: bool  # made by a scan of the files, not from the rows in memory
    pooled_runs: int
    cost: dict


SUMMARY_KEYS = frozenset(Summary.__annotations__)
DIRECTION_KEYS = frozenset(Direction.__annotations__)
OP_KEYS = frozenset(Op.__annotations__)
HOST_KEYS = frozenset(Host.__annotations__)
STEADY_KEYS = frozenset(Steady.__annotations__)

"""The studies by name, and what each sweeps: light enough for a command's --help and its checks, which
come before the studies' own code (pandas and all) is loaded."""

# What each study sweeps, by workload keyword: what --grid may set.  A step also fixes some keywords
# itself (its ``FIXED``): the user's options never override those, and giving one is refused.
GRIDS: dict[str, frozenset[str]] = {
    "read-concurrency": frozenset({"concurrency"}),
    "write-part-size": frozenset({"part_size", "concurrency"}),
    "key-fanout": frozenset({"keys"}),
    "bucket-fanout": frozenset({"buckets"}),
    "ttfb-size": frozenset({"object_size"}),
    "hot-object": frozenset({"concurrency"}),
    "client-cpu": frozenset({"threads"}),
    "wan": frozenset({"delay_ms", "concurrency"}),
    "rate-sweep": frozenset({"rate"}),
    "request-rate": frozenset({"concurrency", "prefixes"}),
}
FIXED: dict[str, frozenset[str]] = {
    **GRIDS,
    "bucket-fanout": frozenset({"buckets", "concurrency"}),  # the user's -c is each bucket's share
    "ip-family": frozenset({"ip", "connect_to"}),
    "ttfb-size": frozenset({"object_size", "range_size"}),
    "hot-object": frozenset({"concurrency", "range_size"}),
    "request-rate": frozenset({"concurrency", "prefixes", "range_size", "op"}),
}
REFUSED = {name: keys - ({"concurrency"} if name == "bucket-fanout" else set()) for name, keys in FIXED.items()}


def client_threads(cores: int | None = None) -> list[int]:
    """The engine thread counts a full client-cpu study sweeps: powers of two to 16, the machine's cores and
    twice them."""
    import os

    cores = cores or os.cpu_count() or 1
    return sorted({1, 2, 4, 8, 16, cores, 2 * cores})


# What each study sweeps by default: (--quick's values, the full study's), by workload keyword.
DEFAULTS: dict[str, dict[str, tuple[list, list]]] = {
    "read-concurrency": {"concurrency": ([1, 4, 16], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])},
    "write-part-size": {"part_size": ([8 << 20, 32 << 20, 128 << 20], [8 << 20, 32 << 20, 128 << 20]),
                        "concurrency": ([2, 4], [16, 64, 128, 192, 256])},
    "key-fanout": {"keys": ([1, 4], [1, 32])},
    "bucket-fanout": {"buckets": ([1, 2], [1, 2])},
    "ttfb-size": {"object_size": ([1 << 10, 64 << 10, 1 << 20, 8 << 20],
                                  [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20,
                                   64 << 20, 256 << 20])},
    "hot-object": {"concurrency": ([16, 48], [16, 32, 64, 128, 256, 512, 1024, 2048])},
    "client-cpu": {"threads": ([1, 2], client_threads())},
    "wan": {"delay_ms": ([0, 20], [0, 5, 10, 25, 50]), "concurrency": ([2, 8], [1, 2, 4, 8, 16, 32, 64, 128])},
    "rate-sweep": {"rate": ([50, 100, 200, 400, 800], [100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000])},
    "request-rate": {"concurrency": ([4, 16], [1, 4, 16, 64, 256, 1024]), "prefixes": ([1, 2], [1, 4, 16])},
}

# Seconds each step lasts, --quick and full, where the study does not set its own.
QUICK_SECONDS = {"sustained": 4.0, "mixed": 2.0, "hot-object": 1.5, "wan": 1.5, "checksums": 2.0}
FULL_SECONDS = {"sustained": 600.0}
QUICK_WRITE_CAP_S = 60.0  # a quick write-part-size step writes one part per slot, for at most this long


def step_seconds(name: str, quick: bool) -> float:
    return QUICK_SECONDS.get(name, 1.0) if quick else FULL_SECONDS.get(name, 20.0)


def default_grid(name: str, key: str, quick: bool) -> list:
    return DEFAULTS[name][key][0 if quick else 1]

# What every step of every study records beside its grid values, in this order (tests/test_sample.py holds the
# shipped sample to it).  ``directions`` is what the step did ("read", "write", "read+write"), ``status`` how it
# ended, ``note`` why a figure it should have is missing ("" where it measured what it set out to).
STEP_RESULTS = ("requests", "errors", "error_rate", "error_codes", "gbps", "read_gbps", "write_gbps", "steady_gbps",
                "requests_per_s", "ttfb_ms_p50", "ttfb_ms_p99", "rtt_ms", "ttfb_over_rtt", "write_acknowledged_gbps",
                "seconds_to_full_concurrency", "nic_rx_gbps", "nic_tx_gbps", "client_cores_busy",
                "client_cpu_s_per_gib", "directions", "status", "note")

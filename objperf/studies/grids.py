"""The studies by name, and what each sweeps: light enough for a command's --help and its checks, which
come before the studies' own code (pandas and all) is loaded."""

STUDY_NAMES = ("read-concurrency", "write-part-size", "key-fanout", "bucket-fanout", "ip-family", "mixed", "sustained",
               "ttfb-size", "hot-object", "ceiling-proof", "client-cpu", "wan",
               "rate-sweep")

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
}
FIXED: dict[str, frozenset[str]] = {
    **GRIDS,
    "bucket-fanout": frozenset({"buckets", "concurrency"}),  # the user's -c is each bucket's share
    "ip-family": frozenset({"ip", "connect_to"}),
    "ttfb-size": frozenset({"object_size", "range_size"}),
    "hot-object": frozenset({"concurrency", "range_size"}),
}
REFUSED = {name: keys - ({"concurrency"} if name == "bucket-fanout" else set()) for name, keys in FIXED.items()}

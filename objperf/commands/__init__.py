"""The commands: each parses its command line (from its options class where it has one, ``objperf.options``),
calls the library (``objperf.workflows``, ``objperf.analysis``, …) and reports what it gave.  No library
module imports a command."""

# name → (module in this package, what it does); ``import`` is Python's keyword, ``diff`` was once ``cmp``.
COMMANDS = {
    "fetch": ("fetch", "read from a store: concurrent ranged GETs, one row per request"),
    "put": ("put", "write to a store: PUTs and multipart uploads from memory"),
    "mixed": ("mixed", "read and write at the same time"),
    "delete": ("delete", "delete the objects under a prefix, once each (or in batches): the store's DELETE rate"),
    "list": ("list", "list a prefix page by page, over and over: the store's LIST pages/s and keys/s"),
    "copy": ("copy", "copy the objects under a prefix, server-side: CopyObject and UploadPartCopy, each op apart"),
    "study": ("study", "one experiment of the published benchmark, as a sweep"),
    "compare": ("compare", "objperf against other S3 clients on the same objects"),
    "bench": ("bench", "objperf and its peers on one local server, ratios printed"),
    "analyze": ("analyze", "a saved dataset summarised again: filtered, grouped, with figures"),
    "diff": ("diff", "two or more datasets side by side: what changed, and whether it is more than noise"),
    "report": ("report", "a run, a study or a comparison as one HTML page with interactive figures, offline"),
    "import": ("imports", "another tool's results (warp, elbencho) as an objperf dataset"),
    "push": ("push", "a dataset into a store (s3://), where objperf.load and analyze read it back"),
    "pack": ("pack", "a dataset or study in one file (tar or zip) to send; objperf.load reads it"),
    "serve": ("serve", "a local S3 store (SeaweedFS) until Ctrl-C, with the exports to reach it from a shell"),
    "cleanup": ("cleanup", "what killed runs left: open multipart uploads in a store, scratch and servers here"),
}
ALIASES = {"cmp": "diff"}  # names that earlier releases used

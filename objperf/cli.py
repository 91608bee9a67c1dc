"""What every objperf command shares: the options' definitions, one-line errors, exit codes, where
results go, live progress, signal handling and the embedded local server."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from objperf.errors import ObjperfError, UsageError
from objperf.progress import Listener, Progress
from objperf.run.signals import StopSignals, handled
from objperf.sanitize import printable
from objperf.sizes import parse_duration, parse_size

# The commands do no linear algebra: OpenBLAS's thread pool would only cost start-up CPU.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT; a run ended by SIGTERM exits 143 (128 + 15), as shells report it
_stop = StopSignals()  # the stop signals of the command running in this process


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line (plus a pointer to --help); for the Python API
    (``raises``), as a ``UsageError`` with the same line."""

    raises = False

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # "--conc 4" is a typo to report, not --concurrency to guess
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse's name
        if self.raises:
            raise UsageError(message)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ObjperfError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def buffer_size_arg(text: str) -> int:
    """libcurl's receive buffer takes 1 KiB to 10 MiB (CURLOPT_BUFFERSIZE); anything else is refused, not
    quietly replaced by the default."""
    size = size_arg(text)
    if not 1 << 10 <= size <= 10 << 20:
        raise argparse.ArgumentTypeError(f"{text!r}: libcurl's buffer size is 1KiB to 10MiB")
    return size


def duration_arg(text: str) -> float:
    try:
        return parse_duration(text)
    except ObjperfError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def url_lifetime_arg(text: str) -> int:
    from objperf.s3.settings import check_url_lifetime

    seconds = duration_arg(text)
    try:
        check_url_lifetime(seconds)
    except ObjperfError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return int(seconds)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def skip_aws_crt() -> None:
    """Where the AWS CRT is installed, botocore loads it on import and signs through it: about
    0.13 s more start-up for a command that needs none of it (objperf signs with botocore's own
    SigV4 and moves bytes with libcurl).  Marked absent, botocore does without it."""
    sys.modules.setdefault("awscrt", None)


# Arrow's allocator (mimalloc, committing as it goes: see objperf/__init__.py) keeps freed pages a while: a
# run's parquet part each second and its end (the summary read back, compaction) then held tens of MiB
# more than they used.  Handing freed pages back at once makes a bulk load of millions of rows slower, so
# only the commands that run transfers ask for it, before pyarrow is loaded: mimalloc reads its options
# once.  Local cluster workers inherit it; a value the user set is kept.
LEAN_ARROW_ALLOCATOR = {"MIMALLOC_PURGE_DELAY": "0"}


def lean_arrow_allocator() -> None:
    for name, value in LEAN_ARROW_ALLOCATOR.items():
        os.environ.setdefault(name, value)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Around a command that does one run.  Start-up builds a few hundred thousand objects that
    live as long as the process (botocore's models, NumPy), and the collector walks them again
    and again as they come: about 0.05 s of CPU.  The run's clock turns it back on over a frozen
    heap (``Recorder.start_clock``); leaving restores what the caller had."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def run_main(prog: str, body: Callable[[], int]) -> int:
    """Run a command body; any failure becomes one line on stderr and a non-zero exit."""
    global _stop
    _stop = StopSignals()
    with handled(_stop):
        return _run_body(prog, body)


def _run_body(prog: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except ObjperfError as exc:
        print(f"{prog}: error: {printable(exc)}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return interrupted_exit()
    except Exception as exc:  # the promise is one line, never a traceback
        if os.environ.get("OBJPERF_DEBUG"):
            raise
        print(f"{prog}: error: {type(exc).__name__}: {printable(exc)} (set OBJPERF_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return EXIT_ERROR


def exit_now(code: int) -> NoReturn:
    """End a command's process: flush the standard streams and leave without tearing the
    interpreter down.  Unwinding every module botocore and NumPy brought in costs 0.1–0.3 s
    after the run is over, which a benchmark client should not spend.  For ``__main__`` only:
    by then the command has closed everything it opened (datasets, servers, files)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def interrupted_exit() -> int:
    """128 + the signal that stopped the run: 130 for Ctrl-C (SIGINT), 143 for SIGTERM."""
    return 128 + int(_stop.stopped_by)


RUNS_DIR_ENV = "OBJPERF_RUNS"  # where runs go when no --out is given (default ./runs)


def default_out(name: str) -> Path:
    """``runs/<UTC time>-<name>``, a new directory for every run (as warp keeps every run's results)."""
    base = Path(os.environ.get(RUNS_DIR_ENV) or "runs") / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{name}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def resolve_out(args, name: str) -> None:
    """Where the run's dataset goes, settled before any server starts or object is seeded: ``--out`` (a new
    or empty directory, checked now), else ``runs/<UTC time>-<name>``; nowhere with ``--no-save``."""
    from objperf.layout import check_new_dataset

    if getattr(args, "no_save", False):
        if args.out:
            raise UsageError("--out and --no-save contradict each other: give one")
        if getattr(args, "figures", False):
            raise UsageError("--figures draws into the dataset's directory: drop --no-save")
        return
    args.out = str(args.out or default_out(name))
    check_new_dataset(args.out)


def rows_needed(args) -> bool:
    """Whether a command needs its rows after the run: a --no-save run prints only its summary, and lets its
    rows go as it counts them (about 24 bytes a row kept for the percentiles, not 319), unless --price costs
    them."""
    return not getattr(args, "no_save", False) or bool(getattr(args, "price", None))


@dataclass
class Invocation:
    """Who runs a command and how it talks back: the command line (lines on stderr, a progress bar on a
    terminal) or the Python API (a bar in the notebook, a shared local server, a live ``Run``)."""

    prog: str
    show_progress: bool
    server: Any = None  # a running local server used when no URL is given (the API's ``local_server()``)
    listener: Listener | None = None  # told of progress as the run goes

    def say(self, text: str) -> None:
        print(f"{self.prog}: {printable(text)}", file=sys.stderr)

    @contextlib.contextmanager
    def local_server(self, *, ipv6: bool = False) -> Iterator:
        """The server a run with no URL uses: the caller's, else one started (and stopped) for this run."""
        if self.server is not None and (self.server.ipv6 or not ipv6):
            yield self.server
            return
        with embedded_server(self.say, ipv6=ipv6) as server:
            yield server

    @contextlib.contextmanager
    def progress(self, total_s: float | None) -> Iterator[Progress]:
        progress = Progress(total_s=total_s, shown=self.show_progress, listener=self.listener)
        try:
            yield progress
        finally:
            progress.close()


def command_main(prog: str, build_parser: Callable[[], argparse.ArgumentParser], execute: Callable,
                 report: Callable, argv: list[str] | None, *, pause_collector: bool = True,
                 transfers: bool = False) -> int:
    """A command on the command line: parse, run ``execute(args, invocation)``, ``report`` what it gave;
    the exit code.  ``transfers``: the command measures transfers (see ``lean_arrow_allocator``)."""
    skip_aws_crt()
    if transfers:
        lean_arrow_allocator()
    args = build_parser().parse_args(argv)
    invocation = Invocation(prog, show_progress=sys.stderr.isatty())
    with collector_paused() if pause_collector else contextlib.nullcontext():
        return run_main(prog, lambda: report(execute(args, invocation), args, invocation))


@contextlib.contextmanager
def embedded_server(say: Callable[[str], None], *, ipv6: bool = False) -> Iterator:
    """A local SeaweedFS for runs given no URL; stopped however the run ends."""
    from objperf.servers.seaweed import LocalSeaweed

    t0 = time.monotonic()
    server = LocalSeaweed(ipv6=ipv6)
    try:
        server.start()
        say(f"started local SeaweedFS at {server.endpoint} in {time.monotonic() - t0:.1f} s")
        yield server
    finally:
        server.stop()


# -- arguments every command shares ------------------------------------------------


def new_parser(prog: str, doc: str, examples: str) -> OneLineParser:
    return OneLineParser(prog=prog, description=doc.split("\n\n")[0], epilog=examples,
                         formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=100))


def add_target_args(p: argparse.ArgumentParser) -> None:
    from objperf.s3.settings import URL_LIFETIME_S

    t = p.add_argument_group("target")
    t.add_argument("--endpoint", "--endpoint-url", help="S3 endpoint URL (default: AWS, or AWS_ENDPOINT_URL)")
    t.add_argument("--region", help="signing region (R2: auto)")
    t.add_argument("--profile", help="credentials profile from ~/.aws")
    t.add_argument("--anonymous", "--no-sign-request", action="store_true", help="send unsigned requests")
    t.add_argument("--addressing", choices=("auto", "path", "virtual"), default="auto", help="bucket addressing style")
    t.add_argument("--ca-bundle", metavar="FILE",
                   help="trust the CA certificates in FILE over TLS (default: AWS_CA_BUNDLE, else the "
                        "profile's ca_bundle, else the system's)")
    t.add_argument("--no-verify-ssl", action="store_true", help="trust any TLS certificate (self-signed test setups)")
    t.add_argument("--buckets", help="comma-separated buckets to spread over (default: the URL's bucket)")
    t.add_argument("--url-lifetime", type=url_lifetime_arg, default=URL_LIFETIME_S, metavar="DURATION",
                   help="how long each presigned URL is valid; runs sign them afresh every third of it "
                        f"(default {URL_LIFETIME_S // 60}m)")


def add_connection_args(p: argparse.ArgumentParser) -> None:
    c = p.add_argument_group("connection")
    c.add_argument("--threads", type=positive_int, default=None,
                   help="engine threads, each with its own libcurl multi handle (default: the cores; half of them "
                        "when the server is on this machine and requests are of 1 MiB or more, as it needs "
                        "the rest)")
    c.add_argument("--ip", choices=("4", "6", "any"), default="any", help="address family (default any)")
    c.add_argument("--connect-to", action="append", default=[], metavar="HOST:PORT:ADDR:PORT",
                   help="pin connections to a server address (libcurl CONNECT_TO); repeatable")
    c.add_argument("--spread-to", type=split_list, default=[], metavar="ADDR:PORT,...",
                   help="deal the slots round robin to these servers of a cluster, each slot connecting to "
                        "its own as if DNS had named it (no balancer needed); rows say which in remote_ip")
    c.add_argument("--interface", metavar="SOURCE[,SOURCE...]",
                   help="local source address or NIC name; several (comma-separated) have the slots dealt to them "
                        "round robin, rows say which in local_ip")
    c.add_argument("--http", choices=("1.1", "2"), default="1.1", help="HTTP version (default 1.1)")
    c.add_argument("--timeout", type=duration_arg, default=300.0, help="per-request timeout (default 5m)")
    c.add_argument("--no-keepalive", action="store_true",
                   help="close each connection after its request: every request pays a connect and, over https, "
                        "a TLS handshake (rows say which resumed a session); what a client without keep-alive "
                        "pays")
    c.add_argument("--buffer-size", type=buffer_size_arg,
                   help="libcurl buffer size per slot, 1KiB to 10MiB (default: 1MiB sending; 128KiB receiving, "
                        "less beyond 256 slots, 32MiB in all, 16KiB at least)")


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    c = p.add_argument_group("many hosts (dask.distributed)")
    c.add_argument("--cluster", metavar="ADDR", help="run the workload on every worker of this dask scheduler at once "
                                                     "(tcp://HOST:8786); one dataset with every host's rows")
    c.add_argument("--local-cluster", type=positive_int, metavar="N",
                   help="the same on N worker processes started here")
    c.add_argument("--workers", type=positive_int, metavar="N", help="use N of the cluster's workers (default: all)")
    c.add_argument("--wait-for", type=positive_int, metavar="N", help="wait for N workers to join first")
    c.add_argument("--wait-timeout", type=duration_arg, default=60.0, metavar="T",
                   help="how long --wait-for waits before giving up (default 60s)")


def price_arg(text: str) -> list[str]:
    from objperf.analysis.cost import check_providers

    try:
        return check_providers(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_price_arg(p) -> None:
    p.add_argument("--price", type=price_arg, metavar="PROVIDER[,...]",
                   help="what the run would cost on these providers' list prices: aws-s3, r2, r2-ia, wasabi, b2, "
                        "gcs (data/prices/)")


def add_output_args(p: argparse.ArgumentParser, *, embedded_size: int) -> None:
    o = p.add_argument_group("output")
    o.add_argument("--out", "-o", help="write the dataset (parquet + manifest) into this new directory "
                                       "(default: runs/<UTC time>-<command>)")
    o.add_argument("--no-save", action="store_true", help="keep no dataset (the summary only)")
    o.add_argument("--figures", action="store_true", help="also draw figures into the dataset directory")
    o.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_price_arg(o)
    o.add_argument("--object-size", type=size_arg, default=embedded_size,
                   help=f"object size (default {embedded_size >> 20}MiB)")


def connection_kwargs(args) -> dict:
    """The connection flags (``add_connection_args``, less ``--threads``) as workload keywords."""
    return {"ip": args.ip, "connect_to": tuple(args.connect_to), "spread_to": tuple(args.spread_to),
            "interface": args.interface, "http_version": args.http, "timeout": args.timeout,
            "keepalive": not args.no_keepalive, **buffer_size_kwargs(args)}


def buffer_size_kwargs(args) -> dict:
    """``--buffer-size`` as a workload keyword, when given: reads and writes have their own defaults."""
    return {"buffer_size": args.buffer_size} if args.buffer_size is not None else {}


def split_list(text: str | None) -> list[str]:
    return [item for item in (text or "").split(",") if item]


def s3_settings(args):
    from objperf.s3.settings import S3Settings, environment_region

    check_endpoint(args.endpoint)
    return S3Settings(endpoint=args.endpoint, region=args.region or environment_region(), profile=args.profile,
                      anonymous=args.anonymous,
                      addressing=args.addressing, ca_bundle=ca_bundle(args), verify_tls=not args.no_verify_ssl,
                      timeout=control_timeout(args), multipart_timeout=control_timeout(args, duration=False))


# The flags that name a store, with the value each has when not given.
TARGET_FLAGS = {"endpoint": ("--endpoint", None), "profile": ("--profile", None), "region": ("--region", None),
                "anonymous": ("--anonymous", False), "addressing": ("--addressing", "auto")}


def check_target_flags(args) -> None:
    """Flags that name a store need an ``s3://`` URL to apply to: without one a run would quietly measure the
    embedded local server (or a plain HTTP URL) instead of the store the user named.  One line, before anything
    starts."""
    given = [flag for name, (flag, unset) in TARGET_FLAGS.items() if getattr(args, name, unset) != unset]
    url = getattr(args, "url", None) or ""
    if url and not url.startswith(("s3://", "http://", "https://")):
        return  # not a URL objperf reads at all: its own check says so
    if given and not url.startswith("s3://"):
        what = f"the URL {url!r} is not an s3:// URL" if url else "no s3://BUCKET/… URL was given"
        raise UsageError(f"{' and '.join(given)} name{'s' if len(given) == 1 else ''} a store, but {what}: give "
                         "s3://BUCKET/KEY (or a prefix) to measure that store")


def check_endpoint(endpoint: str | None) -> None:
    """An --endpoint is an http(s) URL with a host and, if any, a port from 1 to 65535: refused in one line
    otherwise, before anything is sent."""
    if endpoint is None:
        return
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"bad --endpoint {endpoint!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise UsageError(f"bad --endpoint {endpoint!r}: expected http(s)://HOST[:PORT]")


def control_timeout(args, *, duration: bool = True) -> float:
    """How long a control-plane call (HEAD, listing) may wait: bounded by --timeout and by the run's
    --duration, so a server that accepts and never answers ends the command on time.  ``duration=False``:
    by --timeout alone, for the multipart calls that open and close a write run's uploads."""
    from objperf.s3.settings import CONTROL_TIMEOUT_S

    bounds = [CONTROL_TIMEOUT_S, getattr(args, "timeout", None), duration and getattr(args, "duration", None)]
    return max(1.0, min(b for b in bounds if b))


def ca_bundle(args) -> str | None:
    """The CA bundle to trust (``objperf.s3.settings.checked_ca_bundle``: --ca-bundle, AWS_CA_BUNDLE, the
    profile's), checked now."""
    from objperf.s3.settings import checked_ca_bundle

    return checked_ca_bundle(args.ca_bundle, args.profile)


def with_figures(result, args, invocation: Invocation):
    """``result``, its figures drawn into its dataset first when ``--figures`` asks."""
    if args.figures and result.dataset:
        from objperf.plots.figures import draw_run_figures

        for path in draw_run_figures(result.rows, result.dataset, result.manifest):
            invocation.say(f"figure {path}")
    return result


def report(result, args, invocation: Invocation) -> int:
    """Print a run's summary (text or JSON), draw its figures, name its dataset; the exit code."""
    from objperf.analysis.summary import format_summary
    from objperf.jsontext import dumps
    from objperf.run.outcome import left_open_text

    prog, say = invocation.prog, invocation.say
    if getattr(args, "price", None):
        from objperf.analysis.cost import costs

        result.summary["cost"] = costs(result.rows, args.price)
    if args.json:
        print(dumps({"run_id": result.run_id, "status": result.status, **result.summary}, indent=2))
    else:
        print(format_summary(result.summary, title=f"{prog} {result.run_id} ({result.status})"))
    if result.dataset:
        say(f"dataset {result.dataset} ({result.summary['requests']} rows)")
    s = result.summary
    left_open = s.get("uploads_left_open", [])
    if left_open and "left open" not in s.get("error", ""):
        print(f"{prog}: error: {printable(left_open_text(left_open))}", file=sys.stderr)
    if result.status == "interrupted":
        return interrupted_exit()
    if result.status == "failed":  # objperf.run.outcome decided it, for the manifest as for the exit status
        print(f"{prog}: error: {printable(s.get('error') or 'the run failed')}", file=sys.stderr)
        return EXIT_ERROR
    return 0

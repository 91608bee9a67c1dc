"""The option groups several run kinds share: the store and how to sign for it, the connections, the
hosts of a cluster, and where results go.  Each run kind's options class is made of these and its own."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.core.errors import UsageError
from objperf.core.steady import CAP_S, SAMPLES, TOLERANCE_PCT, WINDOW_S
from objperf.options.kinds import (
    BANDWIDTH,
    BUFFER_SIZE,
    COUNT,
    DURATION,
    ITEMS,
    PATH,
    PERCENT,
    PROVIDERS,
    SIZE,
    URL_LIFETIME,
    choice,
)
from objperf.options.spec import build, flag, option
from objperf.s3.settings import CONTROL_TIMEOUT_S, URL_LIFETIME_S

TARGET = "target"
CONNECTION = "connection"
CLUSTER = "many hosts (dask.distributed)"
OUTPUT = "output"
STEADY = "steady state"


@dataclass(kw_only=True)
class TargetOptions:
    endpoint: str | None = option(None, "S3 endpoint URL (default: AWS, or AWS_ENDPOINT_URL)",
                                  flags=("--endpoint-url",), group=TARGET)
    region: str | None = option(None, "signing region (R2: auto)", group=TARGET)
    profile: str | None = option(None, "credentials profile from ~/.aws", group=TARGET)
    anonymous: bool = flag("send unsigned requests", flags=("--no-sign-request",), group=TARGET)
    addressing: str = option("auto", "bucket addressing style", choice("auto", "path", "virtual"), group=TARGET)
    ca_bundle: str | None = option(None, "trust the CA certificates in FILE over TLS (default: AWS_CA_BUNDLE, else "
                                   "the profile's ca_bundle, else the system's)", PATH, metavar="FILE", group=TARGET)
    no_verify_ssl: bool = flag("trust any TLS certificate (self-signed test setups)", group=TARGET)
    buckets: tuple[str, ...] = option((), "buckets to spread over (default: the URL's bucket)", ITEMS,
                                      metavar="B1,B2,...", group=TARGET)
    url_lifetime: int = option(URL_LIFETIME_S, "how long each presigned URL is valid; runs sign them afresh every "
                               "third of it", URL_LIFETIME, group=TARGET)

    # The flags that name a store, with the value each has when not given.
    NAMING_A_STORE = {"endpoint": None, "profile": None, "region": None, "anonymous": False, "addressing": "auto"}

    def check_target(self) -> None:
        """Flags that name a store need an ``s3://`` URL to apply to: without one a run would quietly measure the
        embedded local server (or a plain HTTP URL) instead of the store the user named.  One line, before
        anything starts."""
        given = [f"--{name}" for name, unset in self.NAMING_A_STORE.items() if getattr(self, name) != unset]
        url = getattr(self, "url", None) or ""  # each run kind defines its URL, with its own help
        if url and not url.startswith(("s3://", "http://", "https://")):
            return  # not a URL objperf reads at all: its own check says so
        if given and not url.startswith("s3://"):
            what = f"the URL {url!r} is not an s3:// URL" if url else "no s3://BUCKET/… URL was given"
            raise UsageError(f"{' and '.join(given)} name{'s' if len(given) == 1 else ''} a store, but {what}: "
                             "give s3://BUCKET/KEY (or a prefix) to measure that store")

    def s3_settings(self):
        """Where and as whom to talk S3, as these options say (``objperf.s3.settings.S3Settings``)."""
        from objperf.s3.settings import S3Settings, checked_ca_bundle, environment_region

        check_endpoint(self.endpoint)
        return S3Settings(endpoint=self.endpoint, region=self.region or environment_region(), profile=self.profile,
                          anonymous=self.anonymous, addressing=self.addressing,
                          ca_bundle=checked_ca_bundle(self.ca_bundle, self.profile), verify_tls=not self.no_verify_ssl,
                          timeout=self.control_timeout(), multipart_timeout=self.control_timeout(duration=False))

    def control_timeout(self, *, duration: bool = True) -> float:
        """How long a control-plane call (HEAD, listing) may wait: bounded by --timeout and by the run's
        --duration, so a server that accepts and never answers ends the command on time.  ``duration=False``:
        by --timeout alone, for the multipart calls that open and close a write run's uploads."""
        bounds = [CONTROL_TIMEOUT_S, getattr(self, "timeout", None), duration and getattr(self, "duration", None)]
        return max(1.0, min(b for b in bounds if b))


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


@dataclass(kw_only=True)
class ConnectionOptions:
    threads: int | None = option(None, "engine threads, each with its own libcurl multi handle", COUNT,
                                 default_text="the cores; half of them when the server is on this machine and "
                                 "requests are of 1 MiB or more, as it needs the rest", group=CONNECTION)
    ip: str = option("any", "address family", choice("4", "6", "any"), group=CONNECTION)
    connect_to: tuple[str, ...] = option((), "pin connections to a server address (libcurl CONNECT_TO); repeatable",
                                         repeat=True, metavar="HOST:PORT:ADDR:PORT", group=CONNECTION)
    spread_to: tuple[str, ...] = option((), "deal the slots round robin to these servers of a cluster, each slot "
                                        "connecting to its own as if DNS had named it (no balancer needed); rows "
                                        "say which in remote_ip", ITEMS, metavar="ADDR:PORT,...", group=CONNECTION)
    interface: str | None = option(None, "local source address or NIC name; several (comma-separated) have the "
                                   "slots dealt to them round robin, rows say which in local_ip",
                                   metavar="SOURCE[,SOURCE...]", group=CONNECTION)
    http: str = option("1.1", "HTTP version", choice("1.1", "2"), group=CONNECTION)
    timeout: float = option(300.0, "per-request timeout", DURATION, group=CONNECTION)
    no_keepalive: bool = flag("close each connection after its request: every request pays a connect and, over "
                              "https, a TLS handshake (rows say which resumed a session); what a client without "
                              "keep-alive pays", group=CONNECTION)
    max_rate: int | None = option(None, "cap the run's bandwidth at this many bytes a second, each slot its share "
                                  "(libcurl's MAX_RECV/SEND_SPEED), as a link or a quota would", BANDWIDTH,
                                  group=CONNECTION)
    buffer_size: int | None = option(None, "libcurl buffer size per slot, 1KiB to 10MiB, fixed", BUFFER_SIZE,
                                     default_text="1MiB sending; receiving, each slot's follows its reads (cleartext "
                                     "HTTP/1.1): from 128KiB, between 8KiB and 1MiB, 32MiB in all", group=CONNECTION)

    def connection_kwargs(self) -> dict:
        """The connection options (less ``threads``) as workload keywords; ``buffer_size`` only when given, as
        reads and writes have their own defaults."""
        given = {"buffer_size": self.buffer_size} if self.buffer_size is not None else {}
        if self.max_rate is not None:
            given["max_rate"] = self.max_rate
        return {"ip": self.ip, "connect_to": tuple(self.connect_to), "spread_to": tuple(self.spread_to),
                "interface": self.interface, "http_version": self.http, "timeout": self.timeout,
                "keepalive": not self.no_keepalive, **given}


@dataclass(kw_only=True)
class SteadyOptions:
    """When a run's throughput has held: every summary says where (and the warm-up before it); a run may end
    there."""

    until_steady: bool = flag("end the run once its throughput has held steady: --steady-window in a row, each of "
                              f"its {SAMPLES} samples within --steady-tolerance of their mean (warp's --autoterm); "
                              "--duration or --requests still bound it, and without either it ends after "
                              f"{DURATION.shown(CAP_S)} at most", group=STEADY)
    steady_window: float = option(WINDOW_S, f"how long the throughput must hold, in {SAMPLES} samples (the bytes of "
                                  "the requests that ended in each): give one of many requests; every summary's "
                                  "steady line is judged by it", DURATION, group=STEADY)
    steady_tolerance: float = option(TOLERANCE_PCT, "how far each sample of a steady window may lie from their mean",
                                     PERCENT, group=STEADY)

    def steady_kwargs(self) -> dict:
        """The steady-state options as workload keywords."""
        return {"until_steady": self.until_steady, "steady_window": self.steady_window,
                "steady_tolerance": self.steady_tolerance}


@dataclass(kw_only=True)
class ClusterOptions:
    cluster: str | None = option(None, "run the workload on every worker of this dask scheduler at once "
                                 "(tcp://HOST:8786); one dataset with every host's rows", metavar="ADDR", group=CLUSTER)
    local_cluster: int | None = option(None, "the same on N worker processes started here", COUNT, group=CLUSTER)
    workers: int | None = option(None, "use N of the cluster's workers (default: all)", COUNT, group=CLUSTER)
    wait_for: int | None = option(None, "wait for N workers to join first", COUNT, group=CLUSTER)
    wait_timeout: float = option(60.0, "how long --wait-for waits before giving up", DURATION, metavar="T",
                                 group=CLUSTER)

    def cluster_asked(self) -> bool:
        return bool(self.cluster or self.local_cluster)

    def check_cluster(self) -> None:
        """What a cluster run cannot do, said before anything starts."""
        if not self.cluster_asked():
            if self.workers or self.wait_for:
                raise UsageError("--workers and --wait-for choose workers of a cluster: give --cluster or "
                                 "--local-cluster")
            return
        from objperf.core.extras import require

        require("distributed", "a run on many hosts (--cluster, --local-cluster)")
        require("dask", "a run on many hosts (--cluster, --local-cluster)")
        if self.cluster and self.local_cluster:
            raise UsageError("--cluster and --local-cluster contradict each other: give one")
        if getattr(self, "until_steady", False):
            raise UsageError("--until-steady judges one host's throughput, and each host would end on its own: "
                             "not with --cluster or --local-cluster (give --duration)")
        if getattr(self, "no_save", False):
            raise UsageError("a cluster run brings every host's rows into its dataset: drop --no-save")
        if self.cluster and not getattr(self, "url", None):
            raise UsageError("the embedded server listens on this machine only: give the URL of a store every "
                             "worker can reach, or run the workers here with --local-cluster N")


@dataclass(kw_only=True)
class SeedOptions:
    """For runs that write the objects they read first (with no URL, and every study)."""

    reseed: bool = flag("write the objects to read again, even where the store holds them already with the right "
                        "size and objperf's content (which it otherwise reuses)", group="workload")


@dataclass(kw_only=True)
class OutputOptions:
    out: str | None = option(None, "write the dataset (parquet + manifest) into this new directory, or (fetch, "
                             "put, mixed) straight into an empty s3://BUCKET/PREFIX/ of the run's store, every "
                             "host its own parts (default: runs/<UTC time>-<command>)", PATH, flags=("-o",),
                             group=OUTPUT)
    no_save: bool = flag("keep no dataset (the summary only)", group=OUTPUT)
    figures: bool = flag("also draw figures into the dataset directory", group=OUTPUT)
    json: bool = flag("print the summary as JSON (the command line's; from Python, run.summary is it)",
                      group=OUTPUT)
    json_sketches: bool = flag("--json with the latency sketches (hundreds of buckets each; the dataset's manifest "
                               "keeps them)", group=OUTPUT)
    price: tuple[str, ...] = option((), "what the run would cost on these providers' list prices: aws-s3, r2, "
                                    "r2-ia, wasabi, b2, gcs (data/prices/)", PROVIDERS, group=OUTPUT)
    object_size: int = option(1 << 30, "object size", SIZE, group=OUTPUT)

    def check_output(self) -> None:
        """Figures need the plots extra: said before the run, not after it."""
        if self.figures:
            from objperf.core.extras import require

            require("matplotlib", "--figures")
            require("seaborn", "--figures")

    def rows_needed(self) -> bool:
        """Whether the rows are kept after the run: a --no-save run prints only its summary, and lets its rows
        go as it counts them (about 24 bytes a row kept for the percentiles, not 319), unless --price costs
        them."""
        return not self.no_save or bool(self.price)


def store_settings(store: dict, what: str):
    """The S3 settings of the store that ``store`` names, as the target options name one (``endpoint=``,
    ``profile=``, ``region=``, …): where s3:// datasets are read from."""
    return build(TargetOptions, store, what=what).s3_settings()

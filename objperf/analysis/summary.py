"""What a run amounts to: throughput, request rate, TTFB percentiles, errors
by kind, client CPU per GiB.  Works on the engine's NumPy columns, so a run
without a dataset never imports pandas."""

from __future__ import annotations

import numpy as np

from objperf.analysis.record import Summary
from objperf.analysis.sketch import Sketch
from objperf.analysis.steady import Samples, SteadyRule, steady_state
from objperf.core.schema import (
    COPY_OPS,
    CUT_CURL_CODE,
    DIRECTIONS,
    HTTP_VERSIONS,
    KEYED_OPS,
    METADATA_OPS,
    OP_GET,
    OPS,
    curl_error_text,
    cut_requests,
    first_byte_requests,
    ok_requests,
)

GIB = 1 << 30
COPY_CODES = [OPS.index(name) for name in COPY_OPS]
# The engine columns summarize reads: a run with a dataset reads only these back from it at its end.
SUMMARY_COLUMNS = ("op", "offset", "length", "status", "curl_code", "bytes", "ttfb_s", "total_s", "dns_s",
                   "connect_s", "tls_s", "new_conn", "tls_resumed", "http_version", "remote_ip", "remote_port",
                   "s3_error", "t_start", "t_intended")
# Below this many bytes a run's CPU is its fixed costs: per GiB it says nothing (the JSON keeps it).
PER_GIB_FROM_BYTES = 1 << 20


RTT_PERCENTILE = 10  # a connect can only be slowed (a busy box, a full accept queue), never sped up: a low one


def round_trip_ms(cols: dict[str, np.ndarray]) -> float:
    """The network round trip, from the TCP connects of new connections: libcurl's connect time less its
    name lookup is one SYN → SYN-ACK; the RTT_PERCENTILE-th of them, as a busy client or server only ever
    adds to a connect.  NaN when no request opened a connection (or the columns lack it)."""
    if "new_conn" not in cols or "dns_s" not in cols:
        return float("nan")
    opened = cols["new_conn"].astype(bool) & (cols["connect_s"] > 0)
    (low,) = percentiles((cols["connect_s"][opened] - cols["dns_s"][opened]) * 1000, [RTT_PERCENTILE])
    return float(low)


def _is_loopback(ip: bytes | str) -> bool:
    text = (ip.decode(errors="replace") if isinstance(ip, bytes) else str(ip)).removeprefix("::ffff:")
    return text == "::1" or text.startswith("127.")


def connects_measured(cols: dict[str, np.ndarray]) -> tuple[int, bool]:
    """How many TCP connects the round trip comes from, and whether they all ended at a loopback address
    (a local server, or a relay standing for a far one: then it is not the store's distance)."""
    if "new_conn" not in cols or "connect_s" not in cols:
        return 0, False
    opened = cols["new_conn"].astype(bool) & (cols["connect_s"] > 0)
    ips = set(cols["remote_ip"][opened].tolist()) if "remote_ip" in cols else set()
    loopback = bool(ips) and all(_is_loopback(ip) for ip in ips)
    return int(opened.sum()), loopback


def tls_handshakes(cols: dict[str, np.ndarray], *, busy_s: float | None = None) -> dict | None:
    """The TLS handshakes of a run's new connections: how many, how many resumed a session, their median
    times (libcurl's TLS time less its connect time), and their share of all the requests' time (``busy_s``,
    else the sum of ``cols``' total times).  None when no request opened a TLS connection (or the columns
    lack it)."""
    if "tls_resumed" not in cols or "tls_s" not in cols:
        return None
    kind = np.asarray(cols["tls_resumed"])
    opened = np.asarray(cols["new_conn"]).astype(bool) & (kind >= 0)
    if not opened.any():
        return None
    seconds = np.nan_to_num(cols["tls_s"][opened] - cols["connect_s"][opened])
    resumed = kind[opened] == 1
    (full_ms,), (resumed_ms,) = percentiles(seconds[~resumed] * 1000, [50]), percentiles(seconds[resumed] * 1000, [50])
    busy = float(np.nansum(cols["total_s"])) if busy_s is None else busy_s
    return {"handshakes": int(opened.sum()), "resumed": int(resumed.sum()), "full_ms_p50": full_ms,
            "resumed_ms_p50": resumed_ms, "share_of_request_time": float(seconds.sum()) / busy if busy > 0 else 0.0}


def _counts(values: np.ndarray) -> dict:
    keys, counts = np.unique(values, return_counts=True)
    return dict(zip(keys.tolist(), counts.tolist()))


def _add_counts(into: dict, values: np.ndarray) -> None:
    for key, count in _counts(values).items():
        into[key] = into.get(key, 0) + count


def percentiles(values: np.ndarray, qs: list[float]) -> list[float]:
    """``np.percentile(values, qs)`` (linear interpolation) of the values that were measured (NaN is none), NaN
    for no values.  np.percentile's first call imports numpy.ma: 23 ms on every command, for three numbers."""
    values = values[~np.isnan(values)]
    if not len(values):
        return [float("nan")] * len(qs)
    ordered = np.sort(values)
    at = np.asarray(qs, dtype=float) / 100 * (len(ordered) - 1)
    return np.interp(at, np.arange(len(ordered)), ordered).tolist()


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.empty(0)


CONNECTION_COLUMNS = ("new_conn", "dns_s", "connect_s", "tls_s", "tls_resumed", "remote_ip")


class Tally:
    """A run's summary, built a group of rows at a time: counts and sums as the groups come, and only the
    values its percentiles need (the GETs' TTFB, each direction's latencies, each server's TTFB, the new
    connections' timings).  A run read back from its dataset then holds about 24 bytes a row at its end,
    not its 15 columns.  Its steady state is judged by ``steady`` (``objperf.analysis.steady``; the default
    rule when none is given)."""

    def __init__(self, steady: SteadyRule | None = None) -> None:
        self.steady_rule = steady or SteadyRule()
        self.steady_samples = Samples(self.steady_rule.sample_s)  # throughput by when each request ended
        # TTFB of the GETs that had a first byte, and every successful request's total time: mergeable across
        # steps and hosts (``objperf.analysis.sketch``), kept in the summary.
        self.sketches = {"ttfb_ms": Sketch(), "latency_ms": Sketch()}
        self.requests = self.ok = self.failed = self.cut = self.bytes = self.sent_bytes = 0
        self.partial_200 = 0  # GETs of part of an object answered 200 (with the part's bytes), where S3 says 206
        self.busy_s = 0.0
        self.ttfb_ms: list[np.ndarray] = []
        self.statuses: dict = {}
        self.http_versions: dict = {}
        self.s3_errors: dict = {}
        self.curl_errors: dict = {}
        self.directions: dict[str, dict] = {}
        self.ops: dict[str, dict] = {}  # the requests that move no body (METADATA_OPS), each op apart
        self.servers: dict[tuple[bytes | str, int], dict] = {}  # text in rows loaded from a dataset
        self.opened: list[dict[str, np.ndarray]] = []  # the rows that opened a connection
        # Open loop (--rate): each successful request's latency from when it was due, and its service time
        self.scheduled: dict[str, list] = {"from_due_ms": [], "service_ms": [], "late_ms": [], "starts": []}
        self.connection_columns: list[str] = []  # those of CONNECTION_COLUMNS the rows have

    def add(self, cols: dict[str, np.ndarray]) -> None:
        status, curl_code = cols["status"], cols["curl_code"]
        if not len(status):
            return
        ok = ok_requests(curl_code, status)
        cut = cut_requests(curl_code, status)
        failed = ~ok & ~cut
        curl_failed = failed & (curl_code != 0) & (curl_code != CUT_CURL_CODE)  # a cut 503 failed by its status
        first_byte = first_byte_requests(curl_code, status, cols["ttfb_s"])
        gets = first_byte & (cols["op"] == OP_GET)  # time to first byte means something for GETs
        writes = np.isin(cols["op"], DIRECTIONS["write"])
        self.requests += len(status)
        self.ok += int(ok.sum())
        self.failed += int(failed.sum())
        self.cut += int(cut.sum())
        # What was done: bytes of successes, and of reads cut by the run's end those that had arrived; of writes
        # only those the store acknowledged (sent is kept apart), of copies those it said it copied; a failed
        # request's bytes, never
        counted = ok | (cut & ~writes & ~np.isin(cols["op"], COPY_CODES))
        self.bytes += int(cols["bytes"][counted].sum())
        self.sent_bytes += int(cols["bytes"][writes].sum())
        ttfb_ms = cols["ttfb_s"][gets] * 1000
        self.sketches["ttfb_ms"].add(ttfb_ms)
        self.sketches["latency_ms"].add(cols["total_s"][ok] * 1000)
        self.ttfb_ms.append(ttfb_ms)
        if "offset" in cols:
            self.partial_200 += int((ok & (cols["op"] == OP_GET) & (status == 200) & (cols["offset"] > 0)).sum())
        _add_counts(self.statuses, status[~cut])
        if "http_version" in cols:
            # the requests that spoke HTTP on the engine's connections (the control plane's rows say no version)
            _add_counts(self.http_versions, cols["http_version"][(status > 0) & (cols["http_version"] != 0)])
        _add_counts(self.s3_errors, cols["s3_error"][cols["s3_error"] != b""])
        _add_counts(self.curl_errors, curl_code[curl_failed])
        for name, codes in DIRECTIONS.items():
            mine = np.isin(cols["op"], codes)
            if mine.any():
                d = self.directions.setdefault(name, {"counted_bytes": 0, "requests": 0, "failed": 0,
                                                      "cut": 0, "moved_bytes": 0, "latency_ms": []})
                d["counted_bytes"] += int(cols["bytes"][mine & counted].sum())  # a cut part acknowledged nothing
                d["requests"] += int(mine.sum())
                d["failed"] += int((mine & failed).sum())
                d["cut"] += int((mine & cut).sum())
                d["moved_bytes"] += int(cols["bytes"][mine].sum())
                d["latency_ms"].append(cols["total_s"][mine & ok] * 1000)
        self._add_ops(cols, ok, failed, cut)
        self._add_servers(cols, ok, failed, gets)
        if "t_intended" in cols:
            self._add_scheduled(cols, ok)
        self.busy_s += float(np.nansum(cols["total_s"]))
        self.steady_samples.add(cols)
        if "new_conn" in cols:
            self.connection_columns = [name for name in CONNECTION_COLUMNS if name in cols]
            opened = cols["new_conn"].astype(bool)
            if opened.any():
                self.opened.append({name: cols[name][opened] for name in self.connection_columns})

    def _add_ops(self, cols: dict[str, np.ndarray], ok: np.ndarray, failed: np.ndarray, cut: np.ndarray) -> None:
        """Each op's requests apart (shown where the run had one that moves no body: a HEAD, a DELETE)."""
        for code in np.unique(cols["op"]):
            mine = cols["op"] == code
            name = OPS[int(code)]
            d = self.ops.setdefault(name, {"requests": 0, "failed": 0, "cut": 0, "latency_ms": []})
            d["requests"] += int(mine.sum())
            d["failed"] += int((mine & failed).sum())
            d["cut"] += int((mine & cut).sum())
            d["latency_ms"].append(cols["total_s"][mine & ok] * 1000)
            if name in KEYED_OPS and "length" in cols:  # the keys of the pages listed, of the batches deleted
                d["keys"] = d.get("keys", 0) + int(cols["length"][mine & ok].sum())
            if OPS[int(code)] in COPY_OPS:  # what the store copied
                d["bytes"] = d.get("bytes", 0) + int(cols["bytes"][mine & ok].sum())

    def _ops(self, wall: float) -> dict:
        if not set(self.ops) & set(METADATA_OPS):
            return {}
        ops = {}
        for name, d in sorted(self.ops.items(), key=lambda item: OPS.index(item[0])):
            p50, p90, p99 = percentiles(_joined(d["latency_ms"]), [50, 90, 99])
            ops[name] = {"requests": d["requests"], "failed": d["failed"], "cut": d["cut"],
                         "requests_per_s": (d["requests"] - d["cut"]) / wall, "latency_ms_p50": p50,
                         "latency_ms_p90": p90, "latency_ms_p99": p99, **keys_figures(d.get("keys"), wall),
                         **(rate_figures(d["bytes"], wall_s=wall) if "bytes" in d else {})}
        return ops

    def _add_scheduled(self, cols: dict[str, np.ndarray], ok: np.ndarray) -> None:
        """Rows of an open-loop run: due at ``t_intended``, started at ``t_start`` (late when slots were busy)."""
        due, start = cols["t_intended"], cols["t_start"]
        scheduled = np.isfinite(due) & (due != start)  # a closed loop's request is due when it starts
        if not scheduled.any():
            return
        late = np.maximum(start - due, 0.0)
        mine = scheduled & ok
        self.scheduled["from_due_ms"].append((late + cols["total_s"])[mine] * 1000)
        self.scheduled["service_ms"].append(cols["total_s"][mine] * 1000)
        self.scheduled["late_ms"].append(late[scheduled] * 1000)
        self.scheduled["starts"].append(start[scheduled])

    def _open_loop(self) -> dict | None:
        if not self.scheduled["starts"]:
            return None
        starts = _joined(self.scheduled["starts"])
        span = float(starts.max() - starts.min()) if len(starts) > 1 else float("nan")
        from_due = percentiles(_joined(self.scheduled["from_due_ms"]), [50, 99, 99.9])
        service = percentiles(_joined(self.scheduled["service_ms"]), [50, 99, 99.9])
        late_p99, = percentiles(_joined(self.scheduled["late_ms"]), [99])
        return {"requests": len(starts), "rate_achieved": (len(starts) - 1) / span if span > 0 else float("nan"),
                "latency_ms_p50": from_due[0], "latency_ms_p99": from_due[1], "latency_ms_p999": from_due[2],
                "service_ms_p50": service[0], "service_ms_p99": service[1], "service_ms_p999": service[2],
                "late_start_ms_p99": late_p99}

    def _add_servers(self, cols: dict[str, np.ndarray], ok: np.ndarray, failed: np.ndarray,
                     gets: np.ndarray) -> None:
        """Throughput, requests and TTFB by the server that answered: whose share is short, whose TTFB is
        long, when more than one did (a run spread over a cluster's servers, or DNS that gives several)."""
        if "remote_port" not in cols:  # columns read without the peers' addresses
            return
        answered = cols["remote_port"] > 0
        if not answered.any():
            return
        ips, ports = cols["remote_ip"][answered], cols["remote_port"][answered]
        if (ips == ips[0]).all() and (ports == ports[0]).all():
            found = [(ips[:1].tolist()[0], int(ports[0]))]  # one server, the usual case: no list of every address
        else:
            found = sorted(set(zip(ips.tolist(), ports.tolist())))
        for ip, port in found:
            mine = (cols["remote_ip"] == ip) & (cols["remote_port"] == port)
            server = self.servers.setdefault((ip, port), {"requests": 0, "ok": 0, "failed": 0, "bytes": 0,
                                                          "ttfb_ms": []})
            server["requests"] += int(mine.sum())
            server["ok"] += int((mine & ok).sum())
            server["failed"] += int((mine & failed).sum())
            server["bytes"] += int(cols["bytes"][mine].sum())
            server["ttfb_ms"].append(cols["ttfb_s"][mine & gets] * 1000)

    def _per_server(self, wall: float) -> dict:
        if len(self.servers) < 2:
            return {}
        servers = {}
        for (ip, port), d in sorted(self.servers.items()):
            host = ip.decode(errors="replace") if isinstance(ip, bytes) else str(ip)  # saved rows: text
            p50, = percentiles(_joined(d["ttfb_ms"]), [50])
            servers[f"[{host}]:{port}" if ":" in host else f"{host}:{port}"] = {
                "requests": d["requests"], "ok": d["ok"], "failed": d["failed"],
                "gbps": d["bytes"] * 8 / wall / 1e9, "ttfb_ms_p50": float(p50)}
        return servers

    def result(self, *, wall_s: float, cpu_s: float, peak_rss_bytes: int | None = None) -> Summary:
        wall = max(wall_s, 1e-9)
        p50, p90, p99, p999 = percentiles(_joined(self.ttfb_ms), [50, 90, 99, 99.9])
        directions = {}
        for name in DIRECTIONS:
            if name in self.directions:
                d = self.directions[name]
                p50_ms, p99_ms = percentiles(_joined(d["latency_ms"]), [50, 99])
                directions[name] = direction_figures(name, counted=d["counted_bytes"], moved=d["moved_bytes"],
                                                     wall_s=wall_s)
                directions[name].update(requests=d["requests"], failed=d["failed"], cut=d["cut"],
                                        latency_ms_p50=p50_ms, latency_ms_p99=p99_ms)
        opened = {name: _joined([c[name] for c in self.opened]) for name in self.connection_columns}
        rtt = round_trip_ms(opened)
        connects, loopback = connects_measured(opened)
        connections = len(opened.get("new_conn", ()))
        return {
            "requests": self.requests,
            "servers": self._per_server(wall),
            "ok_requests": self.ok,
            "error_requests": self.failed,
            "cut_requests": self.cut,
            **rate_figures(self.bytes, wall_s),
            **(rate_figures(self.sent_bytes, wall_s, "sent_") if "write" in self.directions else {}),
            "wall_s": wall_s,
            "requests_per_s": (self.requests - self.cut) / wall,  # requests that finished
            "ttfb_ms_p50": float(p50),
            "ttfb_ms_p90": float(p90),
            "ttfb_ms_p99": float(p99),
            "ttfb_ms_p999": float(p999),
            "sketches": {name: sketch.to_json() for name, sketch in self.sketches.items()},
            "rtt_ms": rtt,
            "rtt_connects": connects,
            "rtt_loopback": loopback,
            "ttfb_over_rtt": float(p50) / rtt if rtt > 0 else float("nan"),
            "status_counts": {str(k): v for k, v in sorted(self.statuses.items())},
            "ranged_gets_answered_200": self.partial_200,
            "http_version_counts": {HTTP_VERSIONS.get(k, str(k)): v for k, v in sorted(self.http_versions.items())},
            "tls": tls_handshakes(opened, busy_s=self.busy_s) if opened else None,
            "connections_opened": connections,
            "s3_error_counts": {k.decode(errors="replace"): v for k, v in sorted(self.s3_errors.items())},
            "curl_error_counts": {f"{k} {curl_error_text(k)}": v for k, v in sorted(self.curl_errors.items())},
            "client_cpu_s": cpu_s,
            "client_cpu_s_per_gib": cpu_s / (self.bytes / GIB) if self.bytes else float("nan"),
            "peak_rss_mib": peak_rss_bytes / (1 << 20) if peak_rss_bytes else None,
            "directions": directions,
            **({"ops": ops} if (ops := self._ops(wall)) else {}),
            "steady": steady_state(self.steady_samples, self.steady_rule),
            **({"open_loop": open_loop} if (open_loop := self._open_loop()) else {}),
        }


def keys_figures(keys: int | None, wall_s: float) -> dict:
    """A keyed op's keys (``objperf.core.schema.KEYED_OPS``) and their rate; nothing for another op."""
    return {} if keys is None else {"keys": keys, "keys_per_s": keys / max(wall_s, 1e-9)}


def receive_buffer_figures(sizes: list[int]) -> dict[str, int]:
    """The least, median and most of the slots' receive buffers (bytes)."""
    ordered = sorted(sizes)
    return {"least": ordered[0], "median": ordered[len(ordered) // 2], "most": ordered[-1]}


def rate_figures(nbytes: int, wall_s: float, prefix: str = "") -> dict:
    """``bytes``, ``gbps`` and ``mib_per_s`` of ``nbytes`` over ``wall_s`` (names after ``prefix``)."""
    wall = max(wall_s, 1e-9)
    return {f"{prefix}bytes": nbytes, f"{prefix}gbps": nbytes * 8 / wall / 1e9,
            f"{prefix}mib_per_s": nbytes / wall / (1 << 20)}


def direction_figures(name: str, *, counted: int, moved: int, wall_s: float) -> dict:
    """One direction's amounts: a read counts the bytes received (a failed GET's none), a write those the store
    acknowledged, with the bytes sent beside them (``sent_*``; ``acknowledged_*`` names the same figures as
    ``bytes``/``gbps``)."""
    if name != "write":
        return rate_figures(counted, wall_s)
    ack = rate_figures(counted, wall_s)
    return {**ack, **rate_figures(moved, wall_s, "sent_"), "acknowledged_bytes": counted,
            "acknowledged_gbps": ack["gbps"]}


def summarize(cols: dict[str, np.ndarray], *, wall_s: float, cpu_s: float,
              peak_rss_bytes: int | None = None, steady: SteadyRule | None = None) -> Summary:
    """The summary of the rows in ``cols`` (see ``Tally`` for rows that come a group at a time)."""
    tally = Tally(steady)
    tally.add(cols)
    return tally.result(wall_s=wall_s, cpu_s=cpu_s, peak_rss_bytes=peak_rss_bytes)

"""A summary in words: the lines the commands print and the notebooks show, each figure named for what it
counts (bytes received, bytes the store acknowledged), rates in Gbps and MiB/s, amounts in GiB or MiB."""

from __future__ import annotations

import math

from objperf.analysis.summary import PER_GIB_FROM_BYTES, RTT_PERCENTILE
from objperf.core.sanitize import printable
from objperf.core.schema import COPY_OPS
from objperf.core.sizes import format_size

GIB = 1 << 30


def milliseconds(value: float | None, digits: int = 1) -> str:
    """A latency, or ``-`` where none was measured."""
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f} ms"


# A read plan's ops that move no body, as a workload line says what each request did.
BODILESS_WORDS = {"head": "each key's headers (a stat), no body", "delete": "each key deleted once"}


# A keyed op's keys (objperf.core.schema.KEYED_OPS), in words.
KEYS_WORDS = {"LIST": "keys listed", "DELETE_OBJECTS": "keys deleted"}


def bodiless(s: dict) -> bool:
    """Whether a summary's requests were all of ops that move no object's body (a run of HEADs, of LISTs)."""
    return bool(s.get("ops")) and not s.get("directions") and (
        not s.get("bytes") or set(s["ops"]) <= set(KEYS_WORDS))


def documents_words(ops: dict) -> str:
    """What the bytes of a run of keyed ops were."""
    words = [{"LIST": "listing pages"}.get(name, "") for name in ops]
    return " and ".join(word for word in words if word) or "documents"


def keys_text(name: str, o: dict) -> str:
    """A keyed op's keys and their rate (``12,000 keys listed, 6,000/s``); nothing for another op."""
    if "keys" not in o:
        return ""
    return f"{o['keys']:,} {KEYS_WORDS.get(name, 'keys')} ({o['keys_per_s']:,.0f}/s)"


def copies(s: dict) -> bool:
    """Whether a summary's bytes are what the store copied, server-side (a copy run's: no body through objperf)."""
    return not s.get("directions") and bool(set(s.get("ops", {})) & set(COPY_OPS))


def counted_as(s: dict) -> str:
    """What a summary's bytes are, in a word: received (reads), acknowledged (writes), or both; or copied."""
    directions = s.get("directions", {})
    sides = [word for name, word in (("read", "received"), ("write", "acknowledged")) if name in directions]
    if not sides and copies(s):
        return "copied by the store"
    if not sides:  # a scan counts no direction apart
        return "received or acknowledged" if "sent_bytes" in s else "received"
    return " and ".join(sides)


def rate_text(s: dict) -> str:
    """``s``'s throughput in Gbps and MiB/s (a summary or one of its directions)."""
    mib = s.get("mib_per_s", s["gbps"] * 1e9 / 8 / (1 << 20))
    return f"{s['gbps']:.3f} Gbps ({mib:,.1f} MiB/s)"


def amounts_text(s: dict) -> str:
    """The bytes a run counted, as they were counted: received, acknowledged by the store (and sent)."""
    directions = s.get("directions", {})
    parts = []
    if "read" in directions:
        parts.append(f"{amount(directions['read']['bytes'])} received")
    if "write" in directions:
        w = directions["write"]
        parts.append(f"{amount(w['bytes'])} acknowledged by the store ({amount(w.get('sent_bytes', 0))} sent)")
    if not parts and copies(s):
        return f"{amount(s['bytes'])} copied by the store (server-side: none of it through objperf)"
    if not parts:  # a scan counts no direction apart
        sent = f" ({amount(s['sent_bytes'])} of writes sent)" if "sent_bytes" in s else ""
        return f"{amount(s['bytes'])} {counted_as(s)}{sent}"
    return ", ".join(parts)


def plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def amount(nbytes: float) -> str:
    """Bytes as a newcomer reads them: GiB from 1 GiB up, MiB below."""
    return f"{nbytes / GIB:.3f} GiB" if nbytes >= GIB else f"{nbytes / (1 << 20):.1f} MiB"


def format_summary(s: dict, *, title: str = "objperf", workload: dict | None = None) -> str:
    """The summary as the commands print it: a title line, what the run asked for (``workload``, from the
    manifest), then one labelled line per fact."""
    # Error codes, keys and prefixes came from a server or a file: no control byte of theirs reaches a terminal.
    rows = ([("workload", workload_text(workload))] if workload else []) + summary_rows(s)
    rows.append(("in short", one_line(s, workload)))
    return "\n".join([printable(title)] + [f"  {printable(label):<12} {printable(text)}" for label, text in rows])


def one_line(s: dict, workload: dict | None = None) -> str:
    """The run in one line, for logs and CI: ``GET c16 8MiB: 13.8 Gbps (1,645 MiB/s) | 205 req/s | TTFB
    p50/p99 30/65 ms | 0 errors`` (a write's Gbps is what the store acknowledged)."""
    def ms(value: float) -> str:
        return "-" if value is None or math.isnan(value) else f"{value:,.0f}" if value >= 1000 else f"{value:.3g}"

    what = workload_words(workload or {}) or " + ".join(name for name in s.get("directions", {})) or "requests"
    if isinstance(s.get("hosts"), dict) and len(s["hosts"]) > 1:
        what = f"{len(s['hosts'])} hosts × {what}"
    rate = s["requests_per_s"]
    parts = [f"{what}: {rate_text(s)} {counted_as(s)}", f"{rate:,.{0 if rate >= 10 else 1}f} req/s"]
    if bodiless(s):
        parts = [f"{what}: {rate:,.{0 if rate >= 10 else 1}f} req/s"]
        parts += [f"{name + ' ' if len(s['ops']) > 1 else ''}{o['keys_per_s']:,.0f} keys/s" for name, o in
                  s["ops"].items() if "keys" in o]
        parts += [f"{name + ' ' if len(s['ops']) > 1 else ''}latency p50/p99 {ms(o['latency_ms_p50'])}/"
                  f"{ms(o['latency_ms_p99'])} ms" for name, o in s["ops"].items()]
    elif copies(s):
        parts += [f"{name} latency p50/p99 {ms(o['latency_ms_p50'])}/{ms(o['latency_ms_p99'])} ms"
                  for name, o in s["ops"].items() if name in COPY_OPS]
    elif "read" in s.get("directions", {"read": None}):
        parts.append(f"TTFB p50/p99 {ms(s['ttfb_ms_p50'])}/{ms(s['ttfb_ms_p99'])} ms")
    if "open_loop" in s:
        o = s["open_loop"]
        parts.append(f"latency from due p50/p99 {ms(o['latency_ms_p50'])}/{ms(o['latency_ms_p99'])} ms")
    errors = s["error_requests"]
    parts.append(f"{errors:,} error{'s' if errors != 1 else ''}" + (f" ({s['requests']:,} requests)" if errors else ""))
    return " | ".join(parts)


def workload_words(workload: dict) -> str:
    """A workload as a log line names it: ``GET c16 8MiB``, ``PUT c8 64MiB/32MiB`` (object/part), or both."""
    def size(n) -> str:
        return format_size(n).replace(" ", "") if isinstance(n, (int, float)) else "?"

    if isinstance(workload.get("mix"), dict):
        return f"MIX c{workload.get('concurrency', '?')} {size(workload.get('object_size'))}"
    if workload.get("op") == "list":
        return f"LIST c{workload.get('concurrency', '?')} max-keys {workload.get('max_keys', '?')}"
    if workload.get("op") == "delete_objects":
        return f"DELETE_OBJECTS c{workload.get('concurrency', '?')} batch {workload.get('batch', '?')}"
    if workload.get("op") == "copy":
        return f"COPY c{workload.get('concurrency', '?')}"
    read = workload.get("read", workload if "range_size" in workload else None)
    write = workload.get("write", workload if "part_size" in workload else None)
    words = []
    if isinstance(read, dict) and read.get("op") in BODILESS_WORDS:
        words.append(f"{str(read['op']).upper()} c{read.get('concurrency', '?')}")
    elif isinstance(read, dict) and "range_size" in read:
        words.append(f"GET c{read.get('concurrency', '?')} {size(read['range_size'])}")
    if isinstance(write, dict) and "object_size" in write:
        parts = f"/{size(write['part_size'])}" if write.get("part_size", 0) < write["object_size"] else ""
        drawn = write.get("sizes")  # --sizes: each object's size drawn
        shown = drawn if isinstance(drawn, str) else size(write["object_size"])
        words.append(f"PUT c{write.get('concurrency', '?')} {shown}{parts}")
    return " + ".join(words)


def _size(n: int) -> str:
    """A size as sizes read and in bytes, so ``8MB`` taken as 8 MiB (as the AWS CLI reads it) is plain to see."""
    return f"{format_size(n).replace(' ', '')} ({n:,} bytes)"


def workload_text(workload: dict) -> str:
    """What a run asked for, its sizes in bytes too: reads, writes, or both (a mixed run's manifest)."""
    if isinstance(workload.get("mix"), dict):
        shares = ", ".join(f"{op.upper()} {share:.0%}" for op, share in workload["mix"].items())
        return (f"a mix of {shares}, {workload.get('concurrency')} in flight, whole objects of "
                f"{_size(workload.get('object_size', 0))} ({workload.get('objects_seeded', '?')} seeded first)")
    if workload.get("op") == "list":
        delimiter = workload.get("delimiter") or ""
        passes = f", {plural(workload['passes'], 'pass', 'passes')} in all" if workload.get("passes") else ""
        listers = plural(workload.get("concurrency") or 0, "lister", "listers")
        return (f"LISTs: {listers} paging through s3://{workload.get('bucket')}/"
                f"{workload.get('prefix')}, pages of up to {workload.get('max_keys'):,} keys"
                + (f", delimiter {delimiter!r} (common prefixes counted as keys)" if delimiter else "") + passes)
    if workload.get("op") == "delete_objects":
        return (f"DeleteObjects {workload.get('concurrency')} in flight, batches of up to {workload.get('batch'):,} "
                "keys, each key once")
    if workload.get("op") == "copy":
        part = workload.get("part_size", 0)
        return (f"server-side copies of s3://{workload.get('bucket')}/{workload.get('prefix')} to "
                f"s3://{workload.get('to_bucket')}/{workload.get('to_prefix') or ''}, {workload.get('concurrency')} "
                f"in flight: one CopyObject an object up to {_size(part)}, a multipart copy in parts of "
                "it (UploadPartCopy) above")
    parts = []
    read = workload.get("read", workload if "range_size" in workload else None)
    write = workload.get("write", workload if "part_size" in workload else None)
    if read and read.get("op") in BODILESS_WORDS:
        parts.append(f"{str(read['op']).upper()}s {read['concurrency']} in flight, {BODILESS_WORDS[read['op']]}")
    elif read:
        checked = ", each object's checksum asked for (checksum mode)" if read.get("checksum_mode") else ""
        parts.append(f"reads {read['concurrency']} in flight, ranges of {_size(read['range_size'])}, "
                     f"{read['sink']} sink{checked}")
    if write:
        split = f" in parts of {_size(write['part_size'])}" if write["object_size"] > write["part_size"] else ""
        drawn = write.get("sizes")
        if isinstance(drawn, str):
            split = f", those over {format_size(write['part_size']).replace(' ', '')}{split}" if split else ""
            objects = f"objects of sizes {drawn} (seed {write.get('seed')})"
        else:
            objects = f"objects of {_size(write['object_size'])}"
        checksum = write.get("checksum") or "none"
        sent = "" if checksum == "none" else \
            f", each request with its {checksum.upper()} checksum " + ("as a trailer" if write.get("checksum_trailer")
                                                                      else "in a header")
        parts.append(f"writes {write['concurrency']} in flight, {objects}{split}{sent}")
    return "; ".join(parts)


def summary_rows(s: dict) -> list[tuple[str, str]]:
    """The summary as (label, text) lines that read without the README: rates in Gbps, amounts in GiB or
    MiB, each term said in a few words where it appears.  The command line and the notebook both show these."""
    def counts(d: dict) -> str:
        return ", ".join(f"{k}: {v:,}" for k, v in d.items()) or "none"

    cut = f", {s['cut_requests']:,} cut in flight when the run ended" if s.get("cut_requests") else ""
    if bodiless(s):  # HEADs, DELETEs, LISTs: requests and their latency say it all
        moved = f"{amount(s['bytes'])} of {documents_words(s['ops'])}, no object's body" if s.get("bytes") \
            else "no body moved"
        rows = [("requests", f"{s['requests']:,} ({s['error_requests']:,} failed{cut}) in {s['wall_s']:.2f} s, "
                             f"{s['requests_per_s']:.1f} requests/s, {moved}")]
    else:
        rows = [("requests", f"{s['requests']:,} ({s['error_requests']:,} failed{cut}), {amounts_text(s)} "
                             f"in {s['wall_s']:.2f} s"),
                ("throughput", f"{rate_text(s)} {counted_as(s)}, {s['requests_per_s']:.1f} requests/s"
                               + (f"; {s['sent_gbps']:.3f} Gbps sent" if "sent_gbps" in s else ""))]
    ops = s.get("ops", {})
    for name, o in ops.items():
        failed = f"{o['failed']:,} failed" + (f", {o['cut']:,} cut" if o.get("cut") else "")
        share = f" {o['requests'] / s['requests']:.1%} of all," if len(ops) > 1 and s.get("requests") else ""
        keys = f"; {keys_text(name, o)}" if "keys" in o else ""
        copied = f", {amount(o['bytes'])} copied ({o['mib_per_s']:,.1f} MiB/s)" if "bytes" in o else ""
        rows.append((name, f"{o['requests']:,} requests ({failed}),{share} {o['requests_per_s']:,.1f}/s{copied}{keys}; "
                           f"latency p50 {milliseconds(o['latency_ms_p50'], 2)}, p90 "
                           f"{milliseconds(o['latency_ms_p90'], 2)}, p99 {milliseconds(o['latency_ms_p99'], 2)}"))
    if isinstance(s.get("steady"), dict):
        rows.append(("steady", steady_text(s["steady"])))
    if s.get("until_steady") in UNTIL_STEADY:
        rows.append(("until steady", UNTIL_STEADY[s["until_steady"]]))
    if set(s.get("directions", {})) != {"read"}:
        for name, d in s.get("directions", {}).items():
            cut = f", {d['cut']:,} cut" if d.get("cut") else ""
            sent = f", {d['sent_gbps']:.3f} Gbps sent" if "sent_gbps" in d else ""
            latency = f"latency p50 {milliseconds(d['latency_ms_p50'])}, p99 {milliseconds(d['latency_ms_p99'])}"
            rows.append((name, f"{rate_text(d)} {counted_as({'directions': {name: d}})}{sent}, {d['requests']:,} "
                               f"requests ({d['failed']:,} failed{cut}), {latency}"))
            if name == "write" and d["requests"] and not d["bytes"]:
                rows.append(("", "no part acknowledged: " + (f"{d['failed']:,} refused or failed (their bytes are "
                                 "not counted), " if d["failed"] else "") + f"{amount(d.get('sent_bytes', 0))} sent "
                                 "in parts the run's end cut"))
    if "hosts" in s:
        rows.append(("hosts", f"{len(s['hosts'])} hosts, all running together for {s['common_window_s']:.2f} s: the "
                              "throughput above counts that window only; the last host started "
                              f"{s['start_spread_s'] * 1000:.0f} ms after the first"))
        for label, h in s["hosts"].items():
            rows.append(("host", f"{label}: {h['status']}, {h['window_gbps']:.3f} Gbps in the common window "
                                 f"({h['gbps']:.3f} over its own run), {h['requests']:,} requests "
                                 f"({h['failed']:,} failed)" + (f"; {h['lost']}" if h.get("lost") else "")))
    if s.get("scanned"):
        rows.append(("scanned", "rows analysed where they lie, not loaded: percentiles from mergeable sketches "
                                "(within 0.5 %); no client CPU or round trip in rows"))
    if s.get("pooled_runs"):
        rows.append(("pooled", f"{s['pooled_runs']} separate runs counted as one: their requests together, over "
                               "the time from the first start to the last end (--by run_id gives a line each)"))
    if s.get("ranged_gets_answered_200"):
        rows.append(("ranges", f"{s['ranged_gets_answered_200']:,} GETs of part of an object were answered 200 OK, not "
                               "206 Partial Content as S3 answers, each with the range's bytes: counted as they came"))
    if s.get("listing_capped"):
        capped = s["listing_capped"]
        rows.append(("listing", f"cut at {capped['keys']:,} keys: more objects are under "
                                f"{', '.join(capped['prefixes'])} (name them with --keys, or a narrower prefix)"))
    if s.get("skipped_objects"):
        rows.append(("skipped", f"{s['skipped_objects']:,} empty objects or directory markers (keys ending in /) "
                                "under the prefix, not read"))
    if "passes" in s:
        rows.append(("passes", f"{plural(s['passes'], 'pass', 'passes')} through the listing completed, each from "
                               "its first page to its last"))
    if "keys_deleted" in s:
        refused = s.get("keys_refused", 0)
        rows.append(("keys", f"{s['keys_deleted']:,} deleted, as the batches' answers said"
                             + (f"; {refused:,} refused (an <Error> each, their batches failed rows)" if refused
                                else "")))
    if s.get("broken_answers"):
        rows.append(("broken", s["broken_answers"]))
    if "objects_written" in s:
        aborted = "; every upload not completed was aborted" if not s.get("uploads_left_open") else \
            f"; {len(s['uploads_left_open']):,} upload(s) the store did not abort, below"
        unstarted = f", {s['objects_unstarted']:,} opened and aborted before any part was sent" \
            if s.get("objects_unstarted") else ""
        rows.append(("objects", f"{s['objects_written']:,} uploads completed, {s['objects_failed']:,} failed, "
                                f"{s['objects_cut']:,} cut short when the run ended{unstarted}{aborted}"))
    if "objects_copied" in s:
        rate = s["objects_copied"] / s["wall_s"] if s.get("wall_s") else float("nan")
        aborted = "; every multipart copy not completed was aborted" if not s.get("uploads_left_open") else \
            f"; {len(s['uploads_left_open']):,} upload(s) the store did not abort, below"
        rows.append(("copies", f"{s['objects_copied']:,} objects copied ({rate:,.1f}/s) to {s.get('copied_to', '?')}, "
                               f"{s.get('objects_failed', 0):,} failed, {s.get('objects_cut', 0):,} cut short when the "
                               f"run ended{aborted}"))
    if "read" in s.get("directions", {"read": None}) and not bodiless(s) and not copies(s):
        rtt = s.get("rtt_ms", float("nan"))
        rows.append(("TTFB", f"time to first byte p50 {s['ttfb_ms_p50']:.2f} ms, p90 {s['ttfb_ms_p90']:.2f} ms, "
                             f"p99 {s['ttfb_ms_p99']:.2f} ms"
                             + ("" if math.isnan(rtt) else f"; network round trip {rtt:.3f} ms ({rtt_source(s)}), "
                                f"so p50 TTFB is {s['ttfb_over_rtt']:.0f}× it")))
    if s.get("open_loop"):
        o = s["open_loop"]
        rows.append(("open loop", f"{o['requests']:,} requests started at {o['rate_achieved']:.1f}/s on a schedule; "
                                  f"latency from when each was due p50 {o['latency_ms_p50']:.2f} ms, p99 "
                                  f"{o['latency_ms_p99']:.2f} ms (service time alone p50 {o['service_ms_p50']:.2f}, "
                                  f"p99 {o['service_ms_p99']:.2f}); p99 start {o['late_start_ms_p99']:.2f} ms late"))
    if s.get("tls"):
        rows.append(("TLS", tls_text(s["tls"])))
    if s.get("kernel_tls"):
        rows.append(("kernel TLS", printable(s["kernel_tls"])))
    for server, v in s.get("servers", {}).items():
        ttfb = "" if math.isnan(v["ttfb_ms_p50"]) else f", TTFB p50 {v['ttfb_ms_p50']:.2f} ms"  # NaN: no GETs
        rows.append(("server", f"{server}: {v['gbps']:.3f} Gbps, {v['requests']:,} requests "
                               f"({v['failed']:,} failed){ttfb}"))
    rows += [
        ("HTTP status", f"requests per status code: {counts(s['status_counts'])}"),
        ("S3 errors", f"error codes the store sent: {counts(s['s3_error_counts'])}"),
        ("curl errors", f"requests with no complete answer, by libcurl code: {counts(s['curl_error_counts'])}"),
    ]
    if not math.isnan(s["client_cpu_s"]):  # a part of a saved run has no CPU of its own
        rows.append(("client CPU", f"objperf used {s['client_cpu_s']:.2f} CPU-seconds"
                     + (f", {s['client_cpu_s_per_gib']:.3f} per GiB {counted_as(s)}" if s["bytes"] >= PER_GIB_FROM_BYTES
                        else "")
                     + (f"; peak memory {s['peak_rss_mib']:.0f} MiB" if s.get("peak_rss_mib") else "")))
    for provider, c in s.get("cost", {}).items():
        per_tib = "; in this pattern " + ", ".join(
            f"${c[f'usd_per_tib_{d}']:,.2f} per TiB {d}" for d in ("read", "written") if c[f"usd_per_tib_{d}"] == c[
                f"usd_per_tib_{d}"])
        egress = amount(c["egress_gb"] * GIB)  # providers bill "GB" of 2^30 bytes: a GiB
        rows.append((f"cost {provider}", f"${c['usd']:,.4f} for this run ({c['requests_class_b']:,} class B and "
                                         f"{c['requests_class_a']:,} class A requests, {egress} out)"
                                         f"{per_tib}; {c['prices']}"))
    if s.get("http_asked_for") == "2" and s.get("connections_opened"):
        over = sum(n for v, n in s.get("http_version_counts", {}).items() if v == "2")
        rows.append(("connections", f"{s['connections_opened']:,} opened; {over:,} requests went over HTTP/2, "
                                    f"{over / s['connections_opened']:.1f} streams a connection"))
    if s.get("http_asked_for") and set(s.get("http_version_counts", {})) - {s["http_asked_for"]}:
        answered = ", ".join(f"HTTP/{v}: {n:,}" for v, n in s["http_version_counts"].items())
        rows.append(("HTTP version", f"asked for HTTP/{s['http_asked_for']}, the server answered {answered}"))
    if "verified" in s:
        rows.append(("verified", s["verified"]))
    if "cleaned_up" in s:
        cleaned = s["cleaned_up"]
        rows.append(("cleaned up", f"{cleaned:,} object(s) this run wrote deleted (--cleanup)"
                     if isinstance(cleaned, int) else str(cleaned)))
    if s.get("uploads_left_open"):
        rows.append(("left open", f"{len(s['uploads_left_open'])} multipart upload(s) the store did not abort: "
                                  + "; ".join(s["uploads_left_open"])))
    if s.get("rows_unwritten"):
        rows.append(("dataset", f"{s['rows_unwritten']:,} rows not written to the dataset (counted above)"))
    if s.get("rows_dropped"):
        rows.append(("rows", f"{s['rows_dropped']:,} rows dropped: the engine stopped with nobody taking them"))
    if s.get("receive_buffers"):
        rows.append(("buffers", receive_buffers_text(s["receive_buffers"])))
    if s.get("checksums"):
        rows.append(("checksums", checksums_text(s["checksums"])))
    if s.get("error"):
        rows.append(("failed", s["error"]))
    return rows + evidence_rows(s.get("evidence", {}))


def checksums_text(c: dict) -> str:
    """Checksum mode's answers, in words."""
    said = [f"{c['verified']:,} whole-object reads matched the CRC-32 the store named"]
    if c["mismatched"]:
        said.append(f"{c['mismatched']:,} did not (failed)")
    if c["unchecked"]:
        said.append(f"{c['unchecked']:,} answers named a checksum objperf cannot check (a range's, a composite of "
                    "parts, another algorithm)")
    if c["absent"]:
        said.append(f"{c['absent']:,} named none")
    return "; ".join(said)


def receive_buffers_text(b: dict) -> str:
    """The slots' receive buffers as the run ended, in words."""
    if b["least"] == b["most"]:
        return f"libcurl's receive buffer was {format_size(b['most'])} in every slot as the run ended"
    return (f"libcurl's receive buffers were {format_size(b['least'])} to {format_size(b['most'])} a slot as the "
            f"run ended (median {format_size(b['median'])}), each sized to what its reads delivered")


UNTIL_STEADY = {"steady": "the run ended as soon as its throughput held steady (--until-steady)",
                "bound": "its throughput had not held steady when its bound (--duration, --requests, --bytes, or "
                         "--until-steady's own cap) ended it"}


def steady_text(t: dict) -> str:
    """Where the throughput held, and the warm-up before it; or that it never did (``objperf.analysis.steady``)."""
    rule = (f"{t['samples']} samples of {t['sample_s']:.2f} s in a row ({t['window_s']:g} s) each within "
            f"±{t['tolerance_pct']:g} % of their mean")
    if not t.get("reached"):
        return f"no steady state reached in {t.get('measured_s', 0.0):.2f} s: no {rule}"
    rate = rate_text(t) if t.get("by") == "bytes" else f"{t['requests_per_s']:,.1f} requests/s"
    warmup = f"the first {t['warmup_s']:.2f} s were warm-up, left out of it" if t["warmup_s"] > 0 else \
        "held from the first sample: no warm-up left out"
    return (f"{rate} from {t['start_s']:.2f} s to {t['end_s']:.2f} s into the run, its {rule} (the farthest "
            f"{t['spread_pct']:.1f} % off); {warmup}")


def rtt_source(s: dict) -> str:
    """What the round trip was measured from, in words."""
    n = s.get("rtt_connects")
    text = f"the {RTT_PERCENTILE}th percentile of {n:,} TCP connects" if n else "from TCP connects"
    if n and n < 5:
        text += ": too few to trust"
    if s.get("rtt_loopback"):
        text += "; they ended at a loopback address, a local server or relay, not the store's distance"
    return text


def tls_text(t: dict) -> str:
    def ms(value: float) -> str:
        return "-" if math.isnan(value) else f"{value:.2f} ms"

    return (f"{t['handshakes']:,} handshakes on new connections, {t['resumed']:,} resuming a session; p50 "
            f"{ms(t['full_ms_p50'])} full, {ms(t['resumed_ms_p50'])} resumed; "
            f"{t['share_of_request_time'] * 100:.1f}% of the requests' time")


def evidence_rows(e: dict) -> list[tuple[str, str]]:
    """The NIC and CPU lines of a summary: does what the machine saw back what objperf counted?"""
    rows = []
    if "nic" in e:
        compared = "; ".join(f"{e[f'nic_vs_app_{d}_pct']:+.0f}% vs the bytes objperf {verb}"
                             for d, verb in (("read", "received"), ("write", "sent")) if f"nic_vs_app_{d}_pct" in e)
        rows.append((f"NIC {e['nic']}", f"the network interface received {amount(e['nic_rx_bytes'])}, sent "
                                        f"{amount(e['nic_tx_bytes'])}" + (f" ({compared}" if compared else "")
                     + ((": loopback also carries the local server's own traffic" if e["nic"] == "lo" else "")
                        + ")" if compared else "")))
    if "client_cores_busy" in e:
        cores = ", ".join(f"{b:.0f}%" for b in e.get("cores_busy_pct", []))
        rows.append(("client", f"objperf kept {e['client_cores_busy']:.2f} cores busy on average"
                               + (f"; each core of the machine was busy {cores} (all processes)" if cores else "")))
        if e.get("client_cpu_bound"):
            rows.append(("WARNING", "the client looks CPU-bound: the ceiling measured may be the client's, not the "
                                    "store's (add --threads or a bigger client)"))
    return rows

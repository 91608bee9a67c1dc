"""The bench's op-rate table (``objperf bench --op ops``): objperf's rate for each op a store serves, small
objects on the bench's SeaweedFS, one command a row as a user runs it, each summary held to what was asked
(every request answered, every key counted): PUT, GET and HEAD of 4 KiB objects, LIST pages and their keys,
CopyObject, DELETE one key a request, and DeleteObjects batches."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from objperf.peers.clients import measure
from objperf.peers.tables import median

OBJECT_SIZE = 4 << 10


@dataclass
class OpRun:
    """One op's run: what was asked and what its summary said (requests/s, latency, keys/s where keyed)."""

    op: str
    requests: int = 0
    per_s: float = float("nan")
    p50_ms: float = float("nan")
    p99_ms: float = float("nan")
    keys_per_s: float | None = None
    cpu_s: float = float("nan")
    problem: str = ""


def _figures(op: str, summary: dict, wanted: int, cpu_s: float) -> OpRun:
    """An op's figures from a run's summary: its own line where the summary gives ops apart (HEAD, LIST …),
    else the run's (GET, PUT); a run that did not answer every request it was asked is a problem, not a rate."""
    mine = summary.get("ops", {}).get(op)
    if mine is None:
        direction = next(iter(summary.get("directions", {}).values()), {})
        mine = {"requests": summary.get("requests", 0), "failed": summary.get("error_requests", 0),
                "requests_per_s": summary.get("requests_per_s", float("nan")),
                "latency_ms_p50": direction.get("latency_ms_p50", float("nan")),
                "latency_ms_p99": direction.get("latency_ms_p99", float("nan"))}
    run = OpRun(op, mine["requests"], mine["requests_per_s"], mine["latency_ms_p50"], mine["latency_ms_p99"],
                mine.get("keys_per_s"), cpu_s)
    if mine.get("failed") or mine["requests"] < wanted:
        run.problem = f"{mine.get('failed', 0)} of {mine['requests']} failed, {wanted} asked"
    return run


def bench_ops(endpoint: str, env: dict, bucket: str, *, objects: int = 2000, concurrency: int = 16,
              repeat: int = 1, say: Callable[[str], None] | None = None) -> str:
    """Each op ``repeat`` times over ``objects`` objects of 4 KiB put afresh under a prefix of the round's own;
    the table of medians."""
    runs: dict[str, list[OpRun]] = {}
    tell = say or (lambda text: print(text, file=sys.stderr, flush=True))
    for _ in range(repeat):
        prefix = f"s3://{bucket}/ops-{uuid.uuid4().hex[:8]}/"
        half = objects // 2

        def objperf(op: str, wanted: int, *args: str) -> None:
            done = measure([sys.executable, "-m", "objperf", *args, "--endpoint", endpoint, "--no-save", "--json"],
                           env=env)
            if not done.ok:
                run = OpRun(op, problem=done.outcome)
            else:
                run = _figures(op, json.loads(done.detail), wanted, done.cpu_s)
            runs.setdefault(op, []).append(run)
            tell(f"ops round {len(runs[op])}/{repeat}  {op:15} {run.per_s:9,.0f} req/s  "
                 + (run.problem or f"p50 {run.p50_ms:.2f} ms"))

        c = str(concurrency)
        objperf("PUT", objects, "put", prefix, "--object-size", str(OBJECT_SIZE), "--keys", str(objects),
                "-n", str(objects), "-c", c)
        objperf("GET", objects, "fetch", prefix, "--range-size", str(OBJECT_SIZE), "-c", c, "--sink", "discard")
        objperf("HEAD", objects, "fetch", prefix, "--op", "head", "-c", c)
        objperf("LIST", 10, "list", prefix, "--passes", str(max(1, 10 * 1000 // objects)), "-c", "1")
        objperf("COPY", objects, "copy", prefix, "--to", f"s3://{bucket}/copies-{uuid.uuid4().hex[:8]}/", "-c", c,
                "--cleanup")
        objperf("DELETE", half, "delete", prefix, "--keys", str(half), "-c", c)
        objperf("DELETE_OBJECTS", -(-(objects - half) // 100), "delete", prefix, "--batch", "100", "-c", "2")
    header = (f"{'op':15} {'requests/s':>10} {'keys/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'CPU-s':>6} {'runs ok':>7}")
    lines = [f"objperf bench ops: {objects:,} objects of 4 KiB on the local SeaweedFS, {concurrency} in flight "
             "(LIST one lister; DELETE the first half, one key a request; DeleteObjects the rest in batches of 100, "
             f"two at a time), median of {repeat} round(s); each row one objperf command, its summary's figures for "
             "its op; CPU-s the whole process's", header,
             "-" * len(header)]
    for op, mine in runs.items():
        good = [r for r in mine if not r.problem]
        if not good:
            lines.append(f"{op:15} every run failed: {mine[-1].problem}")
            continue
        keys = [r.keys_per_s for r in good if r.keys_per_s is not None]
        lines.append(f"{op:15} {median([r.per_s for r in good]):10,.0f} "
                     + (f"{median(keys):9,.0f}" if keys else f"{'-':>9}")
                     + f" {median([r.p50_ms for r in good]):8.2f} {median([r.p99_ms for r in good]):8.2f}"
                     f" {median([r.cpu_s for r in good]):6.2f} {len(good)}/{len(mine):<5}")
    lines += [f"  {r.op} run: {r.problem}" for mine in runs.values() for r in mine if r.problem]
    return "\n".join(lines)

"""The bench's tables: each client's medians over its rounds, ratios against a reference client, and the
round-by-round ratios that show how far one table can be trusted."""

from __future__ import annotations

import statistics

from objperf.peers.clients import Measured

GIB = 1 << 30
SMALL_SIZE = 1 << 20  # each client's own fixed cost: the same transfer of a 1 MiB object


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def like_for_like_curl(name: str, rows: dict) -> str:
    """The curl row a client's CPU is set against, on the same server: a one-stream row against curl's
    one GET, the others against curl making the same ranged GETs as many at a time (curl --parallel)."""
    server = " (nginx)" if "nginx" in name else ""
    one_stream = "curl" + server
    if name == one_stream or name.removesuffix(server).endswith(" 1x"):
        return one_stream
    return next((n for n in rows if rows[n] and n.startswith("curl ") and n.endswith(server)
                 and n.removesuffix(server).endswith("x")), one_stream)


ROW_CLIENTS = ("objperf", "s5cmd", "boto3", "aws crt", "obstore", "s3torchconnector", "curl")


def client_of(row: str) -> str:
    """The client a bench row is a run of: ``objperf ram (nginx)`` is objperf's, ``curl 16x h2`` curl's."""
    return next((client for client in ROW_CLIENTS if row.startswith(client)), row)


def row_versions(names) -> dict[str, str]:
    """Every row's client's version, each client asked once."""
    from objperf.peers.clients import version_of

    asked: dict[str, str] = {}
    for client in {client_of(name) for name in names}:
        try:
            asked[client] = version_of(client)
        except (KeyError, OSError, TypeError):  # not a client it knows, or one that is not installed
            asked[client] = "?"
    return {name: asked[client_of(name)] for name in names}


def same_server(a: str, b: str) -> bool:
    """Whether two rows ran against the same server: nginx's rows say so in their names."""
    return ("nginx" in a) == ("nginx" in b)


def best_peers(rows: dict) -> dict[str, str]:
    """Per row, the fastest peer (by median Gbps) on the same server: nginx's rows against nginx's peers."""
    best = {}
    for name in rows:
        peers = {n: r["gbps"] for n, r in rows.items() if r and not n.startswith("objperf") and same_server(n, name)}
        if peers:
            best[name] = max(peers, key=peers.get)
    return best


def outcomes_line(name: str, runs: list[Measured]) -> str | None:
    """The runs of a row that were not plainly ok, one line: which crashed on exit, which failed and why."""
    odd = [f"run {i + 1} {m.outcome}" for i, m in enumerate(runs) if m.outcome != "ok"]
    return f"  {name}: {'; '.join(odd)}" if odd else None


def render_table(title: str, big: dict[str, list[Measured]], small: dict[str, list[Measured]], size: int, *,
                 base: str, cpu_base: str, server: str = "local SeaweedFS",
                 versions: dict[str, str] | None = None) -> str:
    versions = row_versions(big) if versions is None else versions
    rows = {}
    for name, runs in big.items():
        good = [m for m in runs if m.ok]
        if not good:
            rows[name] = None
            continue
        fixed = median([m.cpu_s for m in small[name] if m.ok])
        cpu = median([m.cpu_s for m in good])
        in_run = [m.in_run_cpu_gib for m in good if m.in_run_cpu_gib is not None]
        in_run_gbps = [m.in_run_gbps for m in good if m.in_run_gbps is not None]
        server_cpu = [m.server_cpu_s for m in good if m.server_cpu_s is not None]
        private = [m.peak_private_mib for m in good if m.peak_private_mib is not None]
        start_up = median([m.wall_s for m in small[name] if m.ok])
        rows[name] = {
            "gbps": median([size * 8 / m.wall_s / 1e9 for m in good]),
            "running_gbps": median([(size - SMALL_SIZE) * 8 / max(m.wall_s - start_up, 1e-9) / 1e9 for m in good]),
            "server_gib": median(server_cpu) / (size / GIB) if server_cpu else None,
            "cpu_gib": cpu / (size / GIB),
            "marginal_gib": max(cpu - fixed, 0.0) / (size / GIB),
            "in_run": median(in_run) if in_run else None,
            "in_run_gbps": median(in_run_gbps) if in_run_gbps else None,
            "rss": median([m.peak_rss_mib for m in good]),
            "private": median(private) if private else None,
            "runs": f"{len(good)}/{len(runs)}",
        }
    def reference(name: str, field: str, wanted: str) -> float | None:
        if wanted == "best peer":  # the best of the peers on the row's own server
            values = [r[field] for n, r in rows.items() if r and not n.startswith("objperf") and same_server(n, name)]
            return (max(values) if field == "gbps" else min(values)) if values else None
        if wanted == "curl":
            key = like_for_like_curl(name, rows)
        else:
            key = f"{wanted} (nginx)" if "nginx" in name and f"{wanted} (nginx)" in rows else wanted
        return rows[key][field] if rows.get(key) else None

    def ratio(name: str, field: str, wanted: str) -> str:
        ref = reference(name, field, wanted)
        return f"{rows[name][field] / ref:.2f}x" if ref else "-"

    best = best_peers(rows)

    def against_best(name: str) -> str:
        peer = rows.get(best.get(name, ""))
        if not peer:
            return f"{'-':>23}"
        return f"{rows[name]['gbps'] / peer['gbps']:11.2f}x {rows[name]['cpu_gib'] / peer['cpu_gib']:10.2f}x"

    header = (f"{'client':24} {'version':>10} {'Gbps':>6} {'in-run':>6} {'running':>7} {'CPU-s/GiB':>9} "
              f"{'marginal':>8} {'in-run':>6} {'server':>6} {'peak RSS':>9} {'private':>8} {'ok':>4}  "
              f"{'Gbps vs ' + base:>18} {'marginal CPU vs ' + cpu_base:>26}  {'vs best peer: Gbps, CPU':>23}")
    lines = [f"objperf bench {title}: {size / GIB:g} GiB per run, {server}, median of runs; marginal = "
             f"CPU-s/GiB less the client's own cost for a 1 MiB object; in-run = objperf's own count during "
             f"the transfer (Gbps and CPU-s/GiB), not counting its start-up; running = Gbps once started, "
             f"from wall time less the client's own 1 MiB run; server = the server's CPU-s per GiB served to "
             f"the client; private = the most anonymous memory (RssAnon) seen in the client: its RSS without "
             f"the pages of library files, which every process mapping them shares"
             + ("; CPU against curl like for like: a one-stream row against curl's one GET, the others against "
                "curl doing the same ranged GETs as many at a time (curl --parallel)" if cpu_base == "curl" else "")
             + "; vs best peer = the row's Gbps and CPU-s/GiB over those of the fastest peer on its server",
             header, "-" * len(header)]
    odd = []
    for name, row in rows.items():
        if (line := outcomes_line(name, big[name])) is not None:
            odd.append(line)
        if row is None:
            lines.append(f"{name:24} {versions.get(name, '?')[:10]:>10} every run {big[name][-1].outcome}")
            continue
        in_run = f"{row['in_run']:6.3f}" if row["in_run"] is not None else f"{'-':>6}"
        in_run_gbps = f"{row['in_run_gbps']:6.2f}" if row["in_run_gbps"] is not None else f"{'-':>6}"
        server = f"{row['server_gib']:6.3f}" if row["server_gib"] is not None else f"{'-':>6}"
        private = f"{row['private']:6.0f}Mi" if row["private"] is not None else f"{'-':>8}"
        lines.append(f"{name:24} {versions.get(name, '?')[:10]:>10} {row['gbps']:6.2f} {in_run_gbps} "
                     f"{row['running_gbps']:7.2f} {row['cpu_gib']:9.3f} "
                     f"{row['marginal_gib']:8.3f} {in_run} {server} "
                     f"{row['rss']:7.0f}Mi {private} {row['runs']:>4}  {ratio(name, 'gbps', base):>18} "
                     f"{ratio(name, 'marginal_gib', cpu_base):>26}  {against_best(name)}")
    if best:
        lines.append("best peer: " + ", ".join(sorted(set(best.values()))))
    if odd:
        lines += ["runs that were not plainly ok:", *odd]
    lines += round_ratios(big, base)
    return "\n".join(lines)


def round_ratios(big: dict[str, list[Measured]], base: str) -> list[str]:
    """objperf's Gbps over the reference's, round by round: how far one table can be trusted.  Against the best
    peer, each row is set against the peers on its own server; a named reference runs on SeaweedFS only."""
    lines = []
    for name, runs in big.items():
        if base == "best peer":
            reference = [n for n in big if not n.startswith("objperf") and same_server(n, name)]
        else:
            reference = [base] if "nginx" not in name and base in big else []
        if not name.startswith("objperf") or not reference:
            continue
        ratios = []
        for i, mine in enumerate(runs):
            theirs = [big[peer][i] for peer in reference if i < len(big[peer]) and big[peer][i].ok]
            if mine.ok and theirs:
                ratios.append(min(m.wall_s for m in theirs) / mine.wall_s)  # same bytes: Gbps ratio
        if ratios:
            lines.append(f"{name} Gbps / {base}'s, round by round: {' '.join(f'{r:.2f}' for r in ratios)} "
                         f"(median {median(ratios):.2f})")
    return lines


def marginal_cpu_per_gib(big: dict, small: dict, name: str, size: int) -> float:
    """A row's median CPU-seconds per GiB with its fixed start-up cost (the small object's run) taken out."""
    good = [m for m in big.get(name, []) if m.ok]
    fixed = median([m.cpu_s for m in small.get(name, []) if m.ok] or [0.0])
    return max(median([m.cpu_s for m in good]) - fixed, 0.0) / (size / GIB) if good else float("nan")


def memcpy_seconds_per_gib(chunk: int = 128 << 10, region: int = 64 << 20, total: int = 1 << 30) -> float:
    """CPU-seconds one plain copy of a GiB costs on this machine now: ``chunk``-sized copies of one hot source
    (a libcurl receive buffer) into a ``region`` of the RAM sink's own pages, as the sink does.  The best of
    three: the yardstick of the copy, not of what else the machine was doing."""
    import time

    import numpy as np

    from objperf._engine.core import page_array

    target, source = page_array(region), np.ones(chunk, np.uint8)
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for at in range(0, total, chunk):
            np.copyto(target[at % region:at % region + chunk], source)
        best = min(best, time.process_time() - started)
    return best / (total / GIB)


def copy_line(big: dict, small: dict, size: int, *, ram: str, discard: str) -> str:
    """What the RAM sink's copy out of libcurl's buffer costs beyond the discard sink, against one memcpy.  The
    copy is what the two sinks' runs differ by in objperf's own CPU count, from its clock's start to its end;
    the whole processes differ by more, as the RAM sink also faults its slot buffers in before that start, a
    cost of the buffers' size paid once a run, not of the GiB moved."""
    def in_run(name: str) -> float:
        counts = [m.in_run_cpu_gib for m in big.get(name, []) if m.ok and m.in_run_cpu_gib is not None]
        return median(counts) if counts else float("nan")

    extra = in_run(ram) - in_run(discard)
    whole = marginal_cpu_per_gib(big, small, ram, size) - marginal_cpu_per_gib(big, small, discard, size)
    one = memcpy_seconds_per_gib()
    return (f"RAM sink's copy: {ram} spends {extra:.3f} CPU-s/GiB beyond {discard} in the run; one memcpy of a "
            f"GiB costs {one:.3f} s here (128 KiB copies into the sink's pages): {extra / one:.2f}x\n"
            f"  (whole processes: {whole:.3f} CPU-s/GiB beyond, with the slot buffers faulted in before the run)")

"""``objperf bench`` — objperf against its peers reading and writing
the same object on the same local SeaweedFS in the same run, interleaved,
median of N repetitions (``objperf.peers.bench`` measures; this command parses
its options, runs the rounds and prints the tables)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from objperf.peers.analysis_bench import bench_analysis
from objperf.peers.bench import (
    BIG_KEY,
    BUCKET,
    SMALL_KEY,
    Bench,
    bench_cluster,
    bench_scale,
)
from objperf.peers.clients import Measured
from objperf.peers.ops_bench import bench_ops
from objperf.peers.sink_writes import NGINX, SINK_OBJECT, SinkWrites
from objperf.peers.tables import GIB, SMALL_SIZE, copy_line, marginal_cpu_per_gib, median, render_table


def build_parser():
    from objperf.commands.parser import OneLineParser, word_type
    from objperf.options.kinds import COUNT, SIZE

    positive_int, size_arg = word_type(COUNT.parse), word_type(SIZE.parse)

    parser = OneLineParser(prog="objperf bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--op", choices=("get", "tls", "put", "ops", "scale", "analysis", "cluster", "all"),
                        default="all",
                        help="reads, reads and writes over TLS (nginx, with HTTP/2; SeaweedFS's HTTPS gateway), "
                             "writes (SeaweedFS, and nginx as a PUT sink), each op's rate on small objects (PUT, "
                             "GET, HEAD, LIST, COPY, DELETE, DeleteObjects), 4096 in flight and 1 KiB requests "
                             "(nginx), loading and analysing 10 million rows, one worker against two (dask "
                             "LocalCluster), or all (default)")
    parser.add_argument("--rows", type=positive_int, default=10_000_000, help="rows for --op analysis")
    parser.add_argument("--size", type=size_arg, default=GIB, help="object size (default 1GiB)")
    parser.add_argument("--repeat", type=positive_int, default=3, help="repetitions per client (default 3)")
    parser.add_argument("--concurrency", type=positive_int, default=16, help="concurrency for every client")
    parser.add_argument("--part-size", type=size_arg, default=8 << 20,
                        help="range (reads) and part (writes) size for every client (default 8MiB)")
    parser.add_argument("--passes", "--tls-passes", dest="passes", type=positive_int, default=4,
                        help="times each client reads the object from nginx, plain and over TLS (default 4: a 1 "
                             "GiB object makes 4 GiB per run, where start-up weighs as in a run of seconds)")
    parser.add_argument("--write-part-size", type=size_arg, default=32 << 20,
                        help="part size for writes (default 32MiB)")
    parser.add_argument("--sink-object-size", type=size_arg, default=SINK_OBJECT,
                        help="the writes to nginx as a PUT sink go up as objects of this size, one PUT each, "
                             "--size in all (default 16MiB; at most --write-part-size)")
    parser.add_argument("--markdown", metavar="FILE", default=None,
                        help="also write the run as a page (docs/benchmark.md): its date, the machine, every "
                             "version and the tables")
    return parser


def main(argv: list[str] | None = None) -> int:
    from objperf.commands.common import run_main

    args = build_parser().parse_args(argv)
    if args.markdown and not Path(args.markdown).resolve().parent.is_dir():
        print(f"objperf bench: --markdown {args.markdown}: no such directory", file=sys.stderr)
        return 2
    from objperf.core.progress import telling

    def say(text: str) -> None:
        print(f"objperf bench: {text}", file=sys.stderr, flush=True)

    def bench() -> int:
        with telling(say):
            return _bench(args, argv)

    return run_main("objperf bench", bench)


def _rounds(clients: dict, run_big, run_small, repeat: int, size: int, label: str, server_cpu_s):
    big: dict[str, list[Measured]] = {name: [] for name in clients}
    small: dict[str, list[Measured]] = {name: [] for name in clients}
    for rep in range(repeat):
        for name, client in clients.items():  # interleaved: every client once per round
            before = server_cpu_s()
            big[name].append(run_big(client, rep))
            big[name][-1].server_cpu_s = server_cpu_s() - before
            small[name].append(run_small(client))
            last = big[name][-1]
            print(f"{label} round {rep + 1}/{repeat}  {name:24} {size * 8 / last.wall_s / 1e9:7.2f} Gbps "
                  f"{last.cpu_s:6.2f} CPU-s  {last.outcome}",
                  file=sys.stderr, flush=True)
    return big, small


def h2_line(big: dict, small: dict, size: int, curl: str) -> str:
    """objperf over HTTP/2 against curl over HTTP/2: marginal CPU per GiB and throughput."""
    def marginal(name: str) -> float:
        return marginal_cpu_per_gib(big, small, name, size)

    def gbps(name: str) -> float:
        good = [m for m in big.get(name, []) if m.ok]
        return median([size * 8 / m.wall_s / 1e9 for m in good]) if good else float("nan")

    mine, theirs = "objperf discard h2", f"{curl} h2"
    return (f"HTTP/2: {mine} {gbps(mine):.2f} Gbps, {marginal(mine):.3f} marginal CPU-s/GiB; {theirs} "
            f"{gbps(theirs):.2f} Gbps, {marginal(theirs):.3f}: {gbps(mine) / gbps(theirs):.2f}x the Gbps at "
            f"{marginal(mine) / marginal(theirs):.2f}x the CPU")


def best_peer_line(big: dict, size: int) -> str:
    """objperf's fastest row against the fastest peer's, by median Gbps."""
    gbps = {name: median([size * 8 / m.wall_s / 1e9 for m in runs if m.ok]) for name, runs in big.items()
            if any(m.ok for m in runs)}
    mine = {n: g for n, g in gbps.items() if n.startswith("objperf")}
    theirs = {n: g for n, g in gbps.items() if not n.startswith("objperf")}
    if not mine or not theirs:
        return "no objperf or no peer row finished"
    best_mine, best_peer = max(mine, key=mine.get), max(theirs, key=theirs.get)
    return (f"{best_mine} {mine[best_mine]:.2f} Gbps against the fastest peer, {best_peer}, "
            f"{theirs[best_peer]:.2f} Gbps: {mine[best_mine] / theirs[best_peer]:.2f}x")


def no_tls_line() -> str:
    """Why s3torchconnector has no row over HTTPS, where it is installed."""
    from objperf.peers.clients import has_module

    return ("\ns3torchconnector: not run over HTTPS: it takes no CA bundle (it trusts the system's CAs only)"
            if has_module("s3torchconnector") else "")


def compile_objperf() -> None:
    """Byte-compile objperf's modules, as installing a wheel does.  An editable install run with
    PYTHONDONTWRITEBYTECODE=1 (set in many container images) compiles every module again on every
    command: some 30 ms of start-up per run that an installed objperf does not pay."""
    import compileall

    compileall.compile_dir(Path(__file__).parent, quiet=2)  # the whole package


def _bench(args, argv: list[str] | None = None) -> int:
    from objperf.run.metadata import utc_now

    started = utc_now()
    tables = []
    ok = True
    compile_objperf()
    if args.op in ("analysis", "all"):
        tables.append(bench_analysis(args.rows))
    if args.op == "analysis":
        print("\n\n".join(tables))
        return 0
    with tempfile.TemporaryDirectory(prefix="objperf-bench-") as tmp:
        bench = Bench(args.size, args.concurrency, args.part_size, Path(tmp))
        try:
            bench.start()
            if args.op in ("get", "all"):
                big, small = _rounds(bench.readers(), lambda f, rep: f(BIG_KEY, args.size),
                                     lambda f: f(SMALL_KEY, SMALL_SIZE), args.repeat, args.size, "get",
                                     bench.server_cpu_s)
                tables.append(render_table("reads", big, small, args.size, base="s5cmd", cpu_base="curl") + "\n"
                              + copy_line(big, small, args.size, ram="objperf ram", discard="objperf discard"))
                ok &= all(m.ok for runs in big.values() for m in runs)
            if args.op in ("get", "all") and bench.nginx_url:
                moved = args.passes * args.size
                big, small = _rounds(bench.nginx_readers(args.passes), lambda f, rep: f(BIG_KEY, args.size),
                                     lambda f: f(SMALL_KEY, SMALL_SIZE), args.repeat, moved, "nginx get",
                                     bench.server_cpu_s)
                tables.append(render_table(f"reads from nginx ({args.passes} passes over the object)", big, small,
                                           moved, base="curl", cpu_base="curl", server="nginx serving /dev/shm")
                              + "\n" + copy_line(big, small, moved, ram="objperf ram", discard="objperf discard"))
                ok &= all(m.ok for runs in big.values() for m in runs)
            if args.op in ("tls", "all") and bench.nginx_tls_url:
                moved = args.passes * args.size
                big, small = _rounds(bench.tls_readers(args.passes), lambda f, rep: f(BIG_KEY, args.size),
                                     lambda f: f(SMALL_KEY, SMALL_SIZE), args.repeat, moved, "tls",
                                     bench.server_cpu_s)
                name = bench.curl_ranged_name
                tables.append(render_table(f"reads over TLS 1.3 ({args.passes} passes over the object)", big,
                                           small, moved, base=name, cpu_base=name,
                                           server="nginx serving /dev/shm over HTTPS")
                              + "\n" + h2_line(big, small, moved, name))
                ok &= all(m.ok for runs in big.values() for m in runs)
            if args.op in ("tls", "all"):  # every read and write row again, over SeaweedFS's HTTPS gateway
                big, small = _rounds(bench.readers(bench.secure), lambda f, rep: f(BIG_KEY, args.size),
                                     lambda f: f(SMALL_KEY, SMALL_SIZE), args.repeat, args.size, "tls get",
                                     bench.server_cpu_s)
                name = bench.curl_ranged_name
                tables.append(render_table("reads over HTTPS", big, small, args.size, base=name, cpu_base=name,
                                           server="local SeaweedFS's HTTPS gateway")
                              + "\n" + best_peer_line(big, args.size) + no_tls_line())
                ok &= all(m.ok for runs in big.values() for m in runs)
                bench.part_size, read_part_size = args.write_part_size, bench.part_size
                big, small = _rounds(bench.writers(bench.secure), lambda f, rep: f(args.size, rep == 0),
                                     lambda f: f(SMALL_SIZE, False), args.repeat, args.size, "tls put",
                                     bench.server_cpu_s)
                bench.part_size = read_part_size
                tables.append(render_table("writes over HTTPS", big, small, args.size, base="best peer",
                                           cpu_base="best peer", server="local SeaweedFS's HTTPS gateway")
                              + no_tls_line())
                ok &= all(m.ok for runs in big.values() for m in runs)
            if args.op in ("put", "all"):  # SeaweedFS's rows and nginx's as a PUT sink, interleaved
                bench.part_size = args.write_part_size
                with SinkWrites(bench, args.sink_object_size) as sink:
                    big, small = _rounds({**bench.writers(), **sink.writers(args.size)},
                                         lambda f, rep: f(args.size, rep == 0), lambda f: f(SMALL_SIZE, False),
                                         args.repeat, args.size, "put", lambda: bench.server_cpu_s() + sink.cpu_s())
                seaweed = [name for name in big if not name.endswith(NGINX)]
                tables.append(render_table("writes", {n: big[n] for n in seaweed}, {n: small[n] for n in seaweed},
                                           args.size, base="best peer", cpu_base="best peer"))
                tables.append(sink.table(big, small, args.size))
                ok &= all(m.ok for runs in big.values() for m in runs)
            if args.op in ("ops", "all"):
                tables.append(bench_ops(bench.plain.endpoint, bench.env, BUCKET, repeat=args.repeat))
            if args.op in ("scale", "all"):
                tables.append(bench_scale(bench, repeat=args.repeat))
            if args.op in ("cluster", "all"):
                tables.append(bench_cluster(bench))
        finally:
            bench.stop()
    print("\n\n".join(tables))
    if args.markdown:
        from objperf.peers import page

        command = " ".join(["objperf bench", *(sys.argv[1:] if argv is None else argv)])
        written = page.write(args.markdown, tables, command=command, started=started, ended=utc_now())
        print(f"objperf bench: wrote {written}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

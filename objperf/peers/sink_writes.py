"""The bench's writes to nginx as a PUT sink (``objperf.peers.sink``): objperf put and the peers it is held to for
writes, s5cmd, the AWS CRT and obstore, each writing the bench's size as objects of one part or less (nginx takes
no multipart upload), one PUT each, as many at a time as the bench's concurrency.  objperf sends its payload from
its own memory; the peers upload files in /dev/shm holding the same bytes (one file, hard-linked once per
object).  What arrived is checked every round (every object there, each of the size sent) and, on the checking
round, every body's CRC-32 against the payload's."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path

from objperf.core.sizes import format_size
from objperf.peers import clients
from objperf.peers.bench import BUCKET, Bench, has_module
from objperf.peers.clients import Measured, measure, tool
from objperf.peers.sink import PutSink, missing
from objperf.peers.tables import render_table

SINK_OBJECT = 16 << 20  # the size of the objects the bench writes to nginx, unless told
NGINX = " (nginx)"
TITLE = "writes to nginx"
NOT_RUN = ("boto3, s3torchconnector: not run against nginx (the sink's rows are objperf and the write peers it is "
           "held to: s5cmd, the AWS CRT, obstore)")

Writer = Callable[[int, bool], Measured]


class SinkWrites:
    """nginx started as a PUT sink beside ``bench``'s servers (``with``), and each client's write to it."""

    def __init__(self, bench: Bench, object_size: int = SINK_OBJECT):
        self.bench, self.object_size = bench, object_size
        self.sink: PutSink | None = None
        self.skipped = missing()  # why there are no rows, when there are none
        self._crcs: dict[int, int] = {}

    def __enter__(self) -> SinkWrites:
        if not self.skipped:
            sink = PutSink(self.bench.workdir / "sink", self.bench.shm, (BUCKET,))
            try:
                sink.start()
                self.sink = sink
            except RuntimeError as exc:
                self.skipped = str(exc)
        return self

    def __exit__(self, *exc) -> None:
        if self.sink:
            self.sink.stop()

    def cpu_s(self) -> float:
        return self.sink.cpu_s() if self.sink else 0.0

    def objects(self, size: int) -> tuple[int, int]:
        """How ``size`` bytes go up: (objects, bytes each), one object when it is no larger than the sink's."""
        return (1, size) if size <= self.object_size else (size // self.object_size, self.object_size)

    def writers(self, size: int) -> dict[str, Writer]:
        """name → f(size, check) → Measured, for every client installed, when the sink runs and ``size`` goes up
        as whole objects of one part at most."""
        if self.object_size > self.bench.part_size:
            self.skipped = (f"objects of {format_size(self.object_size)} are larger than a part "
                            f"({format_size(self.bench.part_size)}): nginx takes single PUTs only")
        elif size > self.object_size and size % self.object_size:
            self.skipped = f"{format_size(size)} is not a whole number of {format_size(self.object_size)} objects"
        if self.skipped or not self.sink:
            return {}
        found: dict[str, Writer] = {"objperf put" + NGINX: self.objperf_put}
        if tool("s5cmd"):
            found["s5cmd" + NGINX] = self.s5cmd_put
        for name, module in (("aws crt", "awscrt"), ("obstore", "obstore")):
            if has_module(module):
                found[name + NGINX] = lambda size, check, name=name: self.peer_put(name, size, check)
        return found

    def objperf_put(self, size: int, check: bool) -> Measured:
        count, each = self.objects(size)
        bench, prefix = self.bench, "put/objperf/"
        args = clients.objperf_put(f"s3://{BUCKET}/{prefix}", endpoint=self.url, concurrency=bench.concurrency,
                                   object_size=each, part_size=bench.part_size, objects=count)
        result = bench.run_objperf(bench.plain, args,
                                   lambda s: s["objects_written"] == count and s["objects_failed"] == 0)
        return self._check(result, prefix, size, check)

    def s5cmd_put(self, size: int, check: bool) -> Measured:
        prefix = "put/s5cmd/"
        args = clients.s5cmd_cp_many(str(self._sources(size)), f"s3://{BUCKET}/{prefix}", endpoint=self.url,
                                     concurrency=self.bench.concurrency, part_size=self.bench.part_size)
        return self._check(measure(args, env=self.bench.env), prefix, size, check)

    def peer_put(self, name: str, size: int, check: bool) -> Measured:
        """The AWS CRT's or obstore's uploads (``objperf.peers.put_many``)."""
        prefix = f"put/{name.replace(' ', '-')}/"
        args = clients.put_many_transfer(name, str(self._sources(size)), f"s3://{BUCKET}/{prefix}",
                                         endpoint=self.url, region="us-east-1", concurrency=self.bench.concurrency,
                                         part_size=self.bench.part_size)
        return self._check(measure(args, env=self.bench.env), prefix, size, check)

    @property
    def url(self) -> str:
        return self.sink.url if self.sink else ""

    def _sources(self, size: int) -> Path:
        """A directory of the objects ``size`` bytes go up as, each the payload's first bytes, as objperf's are:
        one file in /dev/shm, hard-linked once per object."""
        count, each = self.objects(size)
        directory = self.bench.shm / f"sink-{count}x{each}"
        if not directory.exists():
            one = self.bench.shm / f"sink-{each}.bin"
            with open(self.bench.source, "rb") as f:
                one.write_bytes(f.read(each))
            directory.mkdir()
            for i in range(count):
                (directory / f"object-{i:05d}").hardlink_to(one)
        return directory

    def _check(self, result: Measured, prefix: str, size: int, check: bool) -> Measured:
        count, each = self.objects(size)
        if each not in self._crcs:
            with open(self.bench.source, "rb") as f:
                self._crcs[each] = zlib.crc32(f.read(each))
        return self.sink.check(result, f"/{BUCKET}/{prefix}", count, each, self._crcs[each] if check else None)

    def table(self, big: dict[str, list[Measured]], small: dict[str, list[Measured]], size: int) -> str:
        """The sink's rows of a round of writes, against the fastest peer writing to nginx."""
        rows = [name for name in big if name.endswith(NGINX)]
        if not rows:
            return f"objperf bench {TITLE}: not run: {self.skipped or 'no client ran'}"
        count, each = self.objects(size)
        return render_table(TITLE, {n: big[n] for n in rows}, {n: small[n] for n in rows}, size,
                            base="best peer", cpu_base="best peer",
                            server=f"nginx reading each PUT whole into /dev/shm, as {count} objects of "
                                   f"{format_size(each)}, one PUT each") + "\n" + NOT_RUN

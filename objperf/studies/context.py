"""Where a study runs and at what size (``StudyContext``): the steps a study makes read, write and seed through
it, each step a run of the one drive loop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from objperf.cluster.writes import abort_lost
from objperf.plan.reads import ReadWorkload
from objperf.plan.writes import WriteWorkload
from objperf.run.jobs import ReadSource, read_job, write_job
from objperf.run.seed import seed_places
from objperf.s3.client import URL_LIFETIME_S, S3Client, S3Settings
from objperf.studies.grids import QUICK_WRITE_CAP_S, default_grid
from objperf.studies.sweep import Step

MIB = 1 << 20


@dataclass
class StudyContext:
    """Where a study runs and at what size.  ``prefix`` is the study's workspace in ``bucket``."""

    settings: S3Settings
    bucket: str
    prefix: str
    quick: bool
    duration: float
    object_size: int
    threads: int | None = None  # None: each step's run settles its own (plan.threads)
    buckets: list[str] = field(default_factory=list)  # a second bucket for bucket-fanout
    other_url: str | None = None  # an unrelated HTTP stream for ceiling-proof
    replicas: int = 8
    replica_buckets: bool = False  # spread hot-object replicas over buckets (a per-bucket throttle)
    server: object | None = None  # the embedded LocalSeaweed, when there is one
    url_lifetime: int = URL_LIFETIME_S
    object_size_given: bool = False  # --object-size was given: every step writes objects of that size
    duration_given: bool = False  # --duration was given: every step lasts that long
    # Workload options the user gave: they win over every study default, --quick's too.
    read_options: dict = field(default_factory=dict)
    write_options: dict = field(default_factory=dict)
    grids: dict[str, list] = field(default_factory=dict)  # --grid: the values of what a study sweeps
    cluster: object | None = None  # every step on every host of this cluster (objperf.cluster.connect.Cluster)
    say: Callable[[str], None] = print
    reseed: bool = False  # --reseed: write every object to read once again, even if it is there
    seeding: Callable | None = None  # the bar seeding shows (Invocation.seeding)
    _client: S3Client | None = None
    _seeded: set = field(default_factory=set)
    _sizes: set[int] = field(default_factory=set)  # the object sizes the study's steps read or write

    @property
    def object_size_used(self) -> int | list[int]:
        """The object size the study's steps read or write, for its manifest (a study may choose its own, as
        request-rate's 4 KiB): one size, or the sizes, smallest first, when they differ; ``object_size`` before
        any step sized an object."""
        sizes = sorted(self._sizes) or [self.object_size]
        return sizes[0] if len(sizes) == 1 else sizes

    @property
    def client(self) -> S3Client:
        if self._client is None:
            self._client = S3Client(self.settings)
        return self._client

    @property
    def range_size(self) -> int:
        return self.read_options.get("range_size", 1 * MIB if self.quick else 8 * MIB)

    @property
    def part_size(self) -> int:
        return self.write_options.get("part_size", 5 * MIB if self.quick else 32 * MIB)

    @property
    def read_concurrency(self) -> int:
        """Reads in flight where a study does not sweep them: the article's 256 (16 with --quick)."""
        return self.read_options.get("concurrency", 16 if self.quick else 256)

    @property
    def write_concurrency(self) -> int:
        """Parts in flight where a study does not sweep them: the article's 192 (16 with --quick)."""
        return self.write_options.get("concurrency", 16 if self.quick else 192)

    def grid(self, study: str, name: str) -> list:
        """The values ``study`` sweeps ``name`` over: --grid's, else the quick or the full study's
        (``grids.DEFAULTS``)."""
        return self.grids.get(name) or default_grid(study, name, self.quick)

    def key(self, *parts: str) -> str:
        return self.prefix + "/".join(parts)

    def ensure_object(self, bucket: str, key: str, size: int) -> None:
        """Seed ``key`` unless an object of that size and objperf's content is already there (reruns reuse it;
        ``reseed`` writes it again, once in a study)."""
        self.ensure_objects([(bucket, key)], size)

    def ensure_objects(self, places: list[tuple[str, str]], size: int) -> None:
        """``ensure_object`` of every (bucket, key) of ``places``, under one line and one bar."""
        self._sizes.add(size)
        first = [place for place in places if (*place, size) not in self._seeded]  # what later steps reuse
        self._seeded.update((*place, size) for place in places)
        room = getattr(self.server, "workdir", None)  # the embedded server's disk, checked before seeding
        if first:
            seed_places(self.settings, first, size, say=self.say, reseed=self.reseed, progress=self.seeding, room=room)
        rest = [place for place in places if place not in first]
        if rest:
            seed_places(self.settings, rest, size, progress=self.seeding, room=room)

    def reads(self, **kw) -> ReadWorkload:
        """A step's read workload: the study's defaults, its step's values, then the user's options."""
        swept = {k: v for k, v in kw.items() if k in self.swept}
        return ReadWorkload(**{"concurrency": self.read_concurrency, "threads": self.threads,
                               "range_size": self.range_size, "duration": self.duration, **kw,
                               **self.read_options, **swept})

    def writes(self, **kw) -> WriteWorkload:
        swept = {k: v for k, v in kw.items() if k in self.swept}
        return WriteWorkload(**{"object_size": self.object_size, "part_size": self.part_size,
                                "url_lifetime": self.url_lifetime, "concurrency": self.write_concurrency,
                                "threads": self.threads, "buckets": (self.bucket,), "duration": self.duration,
                                **kw, **self.write_options, **swept})

    swept: frozenset = frozenset()  # the keys the running study sweeps: its steps' values win there

    def step(self, values: dict, job: Callable[[], Callable], *, kind: str, prepare: Callable[[], None] | None = None,
             on_lost: Callable[[], Callable] | None = None, measure: Callable | None = None) -> Step:
        """A step that runs ``job()`` (built when the step runs) here, or on the first ``hosts`` hosts of the
        cluster; ``prepare`` runs first, here (seeding); ``on_lost()`` cleans up after a host that died."""
        def run(out, hosts: int | None = None):
            if prepare:
                prepare()
            if self.cluster is None:
                return job()(out)
            from objperf.cluster.runner import run_on_cluster

            return run_on_cluster(self.cluster.first(hosts), job(), kind=kind, out=out,
                                  target=self.settings.describe(), workload=values, say=self.say,
                                  on_lost=on_lost() if on_lost else None)

        return Step(values, run, measure)

    def with_sources(self, step: Step, count: int) -> Callable:
        """How ``step`` runs from only the first ``count`` addresses of ``--interface`` (``--grid sources=1,2``):
        the workloads a step builds when it runs take the narrowed list."""
        chosen = ",".join(self.read_options["interface"].split(",")[:count])

        def run(out, **kw):
            kept = self.read_options["interface"], self.write_options["interface"]
            self.read_options["interface"] = self.write_options["interface"] = chosen
            try:
                return step.run(out, **kw)
            finally:
                self.read_options["interface"], self.write_options["interface"] = kept

        return run

    def read_step(self, values: dict, source: ReadSource, *, prepare: Callable[[], None] | None = None,
                  measure: Callable | None = None, **workload) -> Step:
        return self.step(values, lambda: partial(read_job, source, self.reads(**workload)), kind="read",
                         prepare=prepare, measure=measure)

    def write_step(self, values: dict, *, prepare: Callable[[], None] | None = None, **workload) -> Step:
        self._sizes.add(self.writes(**workload).object_size)
        if self.quick and not self.duration_given and "requests" not in workload:
            # --quick: one part per slot, the step lasting until they are acknowledged (at most
            # QUICK_WRITE_CAP_S), so that every write step measures something however busy the store
            w = self.writes(**workload)
            parts = w.concurrency * min(w.part_size, w.object_size)
            workload.update(requests=max(1, -(-parts // max(1, w.object_size))),
                            duration=max(self.duration, QUICK_WRITE_CAP_S))
        return self.step(values, lambda: partial(write_job, self.settings, self.writes(**workload), False),
                         kind="write", prepare=prepare,
                         on_lost=lambda: partial(abort_lost, self.settings, self.writes(**workload)))

    def target(self, keys: list[str] | int, *, prefix: str = "", buckets: list[str] | None = None) -> ReadSource:
        return ReadSource(f"s3://{(buckets or [self.bucket])[0]}/{prefix}", self.settings, keys=keys,
                          buckets=buckets or [], url_lifetime=self.url_lifetime)

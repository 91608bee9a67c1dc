"""The options of a study (``objperf study NAME``): which experiment, against which store, and what in its
workload the user sets instead of the study."""

from __future__ import annotations

from dataclasses import dataclass

from objperf.options.groups import ClusterOptions, ConnectionOptions, SeedOptions, TargetOptions
from objperf.options.kinds import COUNT, DURATION, PATH, SIZE, TEXT, choice
from objperf.options.names import STUDY_NAMES
from objperf.options.spec import flag, option

WORKSPACE = "objperf-study/"
OVERRIDES = "workload (each wins over the study's default, --quick's too)"
STUDY = "study"


@dataclass(kw_only=True)
class StudyOptions(TargetOptions, SeedOptions, ConnectionOptions, ClusterOptions):
    """One experiment of the published benchmark, run as a sweep, one dataset per study."""

    name: str = option(None, "the study: " + ", ".join(STUDY_NAMES), choice(*STUDY_NAMES), positional=True,
                       required=True, metavar="NAME")
    url: str | None = option(None, f"s3://BUCKET/PREFIX/ the study may write under (objects go to PREFIX{WORKSPACE}); "
                             "omit to use the embedded local SeaweedFS", positional=True)
    out: str | None = option(None, "the study's directory; rerunning into it skips finished steps (default: "
                             "runs/<UTC time>-study-NAME)", PATH, flags=("-o",), group=STUDY)
    quick: bool = flag("small grids and short steps (a smoke test)", group=STUDY)
    repeat: int = option(1, "repetitions of every step", COUNT, group=STUDY)
    duration: float | None = option(None, "seconds per step", DURATION, flags=("-d",),
                                    default_text="20s, quick 1s; sustained: 10m, quick 4s", group=STUDY)
    object_size: int | None = option(None, "size of the object read", SIZE, default_text="1GiB, quick 32MiB",
                                     group=STUDY)
    concurrency: int | None = option(None, "requests in flight, reads and writes", COUNT, flags=("-c",),
                                     default_text="256 reads, 192 parts; quick 16", group=OVERRIDES)
    read_concurrency: int | None = option(None, "reads in flight", COUNT, default_text="--concurrency",
                                          group=OVERRIDES)
    write_concurrency: int | None = option(None, "parts in flight", COUNT, default_text="--concurrency",
                                           group=OVERRIDES)
    range_size: int | None = option(None, "bytes per ranged GET", SIZE, default_text="8MiB, quick 1MiB",
                                    group=OVERRIDES)
    part_size: int | None = option(None, "bytes per uploaded part", SIZE, default_text="32MiB, quick 5MiB",
                                   group=OVERRIDES)
    sink: str | None = option(None, "where read bodies go", choice("ram", "discard"), default_text="ram",
                              group=OVERRIDES)
    grid: tuple[str, ...] = option((), "the values a study sweeps, e.g. concurrency=16,64,256,1024 or "
                                   "part_size=8MiB,32MiB (repeatable)", TEXT, repeat=True, metavar="NAME=V1,V2,...",
                                   group=OVERRIDES)
    other_url: str | None = option(None, "ceiling-proof: an unrelated http(s) URL to read beside the store",
                                   group=STUDY)
    replicas: int = option(32, "hot-object: the most replicas the sweep of 2, 4, 8 … tries", COUNT, group=STUDY)
    replica_buckets: bool = flag("hot-object: put replicas in separate buckets (for a per-bucket throttle)",
                                 group=STUDY)
    throttle: int = option(8, "embedded server only, hot-object: reads in flight per bucket before it answers 503",
                           COUNT, group=STUDY)
    cleanup: bool = flag(f"delete PREFIX{WORKSPACE} afterwards", group=STUDY)
    figures: str | None = option(None, "draw the study's figures (its notebook's, beside the published values) as "
                                 "PNG files into DIR", PATH, metavar="DIR", group=STUDY)

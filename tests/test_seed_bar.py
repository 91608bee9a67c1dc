"""Seeding: however many objects, one line and one bar over all of them; and what the embedded server's disk
cannot hold is refused in one line, saying how much is needed and free, before a byte is written or a server
started."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from objperf.core.errors import UsageError
from objperf.run.seed import seed_places

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

SIZE = 256 << 10


class Bars:
    """The bars seeding asked for (``Invocation.seeding``'s part): each one's total, and what it was shown."""

    def __init__(self):
        self.made: list[dict] = []

    @contextlib.contextmanager
    def __call__(self, total_bytes: int):
        bar = {"total": total_bytes, "shown": []}
        self.made.append(bar)
        yield lambda elapsed, nbytes, nrequests, nerrors: bar["shown"].append(nbytes)


@pytest.mark.parametrize("layout", ["keys", "buckets", "both"])
def test_many_objects_seed_under_one_line_and_one_bar(store, layout):
    n = 6
    buckets = [store.bucket] + [f"{store.bucket}-seed{i}" for i in range(1, 3)]
    places = {"keys": [(store.bucket, f"seed-bar/{layout}/k{i}") for i in range(n)],
              "buckets": [(b, f"seed-bar/{layout}/k") for b in buckets],
              # not every bucket holds the same keys: seeded as several write runs, still one bar
              "both": [(store.bucket, f"seed-bar/{layout}/a{i}") for i in range(3)]
              + [(buckets[1], f"seed-bar/{layout}/b")]}[layout]
    said, bars = [], Bars()
    seed_places(store.server.settings(), places, SIZE, create_buckets=True, say=said.append, progress=bars,
                reseed=True)
    assert len(bars.made) == 1 and bars.made[0]["total"] == len(places) * SIZE
    shown = bars.made[0]["shown"]
    assert shown == sorted(shown) and shown[-1] == len(places) * SIZE  # one bar, filled once, never going back
    assert [line for line in said if line.startswith("seeding")] == [f"seeding {len(places)} object(s) of 256 KiB "
                                                                    f"({SIZE:,} bytes)"]
    assert len(said) == 2  # seeding …, seeded …
    for bucket, key in places:
        assert store.client.object_size(bucket, key) == SIZE
    again = []
    seed_places(store.server.settings(), places, SIZE, say=again.append, progress=bars)
    assert again == [f"reusing {len(places)} object(s) of 256 KiB already seeded (same size and content; --reseed "
                     "writes them again)"] and len(bars.made) == 1


@pytest.mark.timeout(300)
def test_hot_object_seeds_its_replicas_under_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "objperf", "study", "hot-object", "--quick", "--replicas", "4",
                           "--grid", "concurrency=16", "--out", str(tmp_path / "hot")], capture_output=True,
                          text=True, timeout=280, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    seeding = [line for line in done.stderr.splitlines() if re.search(r"\bseed(ing|ed) ", line)]
    assert len(seeding) == 2 and "seeding 4 object(s)" in seeding[0], seeding


def more_than_free(where) -> str:
    """A size the disk of ``where`` cannot hold, in GiB."""
    return f"{shutil.disk_usage(where).free // (1 << 30) + 2}GiB"


def test_seeding_more_than_the_disk_holds_is_refused_before_a_byte_is_written(store, tmp_path):
    size = more_than_free(tmp_path)
    from objperf.core.sizes import parse_size

    places = [(store.bucket, "room/too-big")]
    with pytest.raises(UsageError, match=r"needs .* on the disk of .* which has .* free"):
        seed_places(store.server.settings(), places, parse_size(size), room=tmp_path, reseed=True)
    assert store.client.open_uploads(store.bucket, "room/") == []
    assert "room/too-big" not in store.client.list_keys(store.bucket, "room/")


RUNS = {
    "fetch": ["fetch", "--duration", "1s"],
    "put": ["put", "--duration", "1s", "--part-size", "1GiB"],
    "mixed": ["mixed", "--duration", "1s", "--part-size", "1GiB"],
    "study": ["study", "read-concurrency", "--quick"],
}


@pytest.mark.parametrize("kind", RUNS)
def test_a_run_on_the_embedded_server_bigger_than_its_disk_is_refused_in_one_line(kind, tmp_path):
    size = more_than_free(tempfile.gettempdir())
    done = subprocess.run([sys.executable, "-m", "objperf", *RUNS[kind], "--object-size", size, "--out",
                           str(tmp_path / "run")], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and re.search(r"needs [\d.]+ [GT]iB on the disk of .*which has [\d.]+ [GMT]iB free",
                                          errors[0]), done.stderr
    assert "Traceback" not in done.stderr and "seeding" not in done.stderr.replace("error: seeding", "")
    assert not (tmp_path / "run").exists()

"""Never silent, never noisy: a command whose output is a log or a pipe prints a progress line at least
every 5 s and says what each longer step is doing; Ctrl-C ends a run at once with a line, its rows kept
and nothing left running; a run that succeeds prints no traceback and none of dask's log."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from objperf.commands.common import warnings_in_a_line
from objperf.core import scratch
from objperf.core.progress import LINES, Progress, phase, telling
from objperf.plan.writes import WriteWorkload
from objperf.run.writes import run_write

SILENCE_S = 5.0  # the promise: never longer than this without a line when piped
PROGRESS_LINE = re.compile(r"^\s+\d+\.\d(?:/\d+)? s\s+(?:\d+\.\d+ Gbps\s+\d+\.\d MiB/s\s+\d+ req/s|"
                           r"\d+ req/s\s+[\d,]+ requests)\s+\d+ failed$")
NO_BODY = re.compile(r"^\s+\d+\.\d(?:/\d+)? s\s+\d+ req/s\s+[\d,]+ requests\s+\d+ failed$")  # HEADs, DELETEs
SERVER_AT = re.compile(r"started local SeaweedFS at http://127\.0\.0\.1:(\d+)")


class Watched:
    """A command run with its output piped (as in CI or ``| tee``); every line it prints, with when it came."""

    def __init__(self, *args: str, env: dict | None = None):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "objperf", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        self.lines: list[tuple[float, str, str]] = []  # (seconds since start, "out" or "err", text)
        self._new = threading.Condition()
        self._readers = [threading.Thread(target=self._read, args=(stream, name), daemon=True)
                         for stream, name in ((self.proc.stdout, "out"), (self.proc.stderr, "err"))]
        for reader in self._readers:
            reader.start()
        self.ended_at: float | None = None

    def _read(self, stream, name: str) -> None:
        for line in stream:
            with self._new:
                self.lines.append((time.monotonic() - self.t0, name, line.rstrip("\n")))
                self._new.notify_all()

    def wait_for(self, pattern: str, timeout: float) -> float:
        """Until a line matches ``pattern``: when it came."""
        deadline = time.monotonic() + timeout
        with self._new:
            while True:
                for t, _, text in self.lines:
                    if re.search(pattern, text):
                        return t
                if time.monotonic() > deadline or self.proc.poll() is not None and not any(
                        r.is_alive() for r in self._readers):
                    raise AssertionError(f"no line matching {pattern!r} within {timeout:g} s:\n{self.text}")
                self._new.wait(0.1)

    def finish(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        self.ended_at = time.monotonic() - self.t0
        for reader in self._readers:
            reader.join(10)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    @property
    def text(self) -> str:
        return "\n".join(f"{t:6.2f} {name} {text}" for t, name, text in self.lines)

    @property
    def stderr(self) -> str:
        return "\n".join(text for _, name, text in self.lines if name == "err")

    def longest_silence(self) -> float:
        """The longest time without a line, from the start to the exit."""
        times = [0.0, *(t for t, _, _ in self.lines), self.ended_at]
        return max(b - a for a, b in zip(times, times[1:]))

    def server_port(self) -> int | None:
        found = SERVER_AT.search(self.stderr)
        return int(found.group(1)) if found else None


def left_behind(pid: int, port: int | None) -> list[str]:
    """What a finished command left: a ``weed`` serving its port, a scratch directory it owned."""
    import psutil

    left = []
    if port:
        for proc in psutil.process_iter(["cmdline"]):
            if any(f"-s3.port={port}" == arg for arg in proc.info["cmdline"] or []):
                left.append(f"weed still running (pid {proc.pid})")
    for path in Path(os.environ.get("TMPDIR", "/tmp")).glob(f"{scratch.PREFIX}*"):
        try:
            owner = json.loads((path / scratch.OWNER).read_text())
        except (OSError, ValueError):
            continue
        if owner.get("pid") == pid:
            left.append(f"scratch directory {path}")
    return left


# -- progress lines ----------------------------------------------------------------------------------------

RUNS = {
    "fetch": ["fetch", "--object-size", "8MiB", "--duration", "8s"],
    "put": ["put", "--object-size", "64MiB", "--duration", "8s"],
    "mixed": ["mixed", "--object-size", "8MiB", "--duration", "8s"],
    "study": ["study", "read-concurrency", "--quick"],
    "study checksums": ["study", "checksums", "--quick"],  # a warm-up run, then steps that write
    "delete": ["delete", "--objects", "10000"],
    "head": ["fetch", "--op", "head", "--object-size", "1MiB", "--duration", "8s"],
    "list": ["list", "--objects", "2000", "-c", "4", "--duration", "8s"],
}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("command", sorted(RUNS))
def test_a_piped_run_command_is_never_silent_and_prints_no_traceback(command, tmp_path):
    """Every run command, its output a pipe: a line at least every 5 s from its start to its exit (progress
    lines in the run, a line for each longer step around it), and no traceback on a run that succeeds."""
    watched = Watched(*RUNS[command], "--out", str(tmp_path / "run"))
    try:
        code = watched.finish(timeout=200)
    finally:
        watched.kill()
    assert code == 0, watched.text
    assert "Traceback" not in watched.stderr, watched.text
    assert watched.longest_silence() <= SILENCE_S, watched.text
    if not command.startswith("study"):  # a study's steps are short; their step lines are its progress
        assert any(PROGRESS_LINE.match(text) for _, _, text in watched.lines), watched.text
    if command in ("head", "delete"):  # no body moved: requests a second, never "0.000 Gbps"
        lines = [text for _, _, text in watched.lines if PROGRESS_LINE.match(text)]
        assert all(NO_BODY.match(text) for text in lines), watched.text
    assert not left_behind(watched.proc.pid, watched.server_port())


# -- Ctrl-C ------------------------------------------------------------------------------------------------

STOPPED = r"interrupted \(Ctrl-C\): stopping"
INTERRUPTED_RUNS = {
    "fetch": (["fetch", "--object-size", "8MiB", "--duration", "60s"], 5.0),
    "mixed": (["mixed", "--object-size", "8MiB", "--duration", "60s"], 5.0),
    # Single PUTs: nothing to abort; the multipart case below waits for the store's aborts.
    "put": (["put", "--object-size", "4MiB", "--duration", "60s"], 5.0),
}


def _interrupt(watched: Watched, times: int = 1) -> float:
    watched.wait_for(PROGRESS_LINE.pattern, timeout=60)  # the rows have started
    sent = time.monotonic() - watched.t0
    for n in range(times):
        if n:
            time.sleep(0.3)  # a user pressing again
        watched.proc.send_signal(signal.SIGINT)
    return sent


def _check_interrupted(watched: Watched, out: Path) -> None:
    assert "Traceback" not in watched.stderr, watched.text
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    import pyarrow.parquet as pq

    rows = sum(pq.read_metadata(p).num_rows for p in (out / "requests").glob("*.parquet"))
    assert rows > 0
    assert not left_behind(watched.proc.pid, watched.server_port()), watched.text


@pytest.mark.timeout(180)
@pytest.mark.parametrize("command", sorted(INTERRUPTED_RUNS))
def test_ctrl_c_ends_a_run_at_once_with_a_line_and_keeps_its_rows(command, tmp_path):
    args, bound = INTERRUPTED_RUNS[command]
    out = tmp_path / "run"
    watched = Watched(*args, "--out", str(out))
    try:
        sent = _interrupt(watched)
        said = watched.wait_for(STOPPED, timeout=10)
        code = watched.finish(timeout=120)
    finally:
        watched.kill()
    assert said - sent <= 2.0, watched.text
    assert code == 130
    assert watched.ended_at - sent <= bound, watched.text
    _check_interrupted(watched, out)


@pytest.mark.timeout(180)
def test_ctrl_c_twice_on_a_multipart_put_aborts_its_uploads_and_leaves_nothing(tmp_path):
    """The first Ctrl-C is said at once; the aborts of the uploads in flight are said while the store takes
    them (never a silence over 5 s); a second Ctrl-C is waited out: no traceback, nothing left running."""
    out = tmp_path / "run"
    watched = Watched("put", "--object-size", "64MiB", "--duration", "60s", "--out", str(out))
    try:
        sent = _interrupt(watched, times=2)
        said = watched.wait_for(STOPPED, timeout=10)
        code = watched.finish(timeout=150)
    finally:
        watched.kill()
    assert said - sent <= 2.0, watched.text
    assert code == 130
    assert watched.longest_silence() <= SILENCE_S, watched.text
    manifest = json.loads((out / "manifest.json").read_text())
    assert not manifest.get("summary", {}).get("uploads_left_open")
    _check_interrupted(watched, out)


# -- the lines themselves ------------------------------------------------------------------------------------


def test_plain_progress_lines_come_every_few_seconds_with_both_rates():
    said: list[str] = []
    progress = Progress(total_s=20, shown=LINES, say=said.append)
    for tick in range(1, 41):  # the drive loop's calls, every 0.5 s: 100 MiB/s, 10 requests/s
        progress(tick * 0.5, tick * 50 << 20, tick * 5, 0)
    assert said and all(PROGRESS_LINE.match(line) for line in said)
    assert len(said) >= 20 / SILENCE_S
    assert "0.839 Gbps  100.0 MiB/s  10 req/s  0 failed" in said[-1]


def test_a_run_that_moves_no_body_says_its_requests_a_second_not_a_rate_of_nothing():
    """A HEAD or DELETE run's progress said "0.000 Gbps  0.0 MiB/s": it says its requests a second and the
    requests done, in lines and on the bar; a run that moves bodies still says both rates."""
    from objperf.core.progress import BAR

    said: list[str] = []
    lines = Progress(total_s=5, shown=LINES, say=said.append)
    for tick in range(1, 11):  # every 0.5 s: 1,000 HEADs a second, no byte of body
        lines(tick * 0.5, 0, tick * 500, 0)
    assert said == ["  1.0/5 s  1000 req/s  1,000 requests  0 failed",
                    "  4.0/5 s  1000 req/s  4,000 requests  0 failed"]
    bar = Progress(total_s=5, shown=BAR)
    try:
        bar(0.5, 0, 500, 1)
        assert str(bar.bar).endswith("| 0.5/5 s, 1000 req/s  500 requests, 1 failed")
        bar(1.0, 50 << 20, 1000, 1)  # a body moved: both rates
        assert str(bar.bar).endswith("| 1.0/5 s, 0.839 Gbps  100.0 MiB/s  1000 req/s, 1 failed")
    finally:
        bar.close()


@pytest.mark.parametrize("total", [3000 << 10, 1000, 40 << 10, 700 << 20, 3 << 30, 12 << 30])
def test_a_seeding_line_says_amounts_that_agree_with_its_share_done(total):
    """Seeding 3,000 objects of 1 KiB said "seeding 0/3 MiB (17%)": what it says done and in all, read back,
    give the share it prints, whatever the total; and small objects' pace is said in requests too."""
    said: list[str] = []
    progress = Progress(total_s=None, shown=LINES, total_bytes=total, label="seeding", say=said.append)
    for tick in range(1, 13):  # every 0.5 s, a twelfth of the total each time
        progress(tick * 0.5, total * tick // 12, tick * 40, 0)
    assert said
    for line in said:
        found = re.fullmatch(r"  seeding ([\d.]+)/([\d.]+) (B|KiB|MiB|GiB) \((\d+)%\)  .* Gbps  .* MiB/s  \d+ req/s",
                             line)
        assert found, line
        done, whole, share = float(found[1]), float(found[2]), int(found[4])
        assert whole > 0
        assert abs(100 * done / whole - share) <= 5, line  # the figures shown say the share shown


def test_a_step_says_what_it_does_once_it_lasts_and_nothing_when_quick():
    said: list[str] = []
    with telling(said.append):
        with phase("quick…", quiet_s=0.5):
            pass
        with phase("slow…", quiet_s=0.05):
            deadline = time.monotonic() + 5
            while not said and time.monotonic() < deadline:
                time.sleep(0.01)
    assert said == ["slow…"]


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_a_write_runs_progress_counts_what_the_store_acknowledged(store):
    """Parts cut by the run's end were sent, not acknowledged: the progress never counts them."""
    seen: list[int] = []
    workload = WriteWorkload(object_size=64 << 20, part_size=32 << 20, concurrency=4, duration=2.0,
                             buckets=(store.bucket,), prefix="quiet-progress/", max_rate=20 << 20)
    result = run_write(store.server.settings(), workload, on_progress=lambda e, b, r, f: seen.append(b),
                       keep_rows=False)
    acknowledged = result.summary["directions"]["write"]["acknowledged_bytes"]
    assert seen and max(seen) <= acknowledged
    assert result.summary["sent_bytes"] > acknowledged  # bytes were sent that the store never acknowledged


def test_a_warning_of_several_lines_prints_as_lines_not_escapes(capsys):
    with warnings_in_a_line("objperf test"):
        warnings.warn("first line\nsecond line\r\n\nthird\x1b[31m", UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert "\\x0a" not in err and "\\x0d" not in err
    assert err.splitlines() == ["objperf test: warning: first line", "objperf test: warning: second line",
                                "objperf test: warning: third\\x1b[31m"]


# -- a cluster -----------------------------------------------------------------------------------------------


@pytest.mark.timeout(240)
def test_a_local_cluster_run_that_succeeds_prints_no_traceback_and_no_dask_log(tmp_path):
    watched = Watched("fetch", "--local-cluster", "2", "--object-size", "8MiB", "--duration", "3s",
                      "--out", str(tmp_path / "run"))
    try:
        code = watched.finish(timeout=200)
    finally:
        watched.kill()
    assert code == 0, watched.text
    assert "Traceback" not in watched.stderr, watched.text
    assert not re.search(r"^(distributed|tornado)\.|\bdistributed\.\w+ - (ERROR|WARNING|INFO)", watched.stderr,
                         re.M), watched.text
    assert "dask's log" not in watched.stderr, watched.text  # dask had nothing to say: no timeout of ours
    assert watched.longest_silence() <= SILENCE_S, watched.text


@pytest.mark.timeout(240)
def test_a_study_on_a_terminal_is_never_silent_in_its_steps(tmp_path):
    """A study's steps on a terminal: a line (or a bar's update) at least every 5 s, as in a log."""
    import shlex

    command = shlex.join([sys.executable, "-m", "objperf", "study", "read-concurrency", "--quick", "--duration",
                          "8s", "--out", str(tmp_path / "study")])
    proc = subprocess.Popen(["script", "-qfec", command, "/dev/null"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "120"})
    t0, times, text = time.monotonic(), [0.0], b""
    try:
        while chunk := os.read(proc.stdout.fileno(), 65536):
            times.append(time.monotonic() - t0)
            text += chunk
        code = proc.wait(timeout=200)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    times.append(time.monotonic() - t0)
    said = text.decode(errors="replace")
    assert code == 0 and "Traceback" not in said, said
    assert max(b - a for a, b in zip(times, times[1:])) <= SILENCE_S, said
    assert re.search(r"\d+\.\d/8 s ", said), said  # the steps' own progress, not only their start and end lines

"""objperf's scratch directories, and what a killed run of objperf left of them.

Every scratch directory objperf makes (``objperf-*`` in the temporary directory) holds an ``owner``
file: the process that made it, with that process's start time (a PID alone can be reused), and the
PIDs of any server it started there.  ``sweep`` — run whenever objperf makes a scratch directory, and
by ``objperf cleanup`` — removes the directories whose owner is gone, first killing the servers they
list if those still run.  Nothing is guessed from names or ages: a directory without an owner file,
or whose owner lives, is left alone."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

OWNER = ".objperf-owner"
PREFIX = "objperf-"


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (field 22 of /proc/PID/stat), or None when it does not run."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def make(kind: str, *, where: str | Path | None = None) -> Path:
    """A new scratch directory ``objperf-KIND-…`` owned by this process (orphans of killed runs swept first)."""
    sweep(where)
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=where))
    write_owner(path)
    return path


def write_owner(path: Path, servers: list[int] | None = None) -> None:
    """Name this process, and the server processes started in ``path``, as its owners."""
    record = {"pid": os.getpid(), "start": process_start(os.getpid()),
              "servers": [{"pid": pid, "start": process_start(pid)} for pid in servers or []]}
    tmp = path / (OWNER + ".tmp")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path / OWNER)


def _alive(entry: dict) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("pid"), int) and entry["pid"] > 0 \
        and entry.get("start") is not None and process_start(entry["pid"]) == entry["start"]


@dataclass(frozen=True)
class Orphan:
    """A scratch directory whose owner (process ``owner``) is gone, and the servers it lists that still run."""

    path: Path
    owner: int | None
    servers: tuple[tuple[int, str], ...] = ()  # (PID, start time): checked again before one is killed

    @property
    def server_pids(self) -> list[int]:
        return [pid for pid, _ in self.servers]


def stranded(where: str | Path | None = None) -> list[Orphan]:
    """The scratch directories whose owning process is gone, with their servers still running: what ``sweep``
    would remove (``objperf cleanup --dry-run`` lists them), nothing changed."""
    found = []
    for path in sorted(Path(where or tempfile.gettempdir()).glob(f"{PREFIX}*")):
        try:
            if path.is_symlink() or not path.is_dir():
                continue
            record = json.loads((path / OWNER).read_text())
        except (OSError, ValueError):
            continue  # not ours to judge: no owner file
        if isinstance(record, dict) and not _alive(record):
            servers = record.get("servers") if isinstance(record.get("servers"), list) else []
            owner = record.get("pid") if isinstance(record.get("pid"), int) else None
            found.append(Orphan(path, owner, tuple((s["pid"], s["start"]) for s in servers if _alive(s))))
    return found


def orphans(where: str | Path | None = None) -> list[Path]:
    """Scratch directories whose owning process is gone."""
    return [orphan.path for orphan in stranded(where)]


def remove(found: list[Orphan]) -> list[Orphan]:
    """Kill the servers of ``found`` still running, remove their directories; those removed."""
    removed = []
    for orphan in found:
        for pid, start in orphan.servers:
            if _alive({"pid": pid, "start": start}):  # not a later process that was given the same PID
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(orphan.path, ignore_errors=True)
        if not orphan.path.exists():
            removed.append(orphan)
    return removed


def sweep(where: str | Path | None = None) -> list[Path]:
    """Remove the orphaned scratch directories (killing the servers they list, when still running)."""
    return [orphan.path for orphan in remove(stranded(where))]

"""What each worker does in a cluster run: build its part (target, URLs, engine), say it is ready, start
at the time the driver set, run through the one drive loop writing its own dataset as it goes, and hand
that dataset back to the driver."""

from __future__ import annotations

import shutil
import threading
import time

from objperf.core import scratch
from objperf.core.errors import RunFailed
from objperf.dataset.destination import NOWHERE, Destination
from objperf.run.control import Control, controlled

READY_TIMEOUT_S = 300.0
STOP_POLL_S = 0.5


def ready_event(names: dict[str, str], index: int) -> str:
    return f"{names['ready']}-{index}"


PUBLISH_S = 0.5  # how often a host tells the driver how far it has got


def progress_name(names: dict[str, str], index: int) -> str:
    return f"{names['stop'][:-len('stop')]}progress-{index}"


def publisher(names: dict[str, str], index: int, client):
    """The host's ``on_progress``: its counts so far, set where the driver reads them, every PUBLISH_S."""
    from distributed import Variable

    variable = Variable(progress_name(names, index), client=client)
    last = [0.0]

    def publish(elapsed: float, nbytes: int, nrequests: int, nerrors: int) -> None:
        if elapsed - last[0] >= PUBLISH_S:
            last[0] = elapsed
            variable.set((elapsed, nbytes, nrequests, nerrors))

    return publish


def run_host(job, index: int, label: str, names: dict[str, str], clock_offset_s: float, run_id: str,
             destination: Destination = NOWHERE) -> dict:
    """A dask task, pinned to its worker: ``job(out, index=index)`` run as host ``label`` under the run id the
    driver chose (so it can name what a lost host wrote); its status, summary and dataset files.  With a
    ``destination`` in a store (this host's part of the driver's) its rows go straight there as it flushes them,
    nothing is kept on this machine, and it hands back only its manifest: what it sent, with digests."""
    from distributed import Event, Variable, get_client

    client = get_client()
    stop, finished = threading.Event(), threading.Event()
    remote_stop = Event(names["stop"], client=client)

    def watch_stop() -> None:  # the driver's Ctrl-C reaches this worker's drive loop
        while not finished.is_set():
            if remote_stop.wait(timeout=STOP_POLL_S):
                stop.set()
                return

    def gate() -> None:
        Event(ready_event(names, index), client=client).set()
        if not Event(names["go"], client=client).wait(timeout=READY_TIMEOUT_S):
            raise RunFailed(f"no start time came from the driver within {READY_TIMEOUT_S:.0f} s")
        start = Variable(names["start"], client=client).get()
        delay = start + clock_offset_s - time.time()  # the driver's start time, on this worker's clock
        if delay > 0:
            stop.wait(delay)  # woken early by a stop

    watcher = threading.Thread(target=watch_stop, name="objperf-stop-watch", daemon=True)
    watcher.start()
    if destination:
        try:
            with controlled(Control(stop=stop, gate=gate, host=label, run_id=run_id)):
                result = job(destination, index=index, on_progress=publisher(names, index, client))
            return {"status": result.status, "summary": result.summary, "manifest": result.manifest}
        finally:
            finished.set()
    workdir = scratch.make("host")  # a killed worker's rows are swept by the next objperf on this host
    try:
        with controlled(Control(stop=stop, gate=gate, host=label, run_id=run_id)):
            result = job(workdir / "run", index=index, on_progress=publisher(names, index, client))
        files = {str(path.relative_to(workdir / "run")): path.read_bytes()
                 for path in sorted((workdir / "run").rglob("*")) if path.is_file() and not path.name.startswith(".")}
        return {"status": result.status, "summary": result.summary, "files": files}
    finally:
        finished.set()
        shutil.rmtree(workdir, ignore_errors=True)

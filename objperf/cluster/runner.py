"""The driver of a cluster run: one task per worker, pinned to it and never retried elsewhere (a worker
that dies is a lost host); every host prepared, then one start time set a little ahead for all; Ctrl-C
stops every host; one dataset and summary from what the hosts hand back."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from objperf.cluster.connect import Cluster, workers_present
from objperf.cluster.host import READY_TIMEOUT_S, progress_name, ready_event, run_host
from objperf.core.errors import ObjperfError, RunFailed
from objperf.dataset.destination import Destination
from objperf.dataset.store_prefix import StorePrefix
from objperf.run.control import stop_requested
from objperf.run.metadata import system_info, utc_now
from objperf.run.signals import cleaning_up

START_LEAD_S = 1.0  # from the last host ready to the common start: time to hand every host the start time
POLL_S = 0.2
STOP_WAIT_S = 120.0  # a stopped host has this long to cut its requests, abort its uploads and hand back
RESULT_WAIT_S = 120.0  # to fetch a finished host's dataset from its worker


@dataclass
class ClusterResult:
    """A cluster run's end, shaped as a single host's ``RunResult`` for the commands' report."""

    run_id: str
    status: str
    summary: dict
    manifest: dict
    destination: Destination
    lost: dict[str, str] = field(default_factory=dict)

    @property
    def dataset(self) -> Path | StorePrefix | None:
        return self.destination.place

    @cached_property
    def rows(self):
        return self.destination.load(verify=True)


def run_on_cluster(cluster: Cluster, job: Callable, *, kind: str, out: Destination | str | Path, target: dict,
                   workload: dict, say: Callable[[str], None], on_lost: Callable[[int, str], None] | None = None,
                   progress: Callable | None = None) -> ClusterResult:
    """``job(out, index=i)`` on every host at once (``out`` a directory, or a store prefix every host writes its
    parts into itself); ``on_lost(i, run_id)`` cleans up after a host that died
    (its open uploads, and what it wrote when asked to clean up); ``progress`` is told the hosts' counts summed
    as they come (``objperf.core.progress.Progress``)."""
    from distributed import Event, Variable

    from objperf.analysis.cluster_summary import cluster_summary
    from objperf.cluster.merge import cluster_rows, write_hosts
    from objperf.dataset.store_writer import StoreWriter, parts_left_by
    from objperf.dataset.writer import DatasetWriter

    run_id = uuid.uuid4().hex[:16]
    names = {name: f"objperf-{run_id}-{name}" for name in ("ready", "start", "go", "stop")}
    client, hosts = cluster.client, cluster.hosts
    manifest = {"run_id": run_id, "kind": kind, "started_utc": utc_now(), "system": system_info(),
                "target": target, "workload": workload, "cluster": {"scheduler": cluster.scheduler},
                "hosts": [{"label": h.label, "address": h.address, "clock_offset_s": h.clock_offset_s}
                          for h in hosts]}
    host_runs = [uuid.uuid4().hex[:16] for _ in hosts]
    for index in range(len(hosts)):  # read before a host publishes, a missing one would time out on the scheduler
        Variable(progress_name(names, index), client=client).set((0.0, 0, 0, 0))
    out = Destination.of(out)
    store = out.store  # hosts write straight into it
    writer = StoreWriter(store, manifest) if store else None  # its manifest says "running" before any request
    futures = [client.submit(run_host, job, i, host.label, names, host.clock_offset_s, host_runs[i],
                             out.for_host(i, host.label),
                             workers=[host.address], allow_other_workers=False, retries=0, pure=False,
                             key=f"objperf-{run_id}-host{i}")
               for i, host in enumerate(hosts)]
    stop = Event(names["stop"], client=client)
    status, lost, started = "complete", {}, False
    try:
        _start_together(client, hosts, futures, names)
        started = True
        say(f"{len(hosts)} hosts started together")
        while not all(f.done() for f in futures):
            for label, why in _note_lost(client, hosts, futures, lost):
                say(f"lost {label}: {why}; the other hosts go on")
            if progress is not None:
                progress(*_summed(client, names, len(hosts)))
            if stop_requested():
                raise KeyboardInterrupt
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        status = "interrupted"
        with cleaning_up():
            stop.set()
            Variable(names["start"], client=client).set(time.time())  # hosts still waiting start and stop at once
            Event(names["go"], client=client).set()
            _wait(futures, STOP_WAIT_S)
    except BaseException:
        stop.set()
        Variable(names["start"], client=client).set(time.time())  # hosts waiting for a start go, and stop at once
        Event(names["go"], client=client).set()
        _wait([f for f in futures if not f.cancelled()], STOP_WAIT_S)
        if writer is not None and not started:
            writer.remove_all()  # a run that could not start leaves its store prefix as it found it
        raise
    finally:
        stop.set()
    results = {}
    for i, (host, future) in enumerate(zip(hosts, futures)):
        try:
            results[host.label] = future.result(timeout=RESULT_WAIT_S) if future.status == "finished" else None
        except Exception as exc:
            lost.setdefault(host.label, _why(exc))
        if results.get(host.label) is None:
            lost.setdefault(host.label, "the host did not finish")
            if on_lost:
                on_lost(i, host_runs[i])
    if store:  # each host sent its parts as it went: the manifest names them, and a lost host's found by listing
        host_manifests = {label: r["manifest"] for label, r in results.items() if r}
        for manifest_of_host in host_manifests.values():
            writer.files.update(manifest_of_host.get("files", {}))
        for i, host in enumerate(hosts):
            if host.label in lost:
                writer.files.update(parts_left_by(writer.client, store.for_host(i, host.label)))
    else:
        writer = DatasetWriter(out.directory, manifest)  # each host flushed its rows as it went: here together
        host_manifests = {label: write_hosts(writer, label, r["files"]) for label, r in results.items() if r}
    for entry in manifest["hosts"]:
        done = host_manifests.get(entry["label"], {})
        entry.update(status="lost" if entry["label"] in lost else done.get("status"), system=done.get("system"),
                     run_id=done.get("run_id"), **({"lost": lost[entry["label"]]} if entry["label"] in lost else {}))
    if lost and status == "complete":
        status = "failed"
    rows = cluster_rows(writer)
    writer.rows = len(rows)
    summary = cluster_summary(rows, {h.label: results.get(h.label) for h in hosts}, lost)
    if lost:
        summary["error"] = "lost " + "; ".join(f"{label} ({why})" for label, why in lost.items()) + \
                           ": the other hosts' rows are kept"
    writer.close(status, ended_utc=utc_now(), hosts=manifest["hosts"], summary=summary)
    return ClusterResult(run_id, status, summary, writer.manifest, out, lost)


def _start_together(client, hosts, futures, names: dict[str, str]) -> None:
    """Until every host has built its part of the run, then one start time for all.  Hosts say they are ready
    through events, which the driver looks at without waiting: a queue's timed-out waits would fill the
    scheduler's log.  A host whose worker left before it was ready ends the wait at once: its task, pinned to
    that worker, would never run elsewhere."""
    from distributed import Event, Variable

    count = len(hosts)
    ready = [Event(ready_event(names, i), client=client) for i in range(count)]
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not all(event.is_set() for event in ready):
        for future in futures:
            if future.status == "error":
                raise _host_error(future.exception())
        present = set(workers_present(client))
        gone = [host for host, event in zip(hosts, ready) if host.address not in present and not event.is_set()]
        if gone:
            for host, future in zip(hosts, futures):
                if host in gone:
                    future.cancel()  # pinned to a worker that is gone: it would never run, nor end
            raise RunFailed(f"{', '.join(f'{h.label} (worker {h.address})' for h in gone)} left the cluster "
                            "before the run could start")
        if time.monotonic() > deadline:
            raise RunFailed(f"only {sum(e.is_set() for e in ready)} of {count} hosts were ready within "
                            f"{READY_TIMEOUT_S:.0f} s")
        if stop_requested():
            raise KeyboardInterrupt
        time.sleep(POLL_S)
    Variable(names["start"], client=client).set(time.time() + START_LEAD_S)
    Event(names["go"], client=client).set()


def _note_lost(client, hosts, futures, lost: dict[str, str]) -> list[tuple[str, str]]:
    """A host whose worker left the cluster is lost: its task is cancelled, never rerun elsewhere.  The hosts
    newly lost, with why."""
    present = set(workers_present(client))
    newly = []
    for host, future in zip(hosts, futures):
        if not future.done() and host.address not in present and host.label not in lost:
            lost[host.label] = f"worker {host.address} left the cluster mid-run"
            newly.append((host.label, lost[host.label]))
            future.cancel()
    return newly


def _summed(client, names: dict[str, str], count: int) -> tuple[float, int, int, int]:
    """The hosts' progress so far, summed (the longest elapsed time): one bar for the whole cluster."""
    from distributed import Variable

    elapsed, nbytes, nrequests, nerrors = 0.0, 0, 0, 0
    for index in range(count):
        try:
            e, b, r, f = Variable(progress_name(names, index), client=client).get(timeout=0.05)
        except Exception:  # noqa: BLE001 - not published yet (a TimeoutError), or a host gone
            continue
        elapsed, nbytes, nrequests, nerrors = max(elapsed, e), nbytes + b, nrequests + r, nerrors + f
    return elapsed, nbytes, nrequests, nerrors


def _wait(futures, timeout: float) -> None:
    from distributed import wait

    try:
        wait(futures, timeout=timeout)
    except TimeoutError:
        pass


def _host_error(exc: BaseException) -> ObjperfError:
    return exc if isinstance(exc, ObjperfError) else RunFailed(f"a host could not run: {_why(exc)}")


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if not isinstance(exc, ObjperfError) else str(exc)


def cluster_of(args, invocation):
    """The cluster ``args`` (``objperf.options.groups.ClusterOptions``) names (``--cluster`` or
    ``--local-cluster``), as a context."""
    from objperf.cluster.connect import open_cluster

    return open_cluster(args.cluster, args.local_cluster, workers=args.workers, wait_for=args.wait_for,
                        wait_timeout=args.wait_timeout, say=invocation.say)


def run_across(args, invocation, job: Callable, **run) -> ClusterResult:
    """``job`` on every host of the cluster ``args`` names."""
    with cluster_of(args, invocation) as cluster, invocation.progress(getattr(args, "duration", None)) as progress:
        return run_on_cluster(cluster, job, say=invocation.say, progress=progress, **run)

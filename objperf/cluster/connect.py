"""Reaching the cluster a run is spread over: a dask scheduler's address, or a LocalCluster of worker
processes started here; the workers to use, their objperf version and their clocks."""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from objperf.core.errors import UsageError
from objperf.core.progress import phase
from objperf.core.version import __version__

CONNECT_TIMEOUT_S = 5.0
WAIT_FOR_TIMEOUT_S = 60.0
CLOCK_REFUSED_S = 1.0  # as warp: hosts whose clocks disagree this much cannot start together
CLOCK_WARNED_S = 0.05


@dataclass
class Host:
    address: str  # the worker's dask address
    label: str  # what its rows call it: the host name, with the worker's name where several share a host
    hostname: str
    clock_offset_s: float  # its clock minus the driver's
    facts: dict = field(default_factory=dict)


@dataclass
class Cluster:
    client: object
    hosts: list[Host]
    scheduler: str

    def first(self, count: int | None) -> Cluster:
        """The cluster's first ``count`` hosts (all of them for None): a study step over fewer hosts."""
        if count is None:
            return self
        if count > len(self.hosts):
            raise UsageError(f"the cluster has {len(self.hosts)} worker(s), the run asks for {count}")
        return Cluster(self.client, self.hosts[:count], self.scheduler)


def worker_facts() -> dict:
    """Run on each worker: what the driver checks before a run."""
    return {"version": __version__, "hostname": socket.gethostname(), "time": time.time()}


@contextlib.contextmanager
def open_cluster(address: str | None, local_workers: int | None, *, workers: int | None, wait_for: int | None,
                 say: Callable[[str], None], wait_timeout: float = WAIT_FOR_TIMEOUT_S) -> Iterator[Cluster]:
    """The cluster to run on, its hosts checked (versions, clocks); closed (a local one stopped) after."""
    from objperf.cluster.dasklog import dask_log

    with dask_log(say) as log:
        yield from _open(address, local_workers, log, workers=workers, wait_for=wait_for, say=say,
                         wait_timeout=wait_timeout)


def _open(address: str | None, local_workers: int | None, log, *, workers: int | None, wait_for: int | None,
          say: Callable[[str], None], wait_timeout: float) -> Iterator[Cluster]:
    from distributed import Client, LocalCluster

    from objperf.cluster.dasklog import stderr_into

    local = None
    try:
        if local_workers:
            with phase(f"starting a local cluster of {local_workers} dask workers…"), \
                    stderr_into(log):  # the workers log to their stderr: the file, unless asked for
                local = LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address=None, silence_logs=logging.WARNING)
            address = local.scheduler_address
        try:
            client = Client(address, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the dask scheduler at {address}: {exc}") from None
        except ValueError as exc:
            raise UsageError(f"bad --cluster {address!r}: {exc}") from None
        try:
            hosts = _hosts(client, workers=workers, wait_for=wait_for, wait_timeout=wait_timeout)
            say(f"cluster {address}: {len(hosts)} worker(s) on " + ", ".join(h.label for h in hosts))
            for host in hosts:
                if abs(host.clock_offset_s) > CLOCK_WARNED_S:
                    say(f"warning: {host.label}'s clock is {host.clock_offset_s * 1000:+.0f} ms off this one's")
            yield Cluster(client, hosts, address)
        finally:
            client.close()
    finally:
        if local is not None:
            local.close()


def workers_present(client) -> dict[str, dict]:
    """The workers connected now, by address, asked of the scheduler.  Not ``client.scheduler_info()``: it
    returns the client's cache, which a periodic refresh rewrites without the workers at any moment."""
    return client.sync(client.scheduler.identity, n_workers=-1)["workers"]


def _hosts(client, *, workers: int | None, wait_for: int | None, wait_timeout: float) -> list[Host]:
    if wait_for:
        try:
            client.wait_for_workers(wait_for, timeout=wait_timeout)
        except TimeoutError:
            found = len(workers_present(client))
            raise UsageError(f"only {found} of the {wait_for} workers asked for joined within "
                             f"{wait_timeout:g} s") from None
    info = workers_present(client)
    addresses = sorted(info)
    wanted = workers or len(addresses)
    if not addresses or wanted > len(addresses):
        raise UsageError(f"the cluster has {len(addresses)} worker(s), the run asks for {wanted}")
    addresses = addresses[:wanted]
    hosts = []
    for address in addresses:
        t0 = time.time()
        facts = client.run(worker_facts, workers=[address])[address]
        t1 = time.time()
        if facts["version"] != __version__:
            raise UsageError(f"worker {address} runs objperf {facts['version']}, this driver {__version__}: "
                             "install the same version everywhere")
        offset = facts["time"] - (t0 + t1) / 2
        if abs(offset) > CLOCK_REFUSED_S:
            raise UsageError(f"worker {address}'s clock is {offset:+.2f} s off this one's (more than "
                             f"{CLOCK_REFUSED_S:.0f} s): synchronize the clocks (NTP) first")
        hosts.append(Host(address, facts["hostname"], facts["hostname"], offset, facts))
    shared = [h for h in hosts if sum(o.hostname == h.hostname for o in hosts) > 1]
    for host in shared:
        host.label = f"{host.hostname}/{info[host.address].get('name', host.address)}"
    return sorted(hosts, key=lambda h: h.label)

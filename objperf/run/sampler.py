"""Evidence gathered beside every run, about ten times a second: bytes each NIC
received and sent, the process's own CPU (user, system) and every core's CPU,
read through psutil (Linux and macOS alike).

It is how a result proves itself: the application's byte count should agree
with the NIC's, and a client that saturates its cores has measured itself, not
the store."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import psutil

NIC_COLUMNS = ("t", "iface", "rx_bytes", "tx_bytes")
CPU_COLUMNS = ("t", "cpu", "user_s", "system_s", "idle_s")
# Below this many body bytes, headers and other traffic outweigh them: NIC against app says nothing.
COMPARED_FROM_BYTES = 1 << 20
# A run shorter than this is mostly its start (imports, a server's first answers): its CPU says nothing of
# whether the client held the throughput back.
CPU_BOUND_FROM_S = 3.0


def read_nics() -> dict[str, tuple[int, int]]:
    """Cumulative (rx bytes, tx bytes) per interface."""
    return {name: (c.bytes_recv, c.bytes_sent) for name, c in psutil.net_io_counters(pernic=True).items()}


def read_cores() -> dict[str, tuple[float, float, float]]:
    """Cumulative (user, system, idle) seconds per core, named cpu0, cpu1, … as /proc/stat names them."""
    cores = {}
    for index, t in enumerate(psutil.cpu_times(percpu=True)):
        user = t.user + getattr(t, "nice", 0.0)
        system = t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)
        cores[f"cpu{index}"] = (user, system, t.idle + getattr(t, "iowait", 0.0))
    return cores


def read_process() -> tuple[float, float]:
    times = os.times()
    return times.user, times.system


class Sampler:
    """``start()``, ``stop()``, then ``nic_table()`` / ``cpu_table()`` as dicts of NumPy columns."""

    def __init__(self, interval_s: float = 0.1):
        self.interval_s = interval_s
        self._nic: list[tuple] = []
        self._cpu: list[tuple] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handed = {"nic": 0, "cpu": 0}

    def start(self) -> None:
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="objperf-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        self._sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        now = time.time()
        for iface, (rx, tx) in read_nics().items():
            self._nic.append((now, iface, rx, tx))
        user, system = read_process()
        self._cpu.append((now, "process", user, system, float("nan")))
        for core, (user, system, idle) in read_cores().items():
            self._cpu.append((now, core, user, system, idle))

    def take_new(self) -> dict[str, dict[str, np.ndarray]]:
        """The samples not handed out before, per table (for flushing while the run goes)."""
        out = {}
        for kind, rows, names in (("nic", self._nic, NIC_COLUMNS), ("cpu", self._cpu, CPU_COLUMNS)):
            end = len(rows)
            if end > self._handed[kind]:
                out[kind] = _columns(rows[self._handed[kind]:end], names)
                self._handed[kind] = end
        return out

    def nic_table(self) -> dict[str, np.ndarray]:
        return _columns(list(self._nic), NIC_COLUMNS)

    def cpu_table(self) -> dict[str, np.ndarray]:
        return _columns(list(self._cpu), CPU_COLUMNS)

    def evidence(self, app_bytes: dict[str, int], wall_s: float, engine_threads: int) -> dict:
        """App bytes against NIC bytes, and whether the client looked CPU-bound."""
        nic = self.nic_table()
        cpu = self.cpu_table()
        report: dict = {}
        if len(nic["t"]):
            deltas = {}
            for iface in sorted(set(nic["iface"].tolist())):
                mine = nic["iface"] == iface
                deltas[str(iface)] = (int(nic["rx_bytes"][mine][-1] - nic["rx_bytes"][mine][0]),
                                      int(nic["tx_bytes"][mine][-1] - nic["tx_bytes"][mine][0]))
            busiest = max(deltas, key=lambda k: sum(deltas[k]))
            rx, tx = deltas[busiest]
            report["nic"] = busiest
            report["nic_rx_bytes"], report["nic_tx_bytes"] = rx, tx
            for direction, nic_bytes in (("read", rx), ("write", tx)):
                app = app_bytes.get(direction, 0)
                if app >= COMPARED_FROM_BYTES:
                    report[f"nic_vs_app_{direction}_pct"] = (nic_bytes - app) / app * 100
        process = cpu["cpu"] == "process"
        if process.sum() >= 2 and wall_s > 0:
            used = (cpu["user_s"][process][-1] - cpu["user_s"][process][0]) + \
                   (cpu["system_s"][process][-1] - cpu["system_s"][process][0])
            cores = os.cpu_count() or 1
            usable = min(engine_threads + 1, cores)
            report["client_cores_busy"] = used / wall_s
            report["client_cpu_bound"] = bool(wall_s >= CPU_BOUND_FROM_S and used / wall_s >= 0.85 * usable)
            busy = []
            for core in sorted(set(cpu["cpu"][~process].tolist())):
                mine = cpu["cpu"] == core
                total = sum(cpu[c][mine][-1] - cpu[c][mine][0] for c in ("user_s", "system_s", "idle_s"))
                idle = cpu["idle_s"][mine][-1] - cpu["idle_s"][mine][0]
                busy.append(1 - idle / total if total > 0 else 0.0)
            report["cores_busy_pct"] = [round(b * 100, 1) for b in busy]
        return report


def _columns(rows: list[tuple], names: tuple[str, ...]) -> dict[str, np.ndarray]:
    if not rows:
        return {name: np.zeros(0) for name in names}
    return {name: np.array([row[i] for row in rows]) for i, name in enumerate(names)}

"""The drive loop's ``Part`` calls that a queue-mode workload's feeder (a mix, a LIST run's listers, a batch delete)
makes alike: waiting for a job to finish, and ending — at its end, cut now, or stopped — with every row of what
was in flight taken."""

from __future__ import annotations

import time

from objperf.run.drive import drain_until_done


class QueuedPart:
    """Mixed into a feeder that has ``workload`` (its ``duration``), ``engine`` (queue mode), ``_take(rows)``,
    ``in_flight``, ``stopping`` and ``deadline``."""

    def start(self) -> None:
        """The engine started, the run's deadline set from its duration."""
        if self.workload.duration:
            self.deadline = time.monotonic() + self.workload.duration
        self.engine.start(self.workload.duration or 0.0)

    def wait(self, timeout: float) -> None:
        self.engine.wait_finished(timeout)

    def finish(self) -> None:
        self.close()

    def abort(self) -> None:
        self.close(abort=True)

    def end_now(self) -> None:
        """The run's end came early (its throughput held): its time is up now, the requests in flight cut."""
        self.deadline = time.monotonic()
        self.engine.stop(abort=True)

    def close(self, *, abort: bool = False) -> None:
        self.stopping = True
        self.engine.stop(abort=abort)
        self.engine.close_queue()
        drain_until_done(self.engine, self._take)
        self.in_flight.clear()

"""LIST runs: listers paging through one prefix with ListObjectsV2 on one engine in queue mode, a part of the one
drive loop (``objperf.run.drive.Part``), one row a page.

Each lister walks the listing a page at a time (a page's continuation token asks for the next) and starts over
after its last page.  Each page's document is held to the S3 contract as it comes (``objperf.s3.listing.
PageWalk``: names under the prefix, in order after the page before, at most max-keys of them, a truncated page
with a token never seen before in its pass): a page that breaks it fails its row with code 8 and ends that
pass, as does a page the store refused or that never came whole; the lister then starts over.  A row's
``offset`` is the page's number in its pass (0: the first), its ``length`` what the page lists (keys and
common prefixes), its ``bytes`` the page's."""

from __future__ import annotations

import time
from pathlib import Path

from objperf._engine.config import queue_engine
from objperf.core.errors import TargetError
from objperf.core.schema import OP_LIST, UNKNOWN_SIZE, cut_requests, ok_requests
from objperf.dataset.destination import Destination
from objperf.plan.limits import ensure_open_files
from objperf.plan.lists import PAGE_BOUND, ListWorkload
from objperf.run.answers import Breaches, broken
from objperf.run.drive import ProgressFn, drive
from objperf.run.queued_part import QueuedPart
from objperf.run.recorder import Recorder, RunResult
from objperf.s3.client import S3Client, S3Settings
from objperf.s3.listing import PageWalk


class Listers(QueuedPart):
    """``workload.concurrency`` listers, each with at most one page in flight, until the budget or a stop."""

    def __init__(self, client: S3Client, workload: ListWorkload, recorder: Recorder):
        self.workload, self.recorder = workload, recorder
        labels = recorder.labels
        self.first_label = len(labels["keys"])  # lister i's rows name key_index first_label + i: the prefix
        for _ in range(workload.concurrency):
            labels["buckets"].append(workload.bucket)
            labels["keys"].append(workload.prefix)
            labels["sizes"].append(UNKNOWN_SIZE)
        self.where = f"LIST s3://{workload.bucket}/{workload.prefix}"
        self.signed = client.list_page_signer(workload.bucket, workload.prefix, delimiter=workload.delimiter,
                                              max_keys=workload.max_keys, expires=workload.url_lifetime)
        self.engine = queue_engine(workload.concurrency + 1, **workload.engine_settings(client.endpoint),
                                   **client.settings.engine_tls())
        self.walks: list[PageWalk | None] = [None] * workload.concurrency
        self.tokens: list[str | None] = [None] * workload.concurrency
        self.in_flight: dict[int, int] = {}  # lister → the job-table entry of its page
        self.asked = self.passes_started = self.passes_done = 0
        self.pages = self.failed = self.page_bytes = 0
        self.breaches = Breaches()
        self.stopping = False
        self.deadline = 0.0

    # -- the drive loop's part ---------------------------------------------------------------

    def start(self) -> None:
        super().start()
        for lister in range(self.workload.concurrency):
            self._new_pass(lister)

    @property
    def done(self) -> bool:
        return self.stopping and not self.in_flight

    def step(self) -> None:
        self._take(self.engine.drain())
        if not self.stopping and (not self.in_flight or (self.deadline and time.monotonic() >= self.deadline)):
            self.stopping = True  # every lister idle (the budget spent), or the time up
            self.engine.close_queue()
        if self.stopping and not self.engine.running:  # cut at the deadline: what was queued is never answered
            self.in_flight.clear()

    def progress(self) -> tuple[int, int, int]:
        return self.page_bytes, self.pages, self.failed

    def summary(self) -> dict:
        """What the run's summary adds: the passes through the listing completed, and any broken page."""
        return {"passes": self.passes_done, **self.breaches.said()}

    # -- the listers ---------------------------------------------------------------------

    def _new_pass(self, lister: int) -> None:
        passes = self.workload.passes
        if self.stopping or (passes is not None and self.passes_started >= passes):
            return
        self.passes_started += 1
        self.walks[lister] = PageWalk(self.where, self.workload.prefix, delimiter=self.workload.delimiter,
                                      max_keys=self.workload.max_keys)
        self.tokens[lister] = None
        self._ask(lister)

    def _ask(self, lister: int) -> None:
        requests = self.workload.requests
        if self.stopping or (requests is not None and self.asked >= requests):
            return
        walk = self.walks[lister]
        url = self.signed(self.tokens[lister])
        self.in_flight[lister] = self.engine.submit(url, OP_LIST, self.first_label + lister, walk.pages if walk else 0,
                                                    0, document=PAGE_BOUND)
        self.asked += 1

    def _take(self, cols: dict | None) -> None:
        if cols is None:
            return
        ok = ok_requests(cols["curl_code"], cols["status"]).tolist()
        cut = cut_requests(cols["curl_code"], cols["status"]).tolist()
        for row, label in enumerate(cols["key_index"].tolist()):
            lister = label - self.first_label
            entry = self.in_flight.pop(lister, None)
            if entry is None:
                continue
            document = self.engine.document(entry)
            self.pages += 1
            page = None
            if ok[row]:
                try:
                    page = self.walks[lister].take(document)
                except TargetError as exc:
                    broken(cols, row)
                    self.breaches.add(exc)
            if page is not None:
                cols["length"][row] = page.count
                self.page_bytes += len(document)
            elif not cut[row]:
                self.failed += 1
            if cut[row]:
                continue  # the run is ending
            if page is not None and page.truncated:
                self.tokens[lister] = page.token
                self._ask(lister)
                continue
            if page is not None:
                self.passes_done += 1
            self._new_pass(lister)  # after the last page, or a failed one: the listing from its start
        self.recorder.add(cols)


def run_list(settings: S3Settings, workload: ListWorkload, *, out: Destination | str | Path | None = None,
             on_progress: ProgressFn | None = None, keep_rows: bool = True) -> RunResult:
    """Listers paging through ``workload.prefix`` in ``workload.bucket``, a row a page."""
    workload.validate()
    out = Destination.of(out)
    client = S3Client(settings)
    client.check_region(workload.bucket)
    if not client.bucket_exists(workload.bucket):
        raise client.missing_bucket(workload.bucket)
    ensure_open_files(workload.concurrency, extra=8)
    recorder = Recorder("list", target={"kind": "s3", **settings.describe(), "endpoint": client.endpoint,
                                        "buckets": [workload.bucket], "prefix": workload.prefix},
                        workload=workload.describe(), out=out, buckets=[], keys=[], sizes=[],
                        engine_threads=workload.threads or 1, keep_rows=keep_rows)
    try:
        listers = Listers(client, workload, recorder)
    except BaseException:
        recorder.discard()
        raise
    status = drive(recorder, [listers], on_progress=on_progress)
    return recorder.finish(status, extra=listers.summary())

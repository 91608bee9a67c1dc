"""The one rule that decides whether a run that was not interrupted failed: the manifest's status,
the API's ``Run.status`` and the command's exit status all follow it, so none can say ``complete``
while another says the run failed."""

from __future__ import annotations


def failure(summary: dict) -> str | None:
    """Why the run whose ``summary`` this is failed, in one line; None when it did not."""
    if summary.get("error"):
        return summary["error"]
    requests, failed, cut = summary["requests"], summary["error_requests"], summary.get("cut_requests", 0)
    if not requests:
        return "no request was made"
    if not summary["ok_requests"] and not summary["bytes"]:
        return f"no request succeeded ({failed} failed{f', {cut} cut when the run ended' if cut else ''}) " \
               "and no byte moved"
    if failed and failed + cut == requests:
        # A store answering some requests with errors is a measurement; one answering none is a failed run.
        return f"no request succeeded ({failed} failed); the summary says how"
    left_open = summary.get("uploads_left_open") or []
    if left_open:
        return left_open_text(left_open)
    if summary.get("objects_failed"):
        return f"{summary['objects_failed']} of the objects begun failed (see the summary's errors)"
    if str(summary.get("verified", "")).startswith("FAILED"):
        return f"verification {summary['verified']}"
    return None


def left_open_text(left_open: list[str]) -> str:
    return (f"{len(left_open)} multipart upload(s) left open, the store did not take the aborts; abort them "
            f"yourself: {'; '.join(left_open)}")

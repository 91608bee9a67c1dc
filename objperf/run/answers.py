"""Rows whose answer's document says otherwise than their status: set in the drained columns before the
recorder takes them, so the dataset, the summary and ``objperf analyze`` all tell the same.

A document that breaks the S3 contract (a listing page out of order, a batch's answer naming a key not asked)
fails its row with code 8, objperf's code for an answer S3 would not give; a batch delete whose answer refuses
keys (an ``<Error>`` each, in a 200) fails its row with code 22 and the first refusal's S3 code.  A failed
row's bytes are never counted: they are 0, as the engine writes them for any other failure."""

from __future__ import annotations

import numpy as np

from objperf.core.curl_codes import CURLE_HTTP_RETURNED_ERROR, CURLE_WEIRD_SERVER_REPLY


def broken(cols: dict[str, np.ndarray], row: int) -> None:
    """Row ``row``'s answer broke the S3 contract."""
    cols["curl_code"][row] = CURLE_WEIRD_SERVER_REPLY
    cols["bytes"][row] = 0


def refused(cols: dict[str, np.ndarray], row: int, s3_error: str) -> None:
    """Row ``row``'s answer, a 200, refused what it was asked (with this S3 error code first)."""
    cols["curl_code"][row] = CURLE_HTTP_RETURNED_ERROR
    cols["s3_error"][row] = s3_error.encode("utf-8", "replace")  # the column's width cuts it (S3_ERROR_BYTES)
    cols["bytes"][row] = 0


class Breaches:
    """Answers that broke the S3 contract in a run: how many, and the first said in a line (for the summary)."""

    def __init__(self) -> None:
        self.count = 0
        self.first = ""

    def add(self, reason: object) -> None:
        self.count += 1
        self.first = self.first or str(reason)

    def said(self) -> dict:
        """``{"broken_answers": …}`` for the summary, or nothing when every answer kept the contract."""
        if not self.count:
            return {}
        return {"broken_answers": f"{self.count:,} answer(s) broke the S3 contract (failed rows, code 8); the "
                                  f"first: {self.first}"}

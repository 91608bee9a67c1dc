"""What a run would cost on each provider's list prices (``prices/prices.csv``): its requests by billing
class (every ranged GET is a class B request, every part upload a class A one), its bytes out to the
internet in the provider's egress bands, and what a TiB read or written in the run's pattern costs.
Prices change: every figure says when its prices were read, and that they are to be checked."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from objperf.core.curl_codes import NEVER_SENT
from objperf.core.errors import UsageError

PRICES = Path(__file__).with_name("prices") / "prices.csv"
GB = 1 << 30  # providers bill GB of 2^30 bytes
TIB = 1 << 40
# writes, and copies (CopyObject and UploadPartCopy are billed as PUTs); and LIST, not in rows
CLASS_A = frozenset({"PUT", "UPLOAD_PART", "CREATE_MPU", "COMPLETE_MPU", "COPY", "UPLOAD_PART_COPY"})
CLASS_B = frozenset({"GET", "HEAD"})  # reads; DELETE and AbortMultipartUpload are free everywhere listed


@lru_cache(maxsize=4)
def price_table(path: str | None = None) -> pd.DataFrame:
    table = pd.read_csv(path or PRICES)
    table["from_quantity"] = table["from_quantity"].fillna(0.0)
    table["to_quantity"] = table["to_quantity"].fillna(np.inf)
    table["free_quantity"] = table["free_quantity"].fillna(0.0)
    return table


def providers() -> list[str]:
    return list(dict.fromkeys(price_table()["id"]))


def check_providers(text: str) -> list[str]:
    """``--price r2,aws-s3`` → the ids, each known; one line otherwise."""
    wanted = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in providers()]
    if unknown or not wanted:
        raise UsageError(f"bad --price {text!r}: the price tables know {', '.join(providers())}")
    return wanted


def _prices(provider: str, item: str) -> pd.DataFrame:
    table = price_table()
    if provider not in set(table["id"]):
        raise UsageError(f"no prices for {provider!r}; the price tables know {', '.join(providers())}")
    return table[(table["id"] == provider) & (table["item"] == item)].sort_values("from_quantity")


def banded(provider: str, item: str, quantity: float, *, free_tier: bool = False) -> float:
    """The price of ``quantity`` (GB, or millions of requests) of ``item``, band by band."""
    bands = _prices(provider, item)
    if bands.empty or quantity <= 0:
        return 0.0

    def priced(amount: float) -> float:
        return sum(max(0.0, min(amount, b.to_quantity) - b.from_quantity) * b.price_usd for b in bands.itertuples())

    free = float(bands["free_quantity"].max()) if free_tier else 0.0  # the month's first units are free
    return priced(quantity) - priced(min(quantity, free))


def first_price(provider: str, item: str) -> float:
    bands = _prices(provider, item)
    return float(bands["price_usd"].iloc[0]) if len(bands) else 0.0


def billed_requests(df: pd.DataFrame) -> tuple[int, int]:
    """(class A, class B) requests that reached the store."""
    sent = ~((df["status"] == 0) & df["curl_code"].isin(NEVER_SENT))
    ops = df["op"].astype(str)
    return int((ops.isin(CLASS_A) & sent).sum()), int((ops.isin(CLASS_B) & sent).sum())


def cost(df: pd.DataFrame, provider: str, *, free_tier: bool = False) -> dict:
    """What the requests in ``df`` cost on ``provider``'s list prices, and per TiB read and written in their
    pattern (the same requests per byte).  ``free_tier`` takes a month's free allowance off first."""
    class_a, class_b = billed_requests(df)
    ops = df["op"].astype(str)
    read_bytes = float(df.loc[ops == "GET", "bytes"].sum())
    written_bytes = float(df.loc[ops.isin({"PUT", "UPLOAD_PART"}), "bytes"].sum())
    parts = {
        "class_a_usd": banded(provider, "class_a", class_a / 1e6, free_tier=free_tier),
        "class_b_usd": banded(provider, "class_b", class_b / 1e6, free_tier=free_tier),
        "egress_usd": banded(provider, "egress", read_bytes / GB, free_tier=free_tier),
        "retrieval_usd": banded(provider, "retrieval", read_bytes / GB),
    }
    reads = int(ops.isin(CLASS_B).sum())
    writes = int(ops.isin(CLASS_A).sum())
    per_tib_read = (reads / read_bytes * TIB * first_price(provider, "class_b") / 1e6
                    + TIB / GB * (first_price(provider, "egress") + first_price(provider, "retrieval"))) \
        if read_bytes else float("nan")
    per_tib_written = writes / written_bytes * TIB * first_price(provider, "class_a") / 1e6 \
        if written_bytes else float("nan")
    rows = _prices(provider, "class_b")
    return {"provider": provider, "requests_class_a": class_a, "requests_class_b": class_b,
            "egress_gb": read_bytes / GB, **parts, "usd": sum(parts.values()),
            "usd_per_tib_read": per_tib_read, "usd_per_tib_written": per_tib_written,
            "prices": f"list prices read {rows['read_on'].iloc[0] if len(rows) else '?'}: check them against "
                      f"{rows['source_url'].iloc[0] if len(rows) else 'the provider'}"}


def costs(df: pd.DataFrame, providers_: list[str], **kw) -> dict[str, dict]:
    return {provider: cost(df, provider, **kw) for provider in providers_}


def cost_per_tib(sizes: list[int], providers_: list[str] | None = None, *, direction: str = "read") -> pd.DataFrame:
    """USD per TiB moved in requests of each size (range size for reads, part size for writes), per provider:
    what the request pricing adds to the egress as requests get smaller."""
    rows = []
    for provider in providers_ or providers():
        for size in sizes:
            requests = TIB / size
            if direction == "read":
                usd = requests * first_price(provider, "class_b") / 1e6 + TIB / GB * (
                    first_price(provider, "egress") + first_price(provider, "retrieval"))
            else:
                usd = requests * first_price(provider, "class_a") / 1e6
            rows.append({"provider": provider, "size": size, "direction": direction, "usd_per_tib": usd})
    return pd.DataFrame(rows)


HOURS_A_MONTH = 730.0  # providers prorate GB-months by the hour over a 730-hour month


def benchmark_cost(provider: str, *, read_bytes: float, written_bytes: float, range_size: int, part_size: int,
                   stored_bytes: float, hours: float) -> dict:
    """What a whole benchmark costs on ``provider``'s list prices, item by item: its GETs (one class B request a
    range) and part uploads (one class A request a part, plus a create and a complete an object of 8 parts),
    the bytes read as egress (written bytes come in free everywhere listed), and ``stored_bytes`` kept for
    ``hours``.  Not the egress of every byte moved: an upload is not egress."""
    gets = read_bytes / range_size
    parts = written_bytes / part_size
    items = {
        "class_b_usd": banded(provider, "class_b", gets / 1e6),
        "class_a_usd": banded(provider, "class_a", parts * (1 + 2 / 8) / 1e6),
        "egress_usd": banded(provider, "egress", read_bytes / GB),
        "retrieval_usd": banded(provider, "retrieval", read_bytes / GB),
        "storage_usd": banded(provider, "storage", stored_bytes / GB) * hours / HOURS_A_MONTH,
    }
    rows = _prices(provider, "storage")
    return {"provider": provider, **items, "usd": sum(items.values()),
            "prices": f"list prices read {rows['read_on'].iloc[0] if len(rows) else '?'}, from "
                      f"{rows['source_url'].iloc[0] if len(rows) else 'the provider'}: check them"}

"""``object_size`` for rows that do not hold it: datasets written before objperf kept it, recovered on load
from what their manifests and rows say.

- a read's object: the size its run's manifest lists for that bucket and key (``target.objects``, in a
  mixed run ``target.read.objects``, in a study each step's);
- a PUT: its ``length`` (one PUT carries the whole object); a COMPLETE_MPU: its ``length`` (the object's);
- a multipart upload's other rows (its parts, CREATE_MPU, ABORT_MPU): the size its run wrote that key at,
  when it wrote the key at one size only;
- else UNKNOWN_SIZE (-1)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from objperf.core.schema import COLUMNS, UNKNOWN_SIZE

NEEDED = ("op", "bucket", "key", "length")
MAX_DEPTH = 8  # how deep into a manifest listed objects are looked for


def listed_sizes(manifests: list[dict]) -> dict[tuple[str, str], int]:
    """(bucket, key) → size, for every object a manifest lists with one size (a manifest is outside input:
    an entry that is not a bucket, a key and a whole size of 0 or more says nothing)."""
    found: dict[tuple[str, str], set[int]] = {}

    def walk(value, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        if isinstance(value, dict):
            objects = value.get("objects")
            if isinstance(objects, list):
                for entry in objects:
                    if isinstance(entry, dict) and isinstance(entry.get("bucket"), str) \
                            and isinstance(entry.get("key"), str) and isinstance(entry.get("size"), int) \
                            and not isinstance(entry.get("size"), bool) and entry["size"] >= 0:
                        found.setdefault((entry["bucket"], entry["key"]), set()).add(entry["size"])
            for item in value.values():
                walk(item, depth + 1)
        elif isinstance(value, list):
            for item in value:
                walk(item, depth + 1)

    for manifest in manifests:
        walk(manifest, 0)
    return {place: next(iter(sizes)) for place, sizes in found.items() if len(sizes) == 1}


def recover_object_sizes(df: pd.DataFrame, manifests: list[dict]) -> pd.DataFrame:
    """``df`` with ``object_size`` filled where it is missing (the column added, in its place, when absent)."""
    known = df["object_size"].to_numpy(dtype=np.float64, na_value=np.nan) if "object_size" in df.columns \
        else np.full(len(df), np.nan)
    missing = np.isnan(known)
    out = df.drop(columns=["object_size"]) if "object_size" in df.columns else df.copy()
    place = next((i for i, name in enumerate(out.columns) if name in COLUMNS
                  and COLUMNS.index(name) > COLUMNS.index("object_size")), len(out.columns))
    if not missing.any() and "object_size" in df.columns and list(df.columns).index("object_size") == place:
        return df  # today's rows
    sizes = np.where(missing, UNKNOWN_SIZE, known).astype(np.int64)
    if missing.any() and all(name in df.columns for name in NEEDED):
        sizes[missing] = _recovered(df[missing], manifests)
    # in its place (a study of object sizes from before the row column kept its own at the end)
    out.insert(place, "object_size", sizes)
    out.attrs = df.attrs
    return out


def _recovered(rows: pd.DataFrame, manifests: list[dict]) -> np.ndarray:
    op = rows["op"].astype(str).to_numpy()
    bucket, key = rows["bucket"].astype(str).to_numpy(), rows["key"].astype(str).to_numpy()
    length = rows["length"].to_numpy(dtype=np.int64)
    run = rows["run_id"].astype(str).to_numpy() if "run_id" in rows.columns else np.full(len(rows), "")
    out = np.full(len(rows), UNKNOWN_SIZE, dtype=np.int64)
    whole = np.isin(op, ("PUT", "COMPLETE_MPU"))
    out[whole] = length[whole]
    listed = listed_sizes(manifests)
    if listed:
        reads = np.flatnonzero(op == "GET")
        out[reads] = [listed.get(place, UNKNOWN_SIZE) for place in zip(bucket[reads], key[reads])]
    written: dict[tuple[str, str, str], set[int]] = {}
    for i in np.flatnonzero(whole):
        written.setdefault((run[i], bucket[i], key[i]), set()).add(int(length[i]))
    one = {place: next(iter(sizes)) for place, sizes in written.items() if len(sizes) == 1}
    parts = np.flatnonzero(np.isin(op, ("UPLOAD_PART", "CREATE_MPU", "ABORT_MPU")))
    out[parts] = [one.get(place, UNKNOWN_SIZE) for place in zip(run[parts], bucket[parts], key[parts])]
    return out

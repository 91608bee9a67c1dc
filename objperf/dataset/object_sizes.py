"""``object_size`` for rows that do not hold it: datasets written before objperf kept it, recovered on load
from what their manifests and rows say.

- a read's object (GET, HEAD, DELETE): the size its run's manifest lists for that bucket and key
  (``target.objects``; in a mixed run ``target.read.objects``);
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


def recover_object_sizes(df: pd.DataFrame, manifests: list[dict], *, in_place: bool = False) -> pd.DataFrame:
    """``df`` with ``object_size`` filled where it is missing (the column added, in its place, when absent);
    ``df`` itself when it holds every row's already, in its place.  ``in_place``: change ``df`` rather than a
    copy (a frame just loaded, that no one else holds)."""
    others = [name for name in df.columns if name != "object_size"]
    place = next((i for i, name in enumerate(others) if name in COLUMNS
                  and COLUMNS.index(name) > COLUMNS.index("object_size")), len(others))
    held = "object_size" in df.columns
    known = df["object_size"].to_numpy(dtype=np.float64, na_value=np.nan) if held else np.full(len(df), np.nan)
    missing = np.isnan(known)
    if held and not missing.any() and list(df.columns).index("object_size") == place:
        return df  # today's rows
    sizes = np.where(missing, UNKNOWN_SIZE, known).astype(np.int64)
    if missing.any() and all(name in df.columns for name in NEEDED):
        sizes[missing] = _recovered(df[missing], manifests)
    out = df if in_place else df.copy(deep=False)
    if held:  # in its place (a study of object sizes from before the row column kept its own at the end)
        out.pop("object_size")
    out.insert(place, "object_size", sizes)
    out.attrs = df.attrs
    return out


def _recovered(rows: pd.DataFrame, manifests: list[dict]) -> np.ndarray:
    """The object sizes of ``rows`` as the rules above recover them, a row's place (run, bucket, key) at a
    time: a few thousand places, not a Python step per row."""
    op = rows["op"]
    length = rows["length"].to_numpy(dtype=np.int64)
    run = rows["run_id"] if "run_id" in rows.columns else pd.Series("", index=rows.index)
    codes, places = pd.MultiIndex.from_arrays([run, rows["bucket"], rows["key"]]).factorize()
    out = np.full(len(rows), UNKNOWN_SIZE, dtype=np.int64)
    whole = op.isin(["PUT", "COMPLETE_MPU"]).to_numpy()
    out[whole] = length[whole]
    listed = listed_sizes(manifests)
    reads = op.isin(["GET", "HEAD", "DELETE"]).to_numpy()  # of objects the run listed
    if listed and reads.any():
        at_place = np.array([listed.get((str(b), str(k)), UNKNOWN_SIZE) for _, b, k in places], dtype=np.int64)
        out[reads] = at_place[codes[reads]]
    parts = op.isin(["UPLOAD_PART", "CREATE_MPU", "ABORT_MPU"]).to_numpy()
    if parts.any() and whole.any():
        smallest = np.full(len(places), np.iinfo(np.int64).max)
        largest = np.full(len(places), -1, dtype=np.int64)
        np.minimum.at(smallest, codes[whole], length[whole])
        np.maximum.at(largest, codes[whole], length[whole])
        one = np.where((largest >= 0) & (smallest == largest), largest, UNKNOWN_SIZE)  # written at one size
        out[parts] = one[codes[parts]]
    return out

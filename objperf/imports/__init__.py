"""Other tools' results in objperf's terms: MinIO warp's per-operation files as per-request rows, elbencho's
result and live CSV files as per-phase and per-interval tables."""


def import_warp(path):
    """MinIO warp's per-operation file as objperf rows (``attrs["manifest"]`` names warp and its command)."""
    from objperf.imports import warp

    rows, command = warp.parse(path)
    rows.attrs["manifest"] = {"kind": "import", "source": "warp", "file": str(path), "command": command}
    return rows


def import_elbencho(path):
    """elbencho's --csvfile as a phases table or its --livecsv as an intervals table."""
    from objperf.imports import elbencho

    kind, table, command = elbencho.parse(path)
    table.attrs["manifest"] = {"kind": "import", "source": "elbencho", "table": kind, "file": str(path),
                               "command": command}
    return table

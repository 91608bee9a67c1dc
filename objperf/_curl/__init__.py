"""libcurl beneath both planes: its declarations (``curl.pxd``, ``objperf_helpers.h``), its versions, and
``exchange``, one request at a time over a kept easy handle (the control plane's client)."""

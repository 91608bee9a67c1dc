"""The steady-state rule's defaults, named once for the rooms that need them: the options offer them, the
workloads carry them into a manifest, the analysis judges by them (``objperf.analysis.steady``).  They are
warp's ``--autoterm``: 7 samples in a row within 7.5 % (warp's window is ``--autoterm.dur``, 10 s)."""

from __future__ import annotations

WINDOW_S = 10.0
SAMPLES = 7
TOLERANCE_PCT = 7.5
# Without --duration or --requests, a run --until-steady ends after this long if it never settles (warp's own
# default duration).
CAP_S = 300.0
# The shortest window a run may ask for: its samples are judged as the drive loop hands rows over (every 0.1 s).
MIN_WINDOW_S = 1.0

"""One run, from engines to dataset: ``drive`` (the one loop), ``reads`` and ``writes`` (the kinds of
run), ``uploader`` (the upload control plane), ``recorder`` (rows, manifest, clock), ``sampler`` and
``metadata`` (the evidence and the system facts kept beside the rows)."""

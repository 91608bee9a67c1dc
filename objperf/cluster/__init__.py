"""One run on many hosts: the workload runs on every worker of a dask.distributed cluster at once, each
worker through the same drive loop as a single-host run, and the driver writes one dataset."""

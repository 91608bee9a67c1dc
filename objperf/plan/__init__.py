"""What a run asks for: read and write workloads, checked once; the upload payload; the open files
and memory a workload needs, checked before any engine is built."""

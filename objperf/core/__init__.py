"""The ground floor every other room stands on: the version, errors and exit codes, the row schema, sizes, what
may be shown (sanitize, JSON text, progress), scratch space and optional extras.  It imports nothing of objperf
above it."""

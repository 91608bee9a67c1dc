"""S3 servers objperf starts itself, on loopback only: the embedded SeaweedFS."""

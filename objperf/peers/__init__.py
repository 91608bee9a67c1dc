"""The clients objperf is measured against: their command lines and outside measurement (``clients``),
the client comparison (``comparison``) and the bench (``bench``)."""

"""Each run kind as a library function: given its options (``objperf.options``) and an ``Invocation`` (who
runs it and how it talks back), it checks them, runs through the one drive loop and returns what it
measured.  ``objperf.api`` and the commands both call these."""

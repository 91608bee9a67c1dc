"""objperf's exit codes, as every command and the shell see them."""

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT; a run ended by SIGTERM exits 143 (128 + 15), as shells report it

"""What an option's value can be: a size, a duration, a count, one of some choices, a list… Each kind reads
a command-line word and takes a Python value (``range_size=8 << 20`` or ``range_size="8MiB"``), and both go
through the same check, so a shell and a notebook are refused alike, in one line."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from objperf.core.errors import UsageError
from objperf.core.sizes import format_size, parse_duration, parse_size


@dataclass(frozen=True)
class Kind:
    """``parse`` turns one word (or, from Python, one value) into the option's value, raising ``UsageError``;
    ``shown`` writes a default for help texts; ``metavar`` names the word in usage lines."""

    name: str
    parse: Callable[[Any], Any]
    metavar: str | None = None
    shown: Callable[[Any], str] = str
    choices: tuple[str, ...] | None = None

    def take(self, value: Any) -> Any:
        """A value given from Python: words are read as on the command line, other values checked the same."""
        return self.parse(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise UsageError(f"expected text, not {value!r}")
    return value


def _path(value: Any) -> str:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return _text(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"not a whole number: {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"not a whole number: {value!r}") from None
    if number < 1:
        raise UsageError(f"must be at least 1: {value!r}")
    return number


def _size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"bad size {value!r}: give bytes or a size such as 8MiB")
    return parse_size(value)


def _duration(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UsageError(f"bad duration {value!r}: give seconds or a duration such as 30s")
    return parse_duration(value)


def _buffer_size(value: Any) -> int:
    """libcurl's receive buffer takes 1 KiB to 10 MiB (CURLOPT_BUFFERSIZE); anything else is refused, not
    quietly replaced by the default."""
    size = _size(value)
    if not 1 << 10 <= size <= 10 << 20:
        raise UsageError(f"{value!r}: libcurl's buffer size is 1KiB to 10MiB")
    return size


def _url_lifetime(value: Any) -> int:
    from objperf.s3.settings import check_url_lifetime

    seconds = _duration(value)
    check_url_lifetime(seconds)
    return int(seconds)


def _items(value: Any) -> tuple[str, ...]:
    """``a,b`` (or, from Python, a list) → ("a", "b")."""
    if isinstance(value, str):
        return tuple(item for item in value.split(",") if item)
    if isinstance(value, Sequence) and all(isinstance(item, str) for item in value):
        return tuple(item for item in value if item)
    raise UsageError(f"expected comma-separated names, not {value!r}")


def _providers(value: Any) -> tuple[str, ...]:
    from objperf.analysis.cost import check_providers

    return tuple(check_providers(",".join(_items(value))))


def _per_second(value: Any) -> str | Any:
    """``200/s`` → ``200``; a value given from Python is taken as it is."""
    if isinstance(value, str) and value.strip().lower().endswith("/s"):
        return value.strip()[:-2]
    return value


def _rate(value: Any) -> float:
    """Requests a second: ``200``, ``200/s``, ``12.5/s``."""
    number = _per_second(value)
    try:
        rate = float(number)
    except (TypeError, ValueError):
        raise UsageError(f"bad rate {value!r}: give requests a second, such as 200/s") from None
    if isinstance(value, bool) or not 0 < rate < 1e9:
        raise UsageError(f"bad rate {value!r}: give a positive number of requests a second, such as 200/s")
    return rate


def _bandwidth(value: Any) -> int:
    """Bytes a second: ``100MiB/s``, ``100MiB``, or a number of bytes."""
    rate = _size(_per_second(value))
    if rate < 1:
        raise UsageError(f"bad rate {value!r}: give bytes a second, such as 100MiB/s")
    return rate


def _percent(value: Any) -> float:
    """A percentage: ``7.5%`` or ``7.5`` (from Python, a number of percent)."""
    text = value.strip().removesuffix("%") if isinstance(value, str) else value
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise UsageError(f"bad percentage {value!r}: give one such as 7.5%") from None
    if isinstance(value, bool) or not 0 < number < 100:
        raise UsageError(f"bad percentage {value!r}: give one above 0 and below 100, such as 7.5%")
    return number


def _sizes(value: Any):
    from objperf.plan.sizes import parse_sizes

    return parse_sizes(value)


def _seed(value: Any) -> int:
    """A seed: any whole number from 0 to 2**63 - 1."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"bad seed {value!r}: give a whole number")
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"bad seed {value!r}: give a whole number") from None
    if not 0 <= number < 1 << 63:
        raise UsageError(f"bad seed {value!r}: give a whole number from 0 to 2**63 - 1")
    return number


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"a flag takes True or False, not {value!r}")
    return value


def _duration_shown(seconds: float) -> str:
    for unit, factor in (("h", 3600), ("m", 60)):
        if seconds >= factor and seconds % factor == 0:
            return f"{seconds / factor:g}{unit}"
    return f"{seconds:g}s"


TEXT = Kind("text", _text)
PATH = Kind("path", _path)
COUNT = Kind("count", _count, metavar="N")
SIZE = Kind("size", _size, metavar="SIZE", shown=lambda n: format_size(n).replace(" ", ""))
DURATION = Kind("duration", _duration, metavar="DURATION", shown=_duration_shown)
BUFFER_SIZE = Kind("size", _buffer_size, metavar="SIZE", shown=SIZE.shown)
URL_LIFETIME = Kind("duration", _url_lifetime, metavar="DURATION", shown=_duration_shown)
ITEMS = Kind("list", _items, metavar="A,B,...", shown=",".join)
PROVIDERS = Kind("list", _providers, metavar="PROVIDER[,...]", shown=",".join)
FLAG = Kind("flag", _flag)
SIZES = Kind("sizes", _sizes, metavar="SIZES")
SEED = Kind("seed", _seed, metavar="N")
RATE = Kind("rate", _rate, metavar="N/s", shown=lambda r: f"{r:g}/s")
BANDWIDTH = Kind("bandwidth", _bandwidth, metavar="SIZE/s", shown=lambda n: SIZE.shown(n) + "/s")
PERCENT = Kind("percentage", _percent, metavar="PCT", shown=lambda p: f"{p:g}%")


def choice(*values: str) -> Kind:
    def parse(value: Any) -> str:
        if value not in values:
            raise UsageError(f"invalid choice: {value!r} (choose from {', '.join(map(repr, values))})")
        return value

    return Kind("choice", parse, choices=values)

"""How an option is defined once: a dataclass field whose metadata holds its help, its kind, its other
flags and its group.  ``build`` makes an options object from Python keywords with the checks the command
line applies; ``objperf.commands.parser`` builds the command's parser from the same fields."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from objperf.core.errors import UsageError
from objperf.options.kinds import FLAG, TEXT, Kind

SPEC = "objperf"  # the metadata key an option's Spec is kept under
T = TypeVar("T")


@dataclass(frozen=True)
class Spec:
    help: str
    kind: Kind
    flags: tuple[str, ...] = ()  # other names on the command line: "-c", "--endpoint-url"
    group: str | None = None  # the heading it is listed under in --help
    positional: bool = False
    required: bool = False  # a positional the command cannot do without (a study's name)
    repeat: bool = False  # given several times on the command line; a tuple of values
    metavar: str | None = None
    default_text: str | None = None  # the default in words where the field's own is None ("the cores")


def option(default: Any, help: str, kind: Kind = TEXT, **spec: Any) -> Any:
    """A field of an options dataclass: ``concurrency: int = option(16, "requests in flight", COUNT)``."""
    return dataclasses.field(default=default, metadata={SPEC: Spec(help, kind, **spec)})


def flag(help: str, **spec: Any) -> Any:
    return option(False, help, FLAG, **spec)


def spec_of(field: dataclasses.Field) -> Spec:
    return field.metadata[SPEC]


def options_of(cls: type) -> Iterator[tuple[dataclasses.Field, Spec]]:
    """The options of an options class, in the order they are defined (the bases' first)."""
    for field in dataclasses.fields(cls):
        if SPEC in field.metadata:
            yield field, field.metadata[SPEC]


def long_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def help_text(field: dataclasses.Field, spec: Spec) -> str:
    """The option's help with its default, written once, from the definition."""
    default = spec.default_text
    if default is None and field.default not in (None, False, ()):
        default = spec.kind.shown(field.default)
    return f"{spec.help} (default {default})" if default else spec.help


def taken(field: dataclasses.Field, spec: Spec, value: Any) -> Any:
    """A Python value for ``field``, read and checked as its command-line word would be."""
    try:
        if not spec.repeat:
            return spec.kind.take(value)
        if isinstance(value, Mapping):  # --grid concurrency=1,2 / --endpoint-for CLIENT=URL
            value = [f"{key}={_word(item)}" for key, item in value.items()]
        elif isinstance(value, str):
            value = [value]
        return tuple(spec.kind.take(item) for item in value)
    except UsageError as exc:
        raise UsageError(f"argument {long_flag(field.name)}: {exc}") from None


def _word(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list | tuple | set) else str(value)


def build(cls: type[T], given: Mapping[str, Any], *, what: str = "") -> T:
    """An options object from keywords named as the long flags (``range_size`` for ``--range-size``); a value
    left out or ``None`` keeps its default.  Unknown names and bad values raise ``UsageError`` in one line,
    naming ``what`` was called (``fetch()``)."""
    fields = {field.name: (field, spec) for field, spec in options_of(cls)}
    aliases = {flag[2:].replace("-", "_"): field.name for field, spec in fields.values() for flag in spec.flags
               if flag.startswith("--")}  # endpoint_url= for --endpoint-url, as the command line takes it
    values = {}
    for name, value in given.items():
        name = aliases.get(name, name)
        if name not in fields:
            raise UsageError(f"{what or cls.__name__} has no option {name!r}: its keywords are its long options "
                             "with '_' for '-' (help() lists them)")
        if value is not None:
            values[name] = taken(*fields[name], value)
    missing = [name for name, (_, spec) in fields.items() if spec.required and name not in values]
    if missing:
        raise UsageError(f"{what or cls.__name__} needs {', '.join(missing)}")
    return cls(**values)

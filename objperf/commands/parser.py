"""A command's parser, built from its options class (``objperf.options``): every flag, type, default and help
comes from the one definition; this module only lays them out for argparse and reads a command line back
into an options object."""

from __future__ import annotations

import argparse
from typing import TypeVar

from objperf.core.errors import ObjperfError, UsageError
from objperf.core.exits import EXIT_USAGE
from objperf.options.spec import help_text, long_flag, options_of

T = TypeVar("T")

# Where each shared group is listed in --help: the store first, the command's own groups next, then how it
# connects, its cluster and its output.
GROUP_RANK = {"target": 0, "target (one store)": 0, "connection": 2, "many hosts (dask.distributed)": 3,
              "output": 4}


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line (plus a pointer to --help)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # "--conc 4" is a typo to report, not --concurrency to guess
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse's name
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def new_parser(prog: str, doc: str, examples: str) -> OneLineParser:
    return OneLineParser(prog=prog, description=doc.split("\n\n")[0], epilog=examples,
                         formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(prog, width=100))


def word_type(parse):
    """An option kind's reader as argparse's ``type``: its one-line error becomes argparse's."""
    def read(text: str):
        try:
            return parse(text)
        except ObjperfError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return read


def options_parser(cls: type, prog: str, doc: str, examples: str) -> OneLineParser:
    """The parser of the command whose options ``cls`` defines."""
    parser = new_parser(prog, doc, examples)
    groups: dict[str | None, argparse._ActionsContainer] = {None: parser}
    fields = sorted(options_of(cls), key=lambda item: (not item[1].positional, GROUP_RANK.get(item[1].group, 1)))
    for field, spec in fields:
        container = groups.get(spec.group)
        if container is None:
            container = groups[spec.group] = parser.add_argument_group(spec.group)
        _add(container, field, spec)
    parser.set_defaults(**{field.name: None for field, _ in fields})  # unset: the options class's default
    return parser


def add_option(parser: argparse.ArgumentParser, cls: type, name: str) -> None:
    """One option of ``cls`` on a parser built by hand (``objperf analyze --price``), as ``cls`` defines it."""
    field, spec = next((field, spec) for field, spec in options_of(cls) if field.name == name)
    _add(parser, field, spec)


def _add(container, field, spec) -> None:
    kwargs = {"help": help_text(field, spec).replace("%", "%%")}  # argparse formats help with %
    if spec.kind.name == "flag":
        kwargs["action"] = "store_true"
    else:
        kwargs["type"] = word_type(spec.kind.parse)
        kwargs["metavar"] = spec.metavar or spec.kind.metavar or ("{" + ",".join(spec.kind.choices) + "}"
                                                                 if spec.kind.choices else None)
        if spec.repeat:
            kwargs["action"] = "append"
    if spec.positional:
        container.add_argument(field.name, nargs=None if spec.required else "?", **kwargs)
    else:
        container.add_argument(long_flag(field.name), *spec.flags, dest=field.name, **kwargs)


def parse_options(cls: type[T], parser: argparse.ArgumentParser, argv: list[str] | None) -> T:
    """The command line as an options object: what was not given keeps the class's default."""
    namespace = parser.parse_args(argv)
    given = {name: value for name, value in vars(namespace).items() if value is not None}
    try:
        return cls(**{name: tuple(value) if isinstance(value, list) else value for name, value in given.items()})
    except TypeError as exc:  # a field the class does not have: a bug in the definitions, not the user's
        raise UsageError(str(exc)) from None

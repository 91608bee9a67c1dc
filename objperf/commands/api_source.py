"""``python -m objperf.commands.api_source``: ``objperf.api``'s run functions written out as real definitions
(every keyword with its type and default), from the options classes in ``objperf.options``, between the two
marker lines of objperf/api.py.  A test holds objperf/api.py to what this writes, so an IDE or a type checker
reads each signature from the source, and the options stay defined once."""

from __future__ import annotations

import sys
from pathlib import Path

from objperf.api import ALSO_TEXT, COMMAND_LINE_ONLY
from objperf.options.spec import options_of

BEGIN = "# -- begin: written by python -m objperf.commands.api_source from objperf.options; do not edit --"
END = "# -- end of what objperf.commands.api_source writes --"
# Each run function: its options class, the workflow it runs (module, function), and its positional options.
RUNS = {
    "fetch": ("FetchOptions", "objperf.workflows.transfers", "fetch", ("url",)),
    "put": ("PutOptions", "objperf.workflows.transfers", "put", ("url",)),
    "mixed": ("MixedOptions", "objperf.workflows.transfers", "mixed", ("url",)),
    "delete": ("DeleteOptions", "objperf.workflows.transfers", "delete", ("url",)),
    "list_objects": ("ListOptions", "objperf.workflows.listing", "list_objects", ("url",)),
    "copy": ("CopyOptions", "objperf.workflows.copies", "copy", ("url",)),
    "study": ("StudyOptions", "objperf.workflows.study", "study", ("name", "url")),
    "compare": ("CompareOptions", "objperf.workflows.compare", "compare", ("url",)),
}
# The command a run function runs, where the function's name is not the command's: ``list`` would hide
# Python's own in objperf.api.
COMMAND_OF = {"list_objects": "list"}
WIDTH = 120


def _parameters(cls: type, positionals: tuple[str, ...]) -> tuple[list[str], list[str]]:
    first, rest = [], []
    for field, spec in options_of(cls):
        if field.name in COMMAND_LINE_ONLY:
            continue
        annotation = str(field.type)
        if spec.kind.name in ALSO_TEXT:
            annotation += " | str"
        if field.name == positionals[0]:  # or a whole options object in its place
            annotation = f"{annotation} | {cls.__name__}"
        default = repr(field.default)
        if len(default) > 40:  # a long default (a tuple of names) is the class's own, not a copy of it
            default = f"{cls.__name__}.{field.name}"
        text = f"{field.name}: {annotation} = {default}"
        (first if field.name in positionals else rest).append((positionals.index(field.name), text)
                                                               if field.name in positionals else text)
    return [text for _, text in sorted(first)], rest


def definition(name: str) -> str:
    class_name, module, function, positionals = RUNS[name]
    import objperf.options as options

    first, rest = _parameters(getattr(options, class_name), positionals)
    params = [*first, "*", *rest, "background: bool = False", "progress: bool = True", "**unknown: Any"]
    head = f"def {name}("
    lines = [head]
    for i, param in enumerate(params):
        piece = param + (", " if i < len(params) - 1 else ") -> Run:")
        if len((lines[-1] + piece).rstrip()) > WIDTH and lines[-1].strip() != head.strip():
            lines[-1] = lines[-1].rstrip()
            lines.append(" " * len(head))
        lines[-1] += piece
    return "\n".join(lines) + f'''
    given = dict(locals())
    from {module} import {function} as workflow

    return _call("{COMMAND_OF.get(name, name)}", {class_name}, workflow, {positionals!r}, given)
'''


def generated() -> str:
    """The block between the markers: every run function, then each one's help from its options."""
    parts = [BEGIN, "", ""]
    for name in RUNS:
        parts += [definition(name), ""]
    parts.append("".join(f"{name}.__doc__ = _doc({COMMAND_OF.get(name, name)!r}, {RUNS[name][0]})\n" for name in RUNS)
                 + END)
    return "\n".join(parts)


def written(source: str) -> str:
    """``source`` (objperf/api.py's text) with its generated block written anew."""
    start, end = source.index(BEGIN), source.index(END) + len(END)
    return source[:start] + generated() + source[end:]


def main(argv: list[str] | None = None) -> int:
    import objperf.api

    path = Path(objperf.api.__file__)
    path.write_text(written(path.read_text()))
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

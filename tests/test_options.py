"""One definition of every option: the command line and the Python API are made from the same dataclass
fields, so they take the same values, refuse the same values with the same line, and cannot drift."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
import time
from pathlib import Path

import pytest

from objperf import api
from objperf.commands import COMMANDS
from objperf.commands.parser import options_parser, parse_options
from objperf.core.errors import UsageError
from objperf.options import CompareOptions, FetchOptions, MixedOptions, PutOptions, StudyOptions, build
from objperf.options.spec import long_flag, options_of

KINDS = {"fetch": FetchOptions, "put": PutOptions, "mixed": MixedOptions, "study": StudyOptions,
         "compare": CompareOptions}
PACKAGE = Path(__file__).resolve().parents[1] / "objperf"


def parser_of(cls):
    return options_parser(cls, "objperf test", "doc", "")


@pytest.mark.parametrize("name", KINDS)
def test_every_field_is_an_option_with_help_on_the_command_line_and_in_the_api(name):
    cls = KINDS[name]
    parser = parser_of(cls)
    flags = {flag for action in parser._actions for flag in action.option_strings}
    dests = {action.dest for action in parser._actions}
    params = inspect.signature(getattr(api, name)).parameters
    for field, spec in options_of(cls):
        assert spec.help, field.name
        assert field.name in dests, field.name
        assert spec.positional or long_flag(field.name) in flags, field.name
        if field.name != "json":  # the summary as JSON is the command line's; run.summary is the API's
            assert field.name in params and params[field.name].default == field.default, field.name
    assert {f.name for f in dataclasses.fields(cls)} == {f.name for f, _ in options_of(cls)}


CASES = [
    (FetchOptions, ["s3://b/k", "-c", "64", "--range-size", "4MiB", "--duration", "1m30s", "--buckets", "a,b",
                    "--connect-to", "h:1:a:2", "--connect-to", "h:3:a:4", "--no-keepalive", "--price", "r2"],
     dict(url="s3://b/k", concurrency=64, range_size="4MiB", duration="1m30s", buckets=["a", "b"],
          connect_to=["h:1:a:2", "h:3:a:4"], no_keepalive=True, price="r2")),
    (FetchOptions, ["--until-steady", "--steady-window", "4s", "--steady-tolerance", "5%"],
     dict(until_steady=True, steady_window="4s", steady_tolerance="5%")),
    (PutOptions, ["--until-steady", "--steady-tolerance", "2.5"], dict(until_steady=True, steady_tolerance=2.5)),
    (PutOptions, ["--object-size", "6MB", "--part-size", "5mib", "-c", "3", "--keys", "2", "--cleanup"],
     dict(object_size=6 << 20, part_size="5mib", concurrency=3, keys=2, cleanup=True)),
    (StudyOptions, ["read-concurrency", "--quick", "--grid", "concurrency=1,2", "--url-lifetime", "20m"],
     dict(name="read-concurrency", quick=True, grid={"concurrency": [1, 2]}, url_lifetime=1200)),
    (CompareOptions, ["--clients", "objperf,curl", "--size", "1MiB", "--endpoint-for", "curl=http://x"],
     dict(clients=("objperf", "curl"), size=1 << 20, endpoint_for={"curl": "http://x"})),
]


@pytest.mark.parametrize("cls, argv, keywords", CASES)
def test_the_command_line_and_the_keywords_make_the_same_options(cls, argv, keywords):
    assert parse_options(cls, parser_of(cls), argv) == build(cls, keywords)


@pytest.mark.parametrize("flag, word, keyword, value", [
    ("--concurrency", "0", "concurrency", 0),
    ("--range-size", "8 potatoes", "range_size", "8 potatoes"),
    ("--timeout", "-3", "timeout", -3),
    ("--buffer-size", "64MiB", "buffer_size", 64 << 20),
    ("--url-lifetime", "30d", "url_lifetime", 30 * 86400),
    ("--sink", "tape", "sink", "tape"),
    ("--price", "moonbase", "price", "moonbase"),
    ("--steady-tolerance", "150%", "steady_tolerance", 150),
    ("--steady-tolerance", "lots", "steady_tolerance", "lots"),
    ("--steady-window", "soon", "steady_window", "soon"),
])
@pytest.mark.integration
def test_a_bad_value_is_refused_alike_by_the_command_line_and_the_api(flag, word, keyword, value):
    done = subprocess.run([sys.executable, "-m", "objperf", "fetch", flag, word], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    with pytest.raises(UsageError) as raised:
        build(FetchOptions, {keyword: value})
    assert flag in str(raised.value) or flag in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.integration
def test_a_whole_options_object_is_taken_as_it_is_and_left_unchanged(tmp_path):
    options = FetchOptions(url="http://127.0.0.1:9/none", no_save=True, concurrency=2)
    with pytest.raises(UsageError):  # refused before any request: --endpoint names a store, the URL is not s3://
        api.fetch(dataclasses.replace(options, endpoint="http://127.0.0.1:9"), progress=False)
    assert options.out is None and options.concurrency == 2


def test_the_study_names_the_help_lists_are_the_studies_there_are():
    from objperf.options.names import STUDY_NAMES
    from objperf.studies.catalog import STUDIES

    assert tuple(STUDIES) == STUDY_NAMES


@pytest.mark.integration
@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_answers_in_well_under_a_second(command):
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "objperf", command, "--help"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    took = time.perf_counter() - started
    assert done.returncode == 0 and "usage: objperf" in done.stdout, done.stderr
    assert took < 0.8, f"objperf {command} --help took {took:.2f} s"


def test_no_library_module_imports_a_command():
    """Data flows one way: the commands import the library, never the reverse."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE.parent)
        if relative.parts[1] == "commands" or relative.name in ("__main__.py", "fetch.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{relative}: {name}" for name in names if name.startswith("objperf.commands")]
    assert offenders == []


def test_the_reference_pages_in_docs_are_the_ones_the_definitions_write():
    from objperf.commands.reference import pages

    for relative, text in pages().items():
        written = PACKAGE.parent / "docs" / relative
        assert written.exists() and written.read_text() == text, \
            f"docs/{relative} is stale: python -m objperf.commands.reference docs"


@pytest.mark.integration
def test_an_options_object_is_checked_as_keywords_are_and_a_required_name_is_asked_for():
    with pytest.raises(UsageError, match="must be at least 1"):
        api.fetch(FetchOptions(concurrency=0), progress=False)
    with pytest.raises(UsageError, match="study\\(\\) needs name"):
        api.study(quick=True, progress=False)


def test_the_api_run_functions_are_the_definitions_the_options_write():
    """objperf/api.py holds each run function as a real definition (an IDE reads its keywords from the source),
    and they are what the options classes make: none drifts from the option it stands for."""
    from objperf.commands.api_source import written

    source = (PACKAGE / "api.py").read_text()
    assert written(source) == source, "objperf/api.py is stale: python -m objperf.commands.api_source"
    for name, cls in (("fetch", FetchOptions), ("study", StudyOptions)):
        params = inspect.signature(getattr(api, name)).parameters
        named = {field.name for field, _ in options_of(cls)} - {"json"}
        assert named <= set(params) and params["progress"].default is True
        assert all(params[n].default == getattr(cls, n, params[n].default) for n in named)

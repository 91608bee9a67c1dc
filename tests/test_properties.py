"""Every parser fed by a server or a file, and every size and duration argument, given what hypothesis can
make up: it answers or refuses with objperf's own error, never a raw exception, and what it lets through
holds what it promises (a path below its directory, text with no control byte, a byte count in range)."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from objperf.core.errors import ObjperfError, TargetError, UsageError
from objperf.core.sanitize import printable, redacted
from objperf.core.sizes import parse_duration, parse_size
from objperf.dataset.source import DatasetError, Source
from objperf.imports import bounded, elbencho, warp
from objperf.run.sinkpath import confined_path
from objperf.s3.listing import MAX_OBJECT_BYTES, list_all, parse_page

pytestmark = pytest.mark.timeout(300)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

xml_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=30)


def listing_xml(draw_keys, sizes, truncated, token) -> bytes:
    def esc(t: str) -> str:
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    contents = "".join(f"<Contents><Key>{esc(k)}</Key><Size>{esc(s)}</Size></Contents>"
                       for k, s in zip(draw_keys, sizes))
    return (f"<ListBucketResult xmlns='http://s3.amazonaws.com/doc/2006-03-01/'>{contents}"
            f"<IsTruncated>{esc(truncated)}</IsTruncated>"
            + (f"<NextContinuationToken>{esc(token)}</NextContinuationToken>" if token is not None else "")
            + "</ListBucketResult>").encode()


@FAST
@given(st.binary(max_size=2000))
def test_a_listing_page_of_any_bytes_parses_or_is_refused(body):
    try:
        page = parse_page(body, "LIST s3://b/")
    except TargetError:
        return
    assert all(0 <= size <= MAX_OBJECT_BYTES for _, size in page.keys)


@FAST
@given(st.lists(xml_text, max_size=8), st.lists(st.one_of(st.integers(-10, 1 << 45).map(str), xml_text), max_size=8),
       st.sampled_from(["true", "false", "TRUE", "maybe", ""]), st.one_of(st.none(), xml_text))
def test_a_listing_page_keeps_exactly_the_keys_and_sizes_s3_allows(keys, sizes, truncated, token):
    body = listing_xml(keys, sizes, truncated, token)
    try:
        page = parse_page(body, "LIST s3://b/")
    except TargetError:
        return
    n = min(len(keys), len(sizes))
    assert [s for _, s in page.keys] == [int(s) for s in sizes[:n]]
    assert all(str(s).isdigit() and int(s) <= MAX_OBJECT_BYTES for s in sizes[:n])
    assert page.truncated == (truncated.lower() == "true")


@FAST
@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["a", "b", "c", ""])), min_size=1, max_size=20))
def test_a_listing_ends_however_the_store_pages_it(pages):
    """Pages from a store that repeats or omits its tokens: the listing ends, or fails in one line."""
    served = iter(pages + [(False, "")])

    def fetch(token):
        truncated, next_token = next(served)
        return listing_xml(["p/x"], ["1"], "true" if truncated else "false", next_token or None)

    try:
        listing = list_all(fetch, "LIST", "p/", limit=1000, deadline_s=60)
    except TargetError:
        return
    assert listing.pages <= len(pages) + 1


key_text = st.one_of(xml_text, st.sampled_from(["p/a", "p/a-c", "p/a/b", "p/é", "p/z"]),
                     st.integers(1000, 3000).map(lambda n: "p/" + "k" * n))


@FAST
@given(st.lists(st.tuples(st.lists(key_text.map(lambda k: k if k.startswith("p/") else "p/" + k), max_size=6),
                          st.booleans(), st.one_of(st.none(), xml_text, st.integers(1, 9000).map("t".__mul__))),
                min_size=1, max_size=12))
def test_whatever_a_listing_sends_it_is_held_in_bounds_or_one_line(pages):
    """Keys of any length, repeated or out of order, tokens of any length, repeated or missing: a listing
    holds keys S3 can have, each once and in one store's order, within its caps; or it is one TargetError."""
    from objperf.s3.listing import LISTING_KEY_BYTES, MAX_KEY_BYTES, ORDERS

    served = iter(pages + [([], False, None)])

    def fetch(token):
        keys, truncated, next_token = next(served)
        return listing_xml(keys, ["1"] * len(keys), "true" if truncated else "false", next_token)

    try:
        listing = list_all(fetch, "LIST", "p/", limit=1000, deadline_s=60)
    except TargetError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 600 + 4 * MAX_KEY_BYTES  # a key S3 can hold, whole
        return
    names = [k.encode() for k, _ in listing.keys]
    assert all(1 <= len(k) <= MAX_KEY_BYTES for k in names) and sum(map(len, names)) <= LISTING_KEY_BYTES
    assert len(set(names)) == len(names)
    assert any(all(order(a) < order(b) for a, b in zip(names, names[1:])) for order in ORDERS)


@FAST
@given(st.text(max_size=60), st.text(max_size=10))
def test_a_key_becomes_a_path_below_the_sink_directory_or_is_refused(tmp_path_factory, key, prefix):
    base = tmp_path_factory.getbasetemp() / "sink"
    try:
        path = confined_path(base, "bucket", prefix + key, prefix)
    except TargetError as exc:
        assert "\x1b" not in str(exc)
        return
    root = base.resolve()
    assert root in path.parents
    assert "\0" not in str(path)


@FAST
@given(st.text(max_size=200))
def test_printable_text_holds_no_control_byte(text):
    shown = printable(text)
    assert not any(ord(c) < 32 and c != "\t" or 0x7F <= ord(c) <= 0x9F for c in shown)


@FAST
@given(st.text(alphabet=string.ascii_letters + string.digits + ":-._~!$&'()*+,;=%", min_size=1, max_size=30))
def test_no_url_password_survives_redaction(password):
    manifest = {"target": {"endpoint": f"https://user:{password}@host:9000/b"}, "list": [f"http://u:{password}@h"]}
    assert f":{password}@" not in str(redacted(manifest))
    assert f":{password}@" not in printable(f"cannot reach https://user:{password}@host/")


@FAST
@given(st.sampled_from(["--secret-key", "--secret-key=", "--access-key ", "--s3secret=", "--session-token "]),
       st.text(alphabet=string.ascii_letters + string.digits + "/+=", min_size=6, max_size=30))
def test_a_secret_on_a_command_line_is_blanked(flag, secret):
    sep = "" if flag.endswith(("=", " ")) else " "
    command = f"warp get --host h:9000 {flag}{sep}{secret} --duration 1m"
    assert secret not in bounded.redact_command(command).removesuffix(" --duration 1m")  # 'durati' is no secret


@FAST
@given(st.one_of(st.text(max_size=30), st.integers(-5, 1 << 70), st.floats(allow_nan=True)))
def test_a_size_is_a_byte_count_or_one_usage_error(text):
    try:
        size = parse_size(text)
    except UsageError:
        return
    assert isinstance(size, int) and 0 <= size < 1 << 62


@FAST
@given(st.one_of(st.text(max_size=30), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10)))
def test_a_duration_is_positive_seconds_or_one_usage_error(text):
    try:
        seconds = parse_duration(text)
    except UsageError:
        return
    assert 0 < seconds < float("inf")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=3000))
def test_a_manifest_of_any_bytes_loads_or_is_one_dataset_error(tmp_path_factory, body):
    where = Path(tmp_path_factory.mktemp("m"))
    (where / "manifest.json").write_bytes(body)
    source = Source(where)
    try:
        manifest = source.manifest()
        source.verify(manifest)
    except DatasetError:
        return
    finally:
        source.close()
    assert isinstance(manifest, dict)


warp_line = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12), min_size=1,
                     max_size=16).map("\t".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(warp_line, max_size=6), st.booleans())
def test_a_warp_file_of_any_text_imports_or_is_one_usage_error(tmp_path_factory, lines, with_header):
    from test_imports import NEW_HEADER

    path = Path(tmp_path_factory.mktemp("w")) / "w.csv"
    path.write_text("\n".join(([NEW_HEADER] if with_header else []) + lines) + "\n", encoding="utf-8")
    try:
        rows, _ = warp.parse(path)
    except UsageError:
        return
    assert (rows["bytes"] >= 0).all() and (rows["bytes"] <= bounded.MAX_COUNT).all()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.text(max_size=10), max_size=8).map(",".join), max_size=6),
       st.sampled_from(["ISO date,operation,threads,MiB/s [last]", "ISO Date,Phase,RuntimeMS,MiB/s", "x"]))
def test_an_elbencho_file_of_any_text_imports_or_is_one_usage_error(tmp_path_factory, lines, header):
    path = Path(tmp_path_factory.mktemp("e")) / "e.csv"
    path.write_text("\n".join([header] + lines) + "\n", encoding="utf-8")
    try:
        kind, table, _ = elbencho.parse(path)
    except ObjperfError:
        return
    assert kind in ("phases", "intervals")

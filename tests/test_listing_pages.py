"""A listing's pages walked one at a time and held to the S3 contract (``objperf.s3.listing.PageWalk``), and a
DeleteObjects' document and answer (``objperf.s3.deletes``): what a LIST run and a batch delete take from a
store as outside input, each breach one line, never a page or a batch counted as the store's."""

from __future__ import annotations

import base64
import hashlib

import pytest
from defusedxml.ElementTree import fromstring as parse_xml

from objperf.core.errors import TargetError
from objperf.s3.deletes import MAX_BATCH, delete_request, fits_a_document, read_delete_answer
from objperf.s3.listing import PageWalk, parse_page

pytestmark = pytest.mark.timeout(60)


def page(keys=(), prefixes=(), *, truncated=False, token=None, encoded=False) -> bytes:
    def esc(t: str) -> str:
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    return ("<ListBucketResult xmlns='http://s3.amazonaws.com/doc/2006-03-01/'>"
            + ("<EncodingType>url</EncodingType>" if encoded else "")
            + f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"
            + (f"<NextContinuationToken>{esc(token)}</NextContinuationToken>" if token is not None else "")
            + "".join(f"<Contents><Key>{esc(k)}</Key><Size>1</Size></Contents>" for k in keys)
            + "".join(f"<CommonPrefixes><Prefix>{esc(p)}</Prefix></CommonPrefixes>" for p in prefixes)
            + "</ListBucketResult>").encode()


def test_a_page_with_a_delimiter_lists_keys_and_common_prefixes_in_order():
    walk = PageWalk("LIST s3://b/p/", "p/", delimiter="/", max_keys=3)
    first = walk.take(page(["p/a", "p/c"], ["p/b/"], truncated=True, token="t1"))
    assert [k for k, _ in first.keys] == ["p/a", "p/c"] and first.prefixes == ["p/b/"] and first.count == 3
    last = walk.take(page(["p/e"], ["p/d/"]))
    assert last.count == 2 and not last.truncated and walk.pages == 2


@pytest.mark.parametrize("pages, words", [
    ([page(["p/a", "p/b", "p/c", "p/d"])], "lists 4 keys and common prefixes, more than the max-keys 3"),
    ([page(["p/a"], truncated=True, token="t"), page(["p/b"], truncated=True, token="t")], "repeated continuation"),
    ([page(["p/a"], truncated=True)], "names no continuation token"),
    ([page(["p/a"], truncated=True, token="t"), page(["p/a"])], "listed key 'p/a' again (page 2)"),
    ([page(["p/b"], truncated=True, token="t"), page([], ["p/a/"])], "after a key that comes later"),
    ([page(["q/a"])], "not under the prefix 'p/'"),
    ([page([], ["q/"])], "common prefix 'q/', which is not under the prefix"),
    ([page(["p/a/b"])], "holds the delimiter '/' after the prefix"),
    ([page([], ["p/a/b/"])], "does not end at the first delimiter"),
    ([b"<ListBucketResult><CommonPrefixes/></ListBucketResult>"], "names 0 <Prefix>es"),
    ([b"<Error><Code>SlowDown</Code></Error>"], "not <ListBucketResult>"),
])
def test_a_page_that_breaks_the_contract_is_one_line(pages, words):
    walk = PageWalk("LIST s3://b/p/", "p/", delimiter="/", max_keys=3)
    with pytest.raises(TargetError) as raised:
        for body in pages:
            walk.take(body)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_names_a_store_was_asked_to_url_encode_are_decoded():
    """botocore asks for encoding-type=url: the names come back percent-encoded, '+' for a space."""
    got = parse_page(page(["p/a+b%2Fc%26d"], ["p/%C3%A9t%C3%A9/"], encoded=True), "LIST")
    assert got.keys == [("p/a b/c&d", 1)] and got.prefixes == ["p/été/"]
    assert parse_page(page(["p/a+b"]), "LIST").keys == [("p/a+b", 1)]  # not asked: as it is


def test_a_batch_document_names_each_key_once_with_its_md5():
    keys = ["a&b", "c<d>", "e\rf", "plain/é"]
    body, headers = delete_request(keys)
    assert [el.text for el in parse_xml(body).iter() if el.tag == "Key"] == keys  # the carriage return kept
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    assert headers == [f"Content-MD5: {md5}", "Content-Type: application/xml"]
    assert parse_xml(body).findtext("Quiet") == "false"  # every key accounted for in the answer
    assert not fits_a_document("a\x01b") and fits_a_document("a\tb") and MAX_BATCH == 1000


def answer(deleted=(), errors=()) -> bytes:
    return ("<DeleteResult xmlns='http://s3.amazonaws.com/doc/2006-03-01/'>"
            + "".join(f"<Deleted><Key>{k}</Key></Deleted>" for k in deleted)
            + "".join(f"<Error><Key>{k}</Key><Code>{c}</Code><Message>no</Message></Error>" for k, c in errors)
            + "</DeleteResult>").encode()


def test_a_batch_answer_counts_the_keys_deleted_and_refused():
    told = read_delete_answer(answer(["a", "b"], [("c", "AccessDenied"), ("d", "InternalError")]), "abcd", "DEL")
    assert (told.deleted, told.refused, told.first_code) == (2, 2, "AccessDenied")
    assert read_delete_answer(answer("abc"), "abc", "DEL").refused == 0


@pytest.mark.parametrize("body, words", [
    (answer(["a", "b", "x"]), "names key 'x' though it was not asked for"),
    (answer(["a", "a", "b"]), "names key 'a' twice"),
    (answer(["a"], [("b", "AccessDenied")]), "accounts for 2 of the 3 keys asked"),
    (answer([]), "accounts for 0 of the 3 keys asked"),
    (b"<Error><Code>SlowDown</Code></Error>", "not <DeleteResult>"),
    (b"not xml <", "not XML"),
    (b"<DeleteResult><Deleted><VersionId>1</VersionId></Deleted></DeleteResult>", "names no <Key>"),
])
def test_a_batch_answer_that_breaks_the_contract_is_one_line(body, words):
    with pytest.raises(TargetError, match=words):
        read_delete_answer(body, ["a", "b", "c"], "DeleteObjects s3://b")

"""Where a run's rows go is settled once, at the door: a new directory, a new store prefix, or nowhere."""

from __future__ import annotations

import pytest

from objperf.core.errors import UsageError
from objperf.dataset.destination import NOWHERE, Destination, RowSink
from objperf.dataset.store_prefix import StorePrefix
from objperf.dataset.store_writer import StoreWriter
from objperf.dataset.writer import DatasetWriter
from objperf.s3.settings import S3Settings

pytestmark = pytest.mark.timeout(30)


def test_a_new_directory_is_a_destination_and_nothing_is_nowhere(tmp_path):
    there = Destination.of(tmp_path / "new")
    assert there and there.directory == tmp_path / "new" and there.store is None and there.place == there.directory
    assert not (tmp_path / "new").exists()  # settled, not made: the writer makes it when the run begins
    assert Destination.of(None) is NOWHERE and Destination.of("") is NOWHERE and not NOWHERE
    assert NOWHERE.open({}) is None and NOWHERE.load_samples() == {} and str(NOWHERE) == "nowhere"
    assert Destination.of(there) is there  # handed down, never checked twice


@pytest.mark.parametrize("make, message", [
    (lambda p: (p / "x").write_text("mine"), "is not empty"),
    (lambda p: None, "is a file"),
])
def test_a_place_that_is_not_new_is_refused_in_one_line(tmp_path, make, message):
    place = tmp_path / "out"
    if message == "is a file":
        place.write_text("a file")
    else:
        place.mkdir()
        make(place)
    with pytest.raises(UsageError, match=message):
        Destination.of(place)


def test_an_s3_url_as_text_is_no_directory(tmp_path):
    with pytest.raises(UsageError, match="only fetch, put and mixed write their datasets straight to a store"):
        Destination.of("s3://bucket/prefix/")


def test_a_directory_destination_opens_the_directory_writer(tmp_path):
    writer = Destination.of(tmp_path / "d").open({"run_id": "r"})
    assert isinstance(writer, DatasetWriter) and (tmp_path / "d" / "manifest.json").exists()
    writer.discard()
    assert not (tmp_path / "d").exists()


def test_a_cluster_hosts_store_prefix_is_its_drivers_and_is_not_checked_again():
    prefix = StorePrefix("b", "p/", S3Settings(endpoint="http://127.0.0.1:9"))  # nothing listens: no check made
    host = Destination(store=prefix).for_host(3, "h3")
    assert Destination.of(host.store).store.host_index == 3
    assert NOWHERE.for_host(3, "h3") is NOWHERE


def sink_members() -> set[str]:
    return {name for name in vars(RowSink) if not name.startswith("_")} | set(RowSink.__annotations__)


def test_the_directory_writer_is_a_row_sink(tmp_path):
    writer = Destination.of(tmp_path / "d").open({"run_id": "r"})
    try:
        assert {name for name in sink_members() if not hasattr(writer, name)} == set()
    finally:
        writer.discard()


@pytest.mark.integration
def test_the_store_writer_is_a_row_sink_and_a_store_destination_is_checked_new(store):
    prefix = StorePrefix(store.bucket, "destination-test/", store.server.settings())
    destination = Destination.of(prefix)
    writer = destination.open({"run_id": "r"})
    try:
        assert isinstance(writer, StoreWriter)
        assert {name for name in sink_members() if not hasattr(writer, name)} == set()
        with pytest.raises(UsageError, match="already holds objects"):
            Destination.of(prefix)  # its manifest is there: a second run would mix with it
    finally:
        writer.remove_all()

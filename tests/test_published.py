"""The published reference tables: every row's number and unit come from a sentence of the articles."""

import re
from pathlib import Path

import pandas as pd
import pytest

from objperf.analysis.published import TABLES, load_published, r2_figure

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
ARTICLES = {"r2_benchmark": "000_096cf5b1d177a900.txt", "s3_vs_r2_runs": "002_24529038e94bce61.txt",
            "s3_vs_r2_means": "002_24529038e94bce61.txt", "s3_vs_r2_setup": "002_24529038e94bce61.txt"}


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.integration
@pytest.mark.parametrize("name", TABLES)
def test_every_row_quotes_its_article(name):
    if not SEEDS.is_dir():
        pytest.skip(f"the source articles are not beside this checkout ({SEEDS})")
    article = squash((SEEDS / ARTICLES[name]).read_text(encoding="utf-8"))
    table = load_published(name)
    assert len(table) > 0 and table["unit"].notna().all()
    value = "value" if "value" in table else ("seconds" if "seconds" in table else "mean_seconds")
    assert pd.api.types.is_numeric_dtype(table[value])
    for sentence in table["sentence"]:
        assert squash(sentence) in article, sentence


def test_numbers_appear_in_their_sentences():
    words = {1: "one", 2: "two", 10: "ten"}
    table = load_published("r2_benchmark")
    for value, sentence in zip(table["value"], table["sentence"]):
        written = f"{value:g}".replace("0.", ".") if value < 1 else f"{value:g}"
        text = sentence.replace(",", "").lower()
        assert written in text or words.get(value, "?") in text or value == 0, (value, sentence)


@pytest.mark.parametrize("name", [name for name in TABLES if name != "r2_benchmark"])
def test_every_shipped_value_is_written_in_its_own_sentence(name):
    """The tables as shipped check themselves, wherever the checkout stands: each number is in the sentence
    it says it comes from (the comparison with the original articles above needs them beside the checkout)."""
    table = load_published(name)
    value = "value" if "value" in table else ("seconds" if "seconds" in table else "mean_seconds")
    assert len(table) > 0
    texts = table["text"] if "text" in table else [None] * len(table)
    for number, sentence, text_value in zip(table[value], table["sentence"], texts):
        if pd.isna(number):  # a setting written as text (a region): that text is in the sentence
            assert isinstance(text_value, str) and text_value in sentence, sentence
            continue
        text = sentence.replace(",", "")
        assert re.search(rf"(?<![\d.]){re.escape(f'{number:g}')}(?!\d)", text) or \
            re.search(rf"(?<![\d.]){re.escape(f'{number:.3f}')}(?!\d)", text), (number, sentence)


def test_published_bounds_are_marked_as_bounds():
    table = load_published("r2_benchmark")
    assert set(table["bound"]) <= {"max", "min", "exact"}
    bounds = table[table["bound"] == "max"]
    assert set(bounds["value"]) == {19, 30, 0.2}  # "both land under 19", "under $30", "within 0.2%"
    assert set(table[table["bound"] == "min"]["value"]) == {50}  # "all pulled past 50 Gbps"
    # a row that says it is a bound is marked as one, whatever its column says it in
    said = table["metric"] + " " + table["unit"]
    assert (table[said.str.contains("at least")]["bound"] == "min").all()
    assert (table[said.str.contains("at most")]["bound"] == "max").all()
    for sentence in table["sentence"].unique():  # "past 50 Gbps", "under $30": those values are bounds
        for said_bound in re.findall(r"\b(?:past|under) \$?(\d+(?:\.\d+)?)", sentence):
            matching = table[table["value"] == float(said_bound)]
            assert (matching["bound"] != "exact").any(), (sentence, said_bound)
    context = table[table["figure"] == "context"].set_index("metric")["value"]
    assert (context["NIC link speed"], context["NICs in the box"], context["NICs used"]) == (100, 2, 1)


def test_the_second_articles_setup():
    setup = load_published("s3_vs_r2_setup").set_index("item")
    assert setup.loc["file size", "value"] == 100 and setup.loc["S3 region", "text"] == "ap-northeast-1"
    assert setup.loc["runs per client, provider and operation", "value"] == 5


def test_second_article_means_match_its_runs():
    runs = load_published("s3_vs_r2_runs")
    means = load_published("s3_vs_r2_means")
    computed = runs.groupby(["client", "provider", "operation"])["seconds"].mean().round(3)
    for row in means.itertuples():
        assert computed[(row.client, row.provider, row.operation)] == pytest.approx(row.mean_seconds, abs=0.0015)
    assert len(runs) == 40 and set(runs["run"]) == {1, 2, 3, 4, 5}


def test_figure_families_cover_the_benchmark():
    families = set(load_published("r2_benchmark")["figure"])
    assert {"ceilings", "load-generators", "ceiling-proof", "ip-family", "mixed", "ttfb", "hot-object",
            "part-size", "key-fanout", "bucket-fanout", "sustained", "costs", "writes"} <= families
    assert set(r2_figure("load-generators")["condition"]) >= {"custom Go loader", "s5cmd", "MinIO warp"}

"""Writers and round trips: nothing is lost."""

import json
from pathlib import Path

import pytest

from parakit.errors import DataFormatError
from parakit.examples import load_example
from parakit.io import read, write


def test_turku_json_to_jsonl_to_turku_json_keeps_every_field(data_path, tmp_path):
    source = data_path("turku/sv-test.json")
    pairs = read(source)
    write(pairs, tmp_path / "sv.jsonl")
    again = read(tmp_path / "sv.jsonl")
    assert again == pairs
    out_json, out_texts = write(again, tmp_path / "release" / "sv-test.json")
    assert out_texts.name == "sv-texts.json.gz"
    assert json.loads(out_json.read_text()) == json.loads(source.read_text())
    back = read(out_json)
    assert back.pairs == pairs.pairs and back.documents == pairs.documents


#: The nine shared corpus files (156,655 pairs).
CORPORA = (
    "mrpc/msr_paraphrase_train.txt",
    "tmup/tmup.tsv",
    "multipit/expert-train.csv",
    "multipit/expert-val.csv",
    "multipit/auto-train.csv",
    "multipit/auto-val.csv",
    "turku/opus-pb-dev.json",
    "turku/sv-test.json",
    "etpc",
)


def _read_corpus(data_path, relative):
    if relative == "etpc":
        from parakit.io import read_etpc

        return read_etpc(data_path("etpc"), mrpc=data_path("mrpc/msr_paraphrase_train.txt"))
    return read(data_path(relative))


@pytest.mark.parametrize(
    "relative",
    [
        pytest.param(c, marks=pytest.mark.slow) if c == "multipit/auto-train.csv" else c
        for c in CORPORA
    ],
)
def test_jsonl_round_trip_of_every_corpus(data_path, tmp_path, relative):
    pairs = _read_corpus(data_path, relative)
    target = tmp_path / (relative.replace("/", "_") + ".jsonl.gz")
    write(pairs, target)
    assert read(target) == pairs, relative


@pytest.mark.parametrize(
    "relative",
    [
        pytest.param(c, marks=pytest.mark.slow) if c in ("multipit/auto-train.csv", "etpc") else c
        for c in CORPORA
    ],
)
def test_csv_and_tsv_round_trip_of_every_corpus(data_path, tmp_path, relative):
    """Flat fields and typed metadata survive a table (spans and documents need JSONL)."""
    pairs = _read_corpus(data_path, relative)
    for suffix in ("csv", "tsv"):
        target = write(pairs, tmp_path / f"out.{suffix}")
        back = read(target, scheme=pairs.scheme)
        expected = [p.replace(span1=None, span2=None, rewrites=(), judgments=()) for p in pairs]
        assert back.pairs == expected, (relative, suffix)


@pytest.mark.parametrize(
    "relative",
    [
        "turku/opus-pb-dev.json",
        "turku/sv-test.json",
        "mrpc/msr_paraphrase_train.txt",
        "tmup/tmup.tsv",
        "multipit/expert-val.csv",
        "multipit/auto-val.csv",
        *[
            pytest.param(c, marks=pytest.mark.slow)
            for c in ("multipit/expert-train.csv", "multipit/auto-train.csv", "etpc")
        ],
    ],
)
def test_turku_round_trip_where_the_layout_can_express_the_corpus(data_path, tmp_path, relative):
    """The Turku-scheme corpora come back pair for pair; the others are refused (E120), never
    written as a file the reader rejects or misreads."""
    pairs = _read_corpus(data_path, relative)
    target = tmp_path / "release" / (Path(relative).stem + ".json")
    if pairs.scheme.name != "turku":
        with pytest.raises(DataFormatError) as err:
            write(pairs, target)
        assert err.value.code == "E120"
        assert not target.parent.exists() or not any(target.parent.iterdir())
        return
    written, _texts = write(pairs, target)
    back = read(written)
    assert back.pairs == pairs.pairs and back.documents == pairs.documents
    assert back.lang == pairs.lang


def test_csv_and_tsv_round_trip_flat_fields(tmp_path):
    pairs = load_example()
    for suffix in ("csv", "tsv"):
        write(pairs, tmp_path / f"ex.{suffix}")
        back = read(tmp_path / f"ex.{suffix}", scheme="turku")
        assert [(p.id, p.text1, p.text2, p.label, p.group, p.time) for p in back] == [
            (p.id, p.text1, p.text2, p.label, p.group, p.time) for p in pairs
        ]
        assert back[0].metadata["lang"] == "en"


def test_release_drops_labels(tmp_path):
    pairs = load_example()
    path, texts = write(pairs, tmp_path / "ex.json", drop_labels=("1", "x"))
    items = json.loads(path.read_text())
    assert len(items) == len(pairs) - 1
    assert all(item["label"] != "1" for item in items)
    assert texts.exists()

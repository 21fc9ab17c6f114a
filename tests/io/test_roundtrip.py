"""Writers and round trips: nothing is lost."""

import json

from parakit.cli.demo import load_example
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


def test_jsonl_round_trip_of_every_corpus(data_path, tmp_path):
    for relative in (
        "mrpc/msr_paraphrase_train.txt",
        "tmup/tmup.tsv",
        "multipit/expert-val.csv",
        "turku/opus-pb-dev.json",
    ):
        pairs = read(data_path(relative))
        target = tmp_path / (relative.replace("/", "_") + ".jsonl.gz")
        write(pairs, target)
        assert read(target) == pairs, relative


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

"""Release folders (parakit.io.release): what datasets.load_dataset sees, the card, the round
trip through parakit.read, the split policy (documents never cross splits) and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parakit.errors import DataFormatError
from parakit.io import read
from parakit.io.release import read_release, size_category, write_release
from parakit.schema import Document, Judgment, Pair, PairSet, Span
from parakit.split import linked_groups, random_split

datasets = pytest.importorskip("datasets")
huggingface_hub = pytest.importorskip("huggingface_hub")


def _corpus() -> PairSet:
    """Two documents per episode, pairs across them, one pair without context; graded labels
    (flat scheme -> ClassLabel); written in split order so the round trip keeps the order."""
    docs = [
        Document("a1", "The cat sat. It was late.", {"episode": "A"}),
        Document("a2", "A cat was sitting. Late it was."),
        Document("b1", "Rain fell all day."),
        Document("b2", "It rained the whole day."),
    ]
    judged = (Judgment("ann1", "4"), Judgment("ann2", "3", comment="close"))
    pairs = [
        Pair("p1", "The cat sat.", "A cat was sitting.", label="4", span1=Span("a1", 0, 12),
             span2=Span("a2", 0, 18), group="A", split="train", fold=3, judgments=judged,
             rewrites=(("The cat sat.", "A cat sat."),), metadata={"wor": 0.25}),
        Pair("p2", "It was late.", "Late it was.", label="3", span1=Span("a1", 13, 25),
             span2=Span("a2", 19, 31), group="A", split="train", source="subtitles"),
        Pair("p3", "Rain fell all day.", "It rained the whole day.", label="2",
             span1=Span("b1", 0, 18), span2=Span("b2", 0, 24), group="B", split="test"),
        Pair("p4", "No context here.", "Here is no context.", label="1", split="test",
             time="2021-05-01T00:00:00"),
    ]  # fmt: skip
    return PairSet(pairs, scheme="graded", documents=docs, name="toy", lang="en",
                   metadata={"provenance": "hand-made"})  # fmt: skip


def test_round_trip_and_what_load_dataset_sees(tmp_path):
    pairs = _corpus()
    pairs.verify_spans()
    folder = write_release(pairs, tmp_path / "rel", license="cc-by-4.0")
    assert read(folder) == pairs  # parakit.read recognises the folder (format "release")
    assert read_release(folder) == pairs

    loaded = datasets.load_dataset(str(folder))
    assert sorted(loaded) == ["test", "train"]
    train = loaded["train"]
    assert train.features["label"].names == ["1", "2", "3", "4"]
    assert train["label"] == [3, 2]  # class indices of "4" and "3"
    assert train[0]["span1"] == {"doc": "a1", "begin": 0, "end": 12}
    assert json.loads(train[0]["judgments"])[1] == {
        "annotator": "ann2",
        "label": "3",
        "comment": "close",
    }
    assert loaded["test"][1]["span1"] is None
    documents = datasets.load_dataset(str(folder), "documents")
    assert sorted(documents["train"]["id"]) == ["a1", "a2"]
    assert sorted(documents["test"]["id"]) == ["b1", "b2"]
    # a span read through datasets alone gives the statement back
    texts = {d["id"]: d["text"] for split in documents.values() for d in split}
    span = loaded["test"][0]["span2"]
    assert texts[span["doc"]][span["begin"] : span["end"]] == "It rained the whole day."


def test_card_front_matter_and_body(tmp_path):
    folder = write_release(_corpus(), tmp_path / "rel", license="cc-by-sa-4.0", pretty_name="Toy")
    card = huggingface_hub.DatasetCard.load(folder / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-sa-4.0" and data["language"] == ["en"]
    assert data["size_categories"] == ["n<1K"]
    assert "text-classification" in data["task_categories"]
    assert {c["config_name"] for c in data["configs"]} == {"pairs", "documents"}
    default = [c for c in data["configs"] if c.get("default")]
    assert [c["config_name"] for c in default] == ["pairs"]
    infos = datasets.info.DatasetInfosDict.from_dataset_card_data(card.data)
    assert infos["pairs"].splits["train"].num_examples == 2
    assert infos["documents"].splits["test"].num_examples == 2
    assert infos["pairs"].features["label"] == datasets.ClassLabel(names=["1", "2", "3", "4"])
    # the label distribution table, counted by hand: train 3:1 4:1, test 1:1 2:1
    assert "| `1` | 0 | 1 |" in card.text and "| `4` | 1 | 0 |" in card.text
    assert "| **total** | 2 | 2 |" in card.text
    # graded default reading: 3 and 4 are paraphrases -> train 100%, test 0%
    assert "train 100.0%, test 0.0%" in card.text
    assert "```bibtex" in card.text and "@misc{toy," in card.text


def test_agreement_and_candidates_go_into_the_card(tmp_path):
    figures = {"full_accuracy": 0.9, "full_kappa_vs_consensus": 0.8, "binary_accuracy": 1.0}
    folder = write_release(
        _corpus(),
        tmp_path / "rel",
        license="mit",
        agreement=figures,
        candidates="Aligned subtitles of the same episode (T1).",
        citation="@inproceedings{k2021, title={T}}",
    )
    text = (folder / "README.md").read_text()
    assert "| full | 0.900 | 0.800 |" in text and "| binary | 1.000 | n/a |" in text
    assert "Aligned subtitles of the same episode (T1)." in text
    assert "`subtitles` 1" in text  # the sources the pairs carry
    assert "@inproceedings{k2021, title={T}}" in text


def test_a_turku_scheme_stays_a_string_and_turku_files_are_written(tmp_path):
    pairs = PairSet(
        [
            Pair("0", "a b", "a c", label="4<is", split="train", group="g1"),
            Pair("1", "d e", "d f", label="3", split="validation", group="g2"),
        ],
        scheme="turku",
        lang="sv",
    )
    folder = write_release(pairs, tmp_path / "rel", license="cc-by-sa-4.0", turku=True)
    loaded = datasets.load_dataset(str(folder))
    assert loaded["train"]["label"] == ["4<is"]
    assert read(folder) == pairs
    # the original release layout: one file per split (validation -> dev), the language prefix
    dev = read(folder / "turku" / "sv-dev.json")
    assert [(p.text1, p.label) for p in dev] == [("d e", "3")] and dev.lang == "sv"


def test_turku_files_of_every_split_keep_their_documents(tmp_path):
    # the splits share one texts file: each split's write replaced it with its own documents,
    # so every split file but the last pointed into documents the texts file no longer held
    docs = [Document("a", "The cat sat."), Document("b", "A cat sat."),
            Document("c", "Rain fell."), Document("d", "It rained.")]  # fmt: skip
    pairs = PairSet(
        [
            Pair("0", "The cat sat.", "A cat sat.", label="4", split="train",
                 span1=Span("a", 0, 12), span2=Span("b", 0, 10)),
            Pair("1", "Rain fell.", "It rained.", label="3", split="test",
                 span1=Span("c", 0, 10), span2=Span("d", 0, 10)),
        ],
        scheme="turku", documents=docs, lang="fi",
    )  # fmt: skip
    folder = write_release(pairs, tmp_path / "rel", license="mit", turku=True)
    train = read(folder / "turku" / "train.json", verify="text")
    test = read(folder / "turku" / "test.json", verify="text")
    assert [(p.id, p.span1, p.span2) for p in train] == [("0", Span("a", 0, 12), Span("b", 0, 10))]
    assert sorted(train.documents) == ["a", "b"] and sorted(test.documents) == ["c", "d"]


def test_a_release_refuses_values_json_cannot_hold(tmp_path):
    # metadata (of a pair, a judgment, a document or the corpus) that JSON cannot write raised
    # a bare TypeError
    import datetime

    day = datetime.date(2021, 5, 1)
    cases = [
        (PairSet([Pair("p", "x", "y", label="1", split="train", metadata={"d": day})]), 1),
        (PairSet([Pair("p", "x", "y", label="1", split="train",
                       judgments=(Judgment("a", "1", metadata={"d": day}),))]), 1),
        (PairSet([Pair("p", "x", "y", label="1", split="train")], metadata={"d": day}), None),
        (PairSet([Pair("p", "x", "y", label="1", split="train")],
                 documents=[Document("d", "x", {"d": day})]), None),
    ]  # fmt: skip
    for pairs, record in cases:
        with pytest.raises(DataFormatError) as err:
            write_release(pairs, tmp_path / "rel", license="mit")
        assert err.value.code == "E120" and "date" in str(err.value)
        assert err.value.line == record and not (tmp_path / "rel").exists()


def test_linked_groups_keep_documents_in_one_split():
    # pairs chained through shared documents (p1-p2 via b, p2-p3 via group g) stay together
    docs = [Document(d, "x" * 10) for d in "abcdef"]
    pairs = PairSet(
        [
            Pair("p1", "x", "x", label="1", span1=Span("a", 0, 1), span2=Span("b", 0, 1)),
            Pair("p2", "x", "x", label="1", span1=Span("b", 1, 2), span2=Span("c", 0, 1),
                 group="g"),
            Pair("p3", "x", "x", label="0", span1=Span("d", 0, 1), group="g"),
            *[Pair(f"q{i}", "x", "x", label="0", span1=Span("e", i, i + 1)) for i in range(3)],
            Pair("r", "x", "x", label="1", span1=Span("f", 0, 1)),
        ],
        documents=docs,
    )  # fmt: skip
    key = linked_groups(pairs)
    assert len({key(p) for p in pairs[:3]}) == 1
    assert len({key(p) for p in pairs[3:6]}) == 1
    assert len({key(p) for p in pairs}) == 3
    for seed in range(5):
        split = random_split(pairs, (0.5, 0.5), ("train", "test"), group_by=key, seed=seed)
        by_doc: dict[str, set[str]] = {}
        for p in split:
            for s in (p.span1, p.span2):
                if s is not None:
                    by_doc.setdefault(s.doc_id, set()).add(str(p.split))
        assert all(len(v) == 1 for v in by_doc.values())


def _change(pair_id: str, **changes):
    return lambda ps: ps.map(lambda p: p.replace(**changes) if p.id == pair_id else p)


@pytest.mark.parametrize(
    "change, code, field",
    [
        (_change("p3", label=None), "E130", "label"),
        (_change("p2", split=None), "E131", "split"),
        (_change("p2", split="va-lid"), "E131", "split"),
        (_change("p2", split="test"), "E133", "split"),  # document a1 in train and test
        (lambda ps: ps.derive(ps.pairs, documents={}), "E132", "span1"),
    ],
)
def test_what_a_release_refuses(tmp_path, change, code, field):
    with pytest.raises(DataFormatError) as err:
        write_release(change(_corpus()), tmp_path / "rel", license="mit")
    assert err.value.code == code and err.value.field == field
    assert not (tmp_path / "rel" / "README.md").exists()  # nothing half-written


def test_unknown_language_and_damaged_folders(tmp_path):
    bad = _corpus()
    bad.lang = "english"
    with pytest.raises(DataFormatError) as err:
        write_release(bad, tmp_path / "rel", license="mit")
    assert err.value.code == "E134"
    folder = write_release(_corpus(), tmp_path / "ok", license="mit")
    (folder / "data" / "test.parquet").unlink()
    with pytest.raises(DataFormatError) as err:
        read_release(folder)
    assert err.value.code == "E135" and "test.parquet" in str(err.value)
    with pytest.raises(DataFormatError) as err:
        read_release(tmp_path)
    assert err.value.code == "E135"


def test_a_second_release_into_the_same_folder_drops_stale_splits(tmp_path):
    pairs = _corpus()
    write_release(pairs, tmp_path / "rel", license="mit")
    fewer = pairs.map(lambda p: p.replace(split="train"))
    write_release(fewer, tmp_path / "rel", license="mit")
    assert sorted(p.name for p in (tmp_path / "rel" / "data").iterdir()) == ["train.parquet"]
    assert read(tmp_path / "rel") == fewer


def test_size_categories_are_the_hubs():
    resources = Path(datasets.__file__).parent / "utils" / "resources"
    known = json.loads((resources / "size_categories.json").read_text())
    for n in (0, 999, 1000, 99_999, 100_000, 5_000_000, 50_000_000, 10**9, 10**13):
        assert size_category(n) in known
    assert (size_category(999), size_category(1000)) == ("n<1K", "1K<n<10K")
    # above 100M: the Hub's own categories, not the 10M-100M one (or an unknown "n>10M")
    assert [size_category(n) for n in (99_999_999, 100_000_000, 2 * 10**9, 10**12)] == [
        "10M<n<100M",
        "100M<n<1B",
        "1B<n<10B",
        "n>1T",
    ]


def test_splits_without_documents_are_left_out_of_the_documents_config(tmp_path):
    # datasets cannot read a Parquet file of 0 rows: a split whose pairs have no context has no
    # documents file, and a set without documents has no documents config at all
    pairs = _corpus().filter(lambda p: p.id != "p3")
    pairs.documents = {k: v for k, v in pairs.documents.items() if k.startswith("a")}
    folder = write_release(pairs, tmp_path / "rel", license="mit")
    assert sorted(datasets.load_dataset(str(folder), "documents")) == ["train"]
    assert sorted(datasets.load_dataset(str(folder))) == ["test", "train"]
    assert read(folder) == pairs
    bare = PairSet([p.replace(span1=None, span2=None) for p in pairs], scheme="graded")
    folder = write_release(bare, tmp_path / "bare", license="mit")
    configs = huggingface_hub.DatasetCard.load(folder / "README.md").data.to_dict()["configs"]
    assert [c["config_name"] for c in configs] == ["pairs"]
    assert read(folder) == bare


def test_the_input_order_comes_back(tmp_path):
    # splits interleaved in the input: the files hold them split by split, parakit.json the order
    pairs = _corpus()
    mixed = pairs.derive([pairs[2], pairs[0], pairs[3], pairs[1]])
    folder = write_release(mixed, tmp_path / "rel", license="mit")
    assert [p.id for p in read(folder)] == ["p3", "p1", "p4", "p2"]
    assert read(folder) == mixed
    assert [r["id"] for r in datasets.load_dataset(str(folder))["train"]] == ["p1", "p2"]
    meta = json.loads((folder / "parakit.json").read_text())
    meta["order"] = ["p3", "p1", "p4"]  # a pair missing from the order
    (folder / "parakit.json").write_text(json.dumps(meta))
    with pytest.raises(DataFormatError) as err:
        read(folder)
    assert err.value.code == "E135" and err.value.field == "order"
    # written in split order, the folder needs no order list
    write_release(pairs, tmp_path / "plain", license="mit")
    assert "order" not in json.loads((tmp_path / "plain" / "parakit.json").read_text())

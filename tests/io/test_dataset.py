"""Parquet files and Hugging Face datasets (parakit.io.dataset): parakit's own Parquet round
trip, a GLUE-shaped MRPC read from a local dataset folder and from a ``save_to_disk`` folder
(offline, through ``datasets`` itself), the ``hf:`` spelling and its errors."""

from __future__ import annotations

import pytest

from parakit.errors import DataFormatError
from parakit.io import detect_format, read, write
from parakit.io.dataset import parse_hf_spec, read_hf_dataset
from parakit.schema import Document, Judgment, Pair, PairSet, Span

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    """No Hub: every read is local (an attempt to reach the Hub fails at once)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


def _rich() -> PairSet:
    docs = [Document("d1", "The cat sat. It was late.", {"episode": "A"})]
    pairs = [
        Pair("p1", "The cat sat.", "It was late.", label="4<", span1=Span("d1", 0, 12),
             span2=Span("d1", 13, 25), group="A", split="train", fold=3,
             judgments=(Judgment("ann1", "4<"),), rewrites=(("a", "b"),), metadata={"wor": 0.25}),
        Pair("p2", "Rain fell.", "It rained.", label="2", time="2021-05-01", source="news"),
    ]  # fmt: skip
    return PairSet(pairs, scheme="turku", documents=docs, name="toy", lang="fi",
                   metadata={"provenance": "hand-made"})  # fmt: skip


def test_parakit_parquet_keeps_every_field_and_the_header(tmp_path):
    original = _rich()
    path = write(original, tmp_path / "toy.parquet")
    assert detect_format(path) == "parquet"
    back = read(path)
    assert list(back) == list(original)
    assert back.documents == original.documents
    assert (back.scheme.name, back.name, back.lang, back.metadata) == (
        "turku", "toy", "fi", {"provenance": "hand-made"}
    )  # fmt: skip
    # pandas (pyarrow) sees plain columns: one row per pair, nested fields as JSON text
    frame = __import__("pandas").read_parquet(path)
    assert list(frame["id"]) == ["p1", "p2"] and frame["fold"].iloc[0] == 3


def test_parquet_refuses_values_json_cannot_hold(tmp_path):
    # a pair's or the corpus's metadata JSON cannot write raised a bare TypeError (a traceback)
    import datetime

    day = datetime.date(2021, 5, 1)
    for pairs in (
        PairSet([Pair("p", "x", "y", metadata={"day": day})]),
        PairSet([Pair("p", "x", "y")], metadata={"day": day}),
    ):
        with pytest.raises(DataFormatError) as err:
            write(pairs, tmp_path / "bad.parquet")
        assert err.value.code == "E120" and "date" in str(err.value)
        assert "bad.parquet" in str(err.value) and not (tmp_path / "bad.parquet").exists()


def test_every_split_of_a_parakit_dataset_dict_keeps_its_documents(tmp_path):
    # each split's description carries its own documents: only the first split's were kept,
    # and the test pair's span pointed into a document the set did not hold
    train = PairSet(
        [Pair("0", "abc", "abc", span1=Span("a", 0, 3))], documents=[Document("a", "abc")]
    )
    test = PairSet(
        [Pair("0", "xyz", "xyz", span1=Span("b", 0, 3))], documents=[Document("b", "xyz")]
    )
    parts = {"train": train.to_dataset(), "test": test.to_dataset()}
    datasets.DatasetDict(parts).save_to_disk(str(tmp_path / "dd"))
    pairs = read(f"hf:{tmp_path}/dd")
    assert [(p.id, p.split) for p in pairs] == [("train-0", "train"), ("test-0", "test")]
    assert pairs.documents == {"a": Document("a", "abc"), "b": Document("b", "xyz")}
    assert pairs.verify_spans() == 2
    # one document id with two texts is refused, not one text silently kept
    clash = PairSet(
        [Pair("0", "xyz", "xyz", span1=Span("a", 0, 3))], documents=[Document("a", "xyz")]
    )
    parts["test"] = clash.to_dataset()
    datasets.DatasetDict(parts).save_to_disk(str(tmp_path / "clash"))
    with pytest.raises(DataFormatError) as err:
        read(f"hf:{tmp_path}/clash")
    assert err.value.code == "E138" and "'a'" in str(err.value)


def _glue_mrpc(data_path) -> tuple[PairSet, object]:
    """The real MRPC training file and the same pairs shaped as GLUE's ``mrpc`` config
    (sentence1, sentence2, a ClassLabel not_equivalent/equivalent, idx)."""
    mrpc = read(data_path("mrpc/msr_paraphrase_train.txt"))
    features = datasets.Features(
        {
            "sentence1": datasets.Value("string"),
            "sentence2": datasets.Value("string"),
            "label": datasets.ClassLabel(names=["not_equivalent", "equivalent"]),
            "idx": datasets.Value("int32"),
        }
    )
    rows = {
        "sentence1": [p.text1 for p in mrpc],
        "sentence2": [p.text2 for p in mrpc],
        "label": [int(p.label) for p in mrpc],
        "idx": list(range(len(mrpc))),
    }
    glue = datasets.Dataset.from_dict(rows, features=features)
    return mrpc, glue


def test_a_glue_shaped_dataset_folder_reads_as_the_mrpc_file(data_path, tmp_path):
    mrpc, glue = _glue_mrpc(data_path)
    folder = tmp_path / "glue-mrpc"
    (folder / "data").mkdir(parents=True)
    glue.select(range(4000)).to_parquet(folder / "data" / "train.parquet")
    glue.select(range(4000, len(glue))).to_parquet(folder / "data" / "test.parquet")

    train = read(f"hf:{folder}@train")
    assert len(train) == 4000 and train.scheme.name == "binary"
    assert [(p.text1, p.text2, p.label) for p in train] == [
        (p.text1, p.text2, p.label) for p in list(mrpc)[:4000]
    ]
    assert train[0].metadata == {"idx": 0} and train[0].split is None
    # every split: each pair keeps its split's name, ids prefixed so they stay unique
    both = read(f"hf:{folder}")
    assert both.by_split().keys() == {"train", "test"}
    assert len(both) == len(mrpc) == 4076
    assert both.label_counts() == mrpc.label_counts()  # 2,753 paraphrases in MRPC train
    assert mrpc.label_counts()["1"] == 2753
    assert [p.id for p in both][3999:4001] == ["train-3999", "test-0"]
    # a Parquet file of the folder read on its own: the same rows, by the table rules
    one = read(folder / "data" / "test.parquet")
    assert [(p.text1, p.label) for p in one] == [
        (p.text1, p.label) for p in both if p.split == "test"
    ]


def test_a_saved_dataset_dict_with_a_column_mapping(data_path, tmp_path):
    _, glue = _glue_mrpc(data_path)
    renamed = glue.rename_columns({"sentence1": "question1", "sentence2": "question2"})
    datasets.DatasetDict({"validation": renamed.select(range(10))}).save_to_disk(tmp_path / "s")
    with pytest.raises(DataFormatError) as err:
        read(f"hf:{tmp_path / 's'}")
    assert err.value.code == "E106" and "question1" in str(err.value)
    pairs = read_hf_dataset(
        tmp_path / "s", split="validation", columns={"text1": "question1", "text2": "question2"}
    )
    assert [p.text1 for p in pairs] == glue["sentence1"][:10]


def test_hub_ids_offline_and_unknown_splits_are_one_coded_error(tmp_path):
    with pytest.raises(DataFormatError) as err:
        read("hf:nyu-mll/glue:mrpc@train")
    assert err.value.code == "E150" and "nyu-mll/glue" in str(err.value)
    datasets.Dataset.from_dict({"text1": ["a"], "text2": ["b"]}).save_to_disk(tmp_path / "one")
    folder = tmp_path / "two"
    datasets.DatasetDict(
        {"train": datasets.Dataset.from_dict({"text1": ["a"], "text2": ["b"]})}
    ).save_to_disk(folder)
    with pytest.raises(DataFormatError) as err:
        read(f"hf:{folder}@dev")
    assert err.value.code == "E150" and "train" in str(err.value)
    assert [p.text1 for p in read(f"hf:{tmp_path / 'one'}")] == ["a"]


def test_the_hf_spelling():
    assert parse_hf_spec("hf:nyu-mll/glue:mrpc@train") == ("nyu-mll/glue", "mrpc", "train")
    assert parse_hf_spec("hf:google-research-datasets/paws:labeled_final") == (
        "google-research-datasets/paws", "labeled_final", None
    )  # fmt: skip
    assert parse_hf_spec("hf:./local@test[:10]") == ("./local", None, "test[:10]")
    assert detect_format("hf:nyu-mll/glue:mrpc") == "hf"


def test_a_parakit_dataset_keeps_its_scheme_through_save_to_disk(tmp_path):
    original = _rich()
    original.to_dataset().save_to_disk(tmp_path / "saved")
    back = read(f"hf:{tmp_path / 'saved'}")
    assert list(back) == list(original) and back.scheme.name == "turku"
    assert back.documents == original.documents

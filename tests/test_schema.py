"""The data model: pairs, spans, pair sets and their conversions."""

import pytest

from parakit.errors import LabelError, SpanError
from parakit.schema import Document, Judgment, Pair, PairSet, Span


def make_set() -> PairSet:
    doc1 = Document("d1", "Hello world. The cat sat.", {"lang": "en"})
    doc2 = Document("d2", "A cat was sitting. Bye.")
    pairs = [
        Pair(
            "a",
            "The cat sat.",
            "A cat was sitting.",
            label="4<",
            span1=Span("d1", 13, 25),
            span2=Span("d2", 0, 18),
            group="g1",
            fold=3,
            rewrites=(("x", "y"),),
            judgments=(
                Judgment("ann1", "4<", time="2026-01-01T00:00:00", unsure=True),
                Judgment("ann2", "4", gold=True, rewrite=("p", "q")),
            ),
            metadata={"wor": 0.25, "nested": {"k": [1, 2]}},
        ),
        Pair(
            "b",
            "Hello world.",
            "Bye.",
            label="1",
            group="g1",
            split="train",
            time="2026-01-02",
            source="news",
        ),
        Pair("c", "u", "v"),
    ]
    return PairSet(
        pairs,
        scheme="turku",
        documents=[doc1, doc2],
        name="toy",
        lang="en",
        metadata={"licence": "CC0"},
    )


def test_pair_dict_round_trip():
    for pair in make_set():
        assert Pair.from_dict(pair.to_dict()) == pair


def test_spans_verify_and_fail_outside_document():
    ps = make_set()
    assert ps.verify_spans() == 2
    bad = ps.map(lambda p: p.replace(span2=Span("d2", 0, 99)) if p.id == "a" else p)
    with pytest.raises(SpanError, match="outside document"):
        bad.verify_spans()
    wrong = ps.map(lambda p: p.replace(span1=Span("d1", 0, 12)) if p.id == "a" else p)
    with pytest.raises(SpanError, match="covers 'Hello world.'"):
        wrong.verify_spans()
    with pytest.raises(SpanError):
        Span("d1", 5, 2)


def test_validation_normalises_and_rejects():
    ps = PairSet([Pair("a", "x", "y", label="4si")], scheme="turku")
    assert ps[0].label == "4is"
    with pytest.raises(LabelError, match="pair 'b'"):
        PairSet([Pair("b", "x", "y", label="4<>")], scheme="turku")
    with pytest.raises(ValueError, match="duplicate pair id"):
        PairSet([Pair("a", "x", "y"), Pair("a", "z", "w")])


def test_binary_views():
    ps = make_set()
    assert ps.binary_labels() == [1, 0, None]
    assert ps.binary_labels("strict") == [0, 0, None]
    binary = ps.to_binary("strict")
    assert [p.label for p in binary] == ["0", "0"]
    assert binary[0].metadata["original_label"] == "4<"
    assert binary.scheme.name == "binary"


def test_pandas_round_trip_is_lossless():
    ps = make_set()
    frame = ps.to_pandas()
    assert list(frame["id"]) == ["a", "b", "c"]
    assert frame.loc[0, "metadata.wor"] == 0.25
    assert PairSet.from_pandas(frame) == ps


def test_pandas_round_trip_through_parquet(tmp_path):
    # list columns come back from Parquet as numpy arrays (rewrites, judgments, a list in
    # metadata): they were .item()-ed, and any array not of length 1 failed
    import pandas as pd

    ps = make_set().map(lambda p: p.replace(metadata={**p.metadata, "tokens": [1, 2, 3]}))
    ps.to_pandas().to_parquet(tmp_path / "pairs.parquet")
    frame = pd.read_parquet(tmp_path / "pairs.parquet")
    assert type(frame.loc[0, "metadata.tokens"]).__module__ == "numpy"
    back = PairSet.from_pandas(frame)
    assert back == ps
    assert back[0].metadata["tokens"] == [1, 2, 3] and back[0].metadata["wor"] == 0.25


def test_datasets_round_trip_is_lossless():
    pytest.importorskip("datasets")
    ps = make_set()
    dataset = ps.to_dataset()
    assert dataset.num_rows == 3
    assert dataset[1]["split"] == "train"
    assert PairSet.from_dataset(dataset) == ps


def test_plain_frame_and_dataset_need_only_texts():
    import pandas as pd

    frame = pd.DataFrame({"text1": ["a", "b"], "text2": ["c", "d"], "label": ["1", "0"]})
    ps = PairSet.from_pandas(frame)
    assert [p.id for p in ps] == ["0", "1"] and ps.scheme.name == "binary"


def test_slicing_filter_and_split_views():
    ps = make_set()
    assert len(ps[:2]) == 2 and isinstance(ps[:2], PairSet)
    assert [p.id for p in ps.filter(lambda p: p.label is not None)] == ["a", "b"]
    assert set(ps.by_split()) == {None, "train"}


def test_coded_errors_are_parakit_errors_showing_their_code_once():
    from parakit.errors import DataFormatError, LabelError

    with pytest.raises(LabelError) as bad_label:
        PairSet([Pair("a", "x", "y", "7")], scheme="binary")
    assert str(bad_label.value).count("E201") == 1
    assert str(bad_label.value).startswith("[E201] pair 'a': invalid label '7'")
    with pytest.raises(DataFormatError, match=r"^\[E102\] duplicate pair id 'a'"):
        PairSet([Pair("a", "x", "y"), Pair("a", "x", "z")])


def test_drop_labels_reads_each_schemes_base_and_prunes_documents():
    docs = [Document("d1", "One. Two."), Document("d2", "Three. Four."), Document("d3", "Five.")]
    turku = PairSet(
        [
            Pair(
                "a", "One.", "Three.", label="4<i", span1=Span("d1", 0, 4), span2=Span("d2", 0, 6)
            ),
            Pair("b", "Two.", "Five.", label="x", span1=Span("d1", 5, 9), span2=Span("d3", 0, 5)),
            Pair("c", "One.", "Four.", label="1"),
            Pair("d", "Two.", "Four."),  # unlabelled: stays
        ],
        scheme="turku",
        documents=docs,
    )
    kept = turku.drop_labels(["1", "x"])
    assert [p.id for p in kept] == ["a", "d"]
    assert sorted(kept.documents) == ["d1", "d2"]  # d3 was only b's
    assert [p.id for p in turku.drop_labels(["4"])] == ["b", "c", "d"]  # flags do not hide a 4
    assert sorted(turku.prune_documents().documents) == ["d1", "d2", "d3"]
    # labels longer than one character: the whole label is the base ("10" is not a "1")
    from parakit.labels import VoteScheme

    votes = PairSet(
        [Pair("p", "a", "b", label="1"), Pair("q", "a", "c", label="10")],
        scheme=VoteScheme(n_judgments=12, threshold=6),
    )
    assert [p.id for p in votes.drop_labels(["1"])] == ["q"]

"""Phenomena tables: ETPC, Turku labels and flags, automatic surface phenomena."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.analysis.phenomena import (
    Phenomena,
    automatic_phenomena,
    etpc_phenomena,
    get_phenomena,
    surface_phenomena,
    turku_phenomena,
)
from parakit.errors import AnalysisError
from parakit.schema import Pair, PairSet


def _pairs(*texts, scheme="binary", labels=None):
    labels = labels or ["1"] * len(texts)
    return PairSet(
        [
            Pair(str(i), a, b, label=lab)
            for i, ((a, b), lab) in enumerate(zip(texts, labels, strict=True))
        ],
        scheme=scheme,
    )


def test_surface_phenomena_hand_cases():
    ps = _pairs(
        ("He is not here.", "He is here."),
        ("Paid 5 dollars to Anna.", "Paid 6 dollars to Anna."),
        ("I met Anna today.", "I met Maria today."),
        ("Hello, world", "hello world!"),
        ("same", "same"),
    )
    ph = surface_phenomena(ps, lang="en")
    assert ph.column("negation mismatch").tolist() == [True, False, False, False, False]
    assert ph.column("number mismatch").tolist() == [False, True, False, False, False]
    assert ph.column("entity mismatch").tolist() == [False, False, True, False, False]
    assert ph.column("case/punctuation only").tolist() == [False, False, False, True, False]
    assert ph.column("identity").tolist() == [False, False, False, False, True]
    # Exactly one length bin and one overlap bin per pair.
    for category in ("length", "lexical overlap"):
        cols = [j for j, c in enumerate(ph.categories) if c == category]
        assert (ph.matrix[:, cols].sum(axis=1) == 1).all()
    # "He is not here" vs "He is here": 3 shared of 4 words -> overlap 0.75 -> 0.6-0.8 bin.
    assert ph.column("word overlap 0.6-0.8")[0]


def test_swedish_and_finnish_negation():
    ps = _pairs(("Jag vet inte.", "Jag vet."), ("En tiedä.", "Tiedän."))
    assert surface_phenomena(ps[:1], "sv").column("negation mismatch").tolist() == [True]
    assert surface_phenomena(ps[1:], "fi").column("negation mismatch").tolist() == [True]


def test_turku_labels_and_flags():
    ps = _pairs(
        ("a", "b"),
        ("c", "d"),
        ("e", "f"),
        ("g", "h"),
        scheme="turku",
        labels=["4>i", "3", "4", "2"],
    )
    ph = turku_phenomena(ps)
    assert ph.column("label 4").tolist() == [True, False, True, False]
    assert ph.column("flag > (subsumption)").tolist() == [True, False, False, False]
    assert ph.column("flag i (minor deviation)").tolist() == [True, False, False, False]
    assert ph.column("label 4 (no flag)").tolist() == [False, False, True, False]
    assert get_phenomena(ps).source == "turku"


def test_automatic_combines_surface_and_patterns():
    ps = _pairs(("The cat sat on the mat", "On the mat the cat sat"))
    ph = automatic_phenomena(ps, lang="en", synonyms=None)
    assert ph.column("(1) word reordering").tolist() == [True]
    assert ph.signature["patterns"]["lemmatizer"] == "simplemma"


def test_select_drop_rare_and_errors():
    ph = Phenomena(["a", "b"], ["x", "y"], np.array([[1, 0], [1, 0]]), ["1", "2"])
    assert ph.drop_rare(1).names == ["a"]
    with pytest.raises(AnalysisError, match="E1003"):
        ph.column("zzz")


def test_etpc_needs_annotation():
    with pytest.raises(AnalysisError, match="phenomena_annotated"):
        etpc_phenomena(_pairs(("a", "b")))


def test_etpc_real_data(data_path):
    from parakit.io import read

    pairs = read(data_path("etpc"), mrpc=data_path("mrpc/msr_paraphrase_train.txt"))
    annotated = pairs.filter(lambda p: p.metadata.get("phenomena_annotated"))
    ph = etpc_phenomena(annotated)
    assert len(ph) == len(annotated) > 0
    assert "Addition/Deletion" in ph.names
    cats = dict(zip(ph.names, ph.categories, strict=True))
    assert cats["Addition/Deletion"] == "Other"
    assert cats["Inflectional Changes"] == "Morphology"
    sp = etpc_phenomena(annotated, sense_preserving=True)
    assert sp.matrix.sum() <= ph.matrix.sum()

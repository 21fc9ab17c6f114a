"""Pretrained pair models used as they are (parakit.models.pretrained): a sentence-transformers
CrossEncoder, a transformers sequence classifier and a SentenceTransformer with a threshold
chosen on development pairs, each checked against the library that made it, in Python and
through ``identify predict|evaluate`` and ``report profile``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from parakit.cli import main
from parakit.errors import ModelError
from parakit.io import read, write
from parakit.models.pretrained import (
    best_threshold,
    load_predictor,
    model_kind,
    positive_labels,
)
from parakit.schema import Pair, PairSet

torch = pytest.importorskip("torch")
st = pytest.importorskip("sentence_transformers")
transformers = pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def pairs(mine_words) -> PairSet:
    """40 labelled pairs of the tiny model's words: a sentence and a shuffle of it (1), or two
    unrelated sentences (0)."""
    rng = random.Random(0)
    out = []
    for i in range(40):
        a = " ".join(rng.choices(mine_words, k=5))
        if i % 2:
            words = a.split()
            rng.shuffle(words)
            b, label = " ".join(words), "1"
        else:
            b, label = " ".join(rng.choices(mine_words, k=5)), "0"
        out.append(Pair(f"p{i}", a, b, label=label))
    return PairSet(out, name="tiny")


@pytest.fixture(scope="module")
def classifiers(tiny_model, tmp_path_factory) -> dict[str, Path]:
    """A CrossEncoder with one output (sigmoid) saved by sentence-transformers, and a BERT
    sequence classifier with GLUE MRPC's labels saved by transformers."""
    folder = tmp_path_factory.mktemp("classifiers")
    raw = Path(tiny_model).parent / "raw"
    torch.manual_seed(0)
    ce = st.CrossEncoder(str(raw), num_labels=1, device="cpu")
    ce.save(str(folder / "ce"))
    config = transformers.AutoConfig.from_pretrained(raw)
    config.num_labels = 2
    config.id2label = {0: "not_equivalent", 1: "equivalent"}
    config.label2id = {"not_equivalent": 0, "equivalent": 1}
    model = transformers.AutoModelForSequenceClassification.from_config(config)
    model.save_pretrained(folder / "seq")
    transformers.AutoTokenizer.from_pretrained(raw).save_pretrained(folder / "seq")
    return {"ce": folder / "ce", "seq": folder / "seq"}


def test_kinds_are_told_from_the_configs(classifiers, tiny_model):
    assert model_kind(classifiers["ce"]) == "cross-encoder"
    assert model_kind(classifiers["seq"]) == "sequence-classification"
    assert model_kind(tiny_model) == "bi-encoder"
    with pytest.raises(ModelError) as err:
        model_kind("nobody/no-such-model")  # offline, not cached
    assert err.value.code == "E715"


def test_the_paraphrase_label_is_stated_or_inferred():
    assert positive_labels({0: "not_duplicate", 1: "duplicate"}) == [1]
    assert positive_labels({0: "paraphrase", 1: "different"}) == [0]
    assert positive_labels({0: "LABEL_0", 1: "LABEL_1"}) == [1]
    assert positive_labels({0: "contradiction", 1: "entailment", 2: "neutral"}) == [1]
    assert positive_labels({0: "LABEL_0"}) == [0]  # one output: its score
    assert positive_labels({0: "a", 1: "b"}, ["a"]) == [0]
    for labels, stated in (({0: "a", 1: "b"}, None), ({0: "a", 1: "b"}, "c")):
        with pytest.raises(ModelError) as err:
            positive_labels(labels, stated)
        assert err.value.code == "E716" and "0=a, 1=b" in str(err.value)


def test_a_cross_encoder_gives_its_own_scores(classifiers, pairs):
    predictor = load_predictor(classifiers["ce"], precision="fp32")
    expected = st.CrossEncoder(str(classifiers["ce"]), device="cpu").predict(
        [(p.text1, p.text2) for p in pairs]
    )  # one output: the sigmoid score
    np.testing.assert_allclose(predictor.paraphrase_proba(pairs), expected, atol=1e-6)
    assert predictor.predict(pairs).tolist() == ["1" if s >= 0.5 else "0" for s in expected]


def test_a_sequence_classifier_reads_its_id2label(classifiers, pairs):
    predictor = load_predictor(classifiers["seq"], precision="fp32")
    assert "paraphrase = equivalent (inferred" in predictor.describe()
    tokenizer = transformers.AutoTokenizer.from_pretrained(classifiers["seq"])
    model = transformers.AutoModelForSequenceClassification.from_pretrained(classifiers["seq"])
    texts1, texts2 = pairs.texts()
    with torch.no_grad():
        logits = model(**tokenizer(texts1, texts2, padding=True, return_tensors="pt")).logits
    expected = logits.softmax(-1)[:, 1].numpy()
    np.testing.assert_allclose(predictor.paraphrase_proba(pairs), expected, atol=1e-5)
    stated = load_predictor(classifiers["seq"], positive="not_equivalent", precision="fp32")
    np.testing.assert_allclose(stated.paraphrase_proba(pairs), 1 - expected, atol=1e-5)


def test_a_sentence_encoder_gets_the_f1_best_threshold_of_the_dev_set(tiny_model, pairs):
    dev, test = pairs[:20], pairs[20:]
    predictor = load_predictor(tiny_model, dev=dev, precision="fp32")
    model = st.SentenceTransformer(str(tiny_model), device="cpu")

    def cosines(ps):
        a = model.encode([p.text1 for p in ps], convert_to_tensor=True)
        b = model.encode([p.text2 for p in ps], convert_to_tensor=True)
        return st.util.cos_sim(a, b).diagonal().numpy()

    # the known answer: sklearn's precision/recall curve, the cut with the best F1
    from sklearn.metrics import precision_recall_curve

    gold = np.array([int(p.label) for p in dev])
    precision, recall, cuts = precision_recall_curve(gold, cosines(dev))
    f1 = 2 * precision * recall / np.maximum(precision + recall, 1e-12)
    assert predictor.threshold_ == pytest.approx(cuts[np.argmax(f1[:-1])], abs=1e-6)
    expected = ["1" if c >= predictor.threshold_ else "0" for c in cosines(test)]
    assert predictor.predict(test).tolist() == expected
    with pytest.raises(ModelError) as err:
        load_predictor(tiny_model)  # neither a threshold nor development pairs
    assert err.value.code == "E717"


def test_best_threshold_on_a_hand_computed_example():
    scores = np.array([0.9, 0.8, 0.7, 0.7, 0.2])
    truth = np.array([1, 0, 1, 1, 0])
    # cut at 0.7: 4 called, 3 of them right, all 3 positives found: F1 6/7 (0.9: 1/2, 0.2: 3/4)
    assert best_threshold(scores, truth) == 0.7


def test_identify_and_report_take_pretrained_models(classifiers, tiny_model, pairs, tmp_path,
                                                    capsys):  # fmt: skip
    write(pairs, tmp_path / "test.jsonl")
    write(pairs[:20], tmp_path / "dev.jsonl")
    ce = str(classifiers["ce"])
    args = ["identify", "evaluate", ce, str(tmp_path / "test.jsonl"), "--precision", "fp32"]
    assert main([*args, "-o", str(tmp_path / "ev")]) == 0
    metrics = json.loads((tmp_path / "ev" / "metrics.json").read_text())["metrics"]
    scores = st.CrossEncoder(ce, device="cpu").predict([(p.text1, p.text2) for p in pairs])
    right = sum((s >= 0.5) == (p.label == "1") for s, p in zip(scores, pairs, strict=True))
    assert metrics["accuracy"] == pytest.approx(right / len(pairs))
    predict = ["identify", "predict", str(tiny_model), str(tmp_path / "test.jsonl")]
    assert main([*predict, "-o", str(tmp_path / "pred.jsonl"), "--dev",
                 str(tmp_path / "dev.jsonl")]) == 0  # fmt: skip
    assert "paraphrase at cosine >=" in capsys.readouterr().err
    assert len(read(tmp_path / "pred.jsonl")) == len(pairs)
    assert main(["report", "profile", str(tmp_path / "test.jsonl"), "-m", ce, "-m",
                 str(tiny_model), "--threshold", "0.5", "-p", str(tmp_path / "pred.jsonl"),
                 "--phenomena", "surface", "--min-support", "2", "-o",
                 str(tmp_path / "profile")]) == 0  # fmt: skip
    profile = json.loads((tmp_path / "profile.json").read_text())
    assert sorted(profile["systems"]) == ["ce", "pred", "st"]
    # the CrossEncoder's system is its own scores cut at 0.5: the accuracy evaluate reported
    assert profile["overall"]["ce"]["accuracy"] == pytest.approx(metrics["accuracy"])
    capsys.readouterr()
    assert main(["identify", "evaluate", str(tiny_model), str(tmp_path / "test.jsonl")]) == 2
    assert "[E717]" in capsys.readouterr().err

"""The estimator contract over every model family (scikit-learn's ``test_common.py`` habit).

Every registered classifier (:func:`parakit.models.base.available_models`), the generator and
the bi-encoder, on tiny data and tiny transformers built from a config:

- ``clone`` gives an unfitted copy with equal parameters;
- ``get_params``/``set_params`` round-trip, and an unknown parameter is refused (E712) by
  ``set_params``, ``make_model`` and the one loader;
- ``fit`` returns the estimator itself, and what it learns ends in ``_``;
- a classifier's ``predict_with_proba`` is ``predict`` and ``predict_proba`` from one pass;
- ``save`` + :func:`parakit.models.base.load_model` give the same predictions.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from sklearn.base import clone

from parakit.errors import ModelError, ParakitFutureWarning
from parakit.models.base import RENAMED, available_models, load_model, make_model
from parakit.schema import PairSet

#: the transformer settings that keep every fit to a step or two on a CPU
TINY = {"max_length": 32, "batch_size": 8, "micro_batch_size": 8, "progress": False}


@dataclass
class Case:
    """How the contract reaches one family: build, fit and predict."""

    build: Callable[[dict[str, Any]], Any]
    fit: Callable[[Any, dict[str, Any]], Any]
    predict: Callable[[Any, dict[str, Any]], Any]


def _classifier(name: str, **params: Any) -> Case:
    turku = name in ("multihead", "multiclass")
    data = "turku" if turku else "binary"
    return Case(
        build=lambda f: make_model(
            name, **{k: v(f) if callable(v) else v for k, v in params.items()}
        ),
        fit=lambda model, f: model.fit(f[data]),
        predict=lambda model, f: model.predict_proba(f[data]),
    )


def _transformer_classifier(name: str) -> Case:
    return _classifier(
        name, model_name_or_path=lambda f: f["encoder"], epochs=1, max_steps=2, **TINY
    )


def _generator() -> Case:
    from parakit.models.generator import Seq2SeqGenerator

    pairs = [("the cat sat", "a cat sat"), ("a dog ran", "the dog ran")] * 4
    return Case(
        build=lambda f: Seq2SeqGenerator(
            f["encoder"], epochs=1, max_steps=1, num_beams=1, max_new_tokens=4, **TINY
        ),
        fit=lambda model, f: model.fit(pairs, pairs[:2]),
        predict=lambda model, f: model.generate(["the cat sat", "a dog ran"]),
    )


def _biencoder() -> Case:
    from parakit.models.biencoder import BiEncoder

    return Case(
        build=lambda f: BiEncoder(
            f["sentence_model"], epochs=1, batch_size=8, max_length=32, progress=False
        ),
        fit=lambda model, f: model.fit(f["binary"]),
        predict=lambda model, f: model.encode(["a cat sat", "the dog ran"]),
    )


CASES: dict[str, Case] = {
    "wor": _classifier("wor"),
    "tfidf": _classifier("tfidf"),
    "bow": _classifier("bow"),
    "bow-cosine": _classifier("bow-cosine"),
    "word-vectors": _classifier("word-vectors", vector_size=8, epochs=2),
    "mt-features": _classifier("mt-features", n_estimators=5),
    "embedding-lr": _classifier(
        "embedding-lr", model_name_or_path=lambda f: str(f["sentence_model"])
    ),
    "cross-encoder": _transformer_classifier("cross-encoder"),
    "multihead": _transformer_classifier("multihead"),
    "multiclass": _transformer_classifier("multiclass"),
    "generator": _generator(),
    "biencoder": _biencoder(),
}


def test_every_registered_model_has_a_case():
    assert set(available_models()) <= set(CASES)


@pytest.fixture(scope="module")
def fixtures(multipit, turku_sv, tiny_encoder, tiny_model) -> dict[str, Any]:
    train, _ = multipit
    binary = PairSet(list(train[:24]), scheme="binary")
    turku = PairSet([p for p in turku_sv[0] if p.label != "x"][:24], scheme="turku")
    return {
        "binary": binary,
        "turku": turku,
        "encoder": tiny_encoder,
        "sentence_model": tiny_model,
    }


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return a == b
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_clone_and_params_round_trip(name, fixtures):
    if name == "word-vectors":
        pytest.importorskip("gensim")
    model = CASES[name].build(fixtures)
    params = model.get_params()
    copy = clone(model)
    assert type(copy) is type(model) and copy is not model
    assert copy.get_params() == params
    assert copy.set_params(**params).get_params() == params
    changed = "seed" if "seed" in params else sorted(params)[0]
    value = 7 if changed == "seed" else params[changed]
    assert copy.set_params(**{changed: value}).get_params()[changed] == value
    with pytest.raises(ModelError, match=r"E712.*no_such_parameter"):
        model.set_params(no_such_parameter=1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fit_returns_self_and_save_load_predicts_the_same(name, fixtures, tmp_path):
    if name == "word-vectors":
        pytest.importorskip("gensim")
    case = CASES[name]
    model = case.build(fixtures)
    before = set(vars(model))
    assert case.fit(model, fixtures) is model
    learnt = {k for k in set(vars(model)) - before if not k.startswith("_")}
    assert learnt and all(k.endswith("_") for k in learnt), learnt
    # a clone of a fitted estimator is unfitted, with the same parameters
    assert not {k for k in vars(clone(model)) if k.endswith("_") and not k.startswith("_")}
    expected = case.predict(model, fixtures)
    if hasattr(model, "predict_with_proba"):  # a classifier: both from one pass of the model
        data = fixtures["turku" if name in ("multihead", "multiclass") else "binary"]
        passes = []
        inner = model._predict_proba
        model._predict_proba = lambda d: passes.append(1) or inner(d)
        labels, proba = model.predict_with_proba(data)
        assert len(passes) == 1
        del model._predict_proba
        assert labels.tolist() == model.predict(data).tolist()
        assert _same(proba, model.predict_proba(data)) and _same(proba, expected)
    model.save(tmp_path / "model")
    again = load_model(tmp_path / "model")
    assert type(again) is type(model)
    assert again.get_params().keys() == model.get_params().keys()
    assert _same(case.predict(again, fixtures), expected)
    with pytest.raises(ModelError, match=r"E712.*no_such_parameter"):
        load_model(tmp_path / "model", no_such_parameter=1)


def test_make_model_refuses_an_unknown_parameter():
    with pytest.raises(ModelError, match=r"E712.*no_such_parameter"):
        make_model("cross-encoder", no_such_parameter=1)


def test_an_earlier_parameter_name_given_to_the_constructor_is_read_with_a_warning(fixtures):
    """``EmbeddingClassifier(encoder=...)`` built a model before the one vocabulary; it still
    does (warning with the new name), as ``-p encoder=`` and ``set_params`` do."""
    checked = []
    for name, case in sorted(CASES.items()):
        if name == "word-vectors" and importlib.util.find_spec("gensim") is None:
            continue
        model = case.build(fixtures)
        params = model.get_params()
        for old, new in RENAMED.items():
            if new not in params or old in params or params[new] is None:
                continue
            renamed = {old if k == new else k: v for k, v in params.items()}
            with pytest.warns(ParakitFutureWarning, match=rf"{old}= is now called {new}="):
                again = type(model)(**renamed)
            assert again.get_params() == params
            assert clone(again).get_params() == params
            with pytest.raises(ModelError, match=rf"E712.*{old}= and {new}="):
                type(model)(**renamed, **{new: params[new]})
            checked.append((type(model).__name__, old))
    assert ("EmbeddingClassifier", "encoder") in checked
    assert ("CrossEncoderClassifier", "base_model") in checked

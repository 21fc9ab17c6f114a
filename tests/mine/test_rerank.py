"""Re-ranking hand-off: mine loads what `identify train` saves and uses its P(paraphrase)."""

from __future__ import annotations

import numpy as np
import pytest

from parakit.errors import MineError
from parakit.mine.rerank import load_classifier, paraphrase_proba, tile_confidences
from parakit.schema import Pair, PairSet


def _turku_pairs() -> PairSet:
    rows = []
    for i in range(40):
        words = f"w{i} the cat sat on the mat"
        if i % 4 == 0:
            rows.append(Pair(str(i), words, "completely different text here", "1"))
        elif i % 4 == 1:
            rows.append(Pair(str(i), words, words + " today", "3"))
        elif i % 4 == 2:
            rows.append(Pair(str(i), words, words, "4"))
        else:
            rows.append(Pair(str(i), words, words + " now", "4<"))
    return PairSet(rows, scheme="turku")


def test_identify_model_folder_loads_and_gives_its_own_paraphrase_proba(tmp_path):
    from parakit.models.base import make_model

    pairs = _turku_pairs()
    model = make_model("mt-features", seed=0).fit(pairs)
    model.save(tmp_path / "model")
    loaded = load_classifier(tmp_path / "model")
    got = paraphrase_proba(loaded, pairs)
    np.testing.assert_allclose(got, model.paraphrase_proba(pairs))
    # loose reading: classes 3, 4 and 4< all count (one column alone would not)
    proba = model.predict_proba(pairs)
    classes = [str(c) for c in model.classes_]
    loose = [i for i, c in enumerate(classes) if c[0] in "34"]
    np.testing.assert_allclose(got, proba[:, loose].sum(axis=1))
    neg, four = tile_confidences(loaded, pairs)
    np.testing.assert_allclose(neg, 1 - got)
    fours = [i for i, c in enumerate(classes) if c.startswith("4")]
    np.testing.assert_allclose(four, proba[:, fours].sum(axis=1))


def test_third_party_classifier_needs_a_named_class():
    class Plain:
        classes_ = np.array(["no", "yes"])

        def predict_proba(self, pairs):
            return np.tile([0.25, 0.75], (len(pairs), 1))

    pairs = _turku_pairs()
    with pytest.raises(MineError, match="E804"):
        paraphrase_proba(Plain(), pairs)
    np.testing.assert_allclose(paraphrase_proba(Plain(), pairs, positive="yes"), 0.75)


def test_missing_folder_is_a_clean_error(tmp_path):
    with pytest.raises(MineError, match="no such classifier"):
        load_classifier(tmp_path / "nope")

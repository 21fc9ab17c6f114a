import pytest

from parakit.build.negatives import random_negatives
from parakit.errors import ParakitError
from parakit.text import word_overlap_rate

SENTS = (
    [f"the old man walked his dog in the park number {i}" for i in range(40)]
    + [f"quarterly revenue grew by {i} percent" for i in range(40)]
    + [f"she painted the kitchen wall blue on day {i}" for i in range(40)]
)


def test_random_pairs_are_distinct_unique_and_seeded():
    ps = random_negatives(SENTS, n=50, seed=3)
    assert len(ps) == 50
    keys = {frozenset((p.text1, p.text2)) for p in ps}
    assert len(keys) == 50 and all(p.text1 != p.text2 for p in ps)
    assert all(
        p.metadata["wor"] == pytest.approx(word_overlap_rate(p.text1, p.text2), abs=1e-6)
        for p in ps
    )
    assert [p.text1 for p in random_negatives(SENTS, n=50, seed=3)] == [p.text1 for p in ps]


def test_wor_band_fills_high_overlap_negatives():
    ps = random_negatives(SENTS, n=30, wor_band=(0.7, 0.95), seed=0)
    assert len(ps) == 30
    assert all(0.7 <= word_overlap_rate(p.text1, p.text2) <= 0.95 for p in ps)
    # unreachable band: fewer pairs, reported, no endless loop
    ps = random_negatives(SENTS, n=5, wor_band=(0.99, 0.999), seed=0, max_attempts=100)
    assert len(ps) == 0 and ps.metadata["negatives"]["found"] == 0


def test_excluded_pairs_are_never_returned():
    sents = ["a b c d e", "a b c d f", "a b c x y", "p q r s t"]
    ps = random_negatives(
        sents,
        n=3,
        wor_band=(0.1, 1.0),
        seed=0,
        max_attempts=200,
        exclude=[("a b c d f", "a b c d e")],
    )
    got = {frozenset((p.text1, p.text2)) for p in ps}
    assert frozenset(("a b c d e", "a b c d f")) not in got
    assert got == {frozenset(("a b c d e", "a b c x y")), frozenset(("a b c d f", "a b c x y"))}


def test_bad_arguments():
    with pytest.raises(ParakitError, match="E501"):
        random_negatives(["same", "same"], n=1)
    with pytest.raises(ParakitError, match="E508"):
        random_negatives(SENTS, n=1, wor_band=(0.9, 0.1))


@pytest.fixture(scope="module")
def auto_sample(data_path):
    """200 of the 215 MultiPIT auto-val pairs (positives only), a seeded sample."""
    import numpy as np

    from parakit.io import read
    from parakit.schema import PairSet

    auto = read(data_path("multipit/auto-val.csv"), format="multipit")
    rng = np.random.default_rng(0)
    return PairSet([auto[int(i)] for i in sorted(rng.choice(len(auto), 200, replace=False))])


def test_nearest_negatives_pick_the_best_admissible_partner(auto_sample):
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from parakit.build.negatives import nearest_negatives

    negatives = nearest_negatives(auto_sample, chunk_size=37)  # blocks that do not divide 200
    t1 = [p.text1 for p in auto_sample]
    t2 = [p.text2 for p in auto_sample]
    known = {frozenset(p) for p in zip(t1, t2, strict=True)}
    # brute force: the same cosine, every candidate checked one by one
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4)).fit(t1 + t2)
    sims = (vec.transform(t1) @ vec.transform(t2).T).toarray()
    by_id = {p.id: p for p in negatives}
    assert len(negatives) == len(auto_sample) == 200
    for i, pair in enumerate(auto_sample):
        allowed = [
            j
            for j in range(len(t2))
            if t1[j] != t1[i]
            and t2[j] not in (t1[i], t2[i])
            and frozenset((t1[i], t2[j])) not in known
        ]
        best = max(sims[i, j] for j in allowed)
        neg = by_id[f"{pair.id}-neg"]
        assert neg.label == "0" and neg.text1 == t1[i]
        assert frozenset((neg.text1, neg.text2)) not in known
        assert neg.metadata["similarity"] == pytest.approx(best, abs=1e-5)
    assert np.mean([p.metadata["similarity"] for p in negatives]) > 0.2  # same-topic partners


def test_nearest_negatives_need_two_pairs():
    from parakit.build.negatives import nearest_negatives
    from parakit.schema import Pair, PairSet

    with pytest.raises(ParakitError, match="E501"):
        nearest_negatives(PairSet([Pair("a", "x y", "y z")]))

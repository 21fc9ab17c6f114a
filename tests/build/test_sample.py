import numpy as np
import pytest

from parakit.build.sample import balanced_sample, histogram, wor_bin_index
from parakit.errors import ParakitError
from parakit.io import read
from parakit.schema import Pair, PairSet
from parakit.text import char_ngram_cosine


def _pairs_with_wor():
    """Pairs of known WOR: 'w0..w9' vs a copy with m tokens replaced -> WOR = (10-m)/(10+m)."""
    base = [f"w{i}" for i in range(10)]
    pairs = []
    for m in range(11):
        for rep in range(3 if m % 2 else 8):  # odd m: 3 pairs, even m: 8 pairs
            other = base[: 10 - m] + [f"x{rep}_{j}" for j in range(m)]
            pairs.append(
                Pair(f"m{m}-{rep}", " ".join(base), " ".join(other), metadata={"qe": rep / 10})
            )
    pairs.append(Pair("exact", " ".join(base), " ".join(base)))
    pairs.append(Pair("reordered", " ".join(base), " ".join(reversed(base))))
    return PairSet(pairs)


def test_wor_bins_are_ten_tenths_plus_one():
    assert wor_bin_index(np.array([0.0, 0.05, 0.1, 0.55, 0.999, 1.0])).tolist() == [
        0,
        0,
        1,
        5,
        9,
        10,
    ]


def test_exactly_n_per_bin_when_available_and_short_bins_reported():
    ps = _pairs_with_wor()
    sample, report = balanced_sample(ps, n_per_bin=5, measure="wor", seed=0)
    expected = np.zeros(11, dtype=int)
    for m in range(1, 11):  # m = 0 gives 8 exact matches: excluded
        wor = (10 - m) / (10 + m)
        expected[wor_bin_index(np.array([wor]))[0]] += 3 if m % 2 else 8
    expected[10] += 1  # the reordered pair (same tokens, WOR 1) is not an exact match
    assert report.available == expected.tolist()
    assert report.sampled == np.minimum(expected, 5).tolist()
    assert report.short_bins() == [i for i, a in enumerate(expected) if a < 5]
    assert report.excluded_exact == 9
    assert "exact" not in {p.id for p in sample}
    counts = np.bincount([p.metadata["bin"] for p in sample], minlength=11)
    assert counts.tolist() == report.sampled
    # seeded and reproducible, different seeds differ
    again, _ = balanced_sample(ps, n_per_bin=5, measure="wor", seed=0)
    other, _ = balanced_sample(ps, n_per_bin=5, measure="wor", seed=1)
    assert [p.id for p in again] == [p.id for p in sample] != [p.id for p in other]
    assert "short" in report.table()


def test_order_by_takes_the_best_of_each_bin():
    ps = _pairs_with_wor()
    sample, _ = balanced_sample(ps, n_per_bin=2, measure="wor", order_by="qe")
    bin0 = [p for p in sample if p.metadata["bin"] == 0]  # m = 10: WOR 0, 8 pairs (rep 0..7)
    assert sorted(p.metadata["qe"] for p in bin0) == [0.6, 0.7]


def test_char_preset_uses_twenty_bins_of_tf_char_2_4_cosine():
    ps = _pairs_with_wor()
    _, report = balanced_sample(ps, n_per_bin=1, measure="char")
    assert len(report.available) == 20 and report.edges[1] == (0.05, 0.1)
    cos = char_ngram_cosine([p.text1 for p in ps], [p.text2 for p in ps], ngram_range=(2, 4))
    expected = np.bincount(np.minimum((cos * 20).astype(int), 19), minlength=20)
    assert report.available == expected.tolist()


def test_tmup_wor_histogram_mt_vs_wikipedia(data_path):
    ps = read(data_path("tmup/tmup.tsv"), format="tmup")
    mt = histogram(ps.filter(lambda p: p.source == "mt"), method="whitespace")
    wiki = histogram(ps.filter(lambda p: p.source == "wikipedia"), method="whitespace")
    # the paper: 363 positive + 102 negative MT pairs, 190 Wikipedia negatives
    assert sum(mt.available) == 465 and sum(wiki.available) == 190
    # not uniform: annotation removed pairs after the 200-per-range sampling
    assert max(mt.available) - min(mt.available) > 50
    # Wikipedia negatives were added to fill high WOR only
    assert sum(wiki.available[:7]) == 0 and sum(wiki.available[7:]) == 190
    assert all(a <= 200 for a in mt.available)


def test_unknown_measure_is_a_clear_error():
    with pytest.raises(Exception, match="E508"):
        balanced_sample(_pairs_with_wor(), 1, measure="nope")


def test_values_on_a_bin_edge_go_to_the_bin_that_starts_there():
    # bins of width 1/n are [k/n, (k+1)/n): WOR 3/10 (3 shared of 10 types) is in bin 3 of
    # 10, a stored score 0.15 in bin 3 of 20 (0.3 / 0.1 is 2.9999999999999996 in floats)
    base = "a b c d e f g"  # 7 types
    ps = PairSet([Pair("p", base, "a b c x y z")])  # shared 3, union 10: WOR 0.3
    _, report = balanced_sample(ps, n_per_bin=1, measure="wor", n_bins=10)
    assert report.available == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    scored = PairSet(
        [Pair(str(i), "x", "y", metadata={"qe": v}) for i, v in enumerate([0.15, 0.35, 0.05])]
    )
    sample, report = balanced_sample(scored, n_per_bin=1, measure="qe", n_bins=20)
    assert [p.metadata["bin"] for p in sample] == [1, 3, 7]
    assert report.edges[3] == (0.15, 0.2)


def test_zero_bins_is_refused_not_read_as_the_preset():
    # n_bins=0 is not "the measure's default" (None is): it is an error like any n_bins < 1
    ps = PairSet([Pair("p", "a b c", "a b d")])
    with pytest.raises(ParakitError) as err:
        balanced_sample(ps, n_per_bin=1, measure="char", n_bins=0)
    assert err.value.code == "E303"

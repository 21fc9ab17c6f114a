"""Known-answer tests of the significance tests (hand-computed and published values)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parakit.analysis.stats import (
    friedman_nemenyi,
    mann_whitney,
    mcnemar,
    nemenyi_cd,
    nemenyi_q,
    pearson_matrix,
)
from parakit.errors import AnalysisError


def test_cd_matches_the_paper_for_27_phenomena_and_11_systems():
    # Kovatchev et al. (2019) §5.4: "The Critical Difference (CD) for these values is 12.5".
    assert round(nemenyi_cd(k=27, n=11, alpha=0.05), 1) == 12.5


@pytest.mark.parametrize(("k", "q"), [(2, 1.960), (3, 2.343), (5, 2.728), (10, 3.164)])
def test_nemenyi_q_matches_demsar_table(k, q):
    # Demšar (2006), Table 5(a), two-tailed Nemenyi, alpha = 0.05.
    assert nemenyi_q(k, 0.05) == pytest.approx(q, abs=1e-3)


def test_nemenyi_q_at_010_matches_demsar_table():
    assert nemenyi_q(4, 0.10) == pytest.approx(2.291, abs=1e-3)


def test_mann_whitney_hand_computed():
    x = np.array([1, 1, 1, 1, 1])
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0])
    r = mann_whitney(x, y)
    # U: each x=1 beats 4 zeros and ties 4 ones -> 4 + 2 = 6 per x, 30 in all.
    assert r.statistic == 30.0
    # Normal approximation with tie correction and continuity correction, by hand.
    n1, n2, n = 5, 8, 13
    ties = (9**3 - 9) + (4**3 - 4)
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    z = (30 - n1 * n2 / 2 - 0.5) / sigma
    assert r.p == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-9)


def test_mann_whitney_too_few_pairs_is_na():
    r = mann_whitney(np.array([1, 0]), np.ones(10), min_support=5)
    assert r.p is None and r.n == 2


def test_mcnemar_exact_small_counts():
    r = mcnemar(np.array([1, 1, 1, 0, 1]), np.array([0, 0, 0, 0, 1]))
    assert (r.details["b"], r.details["c"]) == (3, 0)
    assert r.method == "mcnemar-exact"
    assert r.p == pytest.approx(0.25)  # 2 * 0.5**3


def test_mcnemar_chi2_large_counts():
    a = np.array([1] * 30 + [0] * 10 + [1] * 5)
    b = np.array([0] * 30 + [1] * 10 + [1] * 5)
    r = mcnemar(a, b)
    assert r.method == "mcnemar-chi2"
    assert r.statistic == pytest.approx((abs(30 - 10) - 1) ** 2 / 40)
    assert r.p == pytest.approx(math.erfc(math.sqrt(9.025 / 2)), rel=1e-9)


def test_mcnemar_no_discordant_pairs():
    r = mcnemar(np.array([1, 0]), np.array([1, 0]))
    assert r.p == 1.0


def test_mcnemar_shape_mismatch():
    with pytest.raises(AnalysisError, match="E1001"):
        mcnemar(np.array([1, 0]), np.array([1]))


def test_friedman_hand_computed_with_ties():
    scores = np.array([[0.9, 0.8, 0.7], [0.8, 0.9, 0.7], [0.9, 0.7, 0.7]])
    r = friedman_nemenyi(scores, ["a", "b", "c"])
    np.testing.assert_allclose(r.ranks, [[1, 2, 3], [2, 1, 3], [1, 2.5, 2.5]])
    np.testing.assert_allclose(r.average_ranks, [4 / 3, 5.5 / 3, 8.5 / 3])
    # chi2 = 12/(N k (k+1)) sum R_j^2 - 3 N (k+1) = 3.5, tie-corrected by 1 - 6/72.
    assert r.friedman.statistic == pytest.approx(3.5 / (1 - 6 / 72))
    assert r.friedman.p == pytest.approx(math.exp(-r.friedman.statistic / 2))
    assert r.cd == pytest.approx(2.343 * math.sqrt(12 / 18), abs=1e-3)
    assert r.pvalues.shape == (3, 3)
    assert np.allclose(r.pvalues, r.pvalues.T)


def test_friedman_rejects_too_few():
    with pytest.raises(AnalysisError, match="E1002"):
        friedman_nemenyi(np.ones((1, 5)))


def test_pearson_matrix():
    x = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 0, 0]])
    r = pearson_matrix(x)
    assert r[0, 1] == pytest.approx(1.0)
    assert r[0, 2] == pytest.approx(0.0)

"""Significance tests of the qualitative evaluation framework (Q4–Q6).

Thin, tested wrappers over scipy, statsmodels and scikit-posthocs: the statistics are not
re-derived here, only arranged the way the paper uses them.

* :func:`mann_whitney` — a phenomenon's correct/incorrect predictions against the whole test
  set's (Q4, Kovatchev et al. 2019 §5.2).
* :func:`mcnemar` — two systems on the same pairs (Q5, §5.3), exact binomial test for small
  discordant counts.
* :func:`friedman_nemenyi` — systems × phenomena accuracies, phenomena ranked per system with
  ties averaged, Friedman test, Nemenyi post-hoc and the critical difference (Q6, §5.4).

Example:
    >>> round(nemenyi_cd(k=27, n=11, alpha=0.05), 1)
    12.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parakit.errors import AnalysisError, Errors


@dataclass(frozen=True)
class TestResult:
    """One test: statistic, p-value and how it was computed.

    ``p`` is None ("na" in the paper's tables) when the sample is too small to test.
    """

    statistic: float | None
    p: float | None
    method: str
    n: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "p": self.p,
            "method": self.method,
            "n": self.n,
            **self.details,
        }


def mann_whitney(
    subset_correct: np.ndarray,
    all_correct: np.ndarray,
    *,
    min_support: int = 5,
    alternative: str = "two-sided",
) -> TestResult:
    """Mann–Whitney U of a phenomenon's correct/incorrect predictions vs the whole test set.

    As in Kovatchev et al. (2019, §5.2, Table 2): the two samples are the 0/1 correctness of the
    pairs that contain the phenomenon and the 0/1 correctness of every test pair.

    Args:
        subset_correct: 1 = correct, 0 = wrong, for the pairs with the phenomenon.
        all_correct: the same for the whole test set.
        min_support: below this many pairs the test is not run (``p=None``; the paper's "na").
        alternative: passed to :func:`scipy.stats.mannwhitneyu`.

    Returns:
        statistic = U of the subset sample, p-value (asymptotic, tie-corrected: the samples
        are binary so ties are the rule).

    Example:
        >>> r = mann_whitney(np.array([1, 1, 1, 1, 1]), np.array([1, 0, 1, 0, 1, 0, 1, 0]))
        >>> r.statistic
        30.0
    """
    from scipy.stats import mannwhitneyu

    x = np.asarray(subset_correct, dtype=float)
    y = np.asarray(all_correct, dtype=float)
    if x.ndim != 1 or y.ndim != 1:
        raise AnalysisError(Errors.E1001_mann_whitney_expects)
    if len(x) < min_support or len(y) == 0:
        return TestResult(
            None,
            None,
            "mann-whitney-u",
            n=len(x),
            details={"reason": f"fewer than {min_support} pairs"},
        )
    # Constant identical samples make the statistic undefined (no variance at all).
    if np.all(x == x[0]) and np.all(y == x[0]):
        return TestResult(float(len(x) * len(y) / 2), 1.0, "mann-whitney-u", n=len(x))
    res = mannwhitneyu(x, y, alternative=alternative, method="asymptotic", use_continuity=True)
    return TestResult(float(res.statistic), float(res.pvalue), "mann-whitney-u", n=len(x))


def mcnemar(
    correct_a: np.ndarray,
    correct_b: np.ndarray,
    *,
    exact: bool | str = "auto",
    exact_below: int = 25,
) -> TestResult:
    """McNemar's paired test of two systems' correctness on the same pairs (statsmodels).

    Args:
        correct_a, correct_b: 0/1 correctness of systems A and B on the same pairs.
        exact: True = exact binomial test, False = chi-square with continuity correction,
            ``"auto"`` = exact when the discordant count ``b + c`` is below ``exact_below``.
        exact_below: threshold for ``"auto"`` (25 is the usual rule of thumb).

    Returns:
        statistic (min(b, c) for the exact test, chi-square otherwise), p-value, and
        ``b`` (A right, B wrong) / ``c`` (A wrong, B right) in ``details``.

    Example:
        >>> r = mcnemar(np.array([1, 1, 1, 0]), np.array([0, 0, 0, 0]))
        >>> r.details["b"], r.details["c"], r.p
        (3, 0, 0.25)
    """
    from statsmodels.stats.contingency_tables import mcnemar as _mcnemar

    a = np.asarray(correct_a).astype(bool)
    b_ = np.asarray(correct_b).astype(bool)
    if a.shape != b_.shape or a.ndim != 1:
        raise AnalysisError(
            Errors.E1001_mcnemar_expects_two.format(a_shape=a.shape, b_shape=b_.shape)
        )
    both = int(np.sum(a & b_))
    b = int(np.sum(a & ~b_))
    c = int(np.sum(~a & b_))
    neither = int(np.sum(~a & ~b_))
    use_exact = (b + c) < exact_below if exact == "auto" else bool(exact)
    details = {"b": b, "c": c, "both": both, "neither": neither}
    if b + c == 0:
        return TestResult(
            0.0, 1.0, "mcnemar-exact" if use_exact else "mcnemar-chi2", n=len(a), details=details
        )
    res = _mcnemar([[both, b], [c, neither]], exact=use_exact, correction=True)
    return TestResult(
        float(res.statistic),
        float(res.pvalue),
        "mcnemar-exact" if use_exact else "mcnemar-chi2",
        n=len(a),
        details=details,
    )


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value q_alpha of the two-tailed Nemenyi test for ``k`` groups.

    It is the studentized range quantile with infinite degrees of freedom divided by sqrt(2)
    (Demšar 2006, Table 5a: 2.343 for k=3 ... 3.164 for k=10), taken from
    :data:`scipy.stats.studentized_range`.
    """
    from scipy.stats import studentized_range

    if k < 2:
        raise AnalysisError(Errors.E1002_nemenyi_test_needs.format(k=k))
    return float(studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference CD = q_alpha * sqrt(k (k + 1) / (6 N)) (Demšar 2006).

    Args:
        k: number of compared groups (phenomena in Q6).
        n: number of blocks (systems in Q6).
        alpha: significance level.

    Example:
        >>> round(nemenyi_cd(27, 11), 2)
        12.51
    """
    if n < 1:
        raise AnalysisError(Errors.E1002_nemenyi_test_needs_blocks.format(n=n))
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


@dataclass
class FriedmanNemenyi:
    """Result of :func:`friedman_nemenyi`.

    Attributes:
        groups: the compared groups (phenomena), in input order.
        ranks: per-block ranks, shape (n_blocks, k); rank 1 = best.
        average_ranks: mean rank per group.
        friedman: the Friedman chi-square test.
        cd: Nemenyi critical difference at ``alpha``.
        pvalues: pairwise Nemenyi p-values (k × k, scikit-posthocs).
        alpha: significance level.
    """

    groups: list[str]
    ranks: np.ndarray
    average_ranks: np.ndarray
    friedman: TestResult
    cd: float
    pvalues: np.ndarray
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "groups": self.groups,
            "average_ranks": dict(zip(self.groups, map(float, self.average_ranks), strict=True)),
            "friedman": self.friedman.to_dict(),
            "cd": self.cd,
            "alpha": self.alpha,
            "k": len(self.groups),
            "n": int(self.ranks.shape[0]),
        }


def friedman_nemenyi(
    scores: np.ndarray,
    groups: list[str] | None = None,
    *,
    alpha: float = 0.05,
    higher_is_better: bool = True,
) -> FriedmanNemenyi:
    """Friedman test and Nemenyi post-hoc over a blocks × groups score matrix.

    In Q6 the blocks are systems and the groups are phenomena: each system's phenomenon
    accuracies are ranked 1..k with ties averaged, the Friedman test checks that the mean ranks
    differ, and the Nemenyi critical difference says which phenomena differ.

    Args:
        scores: shape (n_blocks, k), e.g. accuracy of each system (row) on each phenomenon.
        groups: names of the k columns.
        alpha: significance level of the critical difference.
        higher_is_better: rank 1 goes to the highest score.

    Returns:
        :class:`FriedmanNemenyi`.

    Raises:
        AnalysisError: fewer than 2 blocks or 3 groups, NaN scores, or shape mismatch.
    """
    import scikit_posthocs as sp
    from scipy.stats import friedmanchisquare, rankdata

    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2:
        raise AnalysisError(Errors.E1001_scores_must_blocks.format(scores_shape=scores.shape))
    n, k = scores.shape
    groups = list(groups) if groups is not None else [str(i) for i in range(k)]
    if len(groups) != k:
        raise AnalysisError(Errors.E1001_group_names_columns.format(n_groups=len(groups), k=k))
    if n < 2 or k < 3:
        raise AnalysisError(Errors.E1002_friedman_test_needs.format(n=n, k=k))
    if np.isnan(scores).any():
        raise AnalysisError(Errors.E1001_scores_contain_nan)
    oriented = -scores if higher_is_better else scores
    ranks = np.vstack([rankdata(row, method="average") for row in oriented])
    if np.all(ranks == ranks[0, 0]):
        stat, p = 0.0, 1.0  # every block ties every group: no evidence of a difference
    else:
        stat, p = friedmanchisquare(*oriented.T)
    pvalues = sp.posthoc_nemenyi_friedman(oriented).to_numpy()
    return FriedmanNemenyi(
        groups=groups,
        ranks=ranks,
        average_ranks=ranks.mean(axis=0),
        friedman=TestResult(float(stat), float(p), "friedman-chi2", n=n, details={"k": k}),
        cd=nemenyi_cd(k, n, alpha),
        pvalues=pvalues,
        alpha=alpha,
    )


def pearson_matrix(indicators: np.ndarray) -> np.ndarray:
    """Pairwise Pearson r between 0/1 phenomenon columns (Q3); constant columns give NaN."""
    x = np.asarray(indicators, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.corrcoef(x, rowvar=False)

"""Verbatim overlap highlighting and the Table 1 statistics of the extraction view."""

from __future__ import annotations

import pytest

from parakit.annotate.extraction import extraction_stats, verbatim_overlaps


def test_verbatim_overlaps_reordered_and_maximal():
    a = "One two three four five six seven. Alpha beta gamma delta epsilon zeta eta."
    b = "Alpha beta gamma delta epsilon zeta eta! Filler. One two three four five six seven"
    spans = verbatim_overlaps(a, b, min_words=6)
    assert [(a[s:e], b[t:u]) for s, e, t, u in spans] == [
        ("One two three four five six seven", "One two three four five six seven"),
        ("Alpha beta gamma delta epsilon zeta eta", "Alpha beta gamma delta epsilon zeta eta"),
    ]
    assert verbatim_overlaps(a, b, min_words=8) == []
    assert verbatim_overlaps("short", "short", min_words=2) == []


def test_extraction_stats_hand_computed():
    rows = [
        {
            "source": "news",
            "text1": "abcd efgh",
            "text2": "ijkl",
            "spans1": [(0, 4), (2, 9)],
            "spans2": [(0, 2), (0, 2)],
        },
        {"source": "news", "text1": "xx", "text2": "yy", "spans1": [], "spans2": []},
        {"source": "subs", "text1": "ab", "text2": "cd", "spans1": [(0, 1)], "spans2": [(0, 2)]},
    ]
    news, subs = extraction_stats(rows)
    assert news["documents"] == 1 and news["empty"] == pytest.approx(50.0)
    assert news["yield"] == 2.0
    # alnum chars: 8 + 4 = 12; covered: all 8 of text1 + 2 of text2 = 10
    assert news["coverage"] == pytest.approx(100 * 10 / 12)
    assert news["length"] == pytest.approx(6.0)
    assert subs["coverage"] == pytest.approx(75.0) and subs["empty"] == 0.0

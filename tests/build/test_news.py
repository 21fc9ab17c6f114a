import datetime as dt
import random

import pytest

from parakit.build.align import DocumentAligner
from parakit.build.documents import SkipCounter
from parakit.build.news import (
    Article,
    align_news,
    heading_candidates,
    news_body_pairs,
    read_articles,
)
from parakit.errors import DataFormatError

T0 = dt.datetime(2020, 3, 1, tzinfo=dt.UTC)
EVENTS = [
    "The city council voted to build a new bridge over the river next year.",
    "A powerful storm cut electricity to thousands of homes in the south.",
    "The national team won the ice hockey final after extra time.",
    "Researchers found a new species of beetle in the eastern forests.",
]


def _streams(seed=0, n=60):
    rng = random.Random(seed)
    a, b = [], []
    for i in range(n):
        event = EVENTS[i % len(EVENTS)]
        a.append(
            Article(
                f"a{i}",
                "yle",
                T0 + dt.timedelta(hours=rng.randrange(0, 24 * 40)),
                f"Heading a{i}",
                event + f" Report {i}.",
            )
        )
        b.append(
            Article(
                f"b{i}",
                "hs",
                T0 + dt.timedelta(hours=rng.randrange(0, 24 * 40)),
                f"Headline b{i}",
                "Reportedly, " + event.lower(),
            )
        )
    return a, b


def test_window_never_pairs_articles_more_than_7_days_apart():
    a, b = _streams()
    aligned = align_news(a, b, DocumentAligner(low=0.0, high=1.0), window_days=7)
    assert aligned
    assert all(abs(p.a.time - p.b.time) <= dt.timedelta(days=7) for p in aligned)
    # every same-event pair inside the window is found (completeness of the sweep)
    expected = {(x.id, y.id) for x in a for y in b if abs(x.time - y.time) <= dt.timedelta(days=7)}
    assert {(p.a.id, p.b.id) for p in aligned} == expected
    narrow = align_news(a, b, DocumentAligner(low=0.0, high=1.0), window_days=1)
    assert all(p.days_apart <= 1 for p in narrow) and len(narrow) < len(aligned)


def test_band_and_best_partner():
    a, b = _streams(n=20)
    aligned = align_news(a, b, DocumentAligner(low=0.3, high=1.0), max_per_article=1)
    assert all(p.body_similarity >= 0.3 for p in aligned)
    assert len({p.a.id for p in aligned}) == len(aligned)
    # same-event bodies are far more similar than different-event ones
    assert all(
        EVENTS.index(next(e for e in EVENTS if e[:20] in p.a.body))
        == EVENTS.index(next(e for e in EVENTS if e[1:20].lower() in p.b.body))
        for p in aligned
    )
    ps = news_body_pairs(aligned)
    assert ps[0].span1.end == len(ps[0].text1) and ps[0].source == "news-bodies"


def test_heading_candidates_rank_similar_bodies_with_dissimilar_headings_first():
    body = "The central bank raised its key interest rate by half a percentage point."
    a = [
        Article("a1", "yle", T0, "Central bank raises rate", body),
        Article("a2", "yle", T0, "Interest rates go up again", body + " Analysts agree."),
    ]
    b = [
        Article("b1", "hs", T0 + dt.timedelta(days=1), "Central bank raises rate again", body),
        Article("b2", "hs", T0, "Loans get more expensive", body + " Analysts agree."),
    ]
    aligned = align_news(a, b, DocumentAligner())
    heads = heading_candidates(aligned)
    scores = [p.metadata["score"] for p in heads]
    assert scores == sorted(scores, reverse=True)
    top = heads[0]
    assert top.metadata["score"] == pytest.approx(
        top.metadata["body_similarity"] - top.metadata["heading_similarity"], abs=1e-5
    )
    assert (top.text1, top.text2) != ("Central bank raises rate", "Central bank raises rate again")
    assert heading_candidates(aligned, n=1).pairs == heads.pairs[:1]


def test_read_articles_skips_empty_bodies_and_locates_bad_times(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(
        '{"id": "1", "source": "s", "time": "2020-01-01T10:00:00", "heading": "h",'
        ' "body": "text here"}\n{"id": "2", "source": "s", "time": "2020-01-02",'
        ' "body": ""}\n'
    )
    skips = SkipCounter()
    assert [x.id for x in read_articles(path, skips)] == ["1"]
    assert skips["empty-document"] == 1
    path.write_text('{"id": "1", "source": "s", "time": "yesterday", "body": "x"}\n')
    with pytest.raises(DataFormatError, match=r"line 1, field 'time'"):
        read_articles(path)


def test_identical_bodies_stay_inside_the_default_band():
    # float32 vectors: the cosine of this body with itself comes out above 1.0; [0, 1] keeps it
    t = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    a = [Article("a1", "yle", t, "h1", "the cat away home")]
    b = [Article("b1", "hs", t, "h2", "the cat away home")]
    got = align_news(a, b, DocumentAligner(low=0.0, high=1.0))
    assert [(p.a.id, p.b.id, p.body_similarity) for p in got] == [("a1", "b1", 1.0)]

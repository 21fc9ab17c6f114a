import random

import pytest

from parakit.build.documents import SkipCounter
from parakit.build.social import (
    FOLLOW_UP_SCHEDULE,
    Group,
    SentenceCleaner,
    UnigramModel,
    WordfreqModel,
    assign_topics,
    balance_topics,
    choose_url_seed,
    clean_groups,
    follow_up_pairs,
    follow_up_size,
    groups_from_pairs,
    pilot_pairs,
    rank_groups,
    read_posts,
    social_candidates,
    url_pairs,
)
from parakit.errors import DataFormatError
from parakit.io import read


def test_cleaning_rules():
    cleaner = SentenceCleaner()
    skips = SkipCounter()
    text = (
        "Apple unveils the new iPhone today 📱🔥!! Prices start at just $999. Wow. "
        "Follow me for more tech news and deals. See https://t.co/abc ★ now"
    )
    assert cleaner.clean_text(text, skips) == [
        "Apple unveils the new iPhone today !!",
        "Prices start at just $999.",
    ]
    assert skips == {"too-short": 2, "spam": 1}
    # dedupe on lowercased text without punctuation
    assert cleaner.clean(
        ["The market fell sharply on Monday.", "the market fell sharply on monday!!"]
    ) == ["The market fell sharply on Monday."]
    custom = SentenceCleaner(spam_patterns=[r"\bmarket\b"], min_tokens=2)
    assert custom.clean_text("The market fell sharply. Stocks fell too.") == ["Stocks fell too."]


def test_unigram_ranking_by_average_word_probability():
    sentences = ["the game was great", "the game was great fun", "zebras quantum flux today"]
    model = UnigramModel().fit(sentences)
    assert model.average_probability("the game") == pytest.approx((2 / 13 + 2 / 13) / 2)
    ranked = rank_groups([Group("g", sentences)], model)[0]
    assert ranked.sentences[-1] == "zebras quantum flux today"
    assert ranked.metadata["avg_word_prob"] == sorted(
        ranked.metadata["avg_word_prob"], reverse=True
    )
    wf = WordfreqModel("en")
    assert wf.average_probability("the game was great") > wf.average_probability(
        "zebras quantum flux"
    )


def test_follow_up_schedule():
    assert [follow_up_size(n) for n in range(22)] == (
        [0] * 4 + [20] * 3 + [30] * 3 + [40] * 3 + [50] * 8 + [0]
    )
    assert FOLLOW_UP_SCHEDULE[0] == (4, 6, 20)


def test_pilot_and_follow_up_pairs():
    rng = random.Random(0)
    pilot = pilot_pairs(60, rng)
    assert len(pilot) == 20
    assert {i for i, _ in pilot} == {0, 1}
    assert all(2 <= j < 20 for _, j in pilot)
    assert len(set(pilot)) == 20
    more = follow_up_pairs(60, 50, rng, exclude=pilot)
    assert len(more) == 50
    seeds = [i for i, _ in more]
    assert all(0 <= s < 5 for s in seeds)
    assert all(seeds.count(s) == 10 for s in set(seeds)) and len(set(seeds)) == 5
    assert all(5 <= j < 50 for _, j in more)
    assert not set(more) & set(pilot) and len(set(more)) == 50
    # small groups: no endless loop, no duplicates
    small = follow_up_pairs(8, 40, random.Random(1))
    assert len(small) == len(set(small)) == 15  # 5 seeds x ranks 5..7


def test_url_seed_rule():
    assert choose_url_seed({0: 1, 3: 4, 7: 3}) == 3
    assert choose_url_seed({0: 2, 1: 2}) is None
    assert url_pairs(30, 3) == [(3, j) for j in range(11) if j != 3]
    assert url_pairs(30, None) == []


def test_topics_and_balancing():
    groups = (
        [Group(f"s{i}", ["the team won the match"]) for i in range(5)]
        + [Group(f"p{i}", ["the senate passed the bill"]) for i in range(2)]
        + [Group("x", ["nothing here"])]
    )
    labelled = assign_topics(groups, {"sports": ["team", "match"], "politics": ["senate"]})
    assert [g.topic for g in labelled] == ["sports"] * 5 + ["politics"] * 2 + ["other"]
    balanced = balance_topics(labelled, seed=0)
    topics = [g.topic for g in balanced]
    assert topics.count("sports") == topics.count("politics") == topics.count("other") == 1
    assert len(balance_topics(labelled, per_topic=2)) == 5


def test_stages_from_posts(tmp_path):
    path = tmp_path / "posts.jsonl"
    lines = []
    for i in range(30):
        lines.append(
            {
                "group": "t1",
                "kind": "trend",
                "topic": "tech",
                "text": f"the new phone {i} has a really good camera sensor",
            }
        )
        lines.append(
            {
                "group": "u1",
                "kind": "url",
                "text": f"scientists sequence the komodo dragon genome part {i}",
            }
        )
    import json

    path.write_text("\n".join(json.dumps(x) for x in lines))
    groups = rank_groups(clean_groups(read_posts(path)))
    pilot = social_candidates(groups, "pilot", seed=5)
    assert len(pilot) == 20 and {p.group for p in pilot} == {"t1"}
    follow = social_candidates(groups, "follow-up", pilot_counts={"t1": 8}, seed=5)
    assert len(follow) == 30
    assert not {(p.text1, p.text2) for p in follow} & {(p.text1, p.text2) for p in pilot}
    none = social_candidates(groups, "follow-up", pilot_counts={"t1": 2}, seed=5)
    assert len(none) == 0 and none.metadata["social"]["skipped_groups"] == {
        "too-few-paraphrases": 1
    }
    url = social_candidates(groups, "url", url_seeds={"u1": 0})
    assert len(url) == 10 and all(p.metadata["rank1"] == 1 for p in url)
    assert len(social_candidates(groups, "url", url_seeds={"u1": None})) == 0
    path.write_text('{"group": "g", "text": "x", "kind": "blog"}\n')
    with pytest.raises(DataFormatError, match="line 1, field 'kind'"):
        read_posts(path)


def test_multipit_auto_slice_groups_and_cleans(data_path):
    ps = read(data_path("multipit/auto-val.csv"), format="multipit")
    groups = groups_from_pairs(ps)
    n_sentences = len({t for p in ps for t in (p.text1, p.text2)})
    assert sum(len(g.sentences) for g in groups) == n_sentences
    # every pair's two sentences are in one group
    where = {s: g.id for g in groups for s in g.sentences}
    assert all(where[p.text1] == where[p.text2] for p in ps)
    skips = SkipCounter()
    cleaned = clean_groups(groups, skips=skips, min_sentences=1)
    assert cleaned and all(len(s.split()) >= 5 for g in cleaned for s in g.sentences)

"""Splits (T11, M6): groups never cross sections or folds; seeded; ratios respected."""

from collections import Counter, defaultdict

import pytest

from parakit.errors import SplitError
from parakit.io import read
from parakit.schema import Pair, PairSet
from parakit.split import assign_folds, random_split, time_split


def grouped(n_groups: int = 300, seed: int = 0) -> PairSet:
    import random

    rng = random.Random(seed)
    pairs = []
    for g in range(n_groups):
        for k in range(rng.randint(1, 6)):
            pairs.append(Pair(f"{g}-{k}", "a", "b", label=str(rng.random() < 0.3), group=f"g{g}"))
    return PairSet(pairs, scheme="binary")


def sections_of_groups(pairs, attribute):
    seen = defaultdict(set)
    for pair in pairs:
        seen[pair.group].add(getattr(pair, attribute))
    return seen


def test_random_split_keeps_groups_and_ratios():
    pairs = grouped()
    out = random_split(pairs, seed=7)
    assert all(len(v) == 1 for v in sections_of_groups(out, "split").values())
    counts = Counter(p.split for p in out)
    for name, ratio in zip(("train", "dev", "test"), (0.8, 0.1, 0.1), strict=True):
        assert abs(counts[name] / len(out) - ratio) < 0.02
    assert [p.split for p in random_split(pairs, seed=7)] == [p.split for p in out]
    assert [p.split for p in random_split(pairs, seed=8)] != [p.split for p in out]


def test_stratified_split_keeps_label_shares():
    pairs = grouped(n_groups=600)
    out = random_split(pairs, seed=1, stratify=True)
    overall = sum(p.label == "1" for p in out) / len(out)
    for section in out.by_split().values():
        share = sum(p.label == "1" for p in section) / len(section)
        assert abs(share - overall) < 0.03


def test_stratified_split_leaves_a_zero_ratio_section_empty():
    # a section of ratio 0 has target 0 for every label: -inf deficit times a count of 0 was
    # NaN, and argmax picks a NaN, so every pair went into the section that should get none
    pairs = PairSet([Pair(str(i), "a", "b", label=str(i % 2)) for i in range(20)])
    out = random_split(pairs, (0.5, 0.5, 0.0), ("train", "dev", "test"), stratify=True)
    assert Counter((p.split, p.label) for p in out) == {
        ("train", "0"): 5, ("train", "1"): 5, ("dev", "0"): 5, ("dev", "1"): 5,
    }  # fmt: skip
    out = random_split(pairs, (0.0, 1.0), ("train", "test"), stratify="binary")
    assert Counter(p.split for p in out) == {"test": 20}


def test_folds_respect_groups_and_balance():
    pairs = grouped()
    out = assign_folds(pairs, n_folds=100, seed=3)
    assert {p.fold for p in out} == set(range(100))
    assert all(len(v) == 1 for v in sections_of_groups(out, "fold").values())
    sizes = Counter(p.fold for p in out).values()
    assert max(sizes) - min(sizes) <= 6  # largest group has 6 pairs
    stratified = assign_folds(pairs, n_folds=10, stratify=True, seed=3)
    assert all(len(v) == 1 for v in sections_of_groups(stratified, "fold").values())


def test_turku_split_keeps_documents_together(data_path):
    pairs = read(data_path("turku/sv-test.json"))
    out = random_split(pairs, seed=0)
    assert all(len(v) == 1 for v in sections_of_groups(out, "split").values())
    assert set(Counter(p.split for p in out)) == {"train", "dev", "test"}


def test_time_split_oldest_first():
    pairs = PairSet(
        [Pair(str(i), "a", "b", time=f"2026-01-{(i * 7) % 20 + 1:02d}T00:00:00") for i in range(20)]
    )
    out = time_split(pairs)
    latest = {name: max(p.time for p in section) for name, section in out.by_split().items()}
    earliest = {name: min(p.time for p in section) for name, section in out.by_split().items()}
    assert latest["train"] <= earliest["dev"] and latest["dev"] <= earliest["test"]
    assert Counter(p.split for p in out) == {"train": 16, "dev": 2, "test": 2}


def test_time_split_section_sizes_are_exact_fractions():
    # 0.1 + 0.2 is 0.30000000000000004 in floating point: the bound 3.0000000000000004 took
    # the 4th oldest pair into dev (1/3/6 instead of 1/2/7)
    pairs = PairSet([Pair(str(i), "a", "b", time=f"2026-01-{i + 1:02d}") for i in range(10)])
    out = time_split(pairs, ratios=(0.1, 0.2, 0.7))
    assert [p.split for p in out] == ["train"] + ["dev"] * 2 + ["test"] * 7


def test_time_split_needs_times_and_valid_ratios():
    with pytest.raises(SplitError, match="has no time"):
        time_split(PairSet([Pair("a", "x", "y")]))
    with pytest.raises(SplitError, match="sum to 1"):
        random_split(grouped(), ratios=(0.5, 0.4, 0.4))


def test_a_misspelt_stratify_is_refused():
    # was: any true value, "binray" included, stratified by label without a word
    pairs = PairSet([Pair(str(i), "a", "b", label=str(i % 2)) for i in range(8)])
    for call in (random_split, assign_folds):
        with pytest.raises(SplitError, match=r"E400.*not 'binray'"):
            call(pairs, stratify="binray")
    assert len(random_split(pairs, stratify="binary", group_by="none")) == 8

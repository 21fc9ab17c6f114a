"""Transitive clusters, multi-reference sets and expert batches (M5)."""

from __future__ import annotations

import pytest

from parakit.annotate.clusters import (
    clusters_from_edges,
    expert_batches,
    group_clusters,
    multi_reference_sets,
    paraphrase_clusters,
)
from parakit.errors import DataFormatError
from parakit.schema import Pair, PairSet


def test_transitive_closure():
    edges = [("a", "b"), ("c", "b"), ("d", "e"), ("f", "f")]
    assert clusters_from_edges(edges, nodes=["z"]) == [["a", "b", "c"], ["d", "e"], ["f"], ["z"]]
    assert clusters_from_edges([]) == []


def _star(source: str, n: int, label: str = "1") -> list[Pair]:
    return [Pair(f"{source}-{i}", source, f"{source} ref {i}", label=label) for i in range(n)]


def test_clusters_and_multireference_from_pairs():
    pairs = [*_star("s1", 8), *_star("s2", 7), *_star("s3", 9, label="0")]
    # one judged link between a reference of s2 and a new sentence
    pairs.append(Pair("x", "s2 ref 0", "s2 extra", label="1"))
    ps = PairSet(pairs, scheme="binary")
    clusters = paraphrase_clusters(ps)
    assert [len(c) for c in clusters] == [9, 9]  # s1 + 8 refs; s2 + 7 refs + extra
    direct = multi_reference_sets(ps, min_references=8)
    assert list(direct) == ["s1"] and len(direct["s1"]) == 8
    transitive = multi_reference_sets(ps, min_references=8, transitive=True)
    assert sorted(transitive) == ["s1", "s2", "s2 ref 0"]  # every text1 is a source
    assert "s2 extra" in transitive["s2"]


def test_expert_batches_two_seeds_up_to_30():
    big = [f"m{i:02d}" for i in range(40)]
    batch = expert_batches([big, ["a", "b", "c"], ["lonely"]], n_seeds=2, max_members=30, seed=3)
    groups = [p.group for p in batch]
    assert groups.count("0") == 2 * 30 and groups.count("1") == 2 * 1 and "2" not in groups
    first = [p for p in batch if p.group == "0"]
    seeds = {p.text1 for p in first}
    assert len(seeds) == 2 and not seeds & {p.text2 for p in first}
    assert batch == expert_batches([big, ["a", "b", "c"], ["lonely"]], seed=3)  # seeded


def test_clusters_stay_inside_their_trend_or_url_group():
    """The audit's case: two trends share a tweet ``s``. Clustered together, they merge into
    one cluster; per group (MultiPIT: "for each trend or URL ... the largest cluster") each
    trend keeps its own, and trend A's smaller second cluster is left out."""
    links = {
        "A": [("a1", "a2"), ("a2", "a3"), ("a3", "a4"), ("s", "a1"), ("a5", "a6")],
        "B": [("b1", "b2"), ("b2", "b3"), ("s", "b1")],
    }
    pairs = [
        Pair(f"{g}{i}", x, y, label="1", group=g)
        for g, edges in links.items()
        for i, (x, y) in enumerate(edges)
    ]
    pairs.append(Pair("B-no", "b1", "unrelated", label="0", group="B"))
    ps = PairSet(pairs, scheme="binary")
    merged = paraphrase_clusters(ps)
    assert [len(c) for c in merged] == [8, 2]  # a1-a4 + s + b1-b3, and a5-a6
    per_group = group_clusters(ps)
    assert per_group == [("A", ["a1", "a2", "a3", "a4", "s"]), ("B", ["b1", "b2", "b3", "s"])]
    batch = expert_batches(per_group, n_seeds=2, max_members=30, seed=0)
    by_group = {g: [p for p in batch if p.group == g] for g in ("A", "B")}
    assert len(by_group["A"]) == 2 * 3 and len(by_group["B"]) == 2 * 2  # 2 seeds x the rest
    for group, cluster in per_group:
        texts = {p.text1 for p in by_group[group]} | {p.text2 for p in by_group[group]}
        assert texts == set(cluster)
    assert len(expert_batches(per_group, max_members=1)) == 2 + 2
    assert group_clusters(ps, min_size=5) == per_group[:1]
    with pytest.raises(DataFormatError, match="E502"):
        group_clusters(PairSet([Pair("x", "a", "b", label="1")], scheme="binary"))


def test_a_self_pair_is_no_reference(data_path):
    from parakit.io import read

    ps = PairSet(
        [Pair("1", "s", "s", label=1), Pair("2", "s", "r", label=1), Pair("3", "s", "q", label=0)],
        scheme="binary",
    )
    assert multi_reference_sets(ps, min_references=1) == {"s": ["r"]}
    assert multi_reference_sets(ps, min_references=2) == {}
    assert multi_reference_sets(ps, min_references=1, transitive=True) == {"s": ["r"]}
    # MultiPIT expert train holds 20 pairs of a tweet with itself; none is a reference
    expert = read(data_path("multipit/expert-train.csv"))
    for transitive in (False, True):
        refs = multi_reference_sets(expert, min_references=1, transitive=transitive)
        assert refs and not [s for s, r in refs.items() if s in r]
    direct = multi_reference_sets(expert, min_references=1)
    positive = [p for p, v in zip(expert, expert.binary_labels(), strict=True) if v == 1]
    assert len(direct) == len({p.text1 for p in positive if p.text1 != p.text2}) == 155

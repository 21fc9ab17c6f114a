"""Paraphrase clusters (M5): transitive closure, multi-reference sets, expert batches.

MultiPIT's expert stage treats "is a paraphrase of" as transitive: the positive pairs form a
graph whose connected components are clusters of mutual paraphrases. Sources with at least
``k`` paraphrases make a multi-reference test set, and the largest clusters feed expert
annotation batches (two seed sentences against up to 30 members). The paper clusters inside
each trend or URL group and takes "for each trend or URL ... the largest cluster"
(:func:`group_clusters`): clustering the whole corpus at once merges groups that share a
sentence.

Example:
    >>> from parakit.annotate.clusters import clusters_from_edges
    >>> clusters_from_edges([("a", "b"), ("b", "c"), ("d", "e")])
    [['a', 'b', 'c'], ['d', 'e']]
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from parakit.schema import Pair, PairSet

from ..errors import Errors


def clusters_from_edges(
    edges: Iterable[tuple[str, str]], nodes: Iterable[str] = ()
) -> list[list[str]]:
    """Connected components of the paraphrase graph (``scipy.sparse.csgraph``).

    Args:
        edges: paraphrase pairs (undirected).
        nodes: extra nodes (singletons unless an edge touches them).
    Returns:
        clusters as sorted lists, largest first (ties by first member).
    """
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    index: dict[str, int] = {}
    for node in nodes:
        index.setdefault(node, len(index))
    rows, cols = [], []
    for a, b in edges:
        rows.append(index.setdefault(a, len(index)))
        cols.append(index.setdefault(b, len(index)))
    if not index:
        return []
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(index), len(index)))
    _, component = connected_components(graph, directed=False)
    groups: dict[int, list[str]] = {}
    for node, number in index.items():
        groups.setdefault(int(component[number]), []).append(node)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))


def paraphrase_clusters(
    pairs: PairSet, reading: str | None = None, min_size: int = 2
) -> list[list[str]]:
    """Clusters of statements (texts) linked by pairs whose binary reading is 1."""
    edges = [
        (p.text1, p.text2)
        for p, value in zip(pairs, pairs.binary_labels(reading), strict=True)
        if value == 1
    ]
    return [c for c in clusters_from_edges(edges) if len(c) >= min_size]


def group_clusters(
    pairs: PairSet, reading: str | None = None, min_size: int = 2
) -> list[tuple[str, list[str]]]:
    """The largest paraphrase cluster of each group (M5: one trend or URL per ``Pair.group``).

    The positive pairs of a group are clustered among themselves (transitive closure, as
    :func:`paraphrase_clusters`), so a sentence shared by two trends never joins their
    clusters; of a group's clusters the largest is kept (ties: the first member in sort order).

    Args:
        pairs: pairs with their ``group``; labels (or a classifier's predictions, e.g. the
            output of ``parakit identify predict``) read as binary with ``reading``.
        min_size: groups whose largest cluster is smaller are left out.
    Returns:
        ``(group, cluster)`` pairs, largest cluster first (ties by group name).
    Raises:
        DataFormatError: (E502) a pair without a group.
    """
    from parakit.errors import DataFormatError

    edges: dict[str, list[tuple[str, str]]] = {}
    for pair, value in zip(pairs, pairs.binary_labels(reading), strict=True):
        if pair.group is None:
            raise DataFormatError(
                Errors.E502_pair_group_trend.format(pair_id=pair.id), field="group"
            )
        if value == 1:
            edges.setdefault(pair.group, []).append((pair.text1, pair.text2))
    out = []
    for group, group_edges in edges.items():
        largest = clusters_from_edges(group_edges)[0]
        if len(largest) >= min_size:
            out.append((group, largest))
    return sorted(out, key=lambda gc: (-len(gc[1]), gc[0]))


def multi_reference_sets(
    pairs: PairSet, min_references: int = 8, reading: str | None = None, transitive: bool = False
) -> dict[str, list[str]]:
    """Sources with at least ``min_references`` paraphrases: ``{source: [references]}``.

    Args:
        pairs: labelled pairs, ``text1`` is the source (MultiPIT: the tweet a candidate was
            found for).
        min_references: MultiPIT's multi-reference test set uses 8.
        transitive: count every other member of the source's cluster as a reference, not
            only the sentences directly judged against it.
    """
    # a sentence judged against itself (MultiPIT has 26 such pairs) is no reference of itself
    positive = [
        p
        for p, v in zip(pairs, pairs.binary_labels(reading), strict=True)
        if v == 1 and p.text1 != p.text2
    ]
    direct: dict[str, set[str]] = {}
    for pair in positive:
        direct.setdefault(pair.text1, set()).add(pair.text2)
    if transitive:
        member_of = {}
        for cluster in clusters_from_edges((p.text1, p.text2) for p in positive):
            for text in cluster:
                member_of[text] = cluster
        direct = {s: set(member_of[s]) - {s} for s in direct}
    return {s: sorted(refs) for s, refs in sorted(direct.items()) if len(refs) >= min_references}


def expert_batches(
    clusters: list[list[str]] | list[tuple[str, list[str]]],
    n_seeds: int = 2,
    max_members: int = 30,
    n_clusters: int | None = None,
    seed: int = 0,
) -> PairSet:
    """Candidate pairs for expert annotation: per cluster, ``n_seeds`` seed sentences ×
    up to ``max_members`` other members (M5).

    Args:
        clusters: clusters (:func:`paraphrase_clusters`) or ``(group, cluster)`` pairs, one per
            trend or URL (:func:`group_clusters`, the paper's).
    Returns:
        an unlabelled binary PairSet; ``group`` is the cluster's group (or its number),
        ``metadata['seed']`` the seed sentence's index, ``metadata['cluster']`` the cluster's
        number.
    """
    rng = random.Random(seed)
    out: list[Pair] = []
    for number, entry in enumerate(clusters[:n_clusters] if n_clusters else clusters):
        name, cluster = entry if isinstance(entry, tuple) else (str(number), entry)
        if len(cluster) < 2:
            continue
        members = list(cluster)
        rng.shuffle(members)
        seeds, rest = members[:n_seeds], members[n_seeds:]
        rest = rest[:max_members]
        for s, seed_text in enumerate(seeds):
            for m, member in enumerate(rest):
                out.append(
                    Pair(
                        f"c{number}-s{s}-m{m}",
                        seed_text,
                        member,
                        group=name,
                        metadata={"seed": s, "cluster": number},
                    )
                )
    return PairSet(out, scheme="binary", name="expert-batch")

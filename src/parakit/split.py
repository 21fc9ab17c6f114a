"""Corpus splits that keep groups together (T11, M6).

* :func:`assign_folds` — folds 0..n-1 (default 100, as in the Turku release) such that no group
  (a source document, a thread, a topic) crosses folds, sizes balanced, optionally stratified.
* :func:`random_split` — named sections with ratios (default train/dev/test 80/10/10), groups
  kept whole, optionally stratified by label.
* :func:`time_split` — oldest pairs first into train (MultiPIT), groups kept whole.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> ps = PairSet([Pair(str(i), "a", "b", label=str(i % 2), group=f"g{i // 2}")
    ...               for i in range(40)])
    >>> out = random_split(ps, ratios=(0.5, 0.5), names=("train", "test"), seed=1)
    >>> sorted(out.by_split())
    ['test', 'train']
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from parakit.errors import Errors, SplitError
from parakit.schema import Pair, PairSet

GroupBy = str | Callable[[Pair], str] | None
logger = logging.getLogger(__name__)


def group_key(pair: Pair, group_by: GroupBy = "group") -> str:
    """The key that must not cross splits: ``group`` (Turku ``goeswith``; a pair without one is
    its own group), ``document`` (the document of span1), ``none`` / None (every pair alone),
    or any function of the pair."""
    if callable(group_by):
        return str(group_by(pair))
    if group_by in (None, "none"):
        return f"\x00{pair.id}"
    if group_by == "group":
        return pair.group if pair.group is not None else f"\x00{pair.id}"
    if group_by == "document":
        return pair.span1.doc_id if pair.span1 is not None else f"\x00{pair.id}"
    raise SplitError(Errors.E400_unknown_group_use.format(group_by=group_by))


def linked_groups(pairs: PairSet) -> Callable[[Pair], str]:
    """A ``group_by`` function that keeps together every pair linked by a ``group`` or by a
    document either of its spans points into (connected components, union-find).

    ``group_by="document"`` looks at span1 only; a Turku pair of alternative subtitles has its
    two statements in two documents, and a release must not put one document's statements in
    two splits (the context a test pair points into would be seen in training).

    Example:
        >>> from parakit.schema import Document, Span
        >>> docs = [Document(d, "abc") for d in "ABC"]
        >>> ps = PairSet([Pair("1", "a", "b", span1=Span("A", 0, 1), span2=Span("B", 0, 1)),
        ...               Pair("2", "b", "c", span1=Span("B", 1, 2), span2=Span("C", 0, 1)),
        ...               Pair("3", "a", "c")], documents=docs)
        >>> key = linked_groups(ps)
        >>> key(ps[0]) == key(ps[1]) != key(ps[2])
        True
    """
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]  # path halving
            node = parent[node]
        return node

    def nodes(pair: Pair) -> list[str]:
        out = [f"pair\x00{pair.id}"]
        if pair.group is not None:
            out.append(f"group\x00{pair.group}")
        out += [f"doc\x00{s.doc_id}" for s in (pair.span1, pair.span2) if s is not None]
        return out

    for pair in pairs:
        first, *rest = nodes(pair)
        for node in rest:
            a, b = find(first), find(node)
            if a != b:
                parent[max(a, b)] = min(a, b)  # the smaller name is the root: order-independent
    return lambda pair: find(f"pair\x00{pair.id}")


def _check_stratify(stratify: bool | str) -> None:
    """Refuse a ``stratify`` that is not one of the four (a misspelt ``"binray"`` would
    otherwise stratify by label, as any other true value)."""
    if stratify not in (False, True, "label", "binary"):
        raise SplitError(Errors.E400_unknown_stratify.format(stratify=stratify))


def _stratum(pair: Pair, pairs: PairSet, stratify: bool | str) -> str:
    if stratify == "binary":
        value = None if pair.label is None else pairs.scheme.to_binary(pair.label)
        return str(value)
    return str(pair.label)


def assign_folds(
    pairs: PairSet,
    n_folds: int = 100,
    group_by: GroupBy = "group",
    stratify: bool | str = False,
    seed: int = 0,
) -> PairSet:
    """Give every pair a fold in ``0..n_folds-1``; all pairs of a group share a fold.

    Args:
        pairs: the corpus.
        n_folds: number of folds (the Turku release uses 100).
        group_by: see :func:`group_key`.
        stratify: False, True / ``"label"`` (keep the label distribution similar in every fold)
            or ``"binary"`` (the scheme's binary reading), via scikit-learn's
            ``StratifiedGroupKFold``.
        seed: random seed; the same seed gives the same folds.

    Returns:
        a new pair set with ``fold`` set.
    """
    if n_folds < 1:
        raise SplitError(Errors.E400_folds_must_least)
    _check_stratify(stratify)
    keys = [group_key(p, group_by) for p in pairs]
    if not keys:
        return pairs.map(lambda p: p)
    unique_groups = sorted(set(keys))
    if len(unique_groups) < n_folds:
        logger.warning(
            "%d groups for %d folds: %d folds stay empty",
            len(unique_groups),
            n_folds,
            n_folds - len(unique_groups),
        )
        if stratify:
            raise SplitError(
                Errors.E400_groups_fill_stratified.format(
                    n_unique_groups=len(unique_groups), n_folds=n_folds
                )
            )
    rng = np.random.default_rng(seed)
    if stratify:
        from sklearn.model_selection import StratifiedGroupKFold

        strata = [_stratum(p, pairs, stratify) for p in pairs]
        splitter = StratifiedGroupKFold(
            n_splits=n_folds, shuffle=True, random_state=int(rng.integers(2**31 - 1))
        )
        fold_of_index = np.empty(len(keys), dtype=np.int64)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # rare classes: best effort
            for fold, (_, test) in enumerate(splitter.split(np.zeros(len(keys)), strata, keys)):
                fold_of_index[test] = fold
        folds = fold_of_index.tolist()
    else:
        sizes: dict[str, int] = {}
        for key in keys:
            sizes[key] = sizes.get(key, 0) + 1
        order = [unique_groups[i] for i in rng.permutation(len(unique_groups))]
        order.sort(key=lambda g: -sizes[g])  # stable: equal sizes keep the random order
        heap = [(0, fold) for fold in range(n_folds)]
        fold_of_group: dict[str, int] = {}
        for group in order:  # largest first into the currently smallest fold
            size, fold = heapq.heappop(heap)
            fold_of_group[group] = fold
            heapq.heappush(heap, (size + sizes[group], fold))
        relabel = rng.permutation(n_folds)  # so fold numbers carry no size order
        folds = [int(relabel[fold_of_group[key]]) for key in keys]
    return pairs.derive(p.replace(fold=f) for p, f in zip(pairs, folds, strict=True))


def _check_ratios(ratios: Sequence[float], names: Sequence[str]) -> None:
    if len(ratios) != len(names):
        raise SplitError(
            Errors.E400_ratios_split_names.format(n_ratios=len(ratios), n_names=len(names))
        )
    if any(r < 0 for r in ratios) or not math.isclose(sum(ratios), 1.0, abs_tol=1e-6):
        raise SplitError(Errors.E400_ratios_must_non.format(ratios=list(ratios)))


def random_split(
    pairs: PairSet,
    ratios: Sequence[float] = (0.8, 0.1, 0.1),
    names: Sequence[str] = ("train", "dev", "test"),
    group_by: GroupBy = "group",
    stratify: bool | str = False,
    seed: int = 0,
) -> PairSet:
    """Split into named sections by ratio without letting a group cross sections.

    Groups are visited largest first (equal sizes in random order) and each goes to the
    section furthest below its target size; with ``stratify`` the targets are per label, so
    every section keeps the label distribution as far as the groups allow.

    Args:
        pairs: the corpus.
        ratios: section sizes as fractions summing to 1.
        names: section names.
        group_by: see :func:`group_key`.
        stratify: False, True / ``"label"``, or ``"binary"`` (the scheme's binary reading).
        seed: random seed.

    Returns:
        a new pair set with ``split`` set.
    """
    _check_ratios(ratios, names)
    _check_stratify(stratify)
    keys = [group_key(p, group_by) for p in pairs]
    strata = [_stratum(p, pairs, stratify) if stratify else "" for p in pairs]
    classes = sorted(set(strata))
    class_index = {c: i for i, c in enumerate(classes)}
    members: dict[str, np.ndarray] = {}
    for key, stratum in zip(keys, strata, strict=True):
        vector = members.setdefault(key, np.zeros(len(classes)))
        vector[class_index[stratum]] += 1
    rng = np.random.default_rng(seed)
    groups = sorted(members)
    groups = [groups[i] for i in rng.permutation(len(groups))]
    groups.sort(key=lambda g: -members[g].sum())  # stable: ties keep the random order
    totals = np.sum([members[g] for g in groups], axis=0) if groups else np.zeros(len(classes))
    targets = np.outer(np.asarray(ratios, dtype=float), totals)  # sections x classes
    current = np.zeros_like(targets)
    section_of: dict[str, str] = {}
    for group in groups:
        counts = members[group]
        relative = (targets - current) / np.maximum(targets, 1e-9)  # deficit per class
        relative[targets == 0] = -np.inf
        # a class the group lacks adds nothing (not -inf * 0 = NaN, which argmax would pick)
        score = (np.where(counts > 0, relative, 0.0) * counts).sum(axis=1)
        choice = int(np.argmax(score))
        current[choice] += counts
        section_of[group] = names[choice]
    return pairs.derive(p.replace(split=section_of[k]) for p, k in zip(pairs, keys, strict=True))


def _parse_time(pair: Pair) -> datetime:
    if pair.time is None:
        raise SplitError(Errors.E400_pair_time_time.format(pair_id=pair.id))
    try:
        return datetime.fromisoformat(pair.time.replace("Z", "+00:00"))
    except ValueError:
        raise SplitError(
            Errors.E400_pair_time_iso.format(pair_id=pair.id, pair_time=pair.time)
        ) from None


def time_split(
    pairs: PairSet,
    ratios: Sequence[float] = (0.8, 0.1, 0.1),
    names: Sequence[str] = ("train", "dev", "test"),
    group_by: GroupBy = None,
) -> PairSet:
    """Split by time, oldest first (M6: oldest 80% train, then dev, then test).

    With ``group_by``, a group is placed by its earliest pair and kept whole. Ties in time keep
    the input order.
    """
    _check_ratios(ratios, names)
    times = [_parse_time(p) for p in pairs]
    if len({t.tzinfo is None for t in times}) > 1:
        raise SplitError(Errors.E400_times_mix_zone)
    keys = [group_key(p, group_by) for p in pairs]
    first: dict[str, tuple[datetime, int]] = {}  # group -> (earliest time, first index)
    for index, (key, when) in enumerate(zip(keys, times, strict=True)):
        if key not in first:
            first[key] = (when, index)
        elif when < first[key][0]:
            first[key] = (when, first[key][1])
    order = sorted(range(len(pairs)), key=lambda i: (first[keys[i]], times[i], i))
    # rounded: 0.1 + 0.2 is 0.30000000000000004, whose bound would take one pair too many
    bounds = np.round(np.cumsum(ratios) * len(pairs), 6)
    split_of_group: dict[str, str] = {}
    section = [""] * len(pairs)
    for placed, i in enumerate(order):
        key = keys[i]
        if key not in split_of_group:
            index = int(np.searchsorted(bounds, placed, side="right"))
            split_of_group[key] = names[min(index, len(names) - 1)]
        section[i] = split_of_group[key]
    return pairs.derive(p.replace(split=s) for p, s in zip(pairs, section, strict=True))

"""Grouped social-media candidates: cleaning, ranking and the MultiPIT pairing (M1–M3).

* **Groups (M1)** — posts sharing a trending topic or a URL form a group (input field
  ``group``; ``kind`` is ``trend`` or ``url``); each group may carry a ``topic`` label
  (given, or assigned with :func:`assign_topics` from keyword lists), and
  :func:`balance_topics` keeps the same number of groups per topic.
* **Cleaning (M2)** — :class:`SentenceCleaner`: split posts into sentences, remove URLs,
  emojis and most symbols (punctuation, letters, digits and currency signs stay), drop
  sentences with fewer than 5 word tokens and sentences matching spam patterns, deduplicate on
  the lowercased text without punctuation (within a group by default).
* **Ranking** — sentences of a group by average word probability: a unigram model over the
  whole collection (:class:`UnigramModel`) or ``wordfreq`` frequencies
  (:class:`WordfreqModel`).
* **Pairing (M3)** —
  *pilot* (:func:`pilot_pairs`): each of the top 2 sentences with 10 random sentences of the
  top 20 (the top 2 themselves are not partners, so no pair repeats);
  *follow-up* (:func:`follow_up_pairs`): with ``n`` paraphrases found among the 20 pilot
  pairs, deploy 20 / 30 / 40 / 50 more pairs for ``n`` in [4, 6] / [7, 9] / [10, 12] /
  [13, 20] (:data:`FOLLOW_UP_SCHEDULE`), each block of 10 = one of the top 5 sentences with
  10 random sentences ranked 6–50;
  *URL groups* (:func:`url_seed_task`, :func:`url_pairs`): the top 11 sentences go to
  annotators who pick a seed sentence with at least 3 paraphrases among the other 10; the
  seed is paired with the 10, or the group is skipped when no seed qualifies.

Example:
    >>> cleaner = SentenceCleaner()
    >>> cleaner.clean_text("Wow 😍😍 this new phone is amazing! See https://t.co/x ok")
    ['Wow this new phone is amazing!']
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from parakit.build.documents import SkipCounter, iter_records
from parakit.errors import DataFormatError, Errors, ParakitError
from parakit.schema import Pair, PairSet
from parakit.text import dedup_key, get_tokenizer, split_sentences

#: (low, high, extra pairs): paraphrases found among the 20 pilot pairs -> pairs to deploy.
FOLLOW_UP_SCHEDULE: tuple[tuple[int, int, int], ...] = (
    (4, 6, 20),
    (7, 9, 30),
    (10, 12, 40),
    (13, 20, 50),
)

#: Default spam patterns (case-insensitive regexes); pass your own list to replace them.
DEFAULT_SPAM_PATTERNS: tuple[str, ...] = (
    r"\bfollow\s+(me|back|us)\b",
    r"\b(retweet|rt)\s+(if|to\s+win)\b",
    r"\bcheck\s+out\s+my\b",
    r"\bclick\s+(here|the\s+link)\b",
    r"\b(free|cheap)\s+followers\b",
)

_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_KEEP_SYMBOLS = set("+=<>$€£¥%&")
_WORD = re.compile(r"\w", re.UNICODE)
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1)
def symbol_pattern() -> re.Pattern[str]:
    """A character class of emojis and symbols to remove: Unicode categories So, Sk, Sm
    (but ``+ = < >``), Co, Cs, plus emoji joiners and variation selectors."""
    ranges: list[tuple[int, int]] = []
    start = None
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        remove = (
            unicodedata.category(ch) in ("So", "Sk", "Sm", "Co", "Cs") and ch not in _KEEP_SYMBOLS
        ) or cp in (0x200D, 0xFE0E, 0xFE0F, 0x20E3)
        if remove and start is None:
            start = cp
        elif not remove and start is not None:
            ranges.append((start, cp - 1))
            start = None
    if start is not None:
        ranges.append((start, sys.maxunicode))
    parts = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )
    return re.compile(f"[{parts}]+")


@dataclass
class SentenceCleaner:
    """M2 cleaning of social-media text.

    Args:
        min_tokens: drop sentences with fewer word tokens (tokens containing a letter or
            digit).
        spam_patterns: case-insensitive regexes; a matching sentence is dropped.
        remove_urls: remove URLs before splitting.
        lang: language for sentence splitting and tokenisation.
    """

    min_tokens: int = 5
    spam_patterns: Sequence[str] = DEFAULT_SPAM_PATTERNS
    remove_urls: bool = True
    lang: str | None = None

    def __post_init__(self) -> None:
        self._spam = (
            re.compile("|".join(f"(?:{p})" for p in self.spam_patterns), re.IGNORECASE)
            if self.spam_patterns
            else None
        )
        self._tokenize = get_tokenizer(lang=self.lang)
        self._symbols = symbol_pattern()

    def strip_symbols(self, text: str) -> str:
        """Remove URLs (optionally), emojis and symbols; collapse whitespace."""
        if self.remove_urls:
            text = _URL.sub(" ", text)
        text = self._symbols.sub(" ", text)
        return _SPACES.sub(" ", text).strip()

    def clean_text(self, text: str, skips: SkipCounter | None = None) -> list[str]:
        """Cleaned sentences of one post (without deduplication)."""
        out = []
        for sentence in split_sentences(self.strip_symbols(text), lang=self.lang):
            n_words = sum(1 for t in self._tokenize(sentence) if _WORD.search(t))
            if n_words < self.min_tokens:
                if skips is not None:
                    skips["too-short"] += 1
                continue
            if self._spam is not None and self._spam.search(sentence):
                if skips is not None:
                    skips["spam"] += 1
                continue
            out.append(sentence)
        return out

    def clean(self, texts: Iterable[str], skips: SkipCounter | None = None) -> list[str]:
        """Cleaned, deduplicated sentences of many posts (first occurrence kept)."""
        seen: set[str] = set()
        out = []
        for text in texts:
            for sentence in self.clean_text(text, skips):
                key = dedup_key(sentence)
                if key in seen:
                    if skips is not None:
                        skips["duplicate"] += 1
                    continue
                seen.add(key)
                out.append(sentence)
        return out


class UnigramModel:
    """Unigram word probabilities over a whole collection (lowercased regex tokens)."""

    def __init__(self, lowercase: bool = True, lang: str | None = None) -> None:
        self.lowercase = lowercase
        self.lang = lang

    def fit(self, sentences: Iterable[str]) -> UnigramModel:
        tokenize = get_tokenizer(lang=self.lang, lowercase=self.lowercase)
        counts: Counter[str] = Counter()
        for sentence in sentences:
            counts.update(tokenize(sentence))
        total = sum(counts.values())
        if not total:
            raise ParakitError(Errors.E507_fit_unigram_model)
        self.probabilities_ = {w: c / total for w, c in counts.items()}
        self.n_tokens_ = total
        return self

    def average_probability(self, sentence: str) -> float:
        """Mean word probability of the sentence's tokens (0 for no token)."""
        tokens = get_tokenizer(lang=self.lang, lowercase=self.lowercase)(sentence)
        if not tokens:
            return 0.0
        return float(np.mean([self.probabilities_.get(t, 0.0) for t in tokens]))


class WordfreqModel:
    """Word frequencies from the ``wordfreq`` package (a general-language reference)."""

    def __init__(self, lang: str = "en") -> None:
        self.lang = lang

    def fit(self, sentences: Iterable[str] = ()) -> WordfreqModel:
        import wordfreq

        self._frequency = wordfreq.word_frequency
        return self

    def average_probability(self, sentence: str) -> float:
        if not hasattr(self, "_frequency"):
            self.fit()
        tokens = get_tokenizer(lang=self.lang, lowercase=True)(sentence)
        if not tokens:
            return 0.0
        return float(np.mean([self._frequency(t, self.lang) for t in tokens]))


@dataclass
class Group:
    """A trend or URL group of posts/sentences."""

    id: str
    sentences: list[str]
    kind: str = "trend"
    topic: str | None = None
    time: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def read_posts(path: str | Path, skips: SkipCounter | None = None) -> list[Group]:
    """Read posts JSONL (``{"group", "text", "kind"?, "topic"?, "time"?}``) into groups, in
    first-seen order; a group's kind/topic/time come from its first post."""
    skips = skips if skips is not None else SkipCounter()
    groups: dict[str, Group] = {}
    for line, record in iter_records(path):
        if not isinstance(record, dict):
            raise DataFormatError(Errors.E502_expected_json_object, path=path, line=line)
        for key in ("group", "text"):
            if key not in record:
                raise DataFormatError(
                    Errors.E502_missing_field.format(key=key), path=path, line=line, field=key
                )
        kind = str(record.get("kind") or "trend")
        if kind not in ("trend", "url"):
            raise DataFormatError(
                Errors.E502_kind_must_trend.format(kind=kind), path=path, line=line, field="kind"
            )
        text = str(record["text"] or "")
        if not text.strip():
            skips.skip("empty-document", f"{path} line {line}")
            continue
        gid = str(record["group"])
        group = groups.setdefault(
            gid, Group(gid, [], kind, record.get("topic"), record.get("time"))
        )
        group.sentences.append(text)
    return list(groups.values())


def read_group_table(path: str | Path, kind: str) -> dict[str, int | None]:
    """A JSON object of group -> whole number >= 0 (``--pilot-counts``; with "null" in
    ``kind``, ``--url-seeds``, whose seed index may be null).

    Raises:
        DataFormatError: E502 naming the file, and the group of a value that is not ``kind``.
    """
    from parakit.io._open import load_json

    table = load_json(path)
    if not isinstance(table, dict):
        raise DataFormatError(Errors.E502_group_table.format(kind=kind), path=path)
    for group, value in table.items():
        number = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        if not (number or (value is None and "null" in kind)):
            raise DataFormatError(
                Errors.E502_group_table_value.format(group=group, value=value, kind=kind),
                path=path,
                field=group,
            )
    return table


def groups_from_pairs(pairs: PairSet, kind: str = "trend") -> list[Group]:
    """Groups as connected components of the sentences of a pair set (e.g. MultiPIT auto,
    which ships pairs without their trend/URL groups)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for pair in pairs:
        a, b = find(pair.text1), find(pair.text2)
        if a != b:
            parent[b] = a
    members: dict[str, list[str]] = {}
    for sentence in parent:
        members.setdefault(find(sentence), []).append(sentence)
    return [Group(f"g{i}", sentences, kind) for i, sentences in enumerate(members.values())]


def clean_groups(
    groups: Sequence[Group],
    cleaner: SentenceCleaner | None = None,
    dedupe: str = "group",
    min_sentences: int = 2,
    skips: SkipCounter | None = None,
) -> list[Group]:
    """Clean every group's sentences (M2); dedupe within a ``group`` or ``global``-ly; drop
    groups left with fewer than ``min_sentences``."""
    if dedupe not in ("group", "global"):
        raise ParakitError(Errors.E500_dedupe_must_group)
    cleaner = cleaner or SentenceCleaner()
    skips = skips if skips is not None else SkipCounter()
    seen: set[str] = set()
    out = []
    for group in groups:
        if dedupe == "group":
            seen = set()
        kept = []
        for text in group.sentences:
            for sentence in cleaner.clean_text(text, skips):
                key = dedup_key(sentence)
                if key in seen:
                    skips["duplicate"] += 1
                    continue
                seen.add(key)
                kept.append(sentence)
        if len(kept) < min_sentences:
            skips["small-group"] += 1
            continue
        out.append(Group(group.id, kept, group.kind, group.topic, group.time, dict(group.metadata)))
    return out


def rank_groups(groups: Sequence[Group], model: Any = None) -> list[Group]:
    """Sort each group's sentences by average word probability, highest first (ties keep
    input order). ``model`` defaults to a :class:`UnigramModel` fitted on all groups."""
    if model is None:
        model = UnigramModel().fit(s for g in groups for s in g.sentences)
    out = []
    for group in groups:
        scores = [model.average_probability(s) for s in group.sentences]
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        out.append(
            Group(
                group.id,
                [group.sentences[i] for i in order],
                group.kind,
                group.topic,
                group.time,
                {**group.metadata, "avg_word_prob": [round(scores[i], 8) for i in order]},
            )
        )
    return out


def pilot_pairs(
    n_sentences: int, rng: random.Random, n_seeds: int = 2, n_partners: int = 10, pool: int = 20
) -> list[tuple[int, int]]:
    """Rank-index pairs of the pilot: each of the top ``n_seeds`` with ``n_partners`` random
    sentences among ranks ``n_seeds``..``pool - 1`` (0-based)."""
    candidates = list(range(n_seeds, min(pool, n_sentences)))
    out = []
    for seed in range(min(n_seeds, n_sentences)):
        for partner in sorted(rng.sample(candidates, min(n_partners, len(candidates)))):
            out.append((seed, partner))
    return out


def follow_up_size(
    n_paraphrases: int, schedule: Sequence[tuple[int, int, int]] = FOLLOW_UP_SCHEDULE
) -> int:
    """Pairs to deploy after the pilot found ``n_paraphrases`` paraphrases (0 below 4)."""
    for low, high, size in schedule:
        if low <= n_paraphrases <= high:
            return size
    return 0


def follow_up_pairs(
    n_sentences: int,
    n_pairs: int,
    rng: random.Random,
    exclude: Iterable[tuple[int, int]] = (),
    n_top: int = 5,
    partner_ranks: tuple[int, int] = (5, 50),
    per_seed: int = 10,
) -> list[tuple[int, int]]:
    """``n_pairs`` more pairs in blocks of ``per_seed``: a distinct random seed among the top
    ``n_top`` with ``per_seed`` random partners of 0-based ranks
    ``partner_ranks[0]``..``partner_ranks[1] - 1``; pilot pairs in ``exclude`` are avoided."""
    excluded = {(min(a, b), max(a, b)) for a, b in exclude}
    partners = list(range(partner_ranks[0], min(partner_ranks[1], n_sentences)))
    seeds = list(range(min(n_top, n_sentences)))
    rng.shuffle(seeds)
    out: list[tuple[int, int]] = []
    for seed in itertools.cycle(seeds):
        if len(out) >= n_pairs or not partners:
            break
        free = [p for p in partners if (min(seed, p), max(seed, p)) not in excluded]
        if not free:
            if all((min(s, p), max(s, p)) in excluded for s in seeds for p in partners):
                break
            continue
        take = rng.sample(free, min(per_seed, len(free), n_pairs - len(out)))
        for p in sorted(take):
            out.append((seed, p))
            excluded.add((min(seed, p), max(seed, p)))
    return out


def url_seed_task(group: Group, size: int = 11) -> dict[str, Any]:
    """The annotation task of a URL group: its top ``size`` ranked sentences."""
    return {
        "group": group.id,
        "kind": group.kind,
        "topic": group.topic,
        "sentences": group.sentences[:size],
    }


def choose_url_seed(paraphrase_counts: dict[int, int], min_paraphrases: int = 3) -> int | None:
    """The seed index with the most paraphrases among the other 10, if at least
    ``min_paraphrases``; ``None`` (skip the group) otherwise."""
    best = max(paraphrase_counts.items(), key=lambda kv: (kv[1], -kv[0]), default=None)
    if best is None or best[1] < min_paraphrases:
        return None
    return best[0]


def url_pairs(n_sentences: int, seed: int | None, size: int = 11) -> list[tuple[int, int]]:
    """The chosen seed paired with the other sentences of the top ``size``; no seed, no
    pairs (the group is skipped)."""
    if seed is None:
        return []
    if not 0 <= seed < min(size, n_sentences):
        raise ParakitError(Errors.E500_seed_index_outside.format(seed=seed, size=size))
    return [(seed, j) for j in range(min(size, n_sentences)) if j != seed]


def assign_topics(
    groups: Sequence[Group],
    keywords: dict[str, Sequence[str]],
    default: str = "other",
    overwrite: bool = False,
) -> list[Group]:
    """Topic of each group: the topic whose keywords occur most often in its sentences
    (case-insensitive whole words); ``default`` when none occurs. Given topics are kept
    unless ``overwrite``."""
    patterns = {
        topic: re.compile(r"\b(?:" + "|".join(re.escape(k) for k in words) + r")\b", re.IGNORECASE)
        for topic, words in keywords.items()
        if words
    }
    out = []
    for group in groups:
        topic = group.topic
        if topic is None or overwrite:
            text = "\n".join(group.sentences)
            hits = {t: len(p.findall(text)) for t, p in patterns.items()}
            best = max(hits.items(), key=lambda kv: kv[1], default=(default, 0))
            topic = best[0] if best[1] > 0 else default
        out.append(
            Group(group.id, group.sentences, group.kind, topic, group.time, dict(group.metadata))
        )
    return out


def balance_topics(
    groups: Sequence[Group],
    per_topic: int | None = None,
    seed: int = 0,
) -> list[Group]:
    """The same number of groups per topic (default: the smallest topic's count), drawn at
    random; groups without a topic count as ``"none"``."""
    rng = random.Random(seed)
    by_topic: dict[str, list[Group]] = {}
    for group in groups:
        by_topic.setdefault(group.topic or "none", []).append(group)
    if not by_topic:
        return []
    n = per_topic if per_topic is not None else min(len(v) for v in by_topic.values())
    chosen = set()
    for members in by_topic.values():
        chosen.update(id(g) for g in rng.sample(members, min(n, len(members))))
    return [g for g in groups if id(g) in chosen]


def social_candidates(
    groups: Sequence[Group],
    stage: str = "pilot",
    pilot_counts: dict[str, int] | None = None,
    url_seeds: dict[str, int | None] | None = None,
    seed: int = 0,
    schedule: Sequence[tuple[int, int, int]] = FOLLOW_UP_SCHEDULE,
) -> PairSet:
    """Candidate pairs of ranked groups for one M3 stage.

    Args:
        groups: ranked groups (:func:`rank_groups`).
        stage: ``pilot`` (trend groups), ``follow-up`` (trend groups with ``pilot_counts``:
            group id -> paraphrases found among its 20 pilot pairs) or ``url`` (URL groups
            with ``url_seeds``: group id -> chosen seed index in the top 11, or None).
        seed: random seed; use the same seed for ``pilot`` and ``follow-up`` so that the
            follow-up avoids exactly the pilot's pairs.

    Returns:
        pairs with ``group`` = group id, ``source`` = ``social-trend`` / ``social-url``,
        ``time`` = the group's time, ``metadata``: stage, ranks, topic.
    """
    if stage not in ("pilot", "follow-up", "url"):
        raise ParakitError(Errors.E500_stage_must_pilot)
    kind = "url" if stage == "url" else "trend"
    pairs: list[Pair] = []
    skipped: Counter[str] = Counter()
    for group in groups:
        if group.kind != kind:
            continue
        rng = random.Random(f"{seed}:{group.id}")
        n = len(group.sentences)
        pilot = pilot_pairs(n, rng)
        if stage == "pilot":
            chosen = pilot
        elif stage == "follow-up":
            if pilot_counts is None:
                raise ParakitError(Errors.E500_stage_follow_up)
            if group.id not in pilot_counts:
                skipped["no-pilot-count"] += 1
                continue
            size = follow_up_size(int(pilot_counts[group.id]), schedule)
            if size == 0:
                skipped["too-few-paraphrases"] += 1
                continue
            chosen = follow_up_pairs(n, size, rng, exclude=pilot)
        else:
            if url_seeds is None:
                raise ParakitError(Errors.E500_stage_url_needs)
            chosen = url_pairs(n, url_seeds.get(group.id))
            if not chosen:
                skipped["no-seed"] += 1
                continue
        for i, j in chosen:
            pairs.append(
                Pair(
                    id=f"{group.id}:{stage}:{i}-{j}",
                    text1=group.sentences[i],
                    text2=group.sentences[j],
                    group=group.id,
                    time=group.time,
                    source=f"social-{kind}",
                    metadata={"stage": stage, "rank1": i + 1, "rank2": j + 1, "topic": group.topic},
                )
            )
    return PairSet(
        pairs,
        scheme="binary",
        metadata={"social": {"stage": stage, "seed": seed, "skipped_groups": dict(skipped)}},
    )

"""Phenomena: which linguistic phenomena each test pair contains (Q1, Q2, T13).

A :class:`Phenomena` table is a boolean pairs × phenomena matrix, row-aligned with a
:class:`~parakit.schema.PairSet`. Sources:

* :func:`etpc_phenomena` — the ETPC typology (27 atomic types in 7 categories, plus the
  negation layer), read by ``parakit.io.read(folder, format="etpc", mrpc=PATH)``; optionally
  only the sense-preserving occurrences.
* :func:`turku_phenomena` — the Turku labels and flags (base labels 2/3/4, flags ``<`` ``>``
  ``s`` ``i``) as phenomena.
* :func:`surface_phenomena` — computed from the text for any corpus: identity, case/
  punctuation-only difference, negation / number / named-entity mismatch, length-ratio bins
  and lexical-overlap bins.
* :func:`pattern_phenomena` — the T13 systematic patterns (:mod:`parakit.analysis.patterns`).
* :func:`automatic_phenomena` — surface + patterns.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> ps = PairSet([Pair("1", "He is not here.", "He is here."),
    ...               Pair("2", "It costs 5 euros.", "It costs 5 euros.")])
    >>> ph = surface_phenomena(ps, lang="en")
    >>> ph.column("negation mismatch").tolist(), ph.column("identity").tolist()
    ([True, False], [False, True])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from parakit.analysis import _text
from parakit.errors import AnalysisError, Errors
from parakit.registry import Registry
from parakit.schema import PairSet


@dataclass
class Phenomena:
    """Boolean pairs × phenomena matrix with names and categories.

    Attributes:
        names: phenomenon names (columns).
        categories: the category of each phenomenon (same order).
        matrix: bool array, shape (n_pairs, n_phenomena).
        ids: pair ids of the rows.
        source: where the phenomena come from (``etpc``, ``turku``, ``automatic``...).
        signature: settings that produced them (lemmatiser, synonym resource...).
    """

    names: list[str]
    categories: list[str]
    matrix: np.ndarray
    ids: list[str]
    source: str = "custom"
    signature: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.matrix = np.asarray(self.matrix, dtype=bool).reshape(len(self.ids), len(self.names))
        if len(self.categories) != len(self.names):
            raise AnalysisError(
                Errors.E1001_categories_phenomena.format(
                    n_categories=len(self.categories), n_names=len(self.names)
                )
            )

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, name: str) -> np.ndarray:
        """The boolean column of ``name``."""
        try:
            return self.matrix[:, self.names.index(name)]
        except ValueError:
            raise AnalysisError(
                Errors.E1003_phenomenon_known.format(name=name, names=", ".join(self.names))
            ) from None

    def support(self) -> dict[str, int]:
        """Number of pairs containing each phenomenon."""
        return dict(zip(self.names, map(int, self.matrix.sum(axis=0)), strict=True))

    def select(self, names: Sequence[str]) -> Phenomena:
        """Only the phenomena in ``names`` (in that order)."""
        idx = [self.names.index(n) for n in names]
        return Phenomena(
            [self.names[i] for i in idx],
            [self.categories[i] for i in idx],
            self.matrix[:, idx],
            list(self.ids),
            self.source,
            dict(self.signature),
        )

    def drop_rare(self, min_support: int = 1) -> Phenomena:
        """Without the phenomena that fewer than ``min_support`` pairs contain."""
        keep = [n for n, c in self.support().items() if c >= min_support]
        return self.select(keep)

    def rows(self, mask: np.ndarray) -> Phenomena:
        """Only the rows where ``mask`` is true."""
        mask = np.asarray(mask, dtype=bool)
        return Phenomena(
            list(self.names),
            list(self.categories),
            self.matrix[mask],
            [i for i, m in zip(self.ids, mask, strict=True) if m],
            self.source,
            dict(self.signature),
        )

    def concat(self, other: Phenomena) -> Phenomena:
        """Columns of ``self`` then ``other``, for the same pairs."""
        if self.ids != other.ids:
            raise AnalysisError(Errors.E1001_combine_phenomena_different)
        return Phenomena(
            self.names + other.names,
            self.categories + other.categories,
            np.hstack([self.matrix, other.matrix]),
            list(self.ids),
            f"{self.source}+{other.source}",
            {**self.signature, **other.signature},
        )

    def to_frame(self):  # -> pandas.DataFrame
        """A pandas DataFrame of booleans, indexed by pair id."""
        import pandas as pd

        return pd.DataFrame(self.matrix, index=self.ids, columns=self.names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "signature": self.signature,
            "phenomena": [
                {"name": n, "category": c, "support": s}
                for n, c, s in zip(
                    self.names, self.categories, self.support().values(), strict=True
                )
            ],
        }


def from_lists(
    pairs: PairSet,
    lists: Sequence[Sequence[str]],
    categories: dict[str, str] | None = None,
    source: str = "custom",
    order: Sequence[str] | None = None,
) -> Phenomena:
    """Build a table from one list of phenomenon names per pair."""
    if len(lists) != len(pairs):
        raise AnalysisError(
            Errors.E1001_phenomenon_lists_pairs.format(n_lists=len(lists), n_pairs=len(pairs))
        )
    seen: dict[str, None] = dict.fromkeys(order or ())
    for names in lists:
        seen.update(dict.fromkeys(names))
    names = list(seen)
    index = {n: i for i, n in enumerate(names)}
    matrix = np.zeros((len(pairs), len(names)), dtype=bool)
    for row, items in enumerate(lists):
        for name in items:
            matrix[row, index[name]] = True
    cats = [(categories or {}).get(n, source) for n in names]
    return Phenomena(names, cats, matrix, [p.id for p in pairs], source)


# --- ETPC -------------------------------------------------------------------------------


def etpc_phenomena(
    pairs: PairSet,
    *,
    sense_preserving: bool | None = None,
    include_negation: bool = True,
    annotated_only: bool = True,
) -> Phenomena:
    """ETPC atomic phenomena of pairs read with ``parakit.io.read(..., format="etpc")``.

    Args:
        pairs: ETPC pairs (``metadata['phenomena']`` lists the atomic phenomena).
        sense_preserving: keep only occurrences with this sense-preserving flag (None = all).
        include_negation: add ETPC's pair-level "Contains negation" as a phenomenon.
        annotated_only: raise if no pair has its annotation file present (a folder without
            the phenomenon files would otherwise silently give an empty table).

    Returns:
        one column per type name seen, category = the ETPC category (Morphology, Lexicon,
        Lex-Synt, Syntax, Discourse, Other, Extremes).
    """
    lists: list[list[str]] = []
    categories: dict[str, str] = {}
    annotated = 0
    for pair in pairs:
        names: list[str] = []
        annotated += bool(pair.metadata.get("phenomena_annotated"))
        for ph in pair.metadata.get("phenomena") or ():
            if sense_preserving is not None and ph.get("sense_preserving") is not sense_preserving:
                continue
            name = ph.get("type_name") or f"type {ph.get('type_id')}"
            categories.setdefault(name, ph.get("category") or "ETPC")
            if name not in names:
                names.append(name)
        if include_negation and pair.metadata.get("negation"):
            names.append("Contains negation")
            categories["Contains negation"] = "Other"
        lists.append(names)
    if annotated_only and annotated == 0:
        raise AnalysisError(Errors.E1003_none_these_pairs)
    out = from_lists(pairs, lists, categories, source="etpc")
    out.signature = {"etpc_sense_preserving": sense_preserving}
    return out


# --- Turku labels and flags --------------------------------------------------------------

TURKU_PHENOMENA = {
    "label 2": "base label",
    "label 3": "base label",
    "label 4": "base label",
    "label 4 (no flag)": "base label",
    "flag < (subsumption)": "flag",
    "flag > (subsumption)": "flag",
    "flag s (style)": "flag",
    "flag i (minor deviation)": "flag",
}


def turku_phenomena(pairs: PairSet) -> Phenomena:
    """The Turku labels and flags as phenomena (a pair with ``4>i`` is in "label 4",
    "flag > (subsumption)" and "flag i (minor deviation)")."""
    from parakit.labels import get_scheme

    scheme = get_scheme("turku")
    flag_names = {
        "<": "flag < (subsumption)",
        ">": "flag > (subsumption)",
        "s": "flag s (style)",
        "i": "flag i (minor deviation)",
    }
    lists = []
    for pair in pairs:
        if pair.label is None:
            lists.append([])
            continue
        label = scheme.parse(pair.label)
        names = [f"label {label.base}"] if label.base in "234" else []
        if label.base == "4" and not label.flags:
            names.append("label 4 (no flag)")
        names += [flag_names[f] for f in label.flags]
        lists.append(names)
    return from_lists(pairs, lists, TURKU_PHENOMENA, source="turku", order=list(TURKU_PHENOMENA))


# --- automatic surface phenomena ---------------------------------------------------------

NEGATION_WORDS = {
    "en": {
        "not",
        "n't",
        "no",
        "never",
        "nobody",
        "nothing",
        "none",
        "neither",
        "nor",
        "nowhere",
        "cannot",
        "without",
    },
    "sv": {
        "inte",
        "ej",
        "icke",
        "aldrig",
        "ingen",
        "inget",
        "inga",
        "ingenting",
        "ingenstans",
        "varken",
        "utan",
    },
    "fi": {
        "ei",
        "en",
        "et",
        "emme",
        "ette",
        "eivät",
        "älä",
        "älkää",
        "eikä",
        "enkä",
        "etkä",
        "emmekä",
        "ettekä",
        "eivätkä",
        "ilman",
        "ikinä",
        "koskaan",
    },
}
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
#: (label, lower bound) of the length-ratio bins (shorter / longer statement, in words).
LENGTH_BINS = (
    ("length ratio < 0.5", 0.0),
    ("length ratio 0.5-0.75", 0.5),
    ("length ratio >= 0.75", 0.75),
)
#: Lower bounds of the word-overlap (Jaccard of word sets, J4) bins.
OVERLAP_BINS = (0.0, 0.2, 0.4, 0.6, 0.8)


def _negated(words: Sequence[str], lang: str | None) -> bool:
    neg = NEGATION_WORDS.get(_text.base_lang(lang) or "", set())
    return any(w in neg or w.endswith("n't") for w in words)


def _entities(text: str) -> set[str]:
    """Capitalised words not at a sentence start, @mentions and #hashtags (a proxy for named
    entities that needs no tagger)."""
    out = set()
    for sentence in _text.split_sentences(text):
        tokens = _text.tokenize(sentence)
        first = True
        for i, tok in enumerate(tokens):
            if not any(ch.isalpha() for ch in tok):
                if tok in "@#" and i + 1 < len(tokens):
                    out.add(tok + tokens[i + 1].lower())
                continue
            if not first and tok[0].isupper() and not (i and tokens[i - 1] in "@#"):
                out.add(tok.lower())
            first = False
    return out


def word_overlap(words1: Sequence[str], words2: Sequence[str]) -> float:
    """Jaccard overlap of two word sets (the WOR of J4); 1.0 for two empty texts."""
    a, b = set(words1), set(words2)
    return len(a & b) / len(a | b) if a | b else 1.0


def surface_phenomena(pairs: PairSet, lang: str | None = None) -> Phenomena:
    """Text-derived phenomena for any corpus.

    Columns: ``identity``, ``case/punctuation only``, ``negation mismatch`` (one side has a
    negation word, the other not), ``number mismatch`` (the sets of numbers differ),
    ``entity mismatch`` (capitalised non-initial words / @mentions / #hashtags differ),
    three length-ratio bins and five word-overlap bins.
    """
    lang = lang or pairs.lang
    overlap_names = [
        f"word overlap {lo:.1f}-{hi:.1f}"
        for lo, hi in zip(OVERLAP_BINS, [*OVERLAP_BINS[1:], 1.0], strict=True)
    ]
    names = [
        "identity",
        "case/punctuation only",
        "negation mismatch",
        "number mismatch",
        "entity mismatch",
        *(n for n, _ in LENGTH_BINS),
        *overlap_names,
    ]
    cats = (
        ["identity"] * 2
        + ["mismatch"] * 3
        + ["length"] * len(LENGTH_BINS)
        + ["lexical overlap"] * len(overlap_names)
    )
    matrix = np.zeros((len(pairs), len(names)), dtype=bool)
    for row, pair in enumerate(pairs):
        w1, w2 = _text.words(pair.text1), _text.words(pair.text2)
        identical = pair.text1 == pair.text2
        n1, n2 = len(w1), len(w2)
        ratio = min(n1, n2) / max(n1, n2) if max(n1, n2) else 1.0
        length_bin = max(i for i, (_, lo) in enumerate(LENGTH_BINS) if ratio >= lo)
        wor = word_overlap(w1, w2)
        overlap_bin = max(i for i, lo in enumerate(OVERLAP_BINS) if wor >= lo)
        values = [
            identical,
            not identical and w1 == w2,
            _negated(w1, lang) != _negated(w2, lang),
            set(_NUMBER.findall(pair.text1)) != set(_NUMBER.findall(pair.text2)),
            _entities(pair.text1) != _entities(pair.text2),
        ]
        values += [i == length_bin for i in range(len(LENGTH_BINS))]
        values += [i == overlap_bin for i in range(len(OVERLAP_BINS))]
        matrix[row] = values
    return Phenomena(
        names,
        cats,
        matrix,
        [p.id for p in pairs],
        source="surface",
        signature={"surface_lang": lang},
    )


def pattern_phenomena(
    pairs: PairSet,
    lang: str | None = None,
    synonyms: str | Path | Any = "auto",
    detector: Any = None,
) -> Phenomena:
    """One-hot T13 patterns (the six patterns; identity/surface-only/other are left out since
    :func:`surface_phenomena` covers them)."""
    from parakit.analysis.patterns import PATTERN_TITLES, T13_PATTERNS, PatternDetector

    detector = detector or PatternDetector(lang or pairs.lang, synonyms=synonyms)
    patterns = detector.detect_many(*pairs.texts())
    names = [PATTERN_TITLES[p] for p in T13_PATTERNS]
    matrix = np.array([[p == name for name in T13_PATTERNS] for p in patterns], dtype=bool)
    out = Phenomena(
        names,
        ["T13 pattern"] * len(names),
        matrix.reshape(len(pairs), len(names)),
        [p.id for p in pairs],
        source="patterns",
        signature={"patterns": detector.signature},
    )
    return out


def automatic_phenomena(
    pairs: PairSet, lang: str | None = None, synonyms: str | Path | Any = "auto"
) -> Phenomena:
    """:func:`surface_phenomena` + :func:`pattern_phenomena`."""
    out = surface_phenomena(pairs, lang).concat(pattern_phenomena(pairs, lang, synonyms))
    out.source = "automatic"
    return out


#: phenomena source -> function; other packages add sources with a ``parakit.phenomena``
#: entry point (a function ``(pairs, **options) -> Phenomena``)
SOURCES: Registry[Callable[..., Phenomena]] = Registry(
    "phenomena",
    {
        "etpc": etpc_phenomena,
        "turku": turku_phenomena,
        "surface": surface_phenomena,
        "patterns": pattern_phenomena,
        "automatic": automatic_phenomena,
    },
)


def get_phenomena(pairs: PairSet, source: str = "auto", **options: Any) -> Phenomena:
    """Phenomena of ``pairs`` from ``source`` (a key of :data:`SOURCES` or ``auto``: ETPC if
    the pairs carry ETPC annotation, Turku labels for the Turku scheme, else automatic)."""
    if source == "auto":
        if any(p.metadata.get("phenomena_annotated") for p in pairs):
            source = "etpc"
        elif pairs.scheme.name == "turku":
            source = "turku"
        else:
            source = "automatic"
    if source not in SOURCES:
        raise AnalysisError(
            Errors.E1003_unknown_phenomena_source.format(
                source=source, join_auto_sources=", ".join(["auto", *SOURCES])
            )
        )
    if source in ("etpc", "turku"):
        return SOURCES[source](pairs)
    return SOURCES[source](pairs, **options)

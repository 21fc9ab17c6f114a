"""Lexical-similarity columns for a whole pair set (``parakit similarity``)."""

from __future__ import annotations

import numpy as np

from parakit.schema import PairSet
from parakit.text.similarity import CharNgramSimilarity, word_overlap_rates


def pair_languages(pairs: PairSet) -> list[str | None]:
    """Each pair's language: ``metadata['lang']``, else the set's ``lang`` when it names one."""
    default = pairs.lang if pairs.lang and "," not in pairs.lang else None
    return [p.metadata.get("lang", default) for p in pairs]


def add_lexical_similarity(
    pairs: PairSet,
    wor: bool = True,
    char: bool = True,
    ngram_range: tuple[int, int] = (2, 4),
    analyzer: str = "char_wb",
    use_idf: bool = False,
    tokenizer: str | None = None,
    lowercase_wor: bool = False,
    progress: bool = False,
) -> PairSet:
    """Add ``metadata['wor']`` (word overlap rate, tokenised per pair language) and
    ``metadata['char_tf_2_4']`` (or ``char_tfidf_2_4``: char n-gram cosine) to every pair.

    TF-IDF is fitted on all statements of the set. The column names carry the settings so
    several variants can coexist.
    """
    texts1, texts2 = pairs.texts()
    columns: dict[str, np.ndarray] = {}
    if wor:
        values = np.zeros(len(pairs))
        languages = pair_languages(pairs)
        for lang in set(languages):
            index = [i for i, x in enumerate(languages) if x == lang]
            values[index] = word_overlap_rates(
                [texts1[i] for i in index],
                [texts2[i] for i in index],
                lang=lang,
                method=tokenizer,
                lowercase=lowercase_wor,
            )
        columns["wor"] = values
    if char:
        sim = CharNgramSimilarity(ngram_range=ngram_range, analyzer=analyzer, use_idf=use_idf)
        if use_idf:
            sim.fit([*texts1, *texts2])
        kind = "tfidf" if use_idf else "tf"
        suffix = "" if analyzer == "char_wb" else "_char"
        name = f"char_{kind}_{ngram_range[0]}_{ngram_range[1]}{suffix}"
        columns[name] = sim.score(texts1, texts2, progress=progress)
    return pairs.map(_Adder(columns, pairs))


class _Adder:
    def __init__(self, columns: dict[str, np.ndarray], pairs: PairSet) -> None:
        self.columns = columns
        self.position = {p.id: i for i, p in enumerate(pairs)}

    def __call__(self, pair):  # type: ignore[no-untyped-def]
        i = self.position[pair.id]
        meta = dict(pair.metadata)
        for name, values in self.columns.items():
            meta[name] = round(float(values[i]), 6)
        return pair.replace(metadata=meta)


def mean_by_label(pairs: PairSet, column: str) -> dict[str, float]:
    """Mean of a metadata column per label (a quick look at how lexical each label is)."""
    sums: dict[str, list[float]] = {}
    for pair in pairs:
        if column in pair.metadata:
            sums.setdefault(str(pair.label), []).append(float(pair.metadata[column]))
    return {label: float(np.mean(values)) for label, values in sorted(sums.items())}

"""TMUP, the Japanese paraphrase corpus built from multiple MT systems (J1–J6)."""

from __future__ import annotations

import re
from pathlib import Path

from parakit.errors import DataFormatError, Errors
from parakit.io.table import read_table
from parakit.schema import PairSet

_CJK_GAP = re.compile(r"(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])")


def detokenize_japanese(text: str) -> str:
    """Remove the spaces the corpus puts between Japanese tokens (kept between ASCII words)."""
    return _CJK_GAP.sub("", text)


def read_tmup(
    path: str | Path,
    detokenize: bool = False,
    encoding: str = "utf-8-sig",
    allow_unsafe_text: bool = False,
) -> PairSet:
    """Read ``tmup.tsv`` (``label, sentence_A_ja, sentence_B_ja, source_sentence_en``).

    The statements are pre-tokenised (space-separated). Pairs with an English source come from
    the MT systems (``source='mt'``); the others are Wikipedia pairs (``source='wikipedia'``).
    ``detokenize=True`` joins the Japanese tokens back. The upstream file ends without a final
    line break: a file cut inside its last record is told by its structure (fewer than four
    fields, E117).
    """
    ps = read_table(
        path,
        delimiter="\t",
        columns={"label": "label", "text1": "sentence_A_ja", "text2": "sentence_B_ja"},
        scheme="binary",
        quoting="none",
        lang="ja",
        encoding=encoding,
        allow_unsafe_text=allow_unsafe_text,
    )

    if len(ps) and "source_sentence_en" not in ps[0].metadata:
        raise DataFormatError(
            Errors.E106_column_source_sentence, path=path, line=1, field="source_sentence_en"
        )

    def finish(pair):  # type: ignore[no-untyped-def]
        meta = dict(pair.metadata)
        english = meta.pop("source_sentence_en", "") or ""
        if english:
            meta["source_en"] = english
        meta["tokenized"] = not detokenize
        t1, t2 = pair.text1, pair.text2
        if detokenize:
            t1, t2 = detokenize_japanese(t1), detokenize_japanese(t2)
        return pair.replace(
            text1=t1, text2=t2, source="mt" if english else "wikipedia", metadata=meta
        )

    out = ps.map(finish)
    out.metadata = {"format": "tmup"}
    return out

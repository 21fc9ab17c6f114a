"""The Microsoft Research Paraphrase Corpus TSV (``msr_paraphrase_train.txt``)."""

from __future__ import annotations

from pathlib import Path

from parakit.io.table import read_table
from parakit.schema import PairSet


def read_mrpc(path: str | Path) -> PairSet:
    """Read an MRPC file: ``Quality, #1 ID, #2 ID, #1 String, #2 String`` with a UTF-8 BOM.

    Quotes inside the sentences are ordinary characters (no CSV quoting). Pair ids are the
    1-based row numbers, which is how ETPC's ``pair_id`` refers to MRPC train pairs; the
    sentence ids are kept in metadata.
    """
    ps = read_table(
        path,
        delimiter="\t",
        quoting="none",
        columns={"label": "Quality", "text1": "#1 String", "text2": "#2 String"},
        scheme="binary",
        lang="en",
    )

    def finish(item):  # type: ignore[no-untyped-def]
        index, pair = item
        meta = {"sent1_id": pair.metadata["#1 ID"], "sent2_id": pair.metadata["#2 ID"]}
        return pair.replace(id=str(index + 1), metadata=meta)

    out = ps._derive(finish(item) for item in enumerate(ps))
    out.metadata = {"format": "mrpc"}
    return out

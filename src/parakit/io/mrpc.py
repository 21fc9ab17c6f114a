"""The Microsoft Research Paraphrase Corpus TSV (``msr_paraphrase_train.txt``)."""

from __future__ import annotations

from pathlib import Path

from parakit.errors import DataFormatError, Errors
from parakit.io.table import read_table
from parakit.schema import PairSet

#: The header of the MRPC files, in order.
MRPC_COLUMNS = ("Quality", "#1 ID", "#2 ID", "#1 String", "#2 String")


def read_mrpc(
    path: str | Path,
    encoding: str = "utf-8-sig",
    allow_unsafe_text: bool = False,
) -> PairSet:
    """Read an MRPC file: ``Quality, #1 ID, #2 ID, #1 String, #2 String`` with a UTF-8 BOM.

    Quotes inside the sentences are ordinary characters (no CSV quoting). Pair ids are the
    1-based row numbers, which is how ETPC's ``pair_id`` refers to MRPC train pairs; the
    sentence ids are kept in metadata. The upstream files end without a final line break: a
    file cut inside its last record is told by its structure (fewer than five fields, E117;
    a cut inside the last sentence cannot be told from a complete file).

    Raises:
        DataFormatError: a header other than MRPC's (E106), or any table error.
    """
    ps = read_table(
        path,
        delimiter="\t",
        quoting="none",
        columns={"label": "Quality", "text1": "#1 String", "text2": "#2 String"},
        scheme="binary",
        lang="en",
        encoding=encoding,
        allow_unsafe_text=allow_unsafe_text,
    )
    names = set(ps[0].metadata) if len(ps) else {"#1 ID", "#2 ID"}
    if names != {"#1 ID", "#2 ID"}:
        raise DataFormatError(
            Errors.E106_expected_mrpc_header.format(mrpc_columns=", ".join(MRPC_COLUMNS)),
            path=path,
            line=1,
        )

    def finish(item):  # type: ignore[no-untyped-def]
        index, pair = item
        meta = {"sent1_id": pair.metadata["#1 ID"], "sent2_id": pair.metadata["#2 ID"]}
        return pair.replace(id=str(index + 1), metadata=meta)

    out = ps.derive(finish(item) for item in enumerate(ps))
    out.metadata = {"format": "mrpc"}
    return out

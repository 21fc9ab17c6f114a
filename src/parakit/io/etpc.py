"""ETPC, the Extended Typology Paraphrase Corpus (Q1), in its XML release v0.95.

The release has six files (see ``ETPC_XML_v0.95.txt``): ``text_pairs.xml`` (the MRPC pairs with
``mrpc_label``, ``etpc_label`` and ``negation``), ``paraphrase_types.xml`` (the typology), and
four annotation files with one ``<relation>`` per atomic phenomenon: ``textual_paraphrases.xml``
(pairs with MRPC label 1), ``textual_np_pos.xml`` / ``textual_np_neg.xml`` (pairs with MRPC
label 0; sense-preserving / not) and ``negation.xml``.

The reader loads whatever is present and says what is missing. Without ``text_pairs.xml`` the
texts and (MRPC) labels can come from the MRPC training file, whose row numbers are ETPC's
``pair_id`` 1–4076.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors, LabelError, with_location
from parakit.io import validate as check
from parakit.io.validate import Where
from parakit.labels import get_scheme
from parakit.schema import Pair, PairSet

logger = logging.getLogger(__name__)

TEXT_PAIRS = "text_pairs.xml"
TYPES = "paraphrase_types.xml"
ANNOTATION_FILES = (
    "textual_paraphrases.xml",
    "textual_np_pos.xml",
    "textual_np_neg.xml",
    "negation.xml",
)
ALL_FILES = (TEXT_PAIRS, TYPES, *ANNOTATION_FILES)


_BINARY = get_scheme("binary")
_STARTS_WITH_DIGIT = re.compile(r"[0-9]")


def _parse(path: Path) -> ET.Element:
    if not path.is_file():
        raise DataFormatError(Errors.E103_such_file, path=path)
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as err:
        line, _column = err.position
        raise DataFormatError(
            Errors.E112_malformed_xml.format(err=str(err)[:200]), path=path, line=line
        ) from None
    except (OSError, RecursionError, ValueError, LookupError) as err:
        # LookupError: the XML declaration names an encoding Python does not know
        raise DataFormatError(Errors.E112_read_xml.format(err=str(err)[:200]), path=path) from None


def _children(element: ET.Element, where: Where, strip: bool) -> dict[str, str]:
    """The child elements' texts by tag; a tag given twice is an error (not "last wins")."""
    values: dict[str, str] = {}
    for child in element:
        if child.tag in values:
            raise where.error(f"element <{check.quote(child.tag)[1:-1]}> appears twice", child.tag)
        value = child.text or ""
        values[child.tag] = value.strip() if strip else value
    return values


def _scope(text: str | None, where: Where | None = None, field: str | None = None):  # type: ignore[no-untyped-def]
    """``"0, 8, 9"`` -> ``[0, 8, 9]``; ``"whole sentence"`` is kept as a string; empty -> None.

    A list with a part that is not an integer (``"0, x"``) is an error.
    """
    if text is None or not text.strip():
        return None
    text = text.strip()
    if not _STARTS_WITH_DIGIT.match(text):
        return text
    where = where or Where(None)
    return [
        check.integer_text(part.strip(), where, field, minimum=0)
        for part in text.split(",")
        if part.strip()
    ]


def read_paraphrase_types(path: str | Path) -> dict[int, dict[str, str]]:
    """The typology: ``type_id -> {"name": ..., "category": ...}``."""
    root = _parse(Path(path))
    out: dict[int, dict[str, str]] = {}
    for number, element in enumerate(root, start=1):
        where = Where(path, number, "record")
        values = _children(element, where, strip=True)
        type_text = values.get("type_id")
        if type_text is None:
            raise where.error("missing field", "type_id")
        type_id = check.integer_text(type_text.strip(), where, "type_id", minimum=0)
        if type_id in out:
            raise where.error(f"type {type_id} is defined twice", "type_id", "E102")
        out[type_id] = {
            "name": values.get("type_name", ""),
            "category": values.get("type_category", ""),
        }
    return out


def read_relations(
    path: str | Path, types: dict[int, dict[str, str]] | None = None
) -> dict[int, list[dict[str, Any]]]:
    """The atomic phenomena of one annotation file, by ``pair_id``."""
    path = Path(path)
    root = _parse(path)
    out: dict[int, list[dict[str, Any]]] = {}
    for number, element in enumerate(root, start=1):
        where = Where(path, number, "record")
        values = _children(element, where, strip=False)
        for key in ("pair_id", "type_id"):
            if key not in values:
                raise where.error("missing field", key)
        pair_id = check.integer_text(values["pair_id"].strip(), where, "pair_id", minimum=0)
        type_id = check.integer_text(values["type_id"].strip(), where, "type_id", minimum=0)
        sense = values.get("sense_preserving", "").strip().lower()
        if sense not in ("yes", "no", ""):
            raise where.error(
                f"expected yes, no or nothing, got {check.quote(sense)}", "sense_preserving"
            )
        phenomenon = {
            "type_id": type_id,
            "type_name": values.get("type_name", "").strip(),
            "category": (types or {}).get(type_id, {}).get("category"),
            "sense_preserving": {"yes": True, "no": False}.get(sense),
            "s1_scope": _scope(values.get("s1_scope"), where, "s1_scope"),
            "s2_scope": _scope(values.get("s2_scope"), where, "s2_scope"),
            "key_s1": _scope(values.get("key_s1"), where, "key_s1"),
            "key_s2": _scope(values.get("key_s2"), where, "key_s2"),
            "s1_text": values.get("s1_text", "").strip() or None,
            "s2_text": values.get("s2_text", "").strip() or None,
            "file": path.name,
        }
        out.setdefault(pair_id, []).append(phenomenon)
    return out


def read_etpc(folder: str | Path, mrpc: str | Path | None = None, label: str = "etpc") -> PairSet:
    """Read an ETPC XML folder.

    Args:
        folder: the folder with the XML files.
        mrpc: MRPC training file, used for texts and labels when ``text_pairs.xml`` is absent.
        label: ``etpc`` (re-annotated) or ``mrpc`` (original) label, when ``text_pairs.xml``
            is present; only one should be used (see the ETPC documentation).

    Returns:
        pairs with ``metadata['phenomena']`` (atomic phenomena with type, category,
        sense-preserving flag, scopes and keys), ``metadata['negation']`` when known, and
        ``metadata['phenomena_annotated']`` saying whether the file covering the pair was
        present. ``PairSet.metadata['etpc']`` lists present and missing files.

    Raises:
        DataFormatError: no texts are available (neither ``text_pairs.xml`` nor ``mrpc``);
            E143 neither ``text_pairs.xml`` nor any annotation file in the folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise DataFormatError(Errors.E103_expected_etpc_folder, path=folder)
    if label not in ("etpc", "mrpc"):
        raise DataFormatError(
            Errors.E114_label_must_etpc.format(check_quote_label=check.quote(label))
        )
    present = [name for name in ALL_FILES if (folder / name).exists()]
    missing = [name for name in ALL_FILES if name not in present]
    types = read_paraphrase_types(folder / TYPES) if TYPES in present else None
    relations = {
        name: read_relations(folder / name, types) for name in ANNOTATION_FILES if name in present
    }
    if not any(name in present for name in (TEXT_PAIRS, *ANNOTATION_FILES)):
        raise DataFormatError(
            Errors.E143_etpc_xml_files.format(annotation_files=", ".join(ANNOTATION_FILES)),
            path=folder,
        )

    base: list[Pair]
    if TEXT_PAIRS in present:
        base = _read_text_pairs(folder / TEXT_PAIRS, label)
        label_source = label
    elif mrpc is not None:
        from parakit.io.mrpc import read_mrpc

        base = [
            p.replace(metadata={**p.metadata, "mrpc_label": int(p.label or 0)})
            for p in read_mrpc(mrpc)
        ]
        label_source = "mrpc"
    else:
        raise DataFormatError(
            Errors.E111_missing_so_pair.format(TEXT_PAIRS=TEXT_PAIRS), path=folder / TEXT_PAIRS
        )
    annotated_ids = {pid for rel in relations.values() for pid in rel}
    pairs = []
    for pair in base:
        pid = int(pair.id)
        phenomena = [
            ph
            for name in ANNOTATION_FILES
            if name in relations
            for ph in relations[name].get(pid, [])
        ]
        mrpc_label = pair.metadata.get("mrpc_label")
        needed = ["negation.xml"]
        needed += (
            ["textual_paraphrases.xml"]
            if mrpc_label == 1
            else ["textual_np_pos.xml", "textual_np_neg.xml"]
        )
        meta = dict(pair.metadata)
        meta["phenomena"] = [ph for ph in phenomena if ph["type_id"] != 100]
        if "negation.xml" in relations:
            meta["negation"] = pid in relations["negation.xml"] or bool(meta.get("negation"))
        meta["phenomena_annotated"] = all(name in relations for name in needed)
        pairs.append(pair.replace(metadata=meta))
    with_text = {int(p.id) for p in pairs}
    without_text = sorted(annotated_ids - with_text)
    info = {
        "present": present,
        "missing": missing,
        "label_source": label_source,
        "annotated_pairs_without_text": len(without_text),
    }
    if missing:
        logger.warning(
            "ETPC folder %s lacks %s; %d annotated pairs have no text",
            folder,
            ", ".join(missing),
            len(without_text),
        )
    return PairSet(
        pairs, scheme="binary", name="etpc", lang="en", metadata={"format": "etpc", "etpc": info}
    )


def _read_text_pairs(path: Path, label: str) -> list[Pair]:
    root = _parse(path)
    pairs = []
    ids = check.UniqueIds()
    for number, element in enumerate(root, start=1):
        where = Where(path, number, "record")
        values = _children(element, where, strip=True)
        for key in ("pair_id", "sent1_raw", "sent2_raw", f"{label}_label"):
            if key not in values:
                raise where.error("missing field", key)
        pair_id = str(check.integer_text(values["pair_id"], where, "pair_id", minimum=0))
        labels = {}
        for key in ("mrpc_label", "etpc_label"):
            raw = values.get(key, "")
            if key == f"{label}_label" and not raw:
                raise where.error("the label is empty", key, "E201")
            raw = raw or "0"
            try:
                labels[key] = int(_BINARY.normalize(raw))
            except LabelError as err:
                raise with_location(err, path=path, line=number, field=key, unit="record") from None
        meta: dict[str, Any] = {
            **labels,
            "negation": values.get("negation") == "1",
            "sent1_id": values.get("sent1_id"),
            "sent2_id": values.get("sent2_id"),
            "sent1_tok": values.get("sent1_tok"),
            "sent2_tok": values.get("sent2_tok"),
        }
        ids.add(pair_id, where, "pair_id")
        pairs.append(
            Pair(
                id=pair_id,
                text1=check.text(values["sent1_raw"], where, "sent1_raw"),
                text2=check.text(values["sent2_raw"], where, "sent2_raw"),
                label=str(labels[f"{label}_label"]),
                metadata=meta,
            )
        )
    return pairs

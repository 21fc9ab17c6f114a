"""Prodigy: tasks and annotations as JSONL (``prodigy db-out``, ``db-in`` and a stream).

One line per task, or per annotation in an export (one line for each annotator)::

    {"text1": "...", "text2": "...", "meta": {"id": "p1", ...},
     "options": [{"id": "3", "text": "3"}, {"id": "4", "text": "4"}], "accept": ["4"],
     "answer": "accept", "_input_hash": 1297431, "_task_hash": -48520215,
     "_annotator_id": "pairs-ann1", "_session_id": "pairs-ann1", "_timestamp": 1794045600}

The pair's texts are ``text1``/``text2`` (``text1=``/``text2=`` name other keys) and its own
fields live in ``meta`` (:func:`parakit.io.interchange.pair_fields`). The lines of one pair
(same ``meta.id``, else same ``_input_hash``) are its judgments: the annotator is
``_annotator_id`` (else ``_session_id``); a choice task (``options``) gives the one id in
``accept`` when ``answer`` is ``accept``; a binary task (no options) gives ``positive`` for
``accept`` and ``negative`` for ``reject``; ``ignore``, a rejected choice task and a task
without ``answer`` give none. parakit's own judgment fields (time, gold, unsure, comment...)
ride along in a ``judgment`` key, which Prodigy keeps as it keeps every key of a task.

The hashes parakit writes are CRC-32 of the texts (and options), not Prodigy's own; Prodigy
keeps them, and ``prodigy db-in --rehash`` computes its own.
"""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from parakit.io import validate as check
from parakit.io.atomic import atomic_write
from parakit.io.interchange import (
    Found,
    finish,
    json_line,
    pair_fields,
    pair_from_fields,
    require_label,
    warn_documents,
)
from parakit.io.jsonl import JUDGMENT_KEYS, iter_jsonl
from parakit.io.validate import Where
from parakit.labels import LabelScheme
from parakit.schema import Judgment, PairSet

ANSWERS = ("accept", "reject", "ignore")


def read_prodigy(
    path: str | Path,
    scheme: str | LabelScheme | None = None,
    text1: str = "text1",
    text2: str = "text2",
    positive: str = "1",
    negative: str = "0",
    annotator: str = "prodigy",
    allow_unsafe_text: bool = False,
) -> PairSet:
    """Read Prodigy JSONL (tasks, or an export of annotations) into pairs with judgments.

    Args:
        path: the ``.jsonl`` file (``prodigy db-out DATASET > file.jsonl``).
        scheme: the labels' scheme; inferred when omitted.
        text1, text2: the keys of each line holding the two texts.
        positive, negative: the labels of ``accept`` and ``reject`` in a binary task.
        annotator: the name of lines with neither ``_annotator_id`` nor ``_session_id``.
        allow_unsafe_text: keep texts with NUL characters or lone surrogates.

    Raises:
        DataFormatError: naming the file, line and field: E151 a line without the texts,
            E152 an unknown ``answer`` or several accepted options, E153 the lines of one
            pair with other texts, E106 a value of the wrong type.
    """
    order: list[str] = []
    firsts: dict[str, tuple[Any, Where]] = {}
    judged: dict[str, list[tuple[Judgment, Where]]] = {}
    for line, record in iter_jsonl(path, strict=True):
        where = Where(path, line)
        if not isinstance(record, dict):
            raise where.error("expected a JSON object (a Prodigy task)", None, "E151")
        if text1 not in record or text2 not in record:
            missing = text1 if text1 not in record else text2
            raise where.error(
                f"a Prodigy task without the pair's texts; name their keys (text1=..., "
                f"text2=...; CLI: -O text1=KEY), keys here: {', '.join(sorted(record))[:200]}",
                missing,
                "E151",
            )
        meta = check.mapping(record.get("meta"), where, "meta")
        check.json_value(meta, where, "meta", allow_unsafe_text)
        pair = pair_from_fields(
            record[text1],
            record[text2],
            meta,
            where,
            names=(text1, text2),
            default_id=_key(record, meta, line, where),
            allow_unsafe_text=allow_unsafe_text,
        )
        key = pair.id
        if key in firsts:
            first, at = firsts[key]
            if (first.text1, first.text2) != (pair.text1, pair.text2):
                raise where.error(
                    f"pair {key!r} has other texts than on line {at.line}", text1, "E153"
                )
        else:
            order.append(key)
            firsts[key] = (pair, where)
            judged[key] = []
        judgment = _judgment(record, where, positive, negative, annotator)
        if judgment is not None:
            judged[key].append((judgment, where))
    found = []
    for key in order:
        pair, where = firsts[key]
        pairs_judgments = judged[key]
        found.append(
            Found(
                pair.replace(judgments=tuple(j for j, _ in pairs_judgments)),
                where,
                "meta.label",
                [(at, "accept") for _, at in pairs_judgments],
                label_given=pair.label is not None,
            )
        )
    return finish(found, scheme, path)


def _key(record: dict[str, Any], meta: dict[str, Any], line: int, where: Where) -> str:
    """The pair's id: ``meta.id``, else the input hash, else the line."""
    if "_input_hash" in record and "id" not in meta:
        return check.identifier(record["_input_hash"], where, "_input_hash")
    return str(line - 1)


def _judgment(
    record: dict[str, Any], where: Where, positive: str, negative: str, default: str
) -> Judgment | None:
    answer = record.get("answer")
    if answer is None:
        return None
    if answer not in ANSWERS:
        raise where.error(
            f"unknown answer {check.quote(answer)}; Prodigy answers are accept, reject, ignore",
            "answer",
            "E152",
        )
    if answer == "ignore":
        return None
    if "options" in record or "accept" in record:
        if answer == "reject":
            return None
        accepted = record.get("accept")
        if not isinstance(accepted, list) or len(accepted) != 1:
            raise where.error(
                f"expected one accepted option, got {check.quote(accepted)}: a pair takes one "
                "label (choice_style single)",
                "accept",
                "E152",
            )
        label = str(check.label_value(accepted[0], where, "accept"))
    else:
        label = positive if answer == "accept" else negative
    name = record.get("_annotator_id", record.get("_session_id", default))
    extra = record.get("judgment")
    if extra is not None:
        from parakit.io.jsonl import _judgment as canonical_judgment

        if not isinstance(extra, dict):
            raise where.error("expected an object of judgment fields", "judgment")
        check.known_keys(extra, JUDGMENT_KEYS, where, "judgment field")
        extra = {**extra, "annotator": name, "label": label}
        return canonical_judgment(extra, where, False)
    time = None
    if record.get("_timestamp") is not None:
        # seconds since 1970, up to the last second of year 9999 (datetime's range)
        stamp = check.integer(
            record["_timestamp"], where, "_timestamp", minimum=0, maximum=253_402_300_799
        )
        time = datetime.fromtimestamp(stamp, tz=UTC).isoformat()
    return Judgment(
        annotator=check.identifier(name, where, "_annotator_id"), label=label, time=time
    )


def _hash(*values: Any) -> int:
    """A signed 32-bit hash as Prodigy's are (CRC-32 here, stable across runs)."""
    value = zlib.crc32(json.dumps(values, ensure_ascii=False).encode("utf-8"))
    return value - (1 << 32) if value >= 1 << 31 else value


def write_prodigy(
    pairs: PairSet, path: str | Path, text1: str = "text1", text2: str = "text2"
) -> Path:
    """Write pairs as Prodigy choice tasks (JSONL), atomically: one line per judgment
    (``answer`` accept, the label in ``accept``, the annotator in ``_annotator_id``), one line
    without an answer for a pair nobody judged. Options are the scheme's labels."""
    target = Path(path)
    warn_documents(pairs, target, "Prodigy")
    options = [{"id": label, "text": label} for label in pairs.scheme.values]
    lines = []
    for pair in pairs:
        task: dict[str, Any] = {
            text1: pair.text1,
            text2: pair.text2,
            "meta": pair_fields(pair),
            "options": options,
            "_input_hash": _hash(pair.text1, pair.text2),
        }
        task["_task_hash"] = _hash(task["_input_hash"], options)
        if not pair.judgments:
            lines.append(json_line(task, target, f"pair {pair.id!r}"))
        for judgment in pair.judgments:
            label = require_label(judgment, pair, target, "Prodigy")
            extra = {
                k: v
                for k, v in judgment.to_dict().items()
                if k not in ("annotator", "label") and v not in (None, False, {}, [])
            }
            line = {
                **task,
                "accept": [label],
                "answer": "accept",
                "_annotator_id": judgment.annotator,
                "_session_id": judgment.annotator,
            }
            if extra:
                line["judgment"] = extra
            lines.append(json_line(line, target, f"pair {pair.id!r}"))
    with atomic_write(target) as handle:
        handle.writelines(line + "\n" for line in lines)
    return target

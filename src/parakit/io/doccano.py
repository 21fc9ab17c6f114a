"""doccano: text classification datasets as JSONL (import, and the export of a project).

doccano's export is one JSONL file per user (``admin.jsonl``, ``ann1.jsonl`` in the unzipped
export folder), each line ``{"id": 7, "text": "...", "label": ["4"], ...}`` with the columns
the imported file had. doccano shows one text: parakit writes the first text in ``text`` and
the second in the column ``text2`` (shown with the example's metadata), or both in ``text``
joined by ``separator`` (``separator="\\n---\\n"``) so the annotator reads them together.
The pair's own fields are further columns (:func:`parakit.io.interchange.pair_fields`), its
id as ``pair_id`` (doccano numbers its examples in ``id``); the ``label`` list is what the
annotator chose.

* a **file**: ``label`` is the pair's label (at most one); with ``annotator=NAME`` it is also
  that annotator's judgment.
* a **folder** (the unzipped export): each ``<user>.jsonl`` gives that user's judgments; a
  pair's label is their majority (a tie stays unlabelled).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from parakit.errors import DataFormatError, Errors
from parakit.io import interchange
from parakit.io import validate as check
from parakit.io.atomic import atomic_files, atomic_write, replace_folder
from parakit.io.jsonl import iter_jsonl
from parakit.io.validate import Where
from parakit.labels import LabelScheme
from parakit.schema import Judgment, Pair, PairSet


def read_doccano(
    path: str | Path,
    scheme: str | LabelScheme | None = None,
    separator: str | None = None,
    text2: str = "text2",
    annotator: str | None = None,
    allow_unsafe_text: bool = False,
) -> PairSet:
    """Read a doccano text classification JSONL file, or the folder of its per-user export.

    Args:
        path: a ``.jsonl`` file, or a folder of ``<user>.jsonl`` files.
        scheme: the labels' scheme; inferred when omitted.
        separator: the texts are both in ``text``, joined by this; else the second text is
            the column ``text2``.
        text2: the column of the second text (without ``separator``).
        annotator: in a file, whose judgment the labels are (none when omitted).
        allow_unsafe_text: keep texts with NUL characters or lone surrogates.

    Raises:
        DataFormatError: naming the file, line and field: E151 a line without ``text`` or
            a ``text`` without the separator, E152 several labels for one pair, E153 a pair
            with other texts in two users' files, E106 a value of the wrong type.
    """
    target = Path(path)
    if target.is_dir():
        files = sorted(target.glob("*.jsonl"))
        if not files:
            raise DataFormatError(Errors.E143_user_jsonl_files, path=target)
        users = [(f, f.stem) for f in files]
    else:
        users = [(target, annotator)]
    order: list[str] = []
    found: dict[str, interchange.Found] = {}
    for file, user in users:
        for pair, where, labels in _records(file, separator, text2, allow_unsafe_text):
            label = labels[0] if labels else None
            item = found.get(pair.id)
            if item is None:
                given = user is None
                item = interchange.Found(
                    pair.replace(label=label if given else None), where, "label"
                )
                item.label_given = given
                found[pair.id] = item
                order.append(pair.id)
            elif (item.pair.text1, item.pair.text2) != (pair.text1, pair.text2):
                raise where.error(
                    f"pair {pair.id!r} has other texts than in {Path(str(item.where.path)).name} "
                    f"line {item.where.line}",
                    "text",
                    "E153",
                )
            if user is not None and label is not None:
                judgment = Judgment(annotator=user, label=label)
                item.pair = item.pair.replace(judgments=(*item.pair.judgments, judgment))
                item.judgment_fields = [*item.judgment_fields, (where, "label")]
    name = target.name if target.is_dir() else target.stem
    return interchange.finish([found[key] for key in order], scheme, target, name=name)


def _records(path: Path, separator: str | None, text2: str, allow_unsafe_text: bool) -> Any:
    """``(pair, where, labels)`` of each line of one file."""
    for line, record in iter_jsonl(path, strict=True):
        where = Where(path, line)
        if not isinstance(record, dict) or "text" not in record:
            raise where.error(
                "expected a doccano example with 'text' (and 'label')", "text", "E151"
            )
        labels = record.get("label", [])
        if not isinstance(labels, list):
            raise where.error("expected a list of labels", "label")
        labels = list(dict.fromkeys(check.label_value(x, where, "label") for x in labels))
        if len(labels) > 1:
            raise where.error(
                f"several labels {check.quote(labels)}: a pair takes one label (a single-label "
                "project; in a collaborative export each user's file holds their own)",
                "label",
                "E152",
            )
        first, second = record["text"], record.get(text2)
        if separator is not None:
            check.text(first, where, "text")
            if separator not in first:
                raise where.error(
                    f"no separator {separator!r} between the two texts", "text", "E151"
                )
            first, second = first.split(separator, 1)
        fields = {k: v for k, v in record.items() if k not in ("text", text2, "label", "id")}
        fields.pop("pair_id", None)
        if "pair_id" in record:
            fields["id"] = record["pair_id"]
        default = check.identifier(record["id"], where, "id") if "id" in record else None
        pair = interchange.pair_from_fields(
            first,
            second,
            fields,
            where,
            names=("text", "text" if separator is not None else text2),
            default_id=default if default is not None else str(line - 1),
            allow_unsafe_text=allow_unsafe_text,
        )
        yield pair, where, [str(x) for x in labels]


def write_doccano(
    pairs: PairSet, path: str | Path, separator: str | None = None, text2: str = "text2"
) -> Path:
    """Write pairs for doccano, atomically: a ``.jsonl`` file with the pairs' labels, or a
    folder with one ``<annotator>.jsonl`` per annotator (their judgments; all files written
    or none; the folder replaces an earlier doccano folder whole, and a non-empty folder of
    anything else is refused, E141). A file leaves the judgments out, a folder the pairs' own
    labels (read back as the majority), each with a warning."""
    target = Path(path)
    interchange.warn_documents(pairs, target, "doccano")
    if target.suffix == ".jsonl" or target.name.endswith(".jsonl.gz"):
        judged = sum(bool(p.judgments) for p in pairs)
        if judged:
            interchange.warn_lost(
                target, "doccano file", Counter({"judgments (write a folder)": judged})
            )
        lines = [_line(p, p.label, n, separator, text2, target) for n, p in enumerate(pairs, 1)]
        with atomic_write(target) as handle:
            handle.writelines(lines)
        return target
    names = list(dict.fromkeys(j.annotator for p in pairs for j in p.judgments))
    if not names:
        raise DataFormatError(Errors.E120_judgments_write_one, path=target)
    for name in names:
        if not name or "/" in name or name.startswith("."):
            raise DataFormatError(Errors.E120_annotator_name_file.format(name=name), path=target)
    lost: Counter[str] = Counter()
    files = []
    for name in names:
        lines = []
        for n, pair in enumerate(pairs, 1):
            own = [j for j in pair.judgments if j.annotator == name]
            for judgment in own:
                lost.update(interchange.judgment_extras(judgment, ()))
            label = own[-1].label if own else None
            lines.append(_line(pair.replace(label=None), label, n, separator, text2, target))
        files.append((target / f"{name}.jsonl", lines))
    interchange.warn_lost(target, "doccano", lost)
    # the folder is replaced whole: every <user>.jsonl in it is read as a user's judgments
    kind = "a doccano export (<user>.jsonl files)"
    with (
        replace_folder(target, _is_export, kind) as folder,
        atomic_files([folder / f.name for f, _ in files]) as handles,
    ):
        for handle, (_, lines) in zip(handles, files, strict=True):
            handle.writelines(lines)
    return target


def _is_export(folder: Path) -> bool:
    """Whether ``folder`` holds ``<user>.jsonl`` files only (a doccano export)."""
    return all(f.is_file() and f.suffix == ".jsonl" for f in folder.iterdir())


def _line(
    pair: Pair, label: str | None, number: int, separator: str | None, text2: str, path: Path
) -> str:
    fields = interchange.pair_fields(pair.replace(label=None))
    fields["pair_id"] = fields.pop("id")
    if separator is not None:
        if separator in pair.text1 or separator in pair.text2:
            raise DataFormatError(
                Errors.E120_pair_text_holds.format(pair_id=pair.id, separator=separator), path=path
            )
        texts = {"text": pair.text1 + separator + pair.text2}
    else:
        texts = {"text": pair.text1, text2: pair.text2}
    record = {"id": number, **texts, "label": [] if label is None else [label], **fields}
    return interchange.json_line(record, path, f"pair {pair.id!r}") + "\n"

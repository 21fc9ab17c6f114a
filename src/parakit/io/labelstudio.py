"""Label Studio: a project's tasks JSON in and out, and the labeling config to create it.

A task (Label Studio's JSON export, and what it imports)::

    {"id": 1,
     "data": {"text1": "...", "text2": "...", "id": "p1", "label": "4", ...},
     "annotations": [{"completed_by": 10, "was_cancelled": false, "ground_truth": false,
                      "created_at": "2026-11-02T10:00:00Z",
                      "result": [{"from_name": "label", "to_name": "text1", "type": "choices",
                                  "value": {"choices": ["4"]}}]}],
     "predictions": [{"model_version": "tfidf", "score": 0.8, "result": [...]}]}

The pair's texts are ``data.text1`` and ``data.text2`` (``text1=``/``text2=`` name other keys);
its other keys are the pair's own fields (:func:`parakit.io.interchange.pair_fields`), and keys
a project added become metadata. Each annotation that is not cancelled is one judgment: the
annotator is ``completed_by`` (a user id, or the e-mail of the older ``{"id", "email"}`` form),
the label the one choice of the Choices control (``choice=`` names it when a config has
several), the comment a TextArea named ``comment``. Predictions are kept in
``metadata["predictions"]`` as ``{"model_version", "label", "score"}``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from parakit.io import validate as check
from parakit.io._open import load_json
from parakit.io.atomic import atomic_write
from parakit.io.interchange import (
    Found,
    finish,
    json_line,
    judgment_extras,
    pair_fields,
    pair_from_fields,
    require_label,
    warn_documents,
    warn_lost,
)
from parakit.io.validate import Where
from parakit.labels import LabelScheme, get_scheme
from parakit.schema import Judgment, Pair, PairSet

#: The TextArea whose text is a judgment's comment.
COMMENT = "comment"


def read_label_studio(
    path: str | Path,
    scheme: str | LabelScheme | None = None,
    text1: str = "text1",
    text2: str = "text2",
    choice: str | None = None,
    allow_unsafe_text: bool = False,
) -> PairSet:
    """Read a Label Studio JSON export (a list of tasks) into pairs with judgments.

    Args:
        path: the exported ``.json`` file.
        scheme: the labels' scheme; inferred from the labels when omitted
            (:data:`~parakit.io.interchange.INFERRED_SCHEMES`).
        text1, text2: the keys of ``data`` holding the two texts.
        choice: the ``from_name`` of the Choices control with the label (needed only when
            the results hold several Choices controls).
        allow_unsafe_text: keep texts with NUL characters or lone surrogates.

    Raises:
        DataFormatError: naming the file, the task (record) and the field: E151 not a list of
            tasks, E152 an annotation whose label cannot be read, E106 a value of the wrong
            type.

    Example:
        >>> pairs = read_label_studio("tests/io/data/label-studio-export.json")
        >>> [(j.annotator, j.label) for j in pairs[1].judgments]
        [('10', '3'), ('11', '4')]
    """
    tasks = load_json(path, jsonl_hint="Label Studio exports one JSON list of tasks")
    if isinstance(tasks, dict):  # one task, as Label Studio also imports it
        tasks = [tasks]
    if not isinstance(tasks, list):
        raise Where(path).error(
            "expected a list of Label Studio tasks (the project's JSON export)", None, "E151"
        )
    found = []
    ids = check.UniqueIds()
    for number, task in enumerate(tasks, start=1):
        where = Where(path, number, unit="record")
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            raise where.error(
                "expected a task object with a 'data' object (Label Studio's JSON export)",
                "data",
                "E151",
            )
        data = task["data"]
        check.json_value(data, where, "data", allow_unsafe_text)
        fields = {k: v for k, v in data.items() if k not in (text1, text2)}
        default_id = check.identifier(task["id"], where, "id") if "id" in task else str(number - 1)
        pair = pair_from_fields(
            data.get(text1),
            data.get(text2),
            fields,
            where,
            names=(f"data.{text1}", f"data.{text2}"),
            default_id=default_id,
            allow_unsafe_text=allow_unsafe_text,
        )
        ids.add(pair.id, where, "data.id")
        judgments, names = _judgments(task.get("annotations"), choice, where)
        predictions = _predictions(task.get("predictions"), choice, where)
        metadata = {**pair.metadata, "predictions": predictions} if predictions else pair.metadata
        found.append(
            Found(
                pair.replace(judgments=tuple(judgments), metadata=metadata),
                where,
                "data.label",
                names,
                label_given="label" in fields,
            )
        )
    return finish(found, scheme, path)


def _judgments(
    annotations: Any, choice: str | None, where: Where
) -> tuple[list[Judgment], list[tuple[Where, str]]]:
    if annotations is None:
        return [], []
    if not isinstance(annotations, list):
        raise where.error("expected a list of annotations", "annotations")
    judgments, names = [], []
    for n, annotation in enumerate(annotations):
        name = f"annotations[{n}]"
        if not isinstance(annotation, dict):
            raise where.error("expected an annotation object", name)
        if check.boolean(annotation.get("was_cancelled", False), where, f"{name}.was_cancelled"):
            continue  # skipped by the annotator: no judgment
        label = _choice(annotation.get("result"), choice, where, f"{name}.result")
        if label is None:
            continue
        if "completed_by" not in annotation:
            raise where.error("missing field", f"{name}.completed_by")
        judgments.append(
            Judgment(
                annotator=_annotator(annotation["completed_by"], where, f"{name}.completed_by"),
                label=label,
                time=check.optional_text(annotation.get("created_at"), where, f"{name}.created_at"),
                gold=check.boolean(
                    annotation.get("ground_truth", False), where, f"{name}.ground_truth"
                ),
                comment=_comment(annotation.get("result"), where, f"{name}.result"),
            )
        )
        names.append((where, f"{name}.result"))
    return judgments, names


def _predictions(predictions: Any, choice: str | None, where: Where) -> list[dict[str, Any]]:
    if predictions is None:
        return []
    if not isinstance(predictions, list):
        raise where.error("expected a list of predictions", "predictions")
    out = []
    for n, prediction in enumerate(predictions):
        name = f"predictions[{n}]"
        if not isinstance(prediction, dict):
            raise where.error("expected a prediction object", name)
        label = _choice(prediction.get("result"), choice, where, f"{name}.result")
        kept: dict[str, Any] = {"label": label}
        if prediction.get("model_version") is not None:
            kept["model_version"] = check.identifier(
                prediction["model_version"], where, f"{name}.model_version"
            )
        if prediction.get("score") is not None:
            kept["score"] = check.number(prediction["score"], where, f"{name}.score")
        out.append(kept)
    return out


def _choice(result: Any, choice: str | None, where: Where, name: str) -> str | None:
    """The one choice of the Choices control in a result list (None when it has none)."""
    if result is None:
        return None
    if not isinstance(result, list):
        raise where.error("expected a list of results", name)
    regions = [r for r in result if isinstance(r, dict) and r.get("type") == "choices"]
    controls = sorted({str(r.get("from_name")) for r in regions})
    if choice is not None:
        regions = [r for r in regions if r.get("from_name") == choice]
    elif len(controls) > 1:
        raise where.error(
            f"results of several Choices controls ({', '.join(controls)}); name the one "
            "with the pair's label (choice=NAME; CLI: -O choice=NAME)",
            name,
            "E152",
        )
    if not regions:
        return None
    value = regions[0].get("value")
    choices = value.get("choices") if isinstance(value, dict) else None
    if not isinstance(choices, list) or len(choices) != 1:
        raise where.error(
            f"expected one choice in value.choices, got {check.quote(choices)}: a pair takes "
            'one label (choice="single" in the config)',
            f"{name}.value.choices",
            "E152",
        )
    return str(check.label_value(choices[0], where, f"{name}.value.choices"))


def _comment(result: Any, where: Where, name: str) -> str | None:
    for region in result or ():
        if isinstance(region, dict) and region.get("from_name") == COMMENT:
            value = region.get("value")
            texts = value.get("text") if isinstance(value, dict) else None
            if not isinstance(texts, list):
                raise where.error("expected value.text, a list of texts", f"{name}.value.text")
            return "\n".join(check.text(t, where, f"{name}.value.text") for t in texts)
    return None


def _annotator(value: Any, where: Where, name: str) -> str:
    """A user id, or the e-mail of the older ``{"id": ..., "email": ...}`` form."""
    if isinstance(value, dict):
        if value.get("email"):
            return check.text(value["email"], where, f"{name}.email")
        if "id" in value:
            return check.identifier(value["id"], where, f"{name}.id")
        raise where.error("expected a user id or an object with 'id' or 'email'", name)
    return check.identifier(value, where, name)


def write_label_studio(
    pairs: PairSet,
    path: str | Path,
    text1: str = "text1",
    text2: str = "text2",
    choice: str = "label",
) -> Path:
    """Write pairs as Label Studio tasks (JSON), atomically: each judgment an annotation of
    its annotator, the pair's own fields in ``data``.

    Annotators named by a number (Label Studio user ids) are written as that id; others as
    ``{"id": N, "email": NAME}`` (the older export form), so their names come back. A
    judgment's label, time, gold flag and comment are kept; its ``unsure`` flag, rewrite and
    metadata, and the pairs' spans and documents, have no place in a task and are left out
    with a warning.
    """
    target = Path(path)
    warn_documents(pairs, target, "Label Studio")
    users = _user_ids(pairs)
    tasks, lost = [], Counter[str]()
    for number, pair in enumerate(pairs, start=1):
        annotations = []
        for judgment in pair.judgments:
            label = require_label(judgment, pair, target, "Label Studio")
            lost.update(judgment_extras(judgment, ("time", "gold", "comment")))
            result = [_region(choice, text1, "choices", {"choices": [label]})]
            if judgment.comment is not None:
                result.append(_region(COMMENT, text1, "textarea", {"text": [judgment.comment]}))
            annotation: dict[str, Any] = {
                "id": len(annotations) + 1,
                "completed_by": users[judgment.annotator],
                "result": result,
                "was_cancelled": False,
                "ground_truth": judgment.gold,
            }
            if judgment.time is not None:
                annotation["created_at"] = judgment.time
            annotations.append(annotation)
        metadata = dict(pair.metadata)
        predictions = metadata.pop("predictions", None)
        fields = pair_fields(pair.replace(metadata=metadata))
        task: dict[str, Any] = {
            "id": number,
            "data": {text1: pair.text1, text2: pair.text2, **fields},
            "annotations": annotations,
        }
        if predictions:
            task["predictions"] = [_prediction(p, choice, text1, pair, target) for p in predictions]
        tasks.append(task)
    warn_lost(target, "Label Studio", lost)
    text = json_line(tasks, target, "a task")  # type: ignore[arg-type]
    with atomic_write(target) as handle:
        handle.write(text + "\n")
    return target


def _region(name: str, to_name: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"from_name": name, "to_name": to_name, "type": kind, "value": value}


def _prediction(prediction: Any, choice: str, text1: str, pair: Pair, path: Path) -> dict[str, Any]:
    if not isinstance(prediction, dict) or prediction.get("label") is None:
        raise Where(path).error(
            f"pair {pair.id!r}: metadata['predictions'] must hold objects with a 'label'",
            "predictions",
            "E120",
        )
    out = {k: prediction[k] for k in ("model_version", "score") if k in prediction}
    region = _region(choice, text1, "choices", {"choices": [prediction["label"]]})
    return {**out, "result": [region]}


def _user_ids(pairs: PairSet) -> dict[str, int | dict[str, Any]]:
    """``completed_by`` of each annotator: the number of a numeric name (ASCII digits, no
    leading zero: what reads back as the same name), else a free id with the name as e-mail."""
    names = list(dict.fromkeys(j.annotator for p in pairs for j in p.judgments))
    numeric = {n for n in names if n.isascii() and n.isdigit() and str(int(n)) == n}
    taken = {int(n) for n in numeric}
    out: dict[str, int | dict[str, Any]] = {}
    free = (i for i in range(1, len(names) + len(taken) + 2) if i not in taken)
    for name in names:
        out[name] = int(name) if name in numeric else {"id": next(free), "email": name}
    return out


def labeling_config(
    scheme: str | LabelScheme = "turku",
    text1: str = "text1",
    text2: str = "text2",
    choice: str = "label",
    comment: bool = True,
) -> str:
    """The Label Studio labeling config (XML) of a pair task: both texts, one single-choice
    control with the scheme's labels and, with ``comment``, a comment box, named as
    :func:`read_label_studio` reads them.

    Example:
        >>> print(labeling_config("binary", comment=False), end="")
        <View>
          <Header value="Text 1"/>
          <Text name="text1" value="$text1"/>
          <Header value="Text 2"/>
          <Text name="text2" value="$text2"/>
          <Choices name="label" toName="text1" choice="single" showInline="true">
            <Choice value="0"/>
            <Choice value="1"/>
          </Choices>
        </View>
    """
    labels = get_scheme(scheme).values
    lines = [
        "<View>",
        '  <Header value="Text 1"/>',
        f"  <Text name={quoteattr(text1)} value={quoteattr('$' + text1)}/>",
        '  <Header value="Text 2"/>',
        f"  <Text name={quoteattr(text2)} value={quoteattr('$' + text2)}/>",
        f'  <Choices name={quoteattr(choice)} toName={quoteattr(text1)} choice="single" '
        'showInline="true">',
        *(f"    <Choice value={quoteattr(label)}/>" for label in labels),
        "  </Choices>",
    ]
    if comment:
        lines.append(
            f'  <TextArea name="{COMMENT}" toName={quoteattr(text1)} placeholder="Comment" '
            'maxSubmissions="1"/>'
        )
    return "\n".join([*lines, "</View>"]) + "\n"

"""Model folders that others can load: a model card and the sentence-transformers layout.

* :func:`write_model_card` writes ``README.md`` next to a saved model (``identify train``,
  ``embed train``): the data it learned from, the command that made it, the development
  metrics, the label mapping and the intended use, with YAML front matter for the Hub.
* :func:`write_cross_encoder_layout` adds the two small files with which
  ``sentence_transformers.CrossEncoder(folder)`` opens a parakit cross-encoder folder as it is
  (``modules.json`` pointing at the Hugging Face model in ``network/``): no second copy of the
  weights, and parakit's own ``parakit_model.json`` stays beside them.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> path = write_model_card(folder, title="tfidf", model_type="tfidf",
    ...                         classes=["0", "1"], positive=["1"], data={"train": "t.jsonl"})
    >>> path.read_text().startswith("---")
    True
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from parakit.io.atomic import atomic_files, atomic_write
from parakit.io.dataset import is_hf_spec, parse_hf_spec
from parakit.offline import hub_model_id, model_label

#: ``modules.json`` type of the sentence-transformers module that wraps a HF classification model
_ST_TRANSFORMER = "sentence_transformers.base.modules.transformer.Transformer"


def write_cross_encoder_layout(folder: str | Path, network: str, max_length: int) -> None:
    """Make ``folder`` (with a ``transformers`` sequence-classification model in
    ``folder/network``) open with ``sentence_transformers.CrossEncoder(folder)``.

    Writes ``modules.json`` and ``config_sentence_transformers.json`` in ``folder`` and
    ``sentence_bert_config.json`` (task and ``max_seq_length`` = ``max_length``, the truncation
    parakit uses) in the network folder. ``CrossEncoder.predict(pairs, apply_softmax=True)``
    then gives the probabilities of :meth:`~parakit.models.base.PairClassifier.predict_proba`
    in the order of ``id2label`` (the classifier's ``classes_``).
    """
    root = Path(folder)
    modules = [{"idx": 0, "name": "0", "path": network, "type": _ST_TRANSFORMER}]
    # no activation_fn: sentence-transformers then returns logits for >1 labels (its default);
    # apply_softmax=True gives probabilities (torch's Softmax() without dim warns on every call)
    config = {"model_type": "CrossEncoder", "prompts": {}, "default_prompt_name": None}
    module = {"transformer_task": "sequence-classification", "max_seq_length": int(max_length)}
    with atomic_files(
        [
            root / "modules.json",
            root / "config_sentence_transformers.json",
            root / network / "sentence_bert_config.json",
        ]
    ) as handles:
        for handle, data in zip(handles, (modules, config, module), strict=True):
            json.dump(data, handle, indent=2)


def _metric_rows(metrics: Mapping[str, Any]) -> list[tuple[str, float | int]]:
    """The headline numbers of an evaluation report (accuracy, F1s, AP) as (name, value);
    counts (``n``, supports) stay integers."""

    def number(value: Any) -> float | int | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return value if isinstance(value, int) else float(value)

    candidates = [(key, metrics.get(key)) for key in ("n", "accuracy")]
    for group in ("positive", "macro", "weighted"):
        values = metrics.get(group)
        if isinstance(values, Mapping):
            candidates += [
                (f"{group} {name}", values.get(name)) for name in ("precision", "recall", "f1")
            ]
    candidates += [(key, value) for key, value in metrics.items() if key not in ("n", "accuracy")]
    return [(name, value) for name, raw in candidates if (value := number(raw)) is not None]


def _shown(value: float | int) -> str:
    """A figure of the card: a count as an integer (``555``), a score with four decimals."""
    return str(value) if isinstance(value, int) else f"{value:.4f}"


#: metric rows of a classification report -> (Hub metric type, display name, config)
_INDEX_METRICS = {
    "accuracy": ("accuracy", "Accuracy", None),
    "positive precision": ("precision", "Precision (paraphrase)", None),
    "positive recall": ("recall", "Recall (paraphrase)", None),
    "positive f1": ("f1", "F1 (paraphrase)", None),
    "macro f1": ("f1", "Macro F1", "macro"),
    "weighted f1": ("f1", "Weighted F1", "weighted"),
}


def model_index(
    name: str,
    metrics: Mapping[str, Any],
    dataset: Mapping[str, str],
    task: str = "text-classification",
) -> list[dict[str, Any]]:
    """The ``model-index`` of a card: one result, the scores of ``metrics`` on ``dataset``
    (``name``, ``type`` = a Hub dataset id or the file's name, ``split``), in the layout
    ``huggingface_hub.ModelCardData`` reads into ``eval_results``.

    Example:
        >>> model_index("m", {"n": 5, "accuracy": 0.8}, {"name": "dev", "type": "dev"})[0][
        ...     "results"][0]["metrics"]
        [{'type': 'accuracy', 'value': 0.8, 'name': 'Accuracy'}]
    """
    entries = []
    for row, value in _metric_rows(metrics):
        if isinstance(value, int) or row == "n":
            continue  # counts are not scores
        if row not in _INDEX_METRICS and " " in row:
            continue  # the macro/weighted precision and recall stay in the card's table
        plain = row.removeprefix("dev_")  # an evaluator's prefix (embed train's history)
        kind, label, config = _INDEX_METRICS.get(row, (plain, plain, None))
        entry: dict[str, Any] = {"type": kind, "value": round(float(value), 6), "name": label}
        if config:
            entry["config"] = config
        entries.append(entry)
    task_name = "Paraphrase identification" if task == "text-classification" else "Paraphrase"
    data = {key: dataset[key] for key in ("name", "type", "split") if dataset.get(key)}
    return [
        {
            "name": name,
            "results": [
                {"task": {"type": task, "name": task_name}, "dataset": data, "metrics": entries}
            ],
        }
    ]


def write_model_card(
    folder: str | Path,
    *,
    title: str,
    model_type: str,
    classes: Sequence[str] = (),
    positive: Sequence[str] = (),
    scheme: Mapping[str, Any] | str | None = None,
    data: Mapping[str, Any] | None = None,
    command: str | None = None,
    metrics: Mapping[str, Any] | None = None,
    base_model: str | None = None,
    language: str | None = None,
    license: str | None = None,
    intended_use: str | None = None,
    usage: str | None = None,
    library: str | None = None,
    pipeline_tag: str = "text-classification",
    datasets: Sequence[str] = (),
    eval_dataset: Mapping[str, str] | None = None,
) -> Path:
    """Write ``folder/README.md``, the model card (front matter through ``huggingface_hub``).

    Args:
        folder: the saved model folder.
        title: the card's heading.
        model_type: parakit's model type (``cross-encoder``, ``tfidf``, ``bi-encoder``...).
        classes: the labels in the order of the model's outputs (``classes_``).
        positive: the labels counted as paraphrase by the binary reading.
        scheme: the label scheme spec.
        data: what it was trained on, e.g. ``{"train": "train.jsonl (800 pairs)", ...}``.
        command: the command line that made the model (the recipe).
        metrics: the development metrics (an evaluation report's ``metrics``, or a flat dict).
        base_model: the encoder it started from; its Hub id goes into ``base_model`` (an
            offline alias as the Hub id of the same model, ``offline-minilm`` as
            ``sentence-transformers/all-MiniLM-L6-v2``; a local folder has none).
        language: the language code(s) of the training pairs (``en`` or ``en,fi,ja``).
        license: a Hub license id (E142 for an id the Hub does not know).
        intended_use: a paragraph; a default one is written from the labels when omitted.
        usage: a code block showing how to load and apply the model.
        library: ``library_name`` of the front matter (``sentence-transformers``...).
        pipeline_tag: the Hub task of the model.
        datasets: Hub ids of the datasets it learned from (``datasets`` of the front matter).
        eval_dataset: what ``metrics`` were measured on (``name``, ``type``: a Hub dataset id
            or the file's name, ``split``): with ``metrics``, the card's ``model-index``.

    Returns:
        the path of the card.
    """
    from parakit.io.hub import check_license

    if license is not None:
        check_license(license, folder)
    hub_base = hub_model_id(base_model) if base_model else None
    languages = [code.strip() for code in (language or "").split(",") if code.strip()]
    front = {
        "language": languages or None,  # a multilingual set names its languages "en,fi,ja"
        "license": license,
        "library_name": library,
        "pipeline_tag": pipeline_tag,
        "base_model": hub_base,
        "datasets": list(datasets) or None,
        "tags": ["parakit", "paraphrase", model_type],
    }
    if metrics and eval_dataset:
        front["model-index"] = model_index(title.split(":")[0], metrics, eval_dataset, pipeline_tag)
    lines = [f"# {title}", ""]
    lines.append(
        f"A paraphrase {'classifier' if classes else 'model'} (`{model_type}`) trained with "
        "parakit." + (f" It starts from `{model_label(base_model)}`." if base_model else "")
    )
    lines += ["", "## Data", ""]
    for key, value in (data or {}).items():
        lines.append(f"- **{key}**: {value}")
    if not data:
        lines.append("Not recorded.")
    if command:
        lines += ["", "## Recipe", "", "```bash", command, "```"]
    lines += ["", "## Development metrics", ""]
    rows = _metric_rows(metrics or {})
    if rows:
        lines += ["| metric | value |", "|---|---|"]
        lines += [f"| {name} | {_shown(value)} |" for name, value in rows]
    else:
        lines.append("No development set was given.")
    if classes:
        lines += ["", "## Labels", ""]
        if scheme is not None:
            lines.append(f"Label scheme: `{json.dumps(scheme)}`.")
            lines.append("")
        lines += ["| output | label | paraphrase |", "|---|---|---|"]
        lines += [
            f"| {i} | `{label}` | {'yes' if label in positive else 'no'} |"
            for i, label in enumerate(classes)
        ]
    lines += ["", "## Intended use", ""]
    lines.append(
        intended_use
        or "Deciding whether two statements are paraphrases (P(paraphrase) = the summed "
        "probability of the labels marked *yes* above), in the language and domain of the "
        "training data. Scores outside that domain are not calibrated; check them on a labelled "
        "sample before mining or filtering at scale."
    )
    if usage:
        lines += ["", "## Usage", "", usage.strip()]
    card = f"---\n{front_matter(front)}\n---\n\n" + "\n".join(lines) + "\n"
    path = Path(folder) / "README.md"
    with atomic_write(path) as handle:
        handle.write(card)
    return path


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]*")


def card_datasets(paths: Any) -> list[str]:
    """The Hub dataset ids among input paths (``hf:ID...`` that is not a local folder): the
    ``datasets`` of a model card."""
    ids = []
    for path in paths if isinstance(paths, (list, tuple)) else [paths]:
        if path is not None and is_hf_spec(path):
            source = parse_hf_spec(path)[0]
            if not Path(source).expanduser().exists() and source not in ids:
                ids.append(source)
    return ids


def eval_dataset(path: Any) -> dict[str, str]:
    """``name``, ``type`` and ``split`` of the data a card's metrics were measured on: a Hub
    dataset's id, config and split, or a file's name."""
    if is_hf_spec(path):
        source, config, split = parse_hf_spec(path)
        name = Path(source).name if Path(source).expanduser().exists() else source
        return {"name": name + (f" ({config})" if config else ""), "type": name,
                "split": split or "validation"}  # fmt: skip
    return {"name": Path(str(path)).name, "type": Path(str(path)).stem, "split": "validation"}


def _describe_data(paths: Any, pairs: Any) -> str:
    names = ", ".join(f"`{Path(p).name}`" for p in (paths if isinstance(paths, list) else [paths]))
    counts = pairs.label_counts()
    shown = ", ".join(f"`{k}` {v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0])))
    return f"{names}: {len(pairs)} pairs ({shown})" + (f", language `{pairs.lang}`" if pairs.lang
                                                           else "")  # fmt: skip


def classifier_card(
    classifier: Any,
    folder: Path,
    *,
    command: str,
    train_paths: list[Path],
    pairs: Any,
    dev: Path | None = None,
    dev_pairs: Any = None,
    metrics: dict[str, Any] | None = None,
    reading: str | None = None,
    name: str | None = None,
    license: str | None = None,
) -> Path:
    """The model card of a trained classifier's folder, composed from the estimator (its
    classes, positive classes under ``reading``, base model, scheme), the data it learned from
    and ``command``, the line that reproduces it (``name``: the folder's name in the card's
    examples, when ``folder`` is the temporary folder it is written in)."""
    classes = [str(c) for c in classifier.classes_]
    try:
        mask = classifier.positive_mask(reading)
        positive = [c for c, m in zip(classes, mask, strict=True) if m]
    except Exception:  # a scheme without a binary reading (Likert): no paraphrase column
        positive = []
    base = getattr(classifier, "model_name_or_path", None)
    data = {"train": _describe_data(train_paths, pairs)}
    if dev is not None and dev_pairs is not None:
        data["dev"] = _describe_data(dev, dev_pairs)
    folder_name = name or folder.name
    if classifier.model_type == "cross-encoder":
        usage = (
            "```python\nfrom sentence_transformers import CrossEncoder\n\n"
            f'model = CrossEncoder("{folder_name}")\n'
            'proba = model.predict([("text one", "text two")], apply_softmax=True)\n'
            "# columns in the order of the Labels table\n```\n\n"
            "`parakit identify predict --precision fp32` gives the same numbers (its default "
            "`auto` computes in bf16 where the hardware supports it).\n\n"
            "```python\nfrom parakit.models.base import load_model\n\n"
            f'p = load_model("{folder_name}").paraphrase_proba(["text one"], ["text two"])\n```'
        )
        library = "sentence-transformers"
    else:
        usage = (
            "```python\nfrom parakit.models.base import load_model\n\n"
            f'model = load_model("{folder_name}")\n'
            'p = model.paraphrase_proba(["text one"], ["text two"])\n```'
        )
        library = None
    return write_model_card(
        folder,
        title=f"{folder_name}: {classifier.model_type} paraphrase classifier",
        model_type=classifier.model_type,
        classes=classes,
        positive=positive,
        scheme=getattr(classifier, "scheme_", None),
        data=data,
        command=command,
        metrics=metrics,
        base_model=str(base) if isinstance(base, (str, Path)) and base else None,
        language=pairs.lang,
        usage=usage,
        library=library,
        license=license,
        datasets=card_datasets([*train_paths, dev]),
        eval_dataset=eval_dataset(dev) if dev is not None else None,
    )


def biencoder_card(
    model: Any,
    folder: Path,
    *,
    command: str,
    train_path: Path,
    pairs: Any,
    dev_pairs: Any = None,
    name: str | None = None,
    license: str | None = None,
    dev: Path | None = None,
) -> Path:
    """The model card of a trained bi-encoder's folder (replaces the sentence-transformers
    one; ``name``: the folder's name in the card, when ``folder`` is a temporary folder)."""
    folder_name = name or folder.name
    history = getattr(model, "history_", []) or []
    data = {"train": _describe_data(train_path, pairs)}
    if dev_pairs is not None:
        data["dev"] = f"{len(dev_pairs)} pairs"
    usage = (
        "```python\nfrom sentence_transformers import SentenceTransformer\n\n"
        f'model = SentenceTransformer("{folder_name}")\n'
        'embeddings = model.encode(["text one", "text two"], normalize_embeddings=True)\n```'
    )
    return write_model_card(
        folder,
        title=f"{folder_name}: paraphrase bi-encoder",
        model_type="bi-encoder",
        data=data,
        command=command,
        metrics=history[-1] if history else None,
        base_model=str(model.model_name_or_path or "") or None,
        language=pairs.lang,
        usage=usage,
        library="sentence-transformers",
        pipeline_tag="sentence-similarity",
        license=license,
        datasets=card_datasets([train_path, dev]),
        eval_dataset=eval_dataset(dev) if dev is not None else None,
        intended_use="Embedding statements so that paraphrases lie close (cosine similarity): "
        "nearest-neighbour candidate mining and retrieval in the language and domain of the "
        "training pairs. Check a similarity threshold on labelled pairs before using it as a "
        "classifier.",
    )


def front_matter(data: Mapping[str, Any]) -> str:
    """The YAML front matter of a card (no ``---`` lines) as ``huggingface_hub``'s
    ``ModelCardData.to_yaml`` writes it: keys sorted at the top, None left out, lists one item a
    line, mappings (``model-index``) nested; written here so that a card needs no Hub library (a
    light model saved on a core install). Strings that are not plain words are JSON-quoted,
    which YAML reads as they are.

    Example:
        >>> print(front_matter({"tags": ["a"], "model-index": [{"name": "m", "results": []}]}))
        model-index:
        - name: m
          results: []
        tags:
        - a
    """

    def scalar(value: Any) -> str:
        if isinstance(value, bool) or value is None:
            return json.dumps(value)
        if isinstance(value, (int, float)):
            return repr(value)
        text = str(value)
        plain = _PLAIN.fullmatch(text) and text.lower() not in ("yes", "no", "on", "off", "null")
        return text if plain else json.dumps(text, ensure_ascii=False)

    def block(value: Any, indent: str) -> list[str]:
        """The lines of a mapping's entries or a list's items at ``indent``."""
        out: list[str] = []
        if isinstance(value, Mapping):
            for key, item in value.items():
                if item is None:
                    continue
                if isinstance(item, (Mapping, list, tuple)) and item:
                    out.append(f"{indent}{key}:")
                    out += block(item, indent + ("" if isinstance(item, (list, tuple)) else "  "))
                else:
                    out.append(f"{indent}{key}: {'[]' if item == [] else scalar(item)}")
            return out
        for item in value:
            if isinstance(item, (Mapping, list, tuple)) and item:
                inner = block(item, indent + "  ")
                out.append(f"{indent}- {inner[0].lstrip()}")
                out += inner[1:]
            else:
                out.append(f"{indent}- {scalar(item)}")
        return out

    return "\n".join(block({key: data[key] for key in sorted(data)}, ""))


__all__ = ["front_matter", "model_index", "write_cross_encoder_layout", "write_model_card"]

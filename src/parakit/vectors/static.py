"""Static sentence encoders: a token-embedding table distilled from a transformer encoder.

A static encoder embeds a sentence as the (weighted) mean of its tokens' vectors, with no
transformer pass: 100x faster than its teacher on a CPU, at some cost in quality (the
distillation of Model2Vec: every vocabulary token is embedded by the teacher once, the table is
reduced by PCA and weighted by Zipf's law). :func:`distill_static` writes it as a
sentence-transformers folder (one ``StaticEmbedding`` module), so every parakit stage that takes
an encoder (``mine run -m DIR``, ``build knn``, ``embed evaluate``) takes it unchanged.

:func:`gold_recall` measures what mining needs of it: hide gold paraphrase pairs in a pool of
sentences and count how often a sentence's partner is among its k nearest neighbours.

Example:
    >>> from parakit.vectors.static import distill_static        # doctest: +SKIP
    >>> distill_static("offline-minilm", "static-minilm")          # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, VectorError, require_extra

#: the marker file of a distilled static encoder (its teacher and settings)
STATIC_FILE = "parakit_static.json"


def is_static_encoder(path: str | Path) -> bool:
    """Whether ``path`` is a sentence-transformers folder whose first module is a
    ``StaticEmbedding`` (a distilled static encoder, ours or anyone's), without loading it;
    :func:`is_static_model` asks the same of a loaded model (the encoders use that one)."""
    modules = Path(path) / "modules.json"
    if not modules.is_file():
        return False
    try:
        entries = json.loads(modules.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(entries) and str(entries[0].get("type", "")).endswith("StaticEmbedding")


def is_static_model(model: Any) -> bool:
    """Whether a loaded ``SentenceTransformer`` is a static encoder (its first module is a
    ``StaticEmbedding``): the encoders run it in fp32 and without autocast, which its embedding
    bag does not take."""
    try:
        return type(model[0]).__name__ == "StaticEmbedding"
    except (TypeError, IndexError, KeyError):
        return False


def _is_own(path: Path) -> bool:
    return (path / STATIC_FILE).is_file()


def distill_static(
    model: str | Path,
    output: str | Path,
    *,
    pca_dims: int | None = 256,
    device: str = "cpu",
) -> dict[str, Any]:
    """Distil a static encoder from ``model`` into the folder ``output`` (written whole, or not
    at all).

    Args:
        model: the teacher: an offline alias (``offline-minilm``), a local sentence-transformers
            folder or a Hugging Face id.
        output: the folder to write (an earlier static encoder there is replaced; any other
            non-empty folder is refused).
        pca_dims: dimensions kept by PCA (None: the teacher's own).
        device: where the teacher embeds the vocabulary (``cpu`` or ``cuda``).

    Returns:
        What ``parakit_static.json`` records: the teacher, its dimension and the table's shape.

    Raises:
        MissingExtraError: E090 Model2Vec is not installed (``pip install 'parakit[static]'``).
        VectorError: E806 the teacher cannot be loaded.
    """
    distill = require_extra(
        "model2vec.distill", extra="static", needed_for="distilling a static encoder"
    ).distill
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding

    from parakit.io.atomic import replace_folder
    from parakit.offline import model_label, resolve_model

    source = resolve_model(model)
    try:
        static_model = distill(model_name=source, pca_dims=pca_dims, device=device)
    except (OSError, ValueError) as err:
        raise VectorError(
            Errors.E806_distil_sentence_encoder.format(model=str(model), err=err)
        ) from None
    module = StaticEmbedding(
        static_model.tokenizer, embedding_weights=np.asarray(static_model.embedding)
    )
    encoder = SentenceTransformer(modules=[module], device="cpu")
    info = {
        "teacher": model_label(model),
        "pca_dims": pca_dims,
        "dim": int(module.embedding.embedding_dim),
        "vocabulary": int(module.embedding.num_embeddings),
        "method": "model2vec",
    }
    with replace_folder(Path(output), _is_own, "a static encoder folder") as folder:
        encoder.save(str(folder))
        (folder / STATIC_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        (folder / "README.md").write_text(static_card(info), encoding="utf-8")
    return info


def record_recall(folder: str | Path, recall: dict[str, Any]) -> None:
    """Add a measured gold recall (:func:`gold_recall`, teacher beside student) to the static
    encoder's ``parakit_static.json`` and its model card."""
    from parakit.io.atomic import atomic_write

    folder = Path(folder)
    info = json.loads((folder / STATIC_FILE).read_text(encoding="utf-8"))
    info["gold_recall"] = recall
    with atomic_write(folder / STATIC_FILE) as handle:
        handle.write(json.dumps(info, indent=2) + "\n")
    with atomic_write(folder / "README.md") as handle:
        handle.write(static_card(info))


def static_card(info: dict[str, Any]) -> str:
    """The model card of a static encoder: its teacher, how it was made and, when measured,
    its gold recall against the teacher."""
    lines = [
        "---",
        "library_name: sentence-transformers",
        "pipeline_tag: sentence-similarity",
        "tags:",
        "- sentence-transformers",
        "- static-embeddings",
        "- model2vec",
        "- parakit",
        "---",
        "",
        f"# Static encoder distilled from {info['teacher']}",
        "",
        f"A token-embedding table ({info['vocabulary']} tokens x {info['dim']} dimensions) "
        f"distilled from `{info['teacher']}` with Model2Vec ({_reduction(info)}, Zipf "
        "weighting) by `parakit embed distill-static`. A sentence is the mean of its tokens' "
        "vectors: no transformer pass.",
        "",
    ]
    recall = info.get("gold_recall")
    if recall:
        ks = sorted(int(k) for k in recall["teacher"])
        lines += [
            "## Gold recall against the teacher",
            "",
            f"{recall['pairs']} gold paraphrase pairs (`{recall['source']}`) hidden in a pool of "
            f"{recall['pool']} sentences: the share of pairs whose partner is among a "
            "sentence's k nearest neighbours (cosine).",
            "",
            "| encoder | " + " | ".join(f"recall@{k}" for k in ks) + " |",
            "|---|" + "---:|" * len(ks),
            "| teacher | " + " | ".join(f"{recall['teacher'][str(k)]:.3f}" for k in ks) + " |",
            "| static | " + " | ".join(f"{recall['static'][str(k)]:.3f}" for k in ks) + " |",
            "",
        ]
    return "\n".join(lines)


def _reduction(info: dict[str, Any]) -> str:
    """What PCA did: Model2Vec keeps the teacher's dimension when ``pca_dims`` asks for more."""
    asked, dim = info.get("pca_dims"), info["dim"]
    if asked is None:
        return "no PCA"
    if asked > dim:
        return f"PCA kept the teacher's {dim} dimensions; {asked} were asked for"
    return f"PCA to {dim} dimensions"


def gold_recall(
    encoder: Any,
    pairs: Sequence[tuple[str, str]],
    pool: Sequence[str] = (),
    ks: Sequence[int] = (5, 10, 50),
) -> dict[str, float]:
    """Recall of gold pairs among nearest neighbours: both sentences of every pair go into one
    pool with the ``pool`` sentences (duplicates once); for each pair, in each direction, is the
    partner among the sentence's k nearest neighbours (itself left out)? The share over both
    directions of all pairs, for every k in ``ks``.

    Args:
        encoder: anything with ``encode(texts) -> array`` (L2-normalised rows).
        pairs: (sentence, partner) gold paraphrase pairs.
        pool: distractor sentences.
        ks: neighbourhood sizes.

    Example:
        >>> class Letters:
        ...     def encode(self, texts):
        ...         v = np.array([[t.count("a"), t.count("b"), 1.0] for t in texts])
        ...         return v / np.linalg.norm(v, axis=1, keepdims=True)
        >>> gold_recall(Letters(), [("aa", "aaa")], ["bb", "bbb"], ks=[1])
        {'1': 1.0}
    """
    import faiss

    if not pairs:
        raise VectorError(Errors.E805_gold_recall_needs)
    texts = list(dict.fromkeys([t for pair in pairs for t in pair] + list(pool)))
    position = {t: i for i, t in enumerate(texts)}
    vectors = np.ascontiguousarray(encoder.encode(texts), dtype=np.float32)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    queries = [(position[a], position[b]) for a, b in pairs if a != b]
    queries += [(b, a) for a, b in queries]
    top = min(max(ks) + 1, len(texts))
    _, found = index.search(vectors[[q for q, _ in queries]], top)
    out = {}
    for k in ks:
        hits = [
            partner in [int(i) for i in row if i != query][:k]
            for (query, partner), row in zip(queries, found, strict=True)
        ]
        out[str(k)] = float(np.mean(hits))
    return out


__all__ = [
    "STATIC_FILE",
    "distill_static",
    "gold_recall",
    "is_static_encoder",
    "is_static_model",
    "record_recall",
    "static_card",
]

"""The one way parakit loads a sentence-transformers model.

Every stage that needs a SentenceTransformer (the ``vectors`` encoders, ``build knn``, the
bi-encoder of ``models.biencoder``, the embedding baseline) calls
:func:`load_sentence_transformer`: offline aliases are resolved, a plain Hugging Face encoder
(no ``modules.json``) gets mean pooling from sentence-transformers itself (the "vanilla encoder"
of T17/T18), and a model that cannot be loaded is a clean :class:`~parakit.errors.VectorError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parakit.errors import Errors, VectorError


def load_sentence_transformer(
    model: str | Path, *, device: str | None = None, max_seq_length: int | None = None
) -> Any:
    """A ``SentenceTransformer`` for ``model`` (a path, a Hugging Face id or an offline alias).

    Args:
        model: ``offline-minilm``/``offline-mpnet``, a local folder or a Hugging Face id.
        device: torch device (None: sentence-transformers' choice).
        max_seq_length: truncate inputs to this many tokens (None: the model's own limit).

    Raises:
        VectorError: ``E806`` naming the model when it cannot be loaded.
    """
    import logging

    from sentence_transformers import SentenceTransformer

    from parakit.offline import resolve_model

    resolved = resolve_model(model)
    # "No sentence-transformers model found ... creating mean pooling" is the intended path
    logger = logging.getLogger("sentence_transformers.SentenceTransformer")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        loaded = SentenceTransformer(str(resolved), device=device)
    except (OSError, ValueError) as err:
        raise VectorError(
            Errors.E806_load_sentence_encoder.format(model=str(model), err=err)
        ) from None
    finally:
        logger.setLevel(level)
    if max_seq_length is not None:
        loaded.max_seq_length = max_seq_length
    return loaded


__all__ = ["load_sentence_transformer"]

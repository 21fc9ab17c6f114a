"""Errors of the mining package (codes ``E8xx``)."""

from __future__ import annotations

from parakit.errors import ParakitError


class MineError(ParakitError, ValueError):
    """Bad settings or inputs for indexing, mining, tiles or retrieval evaluation.

    Codes: ``E801`` bad index settings, ``E802`` workdir belongs to another job, ``E803`` bad
    collection input, ``E804`` classifier without a usable ``predict_proba``, ``E805`` bad
    scores/labels for tiles or evaluation, ``E806`` model folder cannot be loaded, ``E807``
    dataset manifest problems.
    """

    code = "E800"

"""parakit: build, annotate, release, train, evaluate and explain paraphrase corpora.

``import parakit`` stays light (no torch, transformers, faiss or web stack); heavy parts are
imported by the modules that need them.
"""

from __future__ import annotations

from parakit.errors import DataFormatError, LabelError, ParakitError
from parakit.labels import Label, LabelScheme, get_scheme
from parakit.schema import Document, Judgment, Pair, PairSet, Span

__version__ = "0.1.0"

__all__ = [
    "DataFormatError",
    "Document",
    "Judgment",
    "Label",
    "LabelError",
    "LabelScheme",
    "Pair",
    "PairSet",
    "ParakitError",
    "Span",
    "__version__",
    "get_scheme",
    "read",
    "write",
]


def read(path, format=None, **options):  # type: ignore[no-untyped-def]
    """Read a corpus file; see :func:`parakit.io.read`."""
    from parakit.io import read as _read

    return _read(path, format=format, **options)


def write(pairs, path, format=None, **options):  # type: ignore[no-untyped-def]
    """Write a pair set; see :func:`parakit.io.write`."""
    from parakit.io import write as _write

    return _write(pairs, path, format=format, **options)

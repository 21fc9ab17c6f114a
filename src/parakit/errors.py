"""Errors raised by parakit.

Every error carries a stable code so messages are searchable, and data errors name the file, the
line or record, and the field so the user can go straight to the problem. Catch
:class:`ParakitError` for all of them; each stage package raises its own subclass:

========  ==========================================================================
codes     class
========  ==========================================================================
E1xx      :class:`DataFormatError`, :class:`SpanError` (data formats, documents),
          :class:`WriteError` (E121, an output that cannot be written)
E2xx      :class:`LabelError` (label schemes)
E3xx      :class:`ParakitError` (text and similarity)
E4xx      :class:`SplitError` (splits)
E5xx      :class:`ParakitError` (corpus construction, ``parakit.build``)
E6xx      ``parakit.annotate.store.AnnotateError`` (annotation store and web app)
E70x-E71x ``parakit.models.base.ModelError`` (classifiers, model folders)
E72x      ``parakit.offline.OfflineModelError`` (offline model registry, installs)
E75x      ``parakit.models.biencoder.BiEncoderError``
E8xx      :class:`MineError` (vectors: encoders, stores, indexes; mining, tiles, retrieval)
E90x      ``parakit.models.generation_data.GenerationDataError``
E91x      ``parakit.evaluate.generation.GenerationMetricError``
E92x      ``parakit.models.generator.GeneratorError``
E93x      ``parakit.models.llm.LLMError``
E94x      ``parakit.evaluate.human.HumanEvalError``
E10xx     ``parakit.analysis.stats.AnalysisError`` (analysis and reports)
========  ==========================================================================
"""

from __future__ import annotations

from pathlib import Path


class ParakitError(Exception):
    """Base class of every error parakit raises on purpose."""

    code: str = "E000"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        if code is not None:
            self.code = code
        #: the message without its ``[Exxx]`` prefix (to wrap it without repeating the code)
        self.message = message
        super().__init__(f"[{self.code}] {message}")


class DataFormatError(ParakitError, ValueError):
    """Input data does not follow its format.

    Args:
        message: what is wrong and, where possible, how to fix it.
        path: the file being read.
        line: 1-based line number (text formats) or record number (JSON lists, XML elements).
        field: the column or key at fault.
    """

    code = "E100"

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        code: str | None = None,
        unit: str = "line",
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        where = []
        if self.path is not None:
            where.append(self.path)
        if line is not None:
            where.append(f"{unit} {line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message, code=code)


class WriteError(ParakitError, OSError):
    """An output file cannot be written (E121: no space, no permission, a folder in the way...).

    The message names the user's path, never the hidden temporary file of an atomic write.
    """

    code = "E121"

    def __init__(
        self, message: str, *, path: str | Path | None = None, code: str | None = None
    ) -> None:
        self.path = str(path) if path is not None else None
        super().__init__(f"{self.path}: {message}" if self.path else message, code=code)


class LabelError(ParakitError, ValueError):
    """A label string is not valid in its label scheme."""

    code = "E200"


class SpanError(ParakitError, ValueError):
    """A span does not fit its document, or its text does not match."""

    code = "E101"


class AnnotationDataError(ParakitError, ValueError):
    """Judgments that agreement or crowd aggregation cannot use (codes ``E62x``-``E63x``)."""

    code = "E620"


class MineError(ParakitError, ValueError):
    """Bad settings or inputs for encoding, indexing, mining, tiles or retrieval evaluation.

    Codes: ``E801`` bad index settings, ``E802`` workdir belongs to another job, ``E803`` bad
    collection input, ``E804`` classifier without a usable ``predict_proba``, ``E805`` bad
    scores/labels for tiles or evaluation, ``E806`` model folder cannot be loaded, ``E807``
    dataset manifest problems.
    """

    code = "E800"


class SplitError(ParakitError, ValueError):
    """Split settings that cannot be satisfied (bad ratios, missing times...)."""

    code = "E400"


def with_location(
    error: ParakitError,
    *,
    path: str | Path | None,
    line: int | None,
    field: str | None,
    unit: str = "line",
) -> DataFormatError:
    """Wrap a label/span error raised inside a reader into a located :class:`DataFormatError`."""
    message = str(error)
    # drop the inner code prefix, keep the inner code on the new error
    if message.startswith(f"[{error.code}] "):
        message = message[len(error.code) + 3 :]
    return DataFormatError(message, path=path, line=line, field=field, code=error.code, unit=unit)

"""Errors raised by parakit.

Every error carries a stable code so messages are searchable, and data errors name the file, the
line or record, and the field so the user can go straight to the problem. Catch
:class:`ParakitError` for all of them; each stage raises its own subclass, all defined here:

========  ==========================================================================
codes     class
========  ==========================================================================
E09x      :class:`MissingExtraError` (an optional extra is not installed)
E1xx      :class:`DataFormatError`, :class:`SpanError` (data formats, documents),
          :class:`WriteError` (E121, an output that cannot be written)
E2xx      :class:`LabelError` (label schemes)
E3xx      :class:`ParakitError` (text and similarity)
E4xx      :class:`SplitError` (splits)
E5xx      :class:`ParakitError` (corpus construction), :class:`SuggestError` (E51x)
E6xx      :class:`AnnotateError` and its :class:`NotFound`, :class:`Forbidden`,
          :class:`Conflict` (annotation store and web app); :class:`AnnotationDataError`
E70x-E71x :class:`ModelError` (classifiers, model folders)
E72x      :class:`OfflineModelError` (offline model registry, installs)
E75x      :class:`BiEncoderError`
E8xx      :class:`MineError` (mining, tiles, retrieval); :class:`VectorError` (encoders,
          precision, collections, stores, indexes)
E90x      :class:`GenerationDataError`
E91x      :class:`GenerationMetricError`
E92x      :class:`GeneratorError`
E93x      :class:`LLMError`
E94x      :class:`HumanEvalError`
E96x      :class:`EvaluationError`
E10xx     :class:`AnalysisError` (analysis and reports)
========  ==========================================================================

Codes that keep a wrong input from becoming a silently wrong answer, kept in one block:

========  ==========================================================================
E140      :class:`DataFormatError`: predictions, scores or ratings joined by id to pairs
          whose texts they do not carry (made for another file)
E141      :class:`WriteError`: an output folder that holds something else, or an earlier
          output of the command without ``--overwrite``
E142      :class:`WriteError`: a licence id the Hugging Face Hub does not know
E143      :class:`DataFormatError`: an input file or folder with no pairs at all
E144      :class:`DataFormatError`: an empty label field in a labelled file
E145      :class:`DataFormatError`: a folder of JSONL parts (``mine run --output-parts``)
          whose run has not finished, or with a part missing, changed or of another output
E150      :class:`DataFormatError`: a Hugging Face dataset that cannot be loaded (id,
          config or split unknown; offline and not cached)
E560      :class:`ParakitError`: ``build sample --order-by`` a key no pair has
E660      :class:`AnnotateError`: no store at the path (only ``annotate init`` and
          ``restore`` create one)
E661      :class:`AnnotateError`: pairs whose labels are not of the project's scheme
E662      :class:`AnnotateError`: a rewrite check its members cannot take
========  ==========================================================================

Codes of the annotation tools' formats (Label Studio, doccano, Prodigy;
:mod:`parakit.io.interchange`):

========  ==========================================================================
E151      :class:`DataFormatError`: a file that is not the tool's layout (not a list of
          Label Studio tasks, a doccano line without ``text``, a Prodigy line without the
          pair's texts)
E152      :class:`DataFormatError`: an annotation whose label cannot be read (no single
          choice, several Choices controls and none named, an unknown Prodigy answer)
E153      :class:`DataFormatError`: one pair given twice with other texts (Prodigy lines of
          one pair, doccano files of two annotators)
========  ==========================================================================

Codes of annotation by a team (several server processes):

========  ==========================================================================
E663      :class:`AnnotateError`: ``serve --workers`` > 1 on a SQLite store (one process
          serves SQLite; several workers need PostgreSQL)
========  ==========================================================================
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType


class ParakitError(Exception):
    """Base class of every error parakit raises on purpose."""

    code: str = "E000"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        if code is not None:
            self.code = code
        #: the message without its ``[Exxx]`` prefix (to wrap it without repeating the code)
        self.message = message
        super().__init__(f"[{self.code}] {message}")


class MissingExtraError(ParakitError):
    """A command needs a package of an optional extra that is not installed (E090; the
    message names the package, the extra and the ``pip install`` line)."""

    code = "E090"


def require_extra(*modules: str, extra: str, needed_for: str) -> ModuleType:
    """Import ``modules`` in order and return the first, or raise the one
    :class:`MissingExtraError` that names what is missing, what needs it and the
    ``pip install`` line of ``extra``.

    Example:
        >>> require_extra("json", extra="core", needed_for="reading JSON").__name__
        'json'
        >>> require_extra("no_such_module", extra="ja", needed_for="Japanese tokenisation")
        Traceback (most recent call last):
        ...
        parakit.errors.MissingExtraError: [E090] Japanese tokenisation needs no_such_module: pip install 'parakit[ja]'
    """  # noqa: E501
    imported = []
    for module in modules:
        try:
            imported.append(importlib.import_module(module))
        except ImportError as err:
            missing = (err.name or module).split(".")[0]
            raise MissingExtraError(
                f"{needed_for} needs {missing}: pip install 'parakit[{extra}]'"
            ) from None
    return imported[0]


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
    dataset manifest problems, ``E808`` unknown or unusable numeric precision.
    """

    code = "E800"


class VectorError(MineError):
    """The vectors layer's errors (encoders, precision, loader, collections, store, index; the
    codes of :class:`MineError`, whose subclass it is so that its handlers catch them)."""


class SplitError(ParakitError, ValueError):
    """Split settings that cannot be satisfied (bad ratios, missing times...)."""

    code = "E400"


class SuggestError(ParakitError, ValueError):
    """Settings or inputs the suggester cannot work with (``E510``-``E512``)."""

    code = "E510"


class AnnotateError(ParakitError):
    """An annotation-store error (codes ``E6xx``)."""

    code = "E600"


class NotFound(AnnotateError):
    code = "E601"


class Forbidden(AnnotateError):
    code = "E602"


class Conflict(AnnotateError):
    """A stale revision, a lost lease or a duplicate name (HTTP 409)."""

    code = "E603"


class ModelError(ParakitError, ValueError):
    """Bad input to a paraphrase model, or a model folder that cannot be used (codes E7xx).

    Codes: E701 empty text, E702 missing label, E703 wrong number of classes, E704 unknown
    label, E705 model not fitted, E706 mismatched input lengths, E710 not a model folder,
    E711 unknown model type, E712 bad hyperparameter, E713 encoder not available,
    E719 a base model path that does not exist.
    """

    code = "E700"


class OfflineModelError(ParakitError, ValueError):
    """An offline model that is unknown, not installed, or cannot be installed (codes E72x).

    Codes: E720 unknown offline model, E721 not installed, E722 a part cannot be downloaded,
    E723 a part or the assembled zip is corrupt or incomplete, E724 the package of a packaged
    model is missing.
    """

    code = "E720"


class BiEncoderError(ParakitError, ValueError):
    """Bad bi-encoder settings or training data (codes E75x)."""

    code = "E750"


class GenerationDataError(ParakitError):
    """Generation data cannot be prepared as asked (codes ``E90x``)."""

    code = "E900"


class GenerationMetricError(ParakitError):
    """Generation metrics cannot be computed (codes ``E91x``)."""

    code = "E910"


class GeneratorError(ParakitError):
    """A generator cannot be built, trained or loaded (codes ``E92x``)."""

    code = "E920"


class LLMError(ParakitError):
    """Prompted generation failed (codes ``E93x``)."""

    code = "E930"


class HumanEvalError(ParakitError):
    """Human-evaluation input is unusable (codes ``E94x``)."""

    code = "E940"


class EvaluationError(ParakitError, ValueError):
    """Evaluation cannot run on the data given (missing gold labels, empty sets, bad scores)."""

    code = "E960"


class AnalysisError(ParakitError, ValueError):
    """Bad input to an analysis function (shapes, too few systems or phenomena...)."""

    code = "E1000"

    def __init__(self, message: str, code: str = "E1001") -> None:
        super().__init__(message, code=code)


def with_location(
    error: ParakitError,
    *,
    path: str | Path | None,
    line: int | None,
    field: str | None,
    unit: str = "line",
) -> DataFormatError:
    """Wrap a label/span error raised inside a reader into a located :class:`DataFormatError`."""
    # the inner message without its code; the inner code goes on the new error (shown once)
    return DataFormatError(
        error.message, path=path, line=line, field=field, code=error.code, unit=unit
    )

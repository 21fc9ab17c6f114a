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


class ParakitFutureWarning(FutureWarning):
    """A spelling parakit still accepts but will stop accepting (a parameter's earlier name):
    the message names the one to use. The command line shows it even without ``-v``."""


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


#: What each code means, one line per code (spaCy keeps its ``Errors`` this way): the raise
#: site adds the particulars (the file, line and field, the value, the fix). ``parakit errors``
#: prints it, ``docs/reference/errors.md`` is generated from it, and a test holds it equal to
#: the codes the source raises.
CODES: dict[str, str] = {
    "E000": "an error without a more specific code",
    "E090": "an optional extra is not installed (the message gives the pip install line)",
    # data formats and documents (DataFormatError, SpanError, WriteError)
    "E100": "input data does not follow its format",
    "E101": "a span does not fit its document, names a document the input lacks, or its "
    "text does not match",
    "E102": "an id given twice (pair ids, ETPC types, joined records)",
    "E103": "a file or folder that does not exist",
    "E104": "a file that cannot be opened as the format asked for (a folder, an unknown "
    "encoding, not a vectors file)",
    "E105": "malformed JSON, or JSON of an unexpected shape",
    "E106": "a required field is missing or of the wrong type",
    "E107": "a bad header line in a canonical JSONL corpus (misplaced, unknown version)",
    "E108": "a column mapping names a field parakit does not have",
    "E109": "a table file with no header row",
    "E110": "a row with another number of fields than the header",
    "E111": "an ETPC folder without its pair texts (give the MRPC file)",
    "E112": "malformed or unreadable XML",
    "E113": "a format that cannot be told or is unknown (give --format)",
    "E114": "a reader or writer option that is not understood, or a bad option value",
    "E115": "text with a NUL character or a lone surrogate (binary or corrupt input)",
    "E116": "a column or key named twice, or a column without a name",
    "E117": "a file cut inside its last record",
    "E118": "malformed CSV/TSV quoting",
    "E119": "a compressed file that cannot be decompressed",
    "E120": "an output that cannot be written as asked (a bad name, nothing to write)",
    "E121": "an output file cannot be written (no space, no permission, a folder in the way)",
    "E122": "a document id given twice in a corpus",
    "E125": "a push to the Hugging Face Hub failed (offline, refused)",
    "E126": "not a Hugging Face Hub repository id (write owner/name)",
    "E129": "one JSON document where JSON Lines were expected",
    "E130": "a release pair without a label",
    "E131": "a release pair without a split, or a bad split name",
    "E132": "a release pair whose span names a document the set does not hold",
    "E133": "a document with statements in two splits of a release",
    "E134": "a language code the Hugging Face Hub does not know",
    "E135": "not a parakit release folder, or a damaged one",
    "E137": "a binary reading the label scheme does not have",
    "E138": "release split files that disagree (schemes, document texts)",
    "E140": "predictions, scores or ratings joined by id to pairs whose texts they do not "
    "carry (made for another file)",
    "E141": "an output folder that holds something else, or an earlier output without --overwrite",
    "E142": "a licence id the Hugging Face Hub does not know",
    "E143": "an input file or folder with no pairs at all",
    "E144": "an empty label field in a labelled file",
    "E145": "a folder of JSONL parts that is unfinished or damaged (mine run --output-parts)",
    "E150": "a Hugging Face dataset that cannot be loaded (id, config or split unknown; "
    "offline and not cached)",
    "E151": "a file that is not the annotation tool's layout (Label Studio, doccano, Prodigy)",
    "E152": "an annotation tool's judgment whose label cannot be read",
    "E153": "one pair given twice with other texts",
    # labels
    "E200": "a label that is not valid in its scheme",
    "E201": "a label that is not valid in its scheme (type or value)",
    "E202": "an invalid Turku label (base label or flags)",
    "E203": "a label scheme without the binary reading asked for",
    "E204": "a bad vote threshold of a votes scheme",
    "E205": "an unknown label scheme, or one given parameters it does not take",
    # text
    "E301": "a tokeniser's dictionary or package is missing",
    "E302": "an unknown tokenisation method",
    "E303": "bad character n-gram settings",
    "E304": "two text columns of different lengths",
    "E305": "a similarity used before fit()",
    "E400": "split settings that cannot be satisfied (ratios, groups, times)",
    # corpus construction
    "E500": "a corpus-construction input that cannot be used",
    "E501": "subtitles that cannot be read or aligned, or nothing to pair",
    "E502": "pairs without the metadata the step needs (groups, titles, yields)",
    "E503": "a document that cannot be decoded with the encodings given",
    "E504": "a broken subtitle block or timing",
    "E505": "machine translation or back-translation that cannot run as asked",
    "E507": "bad language-model settings, or nothing to fit it on",
    "E508": "bad sampling settings (measure, bins, values)",
    "E510": "settings or inputs the suggester cannot work with",
    "E511": "a bad suggester window or band",
    "E512": "a similarity that is not a matrix, or pairs without document context",
    "E560": "build sample --order-by a key no pair has",
    # annotation store and web app
    "E600": "an annotation-store error",
    "E601": "no such project, item, user or document pair (HTTP 404)",
    "E602": "not allowed for this account (HTTP 403)",
    "E603": "a stale revision, a lost lease or a duplicate name (HTTP 409)",
    "E604": "an account change that would lock the team out (role, last admin, oneself)",
    "E605": "a user name or password that cannot be used",
    "E606": "an unknown task or document pair",
    "E607": "a submitted annotation without a label",
    "E608": "an extracted span that does not fit its document",
    "E609": "a document pair with extracted pairs marked empty",
    "E610": "an unknown export format",
    "E611": "an import file that cannot be read",
    "E612": "unknown project settings or kind",
    "E613": "an invalid project name",
    "E614": "an import with no pairs",
    "E615": "imported text that the store cannot keep",
    "E616": "a project with too few members for its assignments",
    "E617": "a project setting or text over its limit",
    "E618": "a document pair not leased to the user, or already finished",
    "E619": "a backup or restore that cannot be done (damaged, edited, wrong target)",
    "E620": "judgments that agreement or crowd aggregation cannot use",
    "E621": "an unknown agreement level",
    "E622": "label sequences of different lengths",
    "E623": "labels outside the given order",
    "E630": "crowd judgments in an unknown file type",
    "E631": "a crowd judgment without worker, pair or label",
    "E632": "a gold judgment without its gold label",
    "E633": "an unknown crowd aggregation method",
    "E634": "bad simulated-crowd settings",
    "E635": "crowd judgments for pairs not in the pair set",
    "E640": "a bad suggestion setting or rank",
    "E645": "model scores that cannot order a project's queue",
    "E660": "no store at the path (only annotate init and restore create one)",
    "E661": "pairs whose labels are not of the project's scheme",
    "E662": "a rewrite check its members cannot take",
    "E663": "serve --workers > 1 on a SQLite store (several workers need PostgreSQL)",
    # models
    "E700": "a classifier error",
    "E701": "a pair with an empty text",
    "E702": "a training pair without a label (or soft label)",
    "E703": "training labels a classifier cannot learn (one class, not binary)",
    "E704": "labels the model does not know",
    "E705": "a model used before fit() or load()",
    "E706": "classifier input given in an inconsistent form",
    "E710": "not a parakit model folder, or an unreadable model description",
    "E711": "a model folder of another type than asked for",
    "E712": "a bad hyperparameter or setting",
    "E713": "a transformer encoder or tokenizer that cannot be loaded",
    "E714": "checkpoints made with other settings or data",
    "E715": "a model that is not local and cannot be had from the Hub",
    "E716": "a model's paraphrase label that cannot be told",
    "E717": "no threshold can be chosen for a pretrained model",
    "E719": "a base model path that does not exist",
    "E720": "an unknown offline model",
    "E721": "an offline model that is not installed",
    "E722": "an offline model that could not be downloaded",
    "E723": "a corrupt offline model archive",
    "E724": "an offline model's package that cannot be installed",
    "E750": "bad bi-encoder settings or training data",
    "E751": "an unknown bi-encoder loss, or no binary labels",
    "E752": "pairs the bi-encoder loss cannot train on",
    "E753": "a bi-encoder used before fit(), or not a sentence-transformers folder",
    # mining and vectors
    "E800": "a mining or vectors error",
    "E801": "bad index settings or index files",
    "E802": "a work folder that belongs to another mining job",
    "E803": "a collection or sentence store that cannot be read",
    "E804": "a classifier without a usable predict_proba",
    "E805": "bad scores or labels for tiles or evaluation",
    "E806": "an encoder that cannot be loaded or used",
    "E807": "a damaged dataset-versions manifest",
    "E808": "an unknown or unusable numeric precision",
    # generation, evaluation, analysis
    "E900": "generation data cannot be prepared as asked",
    "E901": "unknown generation-data directions",
    "E910": "generation metrics cannot be computed",
    "E911": "no source has a reference",
    "E912": "BERTScore without a layer for the model",
    "E913": "a negative beta",
    "E914": "no sources to evaluate",
    "E915": "a generations file without generations",
    "E916": "a generation whose source has no references",
    "E917": "outputs and references or sources of different counts",
    "E918": "a BERTScore model that cannot be loaded",
    "E920": "a generator cannot be built, trained or loaded",
    "E921": "a training item that is not an (input, output) pair",
    "E923": "a generator's model config that cannot be loaded",
    "E924": "an unknown generator architecture",
    "E925": "a tokenizer without a pad or eos token",
    "E926": "no pairs to train, evaluate or select on",
    "E927": "a generator used before fit(), load() or from_pretrained()",
    "E928": "unknown generation settings",
    "E929": "not a generator folder saved by parakit",
    "E930": "prompted generation failed",
    "E931": "bad few-shot settings",
    "E932": "an unknown LLM endpoint type",
    "E933": "an unexpected LLM response",
    "E934": "an LLM request refused",
    "E935": "an LLM request that failed after its retries",
    "E940": "human-evaluation input is unusable",
    "E941": "a generation item without its text, or no items or raters",
    "E942": "an unknown paraphrase error type",
    "E943": "a rating sheet without its columns or key",
    "E944": "an item rated twice by one rater",
    "E945": "a score that is not an integer from 1 to 5",
    "E946": "no ratings in the sheets",
    "E947": "agreement with fewer than two raters",
    "E948": "ratings that match no row of the metric table",
    "E960": "evaluation cannot run on the data given",
    "E961": "a pair without a gold label",
    "E962": "nothing to retrieve from or with",
    "E963": "an unknown selection metric",
    "E969": "a binary model on labels without a binary reading",
    "E1000": "bad input to an analysis function",
    "E1001": "inputs of the wrong shape",
    "E1002": "too few systems or items to compare",
    "E1003": "no phenomena to report",
    "E1004": "a predictions file that cannot be used",
    "E1005": "a predictions file not found",
    "E1006": "a system without predictions for some pairs",
    "E1010": "a synonym or thesaurus file not found",
    "E1011": "a synonym file that cannot be decoded",
    "E1012": "a synonym line with fewer than two words",
    "E1020": "a verb test that cannot start (Voikko missing, unknown test)",
    "E1021": "a verb test for another language than the corpus",
    "E1022": "synonym induction on labels that are not Turku",
    "E1023": "induced synonyms asked for without a corpus",
}


def explain(code: str) -> str:
    """What error ``code`` means (:data:`CODES`).

    Example:
        >>> explain("E143")
        'an input file or folder with no pairs at all'

    Raises:
        KeyError: a code parakit does not raise.
    """
    key = code.strip().strip("[]").upper()
    if key not in CODES:
        raise KeyError(f"no error code {code!r}; codes run from E000 to E1023 (parakit errors)")
    return CODES[key]


def errors_markdown() -> str:
    """``docs/reference/errors.md``: every code of :data:`CODES` in one table."""
    rows = "".join(f"| {code} | {meaning.replace('|', '/')} |\n" for code, meaning in CODES.items())
    return (
        "# Error codes\n\n"
        "Every error parakit raises on purpose is a `ParakitError` whose message starts with its\n"
        "code, e.g. `[E143] corpus.csv, line 1: no pairs in the file`; the message names the\n"
        "file, line or record and field, and what to do. `parakit errors E143` prints one line\n"
        "below; this page is generated by `parakit errors --markdown`.\n\n"
        "| code | meaning |\n|---|---|\n" + rows
    )

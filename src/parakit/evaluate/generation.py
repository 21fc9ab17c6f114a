"""Paraphrase generation metrics (M12): BLEU, Self-BLEU, BERTScore, BERT-iBLEU, reference diversity.

Definitions (MultiPIT §4.2, Table 4; Niu et al. 2021):

- **BLEU**: SacreBLEU corpus BLEU of the outputs against one or many references per source
  (the number of references may vary; missing ones are ignored).
- **Self-BLEU**: BLEU of the output against its *source* (lower = more diverse). Corpus level
  is SacreBLEU corpus BLEU with the sources as the single reference stream; per sentence it is
  SacreBLEU sentence BLEU (``exp`` smoothing, effective order).
- **BERTScore**: F1 of the output against its source, with a configurable model and layer (the
  paper: ``microsoft/deberta-xlarge-mnli``, layer 40, no baseline rescaling).
- **BERT-iBLEU** (Niu et al. 2021, EMNLP, §4.1): a weighted harmonic mean of BERTScore and
  ``1 - self-BLEU`` (self-BLEU on the 0–1 scale),

      BERT-iBLEU = ((beta * BERTScore^-1 + 1 * (1 - selfBLEU)^-1) / (beta + 1))^-1,  beta = 4

  computed per sentence; the corpus score is the mean of the sentence scores (the harmonic mean
  of the corpus averages is higher and does not reproduce Table 4; both are reported).
- **Reference diversity**: for each source, min / mean / max sentence Self-BLEU of its human
  references, then averaged over sources (Table 4, "Human Reference").

All scores are reported on the 0–100 scale, like the paper's tables.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from parakit.errors import DataFormatError, Errors, GenerationMetricError
from parakit.evaluate.base import Evaluator
from parakit.io.jsonl import iter_jsonl
from parakit.text import corpus_bleu, sentence_bleu

#: The paper's BERTScore model (footnote 11); bert-score picks its layer (40) itself.
PAPER_BERTSCORE_MODEL = "microsoft/deberta-xlarge-mnli"
#: Niu et al. (2021) weight BERTScore four times as much as diversity.
DEFAULT_BETA = 4.0


# -- BLEU family ------------------------------------------------------------------------------
def bleu(
    outputs: Sequence[str],
    references: Sequence[Sequence[str] | str],
    tokenize: str = "13a",
    lowercase: bool = False,
) -> tuple[float, str]:
    """Corpus BLEU (0–100) of ``outputs`` against one or many references each, and the
    SacreBLEU signature.

    Example:
        >>> score, signature = bleu(["the cat sat on the mat"], [["the cat sat on the mat", "x"]])
        >>> round(score, 1), signature.split("|")[0]
        (100.0, 'nrefs:2')
    """
    _check_lengths(outputs, references, "references")
    return corpus_bleu(list(outputs), list(references), tokenize=tokenize, lowercase=lowercase)


def sentence_bleus(
    outputs: Sequence[str],
    references: Sequence[Sequence[str] | str],
    tokenize: str = "13a",
    lowercase: bool = False,
) -> np.ndarray:
    """Sentence BLEU (0–100) of each output against its reference(s)."""
    _check_lengths(outputs, references, "references")
    return np.array(
        [
            sentence_bleu(
                o, [r] if isinstance(r, str) else list(r), tokenize=tokenize, lowercase=lowercase
            )
            for o, r in zip(outputs, references, strict=True)
        ]
    )


def self_bleu(
    outputs: Sequence[str], sources: Sequence[str], tokenize: str = "13a", lowercase: bool = False
) -> tuple[float, np.ndarray]:
    """Self-BLEU of outputs against their sources: ``(corpus, per_sentence)``, 0–100.

    Example:
        >>> corpus, per_sentence = self_bleu(["a b c d", "w x y z"], ["a b c d", "p q r s"])
        >>> round(corpus, 2), per_sentence.round(2).tolist()
        (50.0, [100.0, 0.0])
    """
    _check_lengths(outputs, sources, "sources")
    corpus, _ = corpus_bleu(list(outputs), list(sources), tokenize=tokenize, lowercase=lowercase)
    return corpus, sentence_bleus(outputs, sources, tokenize=tokenize, lowercase=lowercase)


def reference_diversity(
    references: Mapping[str, Sequence[str]], tokenize: str = "13a"
) -> dict[str, float]:
    """Self-BLEU of human references (Table 4, "Human Reference"): per source the min, mean and
    max sentence BLEU of each reference against the source, then averaged over sources;
    ``avg_std`` is the standard deviation of the per-source means.

    Example:
        >>> d = reference_diversity({"a b c d": ["a b c d", "w x y z"]})
        >>> round(d["min"], 6), round(d["avg"], 6), round(d["max"], 6)
        (0.0, 50.0, 100.0)
    """
    mins, means, maxes = [], [], []
    for source, refs in references.items():
        if not refs:
            continue
        scores = [sentence_bleu(r, [source], tokenize=tokenize) for r in refs]
        mins.append(min(scores))
        means.append(float(np.mean(scores)))
        maxes.append(max(scores))
    if not means:
        raise GenerationMetricError(Errors.E911_source_reference)
    return {
        "min": float(np.mean(mins)),
        "avg": float(np.mean(means)),
        "avg_std": float(np.std(means)),
        "max": float(np.mean(maxes)),
        "n_sources": float(len(means)),
    }


# -- BERTScore and BERT-iBLEU ---------------------------------------------------------------
@dataclass
class BertScore:
    """BERTScore with a configurable model (a Hugging Face id or a local path).

    Args:
        model: model id or path; the paper uses ``microsoft/deberta-xlarge-mnli``.
        num_layers: the layer whose embeddings are compared; required for models bert-score
            does not know (for example a local path). 40 for the paper's model.
        batch_size: sentences per forward pass (lower it to save memory, at some speed cost).
        idf: idf-weight tokens (computed on the references).
        rescale_with_baseline: bert-score's baseline rescaling (needs ``lang`` and the
            packaged baseline for the model).
        lang: language, used only for baseline rescaling.
        device: ``cpu``, ``cuda``...; None lets bert-score choose.

    Example:
        >>> scorer = BertScore("microsoft/deberta-xlarge-mnli")   # doctest: +SKIP
        >>> scorer(["a paraphrase"], ["the source"])["f1"]         # doctest: +SKIP
    """

    model: str = PAPER_BERTSCORE_MODEL
    num_layers: int | None = None
    batch_size: int = 32
    idf: bool = False
    rescale_with_baseline: bool = False
    lang: str | None = None
    device: str | None = None
    _scorer: Any = field(default=None, init=False, repr=False)

    def _get(self) -> Any:
        if self._scorer is None:
            from bert_score import BERTScorer
            from bert_score.utils import model2layers

            layers = self.num_layers
            if layers is None:
                if self.model not in model2layers:
                    raise GenerationMetricError(
                        Errors.E912_bert_score_default.format(model=self.model)
                    )
                layers = model2layers[self.model]
            from parakit.offline import resolve_model

            try:
                self._scorer = BERTScorer(
                    model_type=resolve_model(self.model),
                    num_layers=layers,
                    batch_size=self.batch_size,
                    idf=self.idf,
                    rescale_with_baseline=self.rescale_with_baseline,
                    lang=self.lang,
                    device=self.device,
                )
            except OSError as err:
                raise GenerationMetricError(
                    Errors.E918_load_bertscore_model.format(model=self.model, err=err)
                ) from err
        return self._scorer

    @property
    def signature(self) -> str:
        """bert-score's hash code of the settings (model, layer, idf, rescaling, version)."""
        return str(self._get().hash)

    def __call__(
        self, candidates: Sequence[str], references: Sequence[str]
    ) -> dict[str, np.ndarray]:
        """Precision, recall and F1 (0–1) of each candidate against its reference."""
        _check_lengths(candidates, references, "references")
        if not candidates:
            return {k: np.zeros(0) for k in ("precision", "recall", "f1")}
        scorer = self._get()
        if self.idf:
            scorer.compute_idf(list(references))
        p, r, f = scorer.score(list(candidates), list(references), batch_size=self.batch_size)
        return {
            "precision": p.numpy().astype(float),
            "recall": r.numpy().astype(float),
            "f1": f.numpy().astype(float),
        }


def bert_ibleu(
    bertscore: Sequence[float] | float,
    self_bleu: Sequence[float] | float,
    beta: float = DEFAULT_BETA,
) -> np.ndarray:
    """BERT-iBLEU (Niu et al. 2021): weighted harmonic mean of BERTScore and 1 - Self-BLEU.

    Args:
        bertscore: BERTScore F1 on the 0–1 scale.
        self_bleu: Self-BLEU on the 0–1 scale (divide SacreBLEU's 0–100 score by 100).
        beta: weight of BERTScore relative to diversity (4 in Niu et al. and MultiPIT).

    Returns:
        Scores on the 0–1 scale; 0 where either term is 0 (a copy has 1 - Self-BLEU = 0).

    Example:
        >>> float(bert_ibleu(0.9, 0.4, beta=4).round(6))  # 5 / (4/0.9 + 1/0.6)
        0.818182
    """
    b = np.asarray(bertscore, dtype=float)
    d = 1.0 - np.asarray(self_bleu, dtype=float)
    if beta < 0:
        raise GenerationMetricError(Errors.E913_beta_must_got.format(beta=beta))
    with np.errstate(divide="ignore"):
        inv = (beta / b + 1.0 / d) / (beta + 1.0)
        out = np.where((b <= 0) | (d <= 0), 0.0, 1.0 / inv)
    return out


# -- one call for everything ----------------------------------------------------------------
@dataclass
class GenerationScores:
    """Corpus-level scores (``scores``, 0–100) and the per-sentence table (``per_sentence``)."""

    scores: dict[str, float]
    per_sentence: list[dict[str, Any]]
    signatures: dict[str, str]

    def table_row(self, name: str = "model") -> str:
        """A Table-4-style row: ``name  BL  S-B  B-S  B-iB``."""
        s = self.scores
        bl = f"{s['bleu']:.2f}" if "bleu" in s else "-"
        return f"{name}\t{bl}\t{s['self_bleu']:.2f}\t{s['bertscore']:.2f}\t{s['bert_ibleu']:.2f}"

    def to_dict(self) -> dict[str, Any]:
        return {"scores": self.scores, "signatures": self.signatures}


TABLE4_HEADER = "model\tBL\tS-B\tB-S\tB-iB"


def evaluate_generations(
    sources: Sequence[str],
    outputs: Sequence[str],
    references: Sequence[Sequence[str] | str] | None = None,
    scorer: BertScore | Callable[..., dict[str, np.ndarray]] | None = None,
    beta: float = DEFAULT_BETA,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> GenerationScores:
    """All of MultiPIT's automatic metrics for one system.

    Args:
        sources: the inputs.
        outputs: one generation per input.
        references: human references per input (one string or a list); BLEU is skipped
            when None.
        scorer: a :class:`BertScore` (default: the paper's model, which must be available).
        beta: BERT-iBLEU weight.
        tokenize: SacreBLEU tokenizer.
        lowercase: lowercase everything before BLEU (the paper does it for ParaNMT only).

    Returns:
        :class:`GenerationScores` with ``bleu``, ``self_bleu``, ``bertscore``, ``bert_ibleu``,
        ``bert_ibleu_of_means`` and, with references, ``reference_self_bleu_*``.
    """
    _check_lengths(outputs, sources, "sources")
    if not sources:
        raise GenerationMetricError(Errors.E914_nothing_evaluate_sources)
    scorer = scorer if scorer is not None else BertScore()
    sb_corpus, sb_sent = self_bleu(outputs, sources, tokenize=tokenize, lowercase=lowercase)
    bs = scorer(list(outputs), list(sources))
    f1 = np.asarray(bs["f1"], dtype=float)
    ib = bert_ibleu(f1, sb_sent / 100.0, beta=beta)
    scores: dict[str, float] = {
        "self_bleu": sb_corpus,
        "self_bleu_sentence_mean": float(sb_sent.mean()),
        "bertscore": float(f1.mean() * 100),
        "bert_ibleu": float(ib.mean() * 100),
        "bert_ibleu_of_means": float(
            bert_ibleu(f1.mean(), sb_sent.mean() / 100.0, beta=beta) * 100
        ),
        "n": float(len(sources)),
    }
    signatures = {"self_bleu": corpus_bleu(["a"], ["a"], tokenize=tokenize, lowercase=lowercase)[1]}
    if isinstance(scorer, BertScore):
        signatures["bertscore"] = scorer.signature
    signatures["bert_ibleu"] = f"beta:{beta:g}|mean-of-sentences"
    per_sentence: list[dict[str, Any]] = [
        {
            "source": s,
            "output": o,
            "self_bleu": float(a),
            "bertscore": float(b * 100),
            "bert_ibleu": float(c * 100),
        }
        for s, o, a, b, c in zip(sources, outputs, sb_sent, f1, ib, strict=True)
    ]
    if references is not None:
        _check_lengths(outputs, references, "references")
        for source, refs_of in zip(sources, references, strict=True):
            if not refs_of:  # sacrebleu cannot score a segment without any reference
                raise GenerationMetricError(
                    Errors.E916_source_references_reference.format(source_60=source[:60])
                )
        score, signature = bleu(outputs, references, tokenize=tokenize, lowercase=lowercase)
        scores["bleu"] = score
        signatures["bleu"] = signature
        for row, value in zip(
            per_sentence,
            sentence_bleus(outputs, references, tokenize=tokenize, lowercase=lowercase),
            strict=True,
        ):
            row["bleu"] = float(value)
        refs = {
            s: ([r] if isinstance(r, str) else list(r))
            for s, r in zip(sources, references, strict=True)
        }
        for key, value in reference_diversity(refs, tokenize=tokenize).items():
            if key != "n_sources":
                scores[f"reference_self_bleu_{key}"] = value
    return GenerationScores(scores=scores, per_sentence=per_sentence, signatures=signatures)


# -- evaluator protocol ---------------------------------------------------------------------
class SupportsGenerate(Protocol):
    def generate(self, texts: Sequence[str]) -> list[str]: ...


class GenerationEvaluator(Evaluator):
    """Evaluator in the sentence-transformers style: ``evaluator(model, output_path) -> dict``.

    Args:
        sources: test inputs.
        references: references per input (or None).
        scorer: the :class:`BertScore` to use.
        beta: BERT-iBLEU weight.
        name: prefix of the result keys.

    Example:
        >>> class Copy:
        ...     def generate(self, texts): return list(texts)
        >>> class Fake:  # stands in for BertScore in this example
        ...     def __call__(self, c, r): return {"f1": np.ones(len(c))}
        >>> ev = GenerationEvaluator(["a b c d"], [["w x y z"]], scorer=Fake(), name="t")
        >>> ev(Copy())["t_bert_ibleu"], ev.primary_metric
        (0.0, 't_bert_ibleu')
    """

    primary = "bert_ibleu"

    def __init__(
        self,
        sources: Sequence[str],
        references: Sequence[Sequence[str]] | None = None,
        scorer: Any = None,
        beta: float = DEFAULT_BETA,
        name: str = "",
    ) -> None:
        self.sources = list(sources)
        self.references = None if references is None else list(references)
        self.scorer = scorer
        self.beta = beta
        self.name = name

    def __call__(
        self,
        model: SupportsGenerate,
        output_path: str | Path | None = None,
        epoch: int = -1,
        steps: int = -1,
    ) -> dict[str, float]:
        outputs = model.generate(self.sources)
        result = evaluate_generations(
            self.sources, outputs, self.references, scorer=self.scorer, beta=self.beta
        )
        if output_path is not None:
            suffix = f"-{self.name}" if self.name else ""
            write_generations(
                Path(output_path) / f"generations{suffix}.jsonl", self.sources, outputs
            )
        return self.prefixed(result.scores)


class PerplexityEvaluator(Evaluator):
    """Token perplexity of the references given the inputs: the paper's model selection for
    generators (MultiPIT App. C: the checkpoint and learning rate with the lowest dev perplexity).

    ``model`` needs ``perplexity(pairs) -> float`` (:class:`~parakit.models.generator.
    Seq2SeqGenerator`).

    Example:
        >>> class Model:
        ...     def perplexity(self, pairs): return 2.0 * len(pairs)
        >>> ev = PerplexityEvaluator([("a", "b")], name="dev")
        >>> ev(Model()), ev.primary_metric, ev.greater_is_better
        ({'dev_perplexity': 2.0}, 'dev_perplexity', False)
    """

    primary = "perplexity"
    greater_is_better = False

    def __init__(self, pairs: Sequence[tuple[str, str]], name: str = "dev") -> None:
        self.pairs = list(pairs)
        self.name = name

    def __call__(
        self, model: Any, output_path: str | Path | None = None, epoch: int = -1, steps: int = -1
    ) -> dict[str, float]:
        return self.prefixed({"perplexity": model.perplexity(self.pairs)})


# -- generations files ------------------------------------------------------------------------
def write_generations(
    path: str | Path, sources: Sequence[str], outputs: Sequence[str], system: str | None = None
) -> Path:
    """Write a generations file: JSONL of ``{"id", "source", "generation"[, "system"]}``."""
    from parakit.io.atomic import atomic_write

    _check_lengths(outputs, sources, "sources")
    path = Path(path)
    with atomic_write(path) as handle:
        for index, (source, output) in enumerate(zip(sources, outputs, strict=True)):
            row: dict[str, Any] = {"id": str(index), "source": source, "generation": output}
            if system is not None:
                row["system"] = system
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def read_generations(path: str | Path) -> list[dict[str, Any]]:
    """Read a generations file (JSONL with ``source`` and ``generation`` per line)."""
    path = Path(path)
    rows = []
    for number, row in iter_jsonl(path, code="E915"):
        for key in ("source", "generation"):
            if not isinstance(row, dict) or not isinstance(row.get(key), str):
                raise DataFormatError(Errors.E915_missing_string, path=path, line=number, field=key)
        rows.append(row)
    return rows


def align_references(
    sources: Sequence[str], references: Mapping[str, Sequence[str]], path: str | Path | None = None
) -> list[list[str]]:
    """The references of each source, in order; a source without references is an error."""
    out = []
    for number, source in enumerate(sources, start=1):
        if source not in references:
            raise DataFormatError(
                Errors.E916_source_references_reference.format(source_60=source[:60]),
                path=path,
                line=number,
                field="source",
            )
        out.append(list(references[source]))
    return out


def _check_lengths(a: Sequence[Any], b: Sequence[Any], what: str) -> None:
    if len(a) != len(b):
        raise GenerationMetricError(
            Errors.E917_outputs_but_give.format(n_a=len(a), n_b=len(b), what=what)
        )


def format_matrix(
    table: Mapping[tuple[str, str], Mapping[str, float]],
    metrics: Sequence[str] = ("bleu", "self_bleu", "bertscore", "bert_ibleu"),
) -> str:
    """Format ``{(train, test): scores}`` as a Table-5-style text table (rows: test sets)."""
    trains = list(dict.fromkeys(k[0] for k in table))
    tests = list(dict.fromkeys(k[1] for k in table))
    short = {"bleu": "BL", "self_bleu": "S-B", "bertscore": "B-S", "bert_ibleu": "B-iB"}
    head = ["test \\ train"] + [f"{t}:{short.get(m, m)}" for t in trains for m in metrics]
    lines = ["\t".join(head)]
    for test in tests:
        cells = [test]
        for train in trains:
            scores = table.get((train, test), {})
            for m in metrics:
                value = scores.get(m)
                cells.append("-" if value is None or math.isnan(value) else f"{value:.2f}")
        lines.append("\t".join(cells))
    return "\n".join(lines)


@dataclass
class GenerationDataset:
    """One dataset of a cross-dataset matrix: training pairs, optional dev pairs, and a test
    set as ``{source: [references]}``."""

    train: Any
    test: Mapping[str, Sequence[str]]
    dev: Any = None


def cross_dataset_matrix(
    datasets: Mapping[str, GenerationDataset],
    make_generator: Callable[[], Any],
    scorer: Any = None,
    beta: float = DEFAULT_BETA,
    output_dir: str | Path | None = None,
) -> dict[tuple[str, str], dict[str, float]]:
    """Train one generator per dataset and evaluate each on every test set (M14, Table 5).

    Args:
        datasets: name -> :class:`GenerationDataset`.
        make_generator: returns a fresh, unfitted generator (``fit(train, dev)`` and
            ``generate(texts)``), the same architecture for every dataset.
        scorer: BERTScore scorer shared by all cells.
        beta: BERT-iBLEU weight.
        output_dir: where each cell's generations are written
            (``<train>__on__<test>.jsonl``) and each trained model saved (``model-<train>``,
            when the generator has ``save``).

    Returns:
        ``{(train_name, test_name): scores}``; format with :func:`format_matrix`.
    """
    table: dict[tuple[str, str], dict[str, float]] = {}
    for train_name, data in datasets.items():
        generator = make_generator().fit(data.train, data.dev)
        if output_dir is not None and hasattr(generator, "save"):
            generator.save(Path(output_dir) / f"model-{train_name}")
        for test_name, test in datasets.items():
            sources = list(test.test)
            outputs = generator.generate(sources)
            refs = [list(test.test[s]) for s in sources]
            result = evaluate_generations(sources, outputs, refs, scorer=scorer, beta=beta)
            table[(train_name, test_name)] = result.scores
            if output_dir is not None:
                write_generations(
                    Path(output_dir) / f"{train_name}__on__{test_name}.jsonl",
                    sources,
                    outputs,
                    system=train_name,
                )
    return table

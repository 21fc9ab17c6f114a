"""Seq2seq paraphrase generators (M11): fine-tune any Hugging Face encoder-decoder, decoder-only
or warm-started BERT-to-BERT model with MultiPIT's recipe, then generate.

The recipe (MultiPIT App. C, Table 10): AdamW (eps 1e-8, weight decay 0.01), linear decay after
a 0.06 warm-up, effective batch 128, at most 5 epochs, evaluation every 500 steps (every epoch
when training is shorter than 1,500 steps), model selection on dev perplexity; beam search
with 4 beams for generation.

Example:
    >>> gen = Seq2SeqGenerator("t5-small", learning_rate=3e-4)   # doctest: +SKIP
    >>> gen.fit(train_pairs, dev_pairs).generate(["I can't wait for the weekend"])  # doctest: +SKIP
    >>> gen.save("models/t5-multipit")                           # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from parakit.errors import Errors, GeneratorError
from parakit.models.base import hyperparameters
from parakit.models.training import TransformerEstimator, train_transformer
from parakit.schema import PairSet

#: the generation settings: parameters, per-call overrides of :meth:`Seq2SeqGenerator.generate`
GENERATION_SETTINGS = (
    "num_beams",
    "do_sample",
    "top_p",
    "top_k",
    "temperature",
    "max_new_tokens",
    "num_return_sequences",
    "repetition_penalty",
    "no_repeat_ngram_size",
)
Architecture = Literal["auto", "encoder-decoder", "decoder-only", "bert2bert"]

#: Encoder-only families that can be warm-started into an EncoderDecoderModel (their
#: Hugging Face classes accept ``is_decoder`` and ``add_cross_attention``).
ENCODER_ONLY = frozenset(
    {
        "bert",
        "roberta",
        "xlm-roberta",
        "electra",
        "camembert",
        "ernie",
        "bert-generation",
        "rembert",
        "roformer",
        "xlm-roberta-xl",
    }
)


def _as_pairs(data: PairSet | Iterable[tuple[str, str]] | None) -> list[tuple[str, str]]:
    if data is None:
        return []
    if isinstance(data, PairSet):
        return [(p.text1, p.text2) for p in data]
    out = []
    for index, item in enumerate(data):
        if len(item) != 2 or not all(isinstance(x, str) for x in item):
            raise GeneratorError(Errors.E921_training_item_input.format(index=index))
        out.append((item[0], item[1]))
    return out


def _padded(rows: list[list[int]], value: int, left: bool = False) -> list[list[int]]:
    """``rows`` padded with ``value`` to the longest one: on the right, or on the left."""
    width = max(len(r) for r in rows)
    return [
        [value] * (width - len(r)) + r if left else r + [value] * (width - len(r)) for r in rows
    ]


@hyperparameters
class Seq2SeqGenerator(TransformerEstimator):
    """Fine-tune and run a paraphrase generator (a
    :class:`~parakit.models.training.TransformerEstimator`: settings, checkpoint signature,
    learning-rate grid, device and precision come from there).

    Args:
        model_name_or_path: Hugging Face id or local folder (T5, BART, GPT-2, BERT...).
        architecture: ``auto`` (from the config: encoder-decoder models as they are, encoder-only
            families such as BERT/MiniLM warm-started as BERT-to-BERT, everything else as a
            decoder-only LM), or one of ``encoder-decoder``, ``decoder-only``, ``bert2bert``.
        learning_rate: peak learning rate (the paper's grid: 1e-4, 3e-4, 1e-5, 3e-5).
        weight_decay: AdamW weight decay.
        adam_epsilon: AdamW epsilon.
        warmup_ratio: share of optimisation steps with linear warm-up.
        epochs: maximum number of epochs.
        max_steps: stop after this many optimiser steps (None: run all epochs).
        max_time: stop training after this many seconds (checked after each optimiser step;
            the learning-rate schedule is still planned over all epochs, so stopping early
            leaves it undecayed). Useful to bound CPU runs; None: no limit.
        batch_size: effective batch size (128 in the paper).
        micro_batch_size: examples per forward pass; gradients are accumulated up to
            ``batch_size``. Lower it to save memory (slower). None: ``batch_size``.
        eval_steps: evaluate dev perplexity every this many optimiser steps; None: the paper's
            rule (every 500 steps, after every epoch when training is shorter than 1,500 steps).
        max_length: input truncation (tokens).
        max_target_length: output truncation for training (tokens).
        num_beams: beam size for generation (4 in the paper).
        do_sample: sample instead of beam search.
        top_p: nucleus sampling threshold.
        top_k: top-k sampling (0 disables it).
        temperature: sampling temperature.
        repetition_penalty: penalty for repeated tokens (1.0 = none).
        no_repeat_ngram_size: forbid repeating n-grams of this size (0 = off).
        max_new_tokens: generation length limit.
        num_return_sequences: outputs per input (``generate`` then returns lists).
        generation_batch_size: inputs per generation batch.
        seed: seed for data order, dropout and sampling.
        device: ``cpu``, ``cuda``...; None picks CUDA when available.
        progress: show progress bars.
        precision: ``auto`` (bf16 autocast on CPUs with AMX/AVX512-BF16 and bf16 GPUs), ``fp32``,
            ``bf16`` or ``fp16``: training, perplexity and generation
            (:mod:`parakit.vectors.precision`).
        output_dir: checkpoint folder of :meth:`fit` (one per evaluation); a run started again
            with the same settings continues from the last checkpoint. None: no checkpoints
            are kept.
        resume: continue from the checkpoints in ``output_dir``.
    """

    model_name_or_path: str | Path
    architecture: Architecture = "auto"
    learning_rate: float = 1e-4
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-8
    warmup_ratio: float = 0.06
    epochs: int = 5
    max_steps: int | None = None
    max_time: float | None = None
    batch_size: int = 128
    micro_batch_size: int | None = None
    eval_steps: int | None = None
    max_length: int = 64
    max_target_length: int = 64
    num_beams: int = 4
    do_sample: bool = False
    top_p: float = 1.0
    top_k: int = 0
    temperature: float = 1.0
    repetition_penalty: float = 1.0
    no_repeat_ngram_size: int = 0
    max_new_tokens: int = 64
    num_return_sequences: int = 1
    generation_batch_size: int = 32
    seed: int = 0
    device: str | None = None
    progress: bool = True
    precision: str = "auto"
    output_dir: str | Path | None = None
    resume: bool = True

    #: the selection score is the dev perplexity: lower is better
    greater_is_better: ClassVar[bool] = False
    #: generation settings change no training: outside the checkpoint signature
    RUN_PARAMS = TransformerEstimator.RUN_PARAMS | set(GENERATION_SETTINGS)

    def selection_score(self) -> float | None:
        return getattr(self, "best_dev_perplexity_", None)

    # -- model construction --------------------------------------------------------------------
    def _resolve_architecture(self, config: Any) -> str:
        if self.architecture != "auto":
            return self.architecture
        if getattr(config, "is_encoder_decoder", False):
            return "encoder-decoder"
        if config.model_type in ENCODER_ONLY:
            return "bert2bert"
        return "decoder-only"

    def _build(self) -> None:
        """Load tokenizer and model; set ``architecture_``, ``model_``, ``tokenizer_``."""
        from transformers import (
            AutoConfig,
            AutoModelForCausalLM,
            AutoModelForSeq2SeqLM,
            AutoTokenizer,
            EncoderDecoderModel,
        )

        from parakit.models.base import check_pretrained
        from parakit.offline import resolve_model

        path = resolve_model(self.model_name_or_path)
        check_pretrained(path)
        try:
            config = AutoConfig.from_pretrained(path)
        except OSError as err:
            raise GeneratorError(Errors.E923_load_model_config.format(path=path, err=err)) from err
        arch = self._resolve_architecture(config)
        tokenizer = AutoTokenizer.from_pretrained(path)
        if arch == "encoder-decoder":
            model = AutoModelForSeq2SeqLM.from_pretrained(path)
        elif arch == "bert2bert":
            if config.model_type == "encoder-decoder":  # a saved warm-started model
                model = EncoderDecoderModel.from_pretrained(path)
            else:
                import transformers

                # the fresh cross-attention weights are expected to be missing
                level = transformers.logging.get_verbosity()
                transformers.logging.set_verbosity_error()
                try:
                    model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
                finally:
                    transformers.logging.set_verbosity(level)
        elif arch == "decoder-only":
            model = AutoModelForCausalLM.from_pretrained(path)
            tokenizer.padding_side = "left"
        else:
            raise GeneratorError(Errors.E924_unknown_architecture_use.format(arch=arch))
        if tokenizer.pad_token_id is None:
            if tokenizer.eos_token_id is None:
                raise GeneratorError(Errors.E925_tokenizer_neither_pad.format(path=path))
            tokenizer.pad_token = tokenizer.eos_token
        cfg = model.config
        bos = (
            tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.cls_token_id
        )
        eos = (
            tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.sep_token_id
        )
        # some configs (EncoderDecoderConfig in transformers 5) lack these attributes
        if getattr(cfg, "pad_token_id", None) is None:
            cfg.pad_token_id = tokenizer.pad_token_id
        if (
            arch in ("bert2bert", "encoder-decoder")
            and getattr(cfg, "decoder_start_token_id", None) is None
        ):
            cfg.decoder_start_token_id = bos if bos is not None else cfg.pad_token_id
        if getattr(cfg, "eos_token_id", None) is None:
            cfg.eos_token_id = eos
        if arch == "bert2bert":
            cfg.decoder.pad_token_id = cfg.pad_token_id
        generation = getattr(model, "generation_config", None)
        if generation is not None:
            for key in ("pad_token_id", "eos_token_id", "decoder_start_token_id"):
                value = getattr(cfg, key, None)
                if value is not None and getattr(generation, key, None) is None:
                    setattr(generation, key, value)
        self.architecture_ = arch
        self.tokenizer_ = tokenizer
        self.model_ = model.to(self.device_)

    # -- encoding ------------------------------------------------------------------------------
    def _prompt(self, source: str) -> list[int]:
        """A decoder-only model's prompt: the source's ids (up to ``max_length``), a separator."""
        tok = self.tokenizer_
        ids = tok(source, add_special_tokens=False, truncation=True, max_length=self.max_length)
        sep = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
        return ids["input_ids"] + [sep]

    def _encode_batch(self, batch: Sequence[tuple[str, str]]) -> dict[str, Any]:
        import torch

        tok = self.tokenizer_
        if self.architecture_ == "decoder-only":
            # prompt = source + separator; the loss only covers target + eos
            eos = self.model_.config.eos_token_id
            rows, labels = [], []
            for source, target in batch:
                src = self._prompt(source)
                tgt = tok(
                    target,
                    add_special_tokens=False,
                    truncation=True,
                    max_length=self.max_target_length,
                )["input_ids"] + [eos]
                rows.append(src + tgt)
                labels.append([-100] * len(src) + tgt)
            # right padding for training (positions stay aligned with the labels)
            return {
                "input_ids": torch.tensor(_padded(rows, tok.pad_token_id)),
                "attention_mask": torch.tensor(_padded([[1] * len(r) for r in rows], 0)),
                "labels": torch.tensor(_padded(labels, -100)),
            }
        sources = [s for s, _ in batch]
        targets = [t for _, t in batch]
        enc = tok(
            sources,
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        target_ids = tok(text_target=targets, truncation=True, max_length=self.max_target_length)[
            "input_ids"
        ]
        start = getattr(self.model_.config, "decoder_start_token_id", None)
        # models that shift labels right add the start token themselves; drop a leading copy
        target_ids = [t[1:] if t and t[0] == start else t for t in target_ids]
        return {
            "input_ids": enc["input_ids"],
            "attention_mask": enc["attention_mask"],
            "labels": torch.tensor(_padded(target_ids, -100)),
        }

    # -- training ------------------------------------------------------------------------------
    def fit(
        self,
        train: PairSet | Iterable[tuple[str, str]],
        eval_set: PairSet | Iterable[tuple[str, str]] | None = None,
    ) -> Seq2SeqGenerator:
        """Fine-tune on directed (input, output) pairs; keep the checkpoint with the lowest dev
        perplexity (the last one without a dev set).

        Args:
            train: a pair set (``text1`` -> ``text2``) or (input, output) tuples.
            eval_set: the same, for model selection.

        Returns:
            self, with ``model_``, ``tokenizer_``, ``architecture_``, ``history_`` (one entry
            per evaluation), ``best_dev_perplexity_`` and ``best_step_``.
        """
        import torch

        from parakit.evaluate.generation import PerplexityEvaluator

        train_pairs = _as_pairs(train)
        dev_pairs = _as_pairs(eval_set)
        if not train_pairs:
            raise GeneratorError(Errors.E926_training_pairs)
        torch.manual_seed(self.seed)
        self._build()
        result = train_transformer(
            self.model_,
            train_pairs,
            self._encode_batch,
            lambda model, batch: model(**batch).loss,
            self.train_settings(len(train_pairs)),
            evaluator=PerplexityEvaluator(dev_pairs) if dev_pairs else None,
            target=self,
            output_dir=self.checkpoint_dir(),
            resume=self.resume,
            signature=self.run_signature(n_pairs=len(train_pairs), n_dev=len(dev_pairs)),
        )
        self.history_: list[dict[str, float]] = [
            {
                "step": float(h["step"]),
                "epoch": float(h.get("epoch", 0.0)),
                "train_loss": float(h.get("train_loss", math.nan)),
                **({"dev_perplexity": float(h["dev_perplexity"])} if "dev_perplexity" in h else {}),
            }
            for h in result.history
        ]
        self.best_dev_perplexity_: float | None = result.best_score if dev_pairs else None
        self.best_step_: int | None = result.best_step if dev_pairs else None
        self.n_steps_ = result.steps
        self.model_.eval()
        return self

    def perplexity(self, pairs: PairSet | Iterable[tuple[str, str]]) -> float:
        """Token-level perplexity of the outputs given the inputs (``exp`` of the mean NLL)."""
        import torch

        self._check_fitted()
        data = _as_pairs(pairs)
        if not data:
            raise GeneratorError(Errors.E926_pairs_compute_perplexity)
        model, device = self.model_, self.device_
        was_training = model.training
        model.eval()
        total_loss, total_tokens = 0.0, 0
        micro = self.micro_batch_size or self.batch_size
        with torch.no_grad(), self.autocast():
            for k in range(0, len(data), micro):
                enc = {
                    key: v.to(device) for key, v in self._encode_batch(data[k : k + micro]).items()
                }
                labels = enc["labels"]
                logits = model(**enc).logits
                if self.architecture_ == "decoder-only":
                    logits, labels = logits[:, :-1], labels[:, 1:]
                loss = torch.nn.functional.cross_entropy(
                    logits.reshape(-1, logits.size(-1)).float(),
                    labels.reshape(-1),
                    ignore_index=-100,
                    reduction="sum",
                )
                total_loss += float(loss)
                total_tokens += int((labels != -100).sum())
        model.train(was_training)
        return math.exp(total_loss / max(total_tokens, 1))

    # -- generation ----------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise GeneratorError(Errors.E927_generator_model_yet)

    def generate(self, texts: Sequence[str], **overrides: Any) -> list[Any]:
        """Paraphrase each text.

        Args:
            texts: inputs.
            **overrides: generation settings for this call (``num_beams``, ``do_sample``,
                ``top_p``, ``top_k``, ``temperature``, ``max_new_tokens``,
                ``num_return_sequences``, ``repetition_penalty``, ``no_repeat_ngram_size``).

        Returns:
            One string per input, or a list of strings per input when
            ``num_return_sequences > 1``.
        """
        import torch
        from tqdm.auto import tqdm

        self._check_fitted()
        settings = {name: overrides.pop(name, getattr(self, name)) for name in GENERATION_SETTINGS}
        if overrides:
            raise GeneratorError(
                Errors.E928_unknown_generation_settings.format(overrides=sorted(overrides))
            )
        n_return = settings["num_return_sequences"]
        kwargs: dict[str, Any] = {
            "max_new_tokens": settings["max_new_tokens"],
            "num_return_sequences": n_return,
            "repetition_penalty": settings["repetition_penalty"],
            "pad_token_id": self.tokenizer_.pad_token_id,
        }
        if settings["no_repeat_ngram_size"]:
            kwargs["no_repeat_ngram_size"] = settings["no_repeat_ngram_size"]
        if settings["do_sample"]:
            kwargs.update(
                do_sample=True,
                top_p=settings["top_p"],
                top_k=settings["top_k"],
                temperature=settings["temperature"],
                num_beams=1,
            )
        else:
            beams = max(settings["num_beams"], n_return)
            kwargs.update(do_sample=False, num_beams=beams, early_stopping=beams > 1)
        if self.architecture_ != "decoder-only":
            kwargs["decoder_start_token_id"] = self.model_.config.decoder_start_token_id
            kwargs["eos_token_id"] = self.model_.config.eos_token_id
        model, tok, device = self.model_, self.tokenizer_, self.device_
        model.eval()
        torch.manual_seed(self.seed)
        out: list[Any] = []
        texts = list(texts)
        size = self.generation_batch_size
        for k in tqdm(
            range(0, len(texts), size),
            desc="generating",
            disable=not self.progress or len(texts) <= size,
        ):
            chunk = texts[k : k + size]
            with torch.no_grad(), self.autocast():
                if self.architecture_ == "decoder-only":
                    rows = [self._prompt(t) for t in chunk]
                    ids = torch.tensor(_padded(rows, tok.pad_token_id, left=True))
                    mask = torch.tensor(_padded([[1] * len(r) for r in rows], 0, left=True))
                    generated = model.generate(
                        input_ids=ids.to(device),
                        attention_mask=mask.to(device),
                        eos_token_id=model.config.eos_token_id,
                        **kwargs,
                    )
                    generated = generated[:, ids.shape[1] :]
                else:
                    enc = tok(
                        chunk,
                        padding=True,
                        truncation=True,
                        max_length=self.max_length,
                        return_tensors="pt",
                    ).to(device)
                    generated = model.generate(
                        input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], **kwargs
                    )
            decoded = [s.strip() for s in tok.batch_decode(generated, skip_special_tokens=True)]
            if n_return == 1:
                out.extend(decoded)
            else:
                out.extend(decoded[i : i + n_return] for i in range(0, len(decoded), n_return))
        return out

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Save model, tokenizer and ``parakit_model.json`` (the one model description:
        settings as ``params``, architecture, history) to a folder that :meth:`load` reads."""
        from parakit.models.base import write_model_file

        self._check_fitted()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.model_.save_pretrained(path)
        self.tokenizer_.save_pretrained(path)
        params = self.get_params(deep=False)
        params["model_name_or_path"] = str(params["model_name_or_path"])
        params["output_dir"] = None  # the checkpoints belong to the training run, not the model
        write_model_file(
            path,
            "generator",
            self,
            params,
            architecture=self.architecture_,
            history=getattr(self, "history_", []),
            best_dev_perplexity=getattr(self, "best_dev_perplexity_", None),
            best_step=getattr(self, "best_step_", None),
        )
        return path

    @classmethod
    def load(cls, path: str | Path, **overrides: Any) -> Seq2SeqGenerator:
        """Load a generator saved with :meth:`save`; ``overrides`` change settings (for example
        ``num_beams`` or ``device``; :func:`parakit.models.base.load_params`)."""
        from parakit.models.base import MODEL_FILE, load_params, read_model_file

        path = Path(path)
        info = read_model_file(path)
        if info is None or info["model_type"] != "generator":
            raise GeneratorError(
                Errors.E929_generator_saved_parakit.format(path=path, MODEL_FILE=MODEL_FILE)
            )
        params = load_params(cls, info["params"], overrides)
        params["model_name_or_path"] = str(path)
        params["architecture"] = info["architecture"]
        gen = cls.from_pretrained(**params)
        gen.history_ = info.get("history", [])
        gen.best_dev_perplexity_ = info.get("best_dev_perplexity")
        gen.best_step_ = info.get("best_step")
        return gen

    @classmethod
    def from_pretrained(cls, model_name_or_path: str | Path, **params: Any) -> Seq2SeqGenerator:
        """Use a model as it is (already fine-tuned elsewhere), without training."""
        gen = cls(model_name_or_path, **params)
        gen._build()
        gen.model_.eval()
        return gen


def select_learning_rate(
    generator: Seq2SeqGenerator,
    train: PairSet | Iterable[tuple[str, str]],
    dev: PairSet | Iterable[tuple[str, str]],
    learning_rates: Sequence[float] = (1e-4, 3e-4, 1e-5, 3e-5),
) -> tuple[Seq2SeqGenerator, dict[float, float]]:
    """Fit one copy of ``generator`` per learning rate and keep the one with the lowest dev
    perplexity (the paper's grid by default; :meth:`~TransformerEstimator.fit_grid`).

    Returns:
        ``(best_generator, {learning_rate: best_dev_perplexity})``.
    """
    train_pairs, dev_pairs = _as_pairs(train), _as_pairs(dev)
    if not dev_pairs:
        raise GeneratorError(Errors.E926_learning_rate_selection)
    return generator.fit_grid(learning_rates, lambda copy: copy.fit(train_pairs, dev_pairs))

"""Machine translation behind one interface, with a resumable disk cache (J1–J3).

* :class:`HFTranslator` — any Hugging Face seq2seq MT model by hub id or local path (Marian,
  NLLB, M2M-100: ``src_lang`` / ``tgt_lang`` select the language codes of the multilingual
  ones);
* :class:`OpenAITranslator` — any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp
  server, Ollama, OpenAI...), one request per sentence, several in flight;
* :func:`translate` — batching, progress bar, and a JSONL cache per translator
  (``<cache_dir>/<signature hash>.jsonl``) appended and fsynced after every batch: an
  interrupted run resumes where it stopped, nothing finished is translated twice;
* :func:`mt_candidates` — the Japanese corpus recipe: order sources by LM probability (J2),
  translate with two or more systems (J1), back-translate each output and score
  ``QE = Π SBLEU(e, BT_s(e))`` (J3); every pair of systems gives a candidate pair, best QE
  first.

Example (with any two translators ``a`` and ``b`` and their reverse directions):
    >>> systems = [MTSystem("A", a, a_back), MTSystem("B", b, b_back)]  # doctest: +SKIP
    >>> pairs = mt_candidates(sources, systems, cache_dir="mt-cache")  # doctest: +SKIP
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import itertools
import json
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parakit.errors import Errors, ParakitError
from parakit.schema import Pair, PairSet

logger = logging.getLogger("parakit.build")


class Translator(ABC):
    """Translates batches of sentences in one fixed direction."""

    batch_size: int = 16

    @property
    @abstractmethod
    def signature(self) -> str:
        """Everything that determines the output (model, direction, decoding); names the
        cache file."""

    @abstractmethod
    def translate_batch(self, texts: list[str]) -> list[str]:
        """Translations of ``texts``, in order."""


class HFTranslator(Translator):
    """A Hugging Face seq2seq MT model (``AutoModelForSeq2SeqLM``).

    Args:
        model: hub id (e.g. ``Helsinki-NLP/opus-mt-en-jap``, ``facebook/nllb-200-distilled-600M``)
            or local folder.
        src_lang, tgt_lang: language codes for multilingual models (NLLB ``eng_Latn`` /
            ``jpn_Jpan``; M2M-100 ``en`` / ``ja``); not needed for Marian pairs.
        batch_size: sentences per forward pass.
        max_new_tokens, num_beams: decoding.
        device: torch device (default CPU, or CUDA when available).
        revision: hub revision pin.
    """

    def __init__(
        self,
        model: str | Path,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        batch_size: int = 16,
        max_new_tokens: int = 256,
        num_beams: int = 4,
        device: str | None = None,
        revision: str | None = None,
    ) -> None:
        self.model = str(model)
        self.src_lang = src_lang
        self.tgt_lang = tgt_lang
        self.batch_size = batch_size
        self.max_new_tokens = max_new_tokens
        self.num_beams = num_beams
        self.device = device
        self.revision = revision

    @property
    def signature(self) -> str:
        return (
            f"hf:{self.model}@{self.revision or ''}|{self.src_lang}->{self.tgt_lang}"
            f"|beams={self.num_beams}|max={self.max_new_tokens}"
        )

    def _load(self) -> None:
        if hasattr(self, "model_"):
            return
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        try:
            self.tokenizer_ = AutoTokenizer.from_pretrained(self.model, revision=self.revision)
            self.model_ = AutoModelForSeq2SeqLM.from_pretrained(self.model, revision=self.revision)
        except (OSError, ValueError) as err:
            raise ParakitError(
                Errors.E505_load_mt_model.format(model=self.model, err=err)
            ) from None
        self.device_ = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model_.to(self.device_).eval()
        self.generate_kwargs_: dict[str, Any] = {}
        if self.src_lang is not None and hasattr(self.tokenizer_, "src_lang"):
            self.tokenizer_.src_lang = self.src_lang
        if self.tgt_lang is not None:
            if hasattr(self.tokenizer_, "get_lang_id"):  # M2M-100
                bos = self.tokenizer_.get_lang_id(self.tgt_lang)
            else:  # NLLB and other language-token models
                bos = self.tokenizer_.convert_tokens_to_ids(self.tgt_lang)
                if bos is None or bos == self.tokenizer_.unk_token_id:
                    raise ParakitError(
                        Errors.E505_tokenizer_language_token.format(
                            model=self.model, tgt_lang=self.tgt_lang
                        )
                    )
            self.generate_kwargs_["forced_bos_token_id"] = bos

    def translate_batch(self, texts: list[str]) -> list[str]:
        import torch

        self._load()
        encoded = self.tokenizer_(texts, return_tensors="pt", padding=True, truncation=True)
        encoded = {k: v.to(self.device_) for k, v in encoded.items()}
        with torch.inference_mode():
            generated = self.model_.generate(
                **encoded,
                max_new_tokens=self.max_new_tokens,
                num_beams=self.num_beams,
                do_sample=False,
                **self.generate_kwargs_,
            )
        return [
            t.strip() for t in self.tokenizer_.batch_decode(generated, skip_special_tokens=True)
        ]


DEFAULT_PROMPT = (
    "Translate the following text from {src} to {tgt}. Answer with the "
    "translation only, no comments or quotes."
)


class OpenAITranslator(Translator):
    """An OpenAI-compatible chat-completions endpoint.

    Args:
        model: the model name the server expects.
        base_url: e.g. ``http://localhost:8000/v1``.
        src_lang, tgt_lang: language names put in the prompt (``English``, ``Japanese``).
        api_key: default ``$OPENAI_API_KEY`` (local servers accept any).
        prompt: system prompt template with ``{src}`` and ``{tgt}``.
        temperature: 0 for deterministic output.
        batch_size: requests in flight at once.
        timeout, max_retries: per request.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        src_lang: str = "English",
        tgt_lang: str = "Japanese",
        api_key: str | None = None,
        prompt: str = DEFAULT_PROMPT,
        temperature: float = 0.0,
        batch_size: int = 8,
        timeout: float = 120.0,
        max_retries: int = 3,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.src_lang = src_lang
        self.tgt_lang = tgt_lang
        self.api_key = api_key
        self.prompt = prompt
        self.temperature = temperature
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_retries = max_retries

    @property
    def signature(self) -> str:
        digest = hashlib.sha1(self.prompt.encode()).hexdigest()[:8]
        return (
            f"openai:{self.base_url}|{self.model}|{self.src_lang}->{self.tgt_lang}"
            f"|t={self.temperature}|prompt={digest}"
        )

    def _client(self) -> Any:
        if not hasattr(self, "client_"):
            from openai import OpenAI

            self.client_ = OpenAI(
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
                api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or "none",
            )
        return self.client_

    def _one(self, text: str) -> str:
        import openai

        try:
            response = self._client().chat.completions.create(
                model=self.model,
                temperature=self.temperature,
                messages=[
                    {
                        "role": "system",
                        "content": self.prompt.format(src=self.src_lang, tgt=self.tgt_lang),
                    },
                    {"role": "user", "content": text},
                ],
            )
        except openai.OpenAIError as err:
            raise ParakitError(
                Errors.E505_translation_request_failed.format(base_url=self.base_url, err=err)
            ) from None
        content = response.choices[0].message.content
        if content is None:
            raise ParakitError(
                Errors.E505_returned_text.format(base_url=self.base_url, text_60=text[:60])
            )
        return content.strip()

    def translate_batch(self, texts: list[str]) -> list[str]:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, self.batch_size)) as ex:
            return list(ex.map(self._one, texts))


class TranslationCache:
    """Append-only JSONL cache of one translator's outputs (``{"src": ..., "out": ...}``).

    A line cut short by a crash is ignored (and logged) on the next load.
    """

    def __init__(self, directory: str | Path, signature: str) -> None:
        self.directory = Path(directory)
        self.signature = signature
        digest = hashlib.sha256(signature.encode()).hexdigest()[:16]
        self.path = self.directory / f"{digest}.jsonl"
        self.entries: dict[str, str] = {}
        if self.path.exists():
            with open(self.path, encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        logger.warning(
                            "translation cache %s: ignoring broken line %d", self.path, number
                        )
                        continue
                    if "signature" in record:
                        continue
                    self.entries[record["src"]] = record["out"]

    def add(self, sources: Sequence[str], outputs: Sequence[str]) -> None:
        """Append and fsync (the cache survives a crash right after)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        new_file = not self.path.exists()
        with open(self.path, "a", encoding="utf-8") as handle:
            if new_file:
                handle.write(json.dumps({"signature": self.signature}) + "\n")
            for src, out in zip(sources, outputs, strict=True):
                handle.write(json.dumps({"src": src, "out": out}, ensure_ascii=False) + "\n")
                self.entries[src] = out
            handle.flush()
            os.fsync(handle.fileno())


def translate(
    translator: Translator,
    texts: Sequence[str],
    cache_dir: str | Path | None = None,
    progress: bool = True,
    desc: str | None = None,
) -> list[str]:
    """Translate ``texts`` in batches, through the cache when ``cache_dir`` is given.

    Duplicates are translated once; cached sentences are not sent again.
    """
    cache = TranslationCache(cache_dir, translator.signature) if cache_dir else None
    done: dict[str, str] = dict(cache.entries) if cache else {}
    todo = [t for t in dict.fromkeys(texts) if t not in done]
    batch_size = max(1, translator.batch_size)
    batches = [todo[i : i + batch_size] for i in range(0, len(todo), batch_size)]
    iterator: Any = batches
    if progress and batches:
        from tqdm.auto import tqdm

        iterator = tqdm(batches, desc=desc or translator.signature[:40], unit="batch")
    for batch in iterator:
        outputs = translator.translate_batch(list(batch))
        if len(outputs) != len(batch):
            raise ParakitError(
                Errors.E505_returned_translations_sentences.format(
                    translator_signature=translator.signature,
                    n_outputs=len(outputs),
                    n_batch=len(batch),
                )
            )
        if cache:
            cache.add(batch, outputs)
        done.update(zip(batch, outputs, strict=True))
    return [done[t] for t in texts]


@dataclass
class MTSystem:
    """One MT system: the forward direction and, for QE, the backward direction."""

    name: str
    forward: Translator
    backward: Translator | None = None


def mt_candidates(
    sources: Sequence[str],
    systems: Sequence[MTSystem],
    cache_dir: str | Path | None = None,
    lm: Any = None,
    max_sources: int | None = None,
    lm_score: str = "sentence",
    bleu_tokenize: str = "13a",
    lang: str | None = None,
    progress: bool = True,
) -> PairSet:
    """MT round-trip candidate pairs (J1–J3).

    Args:
        sources: source-language sentences ``e_i`` (English in the paper).
        systems: two or more :class:`MTSystem`; QE needs every ``backward``.
        cache_dir: translation cache folder (resumable runs).
        lm: language model (:mod:`parakit.build.lm`); sources are translated from most to
            least probable, and only the first ``max_sources`` are kept.
        max_sources: how many sources to translate (the paper: top 500,000).
        lm_score: how the LM ranks sources: ``sentence`` (the paper's default: total log
            probability) or ``token`` (per token); see :func:`parakit.build.lm.lm_order`.
        bleu_tokenize: SacreBLEU tokenizer of the *source* language for QE.
        lang: target language code of the pair set.

    Returns:
        Pairs ``(system A output, system B output)`` for every pair of systems and source,
        highest QE first; ``metadata`` has ``source_en``, ``systems``, ``qe``,
        ``back_translations`` and ``lm_score``; ``group`` ties a source's pairs together.
    """
    from parakit.build.quality import back_translation_qe

    if len(systems) < 2:
        raise ParakitError(Errors.E505_need_least_two)
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise ParakitError(Errors.E505_system_names_must.format(names=names))
    sources = [s for s in dict.fromkeys(sources) if s.strip()]
    lm_scores: dict[str, float] = {}
    if lm is not None:
        from parakit.build.lm import lm_order

        order, scores = lm_order(sources, lm, score=lm_score)
        lm_scores = {sources[i]: float(scores[i]) for i in order}
        sources = [sources[i] for i in order]
    if max_sources is not None:
        sources = sources[:max_sources]
    outputs = {
        s.name: translate(s.forward, sources, cache_dir, progress, f"{s.name} forward")
        for s in systems
    }
    back: dict[str, list[str]] = {}
    if all(s.backward is not None for s in systems):
        for s in systems:
            assert s.backward is not None
            back[s.name] = translate(
                s.backward, outputs[s.name], cache_dir, progress, f"{s.name} back"
            )
    pairs = []
    for i, source in enumerate(sources):
        for a, b in itertools.combinations(systems, 2):
            meta: dict[str, Any] = {"source_en": source, "systems": [a.name, b.name]}
            if back:
                bts = [back[a.name][i], back[b.name][i]]
                meta["back_translations"] = bts
                meta["qe"] = round(
                    float(
                        back_translation_qe([source], [[bts[0]], [bts[1]]], tokenize=bleu_tokenize)[
                            0
                        ]
                    ),
                    6,
                )
            if source in lm_scores:
                meta["lm_score"] = round(lm_scores[source], 6)
            pairs.append(
                Pair(
                    id=f"mt-{i}-{a.name}-{b.name}",
                    text1=outputs[a.name][i],
                    text2=outputs[b.name][i],
                    source="mt",
                    group=f"src-{i}",
                    metadata=meta,
                )
            )
    if back:
        pairs.sort(key=lambda p: -p.metadata["qe"])
    return PairSet(
        pairs,
        scheme="binary",
        lang=lang,
        metadata={
            "mt": {
                "systems": {
                    s.name: {
                        "forward": s.forward.signature,
                        "backward": s.backward.signature if s.backward else None,
                    }
                    for s in systems
                },
                "n_sources": len(sources),
            }
        },
    )

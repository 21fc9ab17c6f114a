"""Sentence encoders: sentence-transformers (fp32 or bf16), ONNX Runtime (fp32), TF-IDF n-grams.

Every encoder has ``encode(texts) -> array`` (one row per text, L2-normalised by default so that
inner product = cosine) and ``signature() -> dict`` naming the settings that produced the vectors
(recorded in index and mining manifests).

Example:
    >>> from parakit.vectors.encode import TfidfEncoder
    >>> enc = TfidfEncoder().fit(["a cat sat", "a dog sat"])
    >>> enc.encode(["a cat sat"]).shape[0]
    1
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from parakit.errors import Errors, VectorError
from parakit.registry import Registry


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into row vectors (dense ``np.ndarray`` or scipy sparse)."""

    def encode(self, texts: Sequence[str]) -> Any: ...


def _dimension(model: Any) -> int:
    """Embedding size (the method was renamed in sentence-transformers 5)."""
    getter = getattr(model, "get_embedding_dimension", None)
    if getter is None:
        getter = model.get_sentence_embedding_dimension
    return int(getter())


def _token_limit(value: Any) -> int | None:
    return None if value is None or value == float("inf") else int(value)


def _model_digest(model: str | Path) -> str:
    """A short content hash of a local model folder (weights + configs; an offline alias: its
    installed folder), for manifests; a Hub id is named as it is."""
    from parakit.offline import resolve_model

    path = Path(resolve_model(model))
    if not path.exists():
        return "hub:" + str(path)
    digest = hashlib.sha1()
    for file in sorted(path.rglob("*")):
        if file.is_file() and file.suffix in (".json", ".safetensors", ".bin", ".txt", ".onnx"):
            digest.update(file.name.encode())
            digest.update(str(file.stat().st_size).encode())
            with open(file, "rb") as handle:
                digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:12]


@dataclass(eq=False, repr=False)
class SentenceEncoder:
    """A sentence-transformers model (HF id or local path); plain HF encoders get mean pooling.

    Args:
        model: Hugging Face id or local folder. A folder that is not a sentence-transformers model
            is loaded as Transformer + mean pooling (the "vanilla encoder" baseline of T17/T18).
        batch_size: texts per forward pass; larger is faster on CPU up to memory limits.
        max_seq_length: truncate inputs to this many tokens (None: the model's own limit).
        normalize: L2-normalise vectors so inner product = cosine.
        device: ``cpu`` (default) or ``cuda``.
        precision: ``auto`` (bf16 weights and activations on CPUs with AMX/AVX512-BF16 and on
            bf16 GPUs, with neighbour recall@5 >= 0.99 against fp32: docs/benchmarks.md),
            ``fp32`` or ``bf16`` (:mod:`parakit.vectors.precision`). The vectors are float32.

    sentence-transformers already sorts each ``encode`` call by length, so passing large chunks
    (thousands of texts) gives length-sorted batching for free.
    """

    model: str | Path
    batch_size: int = 64
    max_seq_length: int | None = None
    normalize: bool = True
    device: str = "cpu"
    precision: str = "auto"

    def __post_init__(self) -> None:
        from parakit.vectors.precision import resolve_precision

        # resolved once, here: a bad value fails before the first batch, and the loaded weights,
        # the signature and every Dask worker this encoder is pickled to use the same precision
        self.precision_ = resolve_precision(self.precision, self.device)

    def __getstate__(self) -> dict[str, Any]:
        # the settings travel, not the weights: a Dask worker (or any unpickler) loads the
        # model from its id or path on first use, once per process
        return {k: v for k, v in self.__dict__.items() if k != "_model"}

    @property
    def model_(self) -> Any:
        if getattr(self, "_model", None) is None:
            from parakit.vectors.loading import load_sentence_transformer

            model = load_sentence_transformer(
                self.model, device=self.device, max_seq_length=self.max_seq_length
            )
            from parakit.vectors.static import is_static_model

            # a static encoder (a token-embedding table) stays fp32: a lookup gains nothing
            if self.precision_ != "fp32" and not is_static_model(model):
                import torch

                # bf16 weights, not autocast: autocast casts every weight again for each batch
                # (its cache is off in inference mode), which ate the gain at batch 64
                model = model.to(torch.bfloat16 if self.precision_ == "bf16" else torch.float16)
            self._model = model
        return self._model

    @property
    def dim(self) -> int:
        return _dimension(self.model_)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into a float32 array of shape (len(texts), dim)."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model_.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=False,
            convert_to_tensor=True,
            show_progress_bar=False,
        )
        # pooled in bf16 with bf16 weights: normalise in float32
        vectors = vectors.float().cpu().numpy()
        if self.normalize:
            vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def signature(self) -> dict[str, Any]:
        out = {
            "encoder": "sentence-transformers",
            "model": str(self.model),
            "model_digest": _model_digest(self.model),
            "normalize": self.normalize,
            # a static encoder has no token limit (sentence-transformers says inf)
            "max_seq_length": _token_limit(self.model_.max_seq_length),
        }
        from parakit.vectors.static import is_static_model

        if is_static_model(self.model_):
            out["static"] = True
        elif self.precision_ != "fp32":  # fp32 signatures stay as they were before bf16
            out["precision"] = self.precision_
        return out


@dataclass(eq=False, repr=False)
class OnnxEncoder:
    """The same model through ONNX Runtime (fp32), with length-sorted batches.

    The transformer of a sentence-transformers model (mean pooling only) is exported once to
    ``cache_dir`` (default: ``$PARAKIT_CACHE`` or ``~/.cache/parakit/onnx/<model hash>``). Texts
    are sorted by length so each batch is padded only to its own longest text (length-bucketed
    batches: pass thousands of texts per call). The vectors are those of sentence-transformers.

    There is no int8 graph any more: on the measured CPU (AMD EPYC, AVX512-VNNI and
    AVX512-BF16, no AMX) dynamic int8 was 2x cheaper but kept only 93 % of the fp32 nearest
    neighbours, and blockwise int8 (``MatMulNBits``) kept 98.5-99 % at fp32 speed; bf16 on the
    torch backend keeps 99.7 % instead (docs/benchmarks.md#precision-bf16-and-int8-on-this-cpu,
    ``benchmarks/precision.py int8`` rebuilds both graphs and profiles them).

    Args:
        model: a sentence-transformers model folder or id with mean pooling.
        batch_size: texts per ONNX run.
        max_seq_length: token limit (None: the model's own).
        normalize: L2-normalise the pooled vectors.
        threads: intra-op threads (None: ONNX Runtime's default, all cores).
        cache_dir: where the exported graph is kept.

    Example:
        >>> enc = OnnxEncoder("path/to/all-MiniLM-L6-v2")  # doctest: +SKIP
        >>> enc.encode(["a sentence"]).shape  # doctest: +SKIP
        (1, 384)
    """

    model: str | Path
    batch_size: int = 64
    max_seq_length: int | None = None
    normalize: bool = True
    threads: int | None = None
    cache_dir: str | Path | None = None

    def _export(self) -> Path:
        from parakit.offline import cache_root

        root = Path(self.cache_dir) if self.cache_dir else cache_root() / "onnx"
        folder = root / _model_digest(self.model)
        fp32 = folder / "model.onnx"
        if fp32.exists() and (folder / "encoder.json").exists():
            return fp32
        import json

        import torch

        from parakit.vectors.loading import load_sentence_transformer

        st = load_sentence_transformer(self.model, device="cpu")
        pooling = [m for m in st if type(m).__name__ == "Pooling"]
        if not pooling or getattr(pooling[0], "pooling_mode", "mean") != "mean":
            raise VectorError(Errors.E806_onnx_path_supports.format(model=self.model))
        transformer = st[0]
        folder.mkdir(parents=True, exist_ok=True)
        transformer.tokenizer.save_pretrained(folder)
        names = [
            n
            for n in ("input_ids", "attention_mask", "token_type_ids")
            if n in transformer.tokenizer.model_input_names
        ]

        class _Wrapper(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *args: Any) -> Any:
                return self.inner(**dict(zip(names, args, strict=True))).last_hidden_state

        sample = transformer.tokenizer(["a b c", "d e"], padding=True, return_tensors="pt")
        wrapper = _Wrapper(transformer.auto_model.eval())
        tmp = folder / "model.onnx.tmp"
        with torch.no_grad():
            torch.onnx.export(
                wrapper,
                tuple(sample[n] for n in names),
                str(tmp),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, fp32)
        (folder / "encoder.json").write_text(
            json.dumps(
                {
                    "inputs": names,
                    "max_seq_length": int(st.max_seq_length),
                    "dim": _dimension(st),
                }
            )
        )
        return fp32

    def __getstate__(self) -> dict[str, Any]:
        # an ONNX Runtime session does not pickle: the unpickled copy opens its own
        return {k: v for k, v in self.__dict__.items() if k not in ("_sess", "_tokenizer")}

    def _session(self) -> Any:
        if getattr(self, "_sess", None) is None:
            import json

            import onnxruntime as ort
            from transformers import AutoTokenizer

            path = self._export()
            options = ort.SessionOptions()
            if self.threads:
                options.intra_op_num_threads = self.threads
            self._sess = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = AutoTokenizer.from_pretrained(str(path.parent))
            self._config = json.loads((path.parent / "encoder.json").read_text())
        return self._sess

    @property
    def dim(self) -> int:
        self._session()
        return int(self._config["dim"])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into a float32 array of shape (len(texts), dim)."""
        session = self._session()
        limit = self.max_seq_length or self._config["max_seq_length"]
        out = np.zeros((len(texts), self._config["dim"]), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            batch = self._tokenizer(
                [texts[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=limit,
                return_tensors="np",
            )
            feeds = {n: batch[n].astype(np.int64) for n in self._config["inputs"]}
            hidden = session.run(None, feeds)[0]
            mask = batch["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
            out[rows] = pooled
        if self.normalize:
            out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out

    def signature(self) -> dict[str, Any]:
        return {
            "encoder": "onnxruntime",
            "model": str(self.model),
            "model_digest": _model_digest(self.model),
            # fp32 graphs only now; the keys stay so that existing workdirs resume
            "quantize": False,
            "quantization": None,
            "normalize": self.normalize,
        }


@dataclass(eq=False, repr=False)
class TfidfEncoder:
    """TF-IDF character n-gram vectors (the T17/T18 baseline: char 2–3-grams), L2-normalised.

    Args:
        ngram_range: character n-gram lengths.
        analyzer: ``char`` (across word boundaries, the paper's baseline) or ``char_wb``.
        sublinear_tf: use 1 + log(tf).
        max_features: vocabulary cap (None: unlimited).
        dense: return dense float32 arrays (for FAISS) instead of scipy sparse rows.
    """

    ngram_range: tuple[int, int] = (2, 3)
    analyzer: str = "char"
    sublinear_tf: bool = False
    max_features: int | None = None
    dense: bool = False

    def fit(self, texts: Sequence[str]) -> TfidfEncoder:
        from parakit.text.similarity import char_ngram_vectorizer

        vectorizer = char_ngram_vectorizer(
            self.ngram_range,
            self.analyzer,
            sublinear_tf=self.sublinear_tf,
            max_features=self.max_features,
            dtype=np.float64,  # retrieval scores as before (the dense form is cast to float32)
        )
        texts = list(texts)
        try:
            self.vectorizer_ = vectorizer.fit(texts)
        except ValueError:  # scikit-learn's "empty vocabulary"
            raise VectorError(
                Errors.E806_tfidf_no_ngrams.format(n=len(texts), low=self.ngram_range[0])
            ) from None
        return self

    def encode(self, texts: Sequence[str]) -> Any:
        if not hasattr(self, "vectorizer_"):
            raise VectorError(Errors.E806_tfidfencoder_fitted_call)
        vectors = self.vectorizer_.transform(list(texts))  # rows are L2-normalised by default
        return vectors.toarray().astype(np.float32) if self.dense else vectors

    def signature(self) -> dict[str, Any]:
        return {
            "encoder": "tfidf",
            "analyzer": self.analyzer,
            "ngram_range": list(self.ngram_range),
            "sublinear_tf": self.sublinear_tf,
        }


def load_encoder(model: str | Path, backend: str = "torch", **options: Any) -> Any:
    """An encoder of ``model`` (a folder, a Hub id or an offline alias, resolved where the model
    is loaded: :mod:`parakit.vectors.loading`) by backend name: ``torch``
    (sentence-transformers; bf16 where the CPU has it, ``precision=``) or ``onnx`` (ONNX
    Runtime fp32, the same vectors as torch fp32). The int8 backends were removed (none was
    faster at neighbour recall@5 >= 0.99; see :class:`OnnxEncoder`).

    Example:
        >>> load_encoder("offline-minilm", backend="onnx")  # doctest: +SKIP
    """
    return ENCODERS.lookup(backend)(model, **options)


def _onnx(backend: str) -> Callable[..., OnnxEncoder]:
    def make(model: str, precision: str = "auto", **options: Any) -> OnnxEncoder:
        from parakit.vectors.precision import check_precision

        # the one rule: the torch backend takes every precision, an ONNX graph is fp32
        if check_precision(precision) not in ("auto", "fp32"):
            raise VectorError(
                Errors.E808_precision_torch_backend.format(precision=precision, backend=backend)
            )
        return OnnxEncoder(model, **options)

    return make


#: backend -> encoder factory ``(model, **options)``; other packages add backends with a
#: ``parakit.encoders`` entry point
ENCODERS: Registry[Callable[..., Any]] = Registry(
    "encoders",
    {
        "torch": SentenceEncoder,
        "onnx": _onnx("onnx"),
    },
    what="encoder backend",
    error=VectorError,
    code="E806",
)

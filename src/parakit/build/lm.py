"""N-gram language models to order source sentences by probability (J2).

The Japanese corpus translated the source sentences with the highest 5-gram LM probability
first (KenLM); :func:`lm_order` ranks by that sentence probability by default, or per token.
:func:`load_lm` gives a KenLM model when the ``kenlm`` package is installed and the path is an
ARPA / binary model; otherwise parakit's own count-based :class:`NgramLM` trained on a user
corpus:

* ``smoothing="kneser-ney"`` (default) — interpolated Kneser–Ney with one absolute discount
  ``D`` (0.75) at every order, continuation counts for the lower orders (raw counts for
  n-grams that start with ``<s>``, as KenLM does), and a uniform distribution over the
  vocabulary plus ``<unk>`` below the unigrams, so probabilities over the vocabulary sum to 1;
* ``smoothing="add-k"`` — add-k smoothing of the highest order alone (a simple baseline).

Sentences are padded with one ``<s>`` and one ``</s>``; :meth:`NgramLM.log_prob` returns the
total log10 probability including ``</s>`` (KenLM's ``score(s, bos=True, eos=True)``).

Example:
    >>> lm = NgramLM(order=2).fit(["a b", "a c", "a b"])
    >>> round(10 ** lm.log_prob("a b"), 4) > round(10 ** lm.log_prob("a c"), 4)
    True
"""

from __future__ import annotations

import gzip
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, ParakitError
from parakit.text import get_tokenizer

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


class NgramLM:
    """Count-based n-gram LM (see the module docstring for the smoothing).

    Args:
        order: n-gram order (5 in the paper).
        smoothing: ``kneser-ney`` or ``add-k``.
        discount: Kneser–Ney absolute discount, in (0, 1).
        k: add-k pseudo count.
        lowercase: lowercase tokens.
        method: tokenisation method of :func:`parakit.text.tokenize` (``whitespace`` for
            pre-tokenised text; default regex).
        lang: language of the text (``ja`` uses the morphological analyser).
    """

    def __init__(
        self,
        order: int = 5,
        smoothing: str = "kneser-ney",
        discount: float = 0.75,
        k: float = 1.0,
        lowercase: bool = False,
        method: str | None = None,
        lang: str | None = None,
    ) -> None:
        self.order = order
        self.smoothing = smoothing
        self.discount = discount
        self.k = k
        self.lowercase = lowercase
        self.method = method
        self.lang = lang

    def _tokens(self, sentence: str) -> list[str]:
        return get_tokenizer(lang=self.lang, method=self.method, lowercase=self.lowercase)(sentence)

    def tokenizer_settings(self) -> dict[str, Any]:
        """How sentences are tokenised (``method``, ``lang``, ``lowercase``), as the ARPA export
        records them for :class:`KenLM`."""
        return {"method": self.method, "lang": self.lang, "lowercase": self.lowercase}

    def _check(self) -> None:
        if self.order < 1:
            raise ParakitError(Errors.E507_order_must)
        if self.smoothing not in ("kneser-ney", "add-k"):
            raise ParakitError(Errors.E507_smoothing_must_kneser)
        if self.smoothing == "kneser-ney" and not 0 < self.discount < 1:
            raise ParakitError(Errors.E507_discount_must)
        if self.smoothing == "add-k" and self.k <= 0:
            raise ParakitError(Errors.E507_must)

    def fit(self, sentences: Iterable[str]) -> NgramLM:
        """Count n-grams of ``sentences``; returns ``self``."""
        self._check()
        n_max = self.order
        raw: list[dict[tuple[str, ...], int]] = [defaultdict(int) for _ in range(n_max + 1)]
        n_sentences = 0
        for sentence in sentences:
            words = [BOS, *self._tokens(sentence), EOS]
            n_sentences += 1
            for n in range(1, n_max + 1):
                for i in range(len(words) - n + 1):
                    gram = tuple(words[i : i + n])
                    if gram == (BOS,):
                        continue
                    raw[n][gram] += 1
        if n_sentences == 0:
            raise ParakitError(Errors.E507_fit_language_model)
        counts: list[dict[tuple[str, ...], int]] = [{} for _ in range(n_max + 1)]
        counts[n_max] = dict(raw[n_max])
        if self.smoothing == "kneser-ney":
            # lower orders: continuation counts N1+(. w), raw counts for grams starting <s>
            for n in range(1, n_max):
                cont: dict[tuple[str, ...], int] = defaultdict(int)
                for gram in raw[n + 1]:
                    cont[gram[1:]] += 1
                for gram, c in raw[n].items():
                    counts[n][gram] = c if gram[0] == BOS else cont.get(gram, 0)
        else:
            for n in range(1, n_max):
                counts[n] = dict(raw[n])
        totals: list[dict[tuple[str, ...], float]] = [{} for _ in range(n_max + 1)]
        types: list[dict[tuple[str, ...], int]] = [{} for _ in range(n_max + 1)]
        for n in range(1, n_max + 1):
            t: dict[tuple[str, ...], float] = defaultdict(float)
            ty: dict[tuple[str, ...], int] = defaultdict(int)
            for gram, c in counts[n].items():
                if c > 0:
                    t[gram[:-1]] += c
                    ty[gram[:-1]] += 1
            totals[n], types[n] = dict(t), dict(ty)
        self.counts_ = counts
        self.totals_ = totals
        self.types_ = types
        self.vocabulary_ = sorted({g[0] for g in raw[1]} - {BOS})
        self.n_sentences_ = n_sentences
        return self

    def _prob(self, word: str, history: tuple[str, ...]) -> float:
        n = len(history) + 1
        if self.smoothing == "add-k":
            v = len(self.vocabulary_) + 1
            c = self.counts_[n].get((*history, word), 0)
            total = self.totals_[n].get(history, 0.0)
            return (c + self.k) / (total + self.k * v)
        # below the unigrams: uniform over the vocabulary + <unk>
        lower = self._prob(word, history[1:]) if history else 1.0 / (len(self.vocabulary_) + 1)
        total = self.totals_[n].get(history, 0.0)
        if total == 0:
            return lower
        c = self.counts_[n].get((*history, word), 0)
        d = self.discount
        return max(c - d, 0.0) / total + d * self.types_[n][history] / total * lower

    def prob(self, word: str, history: Sequence[str] = ()) -> float:
        """``P(word | history)`` (the last ``order - 1`` history words count)."""
        if not hasattr(self, "counts_"):
            raise ParakitError(Errors.E507_ngramlm_fitted)
        # the last order-1 words; a plain negative start, never len(history) - (order - 1),
        # which goes negative on short histories and keeps too few words
        h = tuple(history)[-(self.order - 1) :] if self.order > 1 else ()
        if word not in self.vocabulary_set:
            word = UNK
        return self._prob(word, h)

    @property
    def vocabulary_set(self) -> frozenset[str]:
        """The known words (``</s>`` included); others are ``<unk>``."""
        cached = getattr(self, "_vocab_set", None)
        if cached is None or len(cached) != len(self.vocabulary_):
            self._vocab_set = cached = frozenset(self.vocabulary_)
        return cached

    def log_prob(self, sentence: str) -> float:
        """Total log10 probability of the sentence with ``<s>`` / ``</s>``."""
        words = [*self._tokens(sentence), EOS]
        history = [BOS]
        total = 0.0
        for word in words:
            total += math.log10(self.prob(word, history))
            history.append(word)
        return total

    def n_tokens(self, sentence: str) -> int:
        """Predicted tokens of the sentence (words + ``</s>``)."""
        return len(self._tokens(sentence)) + 1

    def perplexity(self, sentence: str) -> float:
        return 10 ** (-self.log_prob(sentence) / self.n_tokens(sentence))

    def save(self, path: str | Path) -> None:
        """Save as JSON (atomic; gzip-compressed when the name ends in ``.gz``)."""
        from parakit.io.atomic import save_json

        data = {
            "params": {
                "order": self.order,
                "smoothing": self.smoothing,
                "discount": self.discount,
                "k": self.k,
                "lowercase": self.lowercase,
                "method": self.method,
                "lang": self.lang,
            },
            "n_sentences": self.n_sentences_,
            "vocabulary": self.vocabulary_,
            "counts": [[[" ".join(g), c] for g, c in level.items()] for level in self.counts_],
        }
        save_json(path, data, ensure_ascii=False)

    def to_arpa(self, path: str | Path) -> None:
        """Write the Kneser–Ney model as an ARPA file (atomic) that KenLM and SRILM read.

        Interpolated Kneser–Ney is a back-off model in disguise: every seen n-gram gets its
        interpolated probability, every history ``h`` the back-off weight
        ``D * N1+(h .) / total(h)``, so a KenLM query of the file gives :meth:`log_prob`
        (up to KenLM's float32 storage).
        """
        from parakit.io.atomic import atomic_write

        if not hasattr(self, "counts_"):
            raise ParakitError(Errors.E507_ngramlm_fitted)
        if self.smoothing != "kneser-ney":
            raise ParakitError(Errors.E507_only_kneser_ney)
        d = self.discount

        def backoff(gram: tuple[str, ...]) -> float | None:
            n = len(gram) + 1
            if n > self.order or self.totals_[n].get(gram, 0.0) == 0:
                return None
            return math.log10(d * self.types_[n][gram] / self.totals_[n][gram])

        levels: list[list[str]] = []
        unigrams = [(w,) for w in (*self.vocabulary_, UNK)]
        for n in range(1, self.order + 1):
            grams = unigrams if n == 1 else [g for g, c in self.counts_[n].items() if c > 0]
            lines = []
            if n == 1:  # <s> is never predicted: the ARPA convention is log10 p = -99
                bo = backoff((BOS,))
                lines.append(f"-99\t{BOS}" + (f"\t{bo:.9f}" if bo is not None else ""))
            for gram in sorted(grams):
                logp = math.log10(self._prob(gram[-1], gram[:-1]))
                bo = backoff(gram)
                lines.append(
                    f"{logp:.9f}\t{' '.join(gram)}" + (f"\t{bo:.9f}" if bo is not None else "")
                )
            levels.append(lines)
        with atomic_write(path) as handle:
            # a "#" line before \data\ is a comment to KenLM: the tokeniser
            # settings, so that KenLM queries are tokenised as the model was trained
            handle.write(f"{ARPA_TOKENIZER_TAG} {json.dumps(self.tokenizer_settings())}\n\n")
            handle.write("\\data\\\n")
            for n, lines in enumerate(levels, 1):
                handle.write(f"ngram {n}={len(lines)}\n")
            for n, lines in enumerate(levels, 1):
                handle.write(f"\n\\{n}-grams:\n")
                handle.write("\n".join(lines) + "\n")
            handle.write("\n\\end\\\n")

    @classmethod
    def load(cls, path: str | Path) -> NgramLM:
        raw = Path(path).read_bytes()
        data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        lm = cls(**data["params"])
        lm.counts_ = [{tuple(g.split(" ")): c for g, c in level} for level in data["counts"]]
        lm.totals_, lm.types_ = [], []
        for level in lm.counts_:
            t: dict[tuple[str, ...], float] = defaultdict(float)
            ty: dict[tuple[str, ...], int] = defaultdict(int)
            for gram, c in level.items():
                if c > 0:
                    t[gram[:-1]] += c
                    ty[gram[:-1]] += 1
            lm.totals_.append(dict(t))
            lm.types_.append(dict(ty))
        lm.vocabulary_ = data["vocabulary"]
        lm.n_sentences_ = data["n_sentences"]
        return lm


#: the comment line :meth:`NgramLM.to_arpa` writes before ``\\data\\``: the tokeniser settings
ARPA_TOKENIZER_TAG = "# parakit-tokenizer:"


class KenLM:
    """A KenLM model (ARPA or binary) behind the same interface as :class:`NgramLM`.

    KenLM looks words up as they are, split at spaces, so a sentence is tokenised as the
    model's training text was before it is scored: ``"Hello, world."`` is
    ``Hello , world .`` for a model trained on tokenised text, and ``world.`` would be an
    unknown word. An ARPA file written by :meth:`NgramLM.to_arpa` records its tokeniser
    settings (a comment line before ``\\data\\``), which win; for other models give them
    here (the default is parakit's tokeniser for ``lang``: the regex one, fugashi for
    Japanese; ``method="whitespace"`` for text tokenised beforehand).

    Args:
        path: ARPA or KenLM binary file.
        lang: language of the sentences (tokeniser choice).
        method: tokenisation method (:func:`parakit.text.tokenize`).
        lowercase: lowercase the tokens (a model trained on lower-cased text).
    """

    def __init__(
        self,
        path: str | Path,
        lang: str | None = None,
        method: str | None = None,
        lowercase: bool = False,
    ) -> None:
        try:
            import kenlm
        except ImportError:
            raise ParakitError(Errors.E507_kenlm_models_need) from None
        self.path = str(path)
        if not Path(path).is_file():
            raise ParakitError(Errors.E507_language_model_file.format(path=path))
        try:
            self.model_ = kenlm.Model(self.path)
        except (OSError, RuntimeError) as err:  # KenLM's own message names the line at fault
            raise ParakitError(
                Errors.E507_kenlm_read_model.format(path=path, err=str(err)[:300])
            ) from None

        recorded = _arpa_tokenizer(Path(path))
        settings = recorded or {"method": method, "lang": lang, "lowercase": lowercase}
        self.method, self.lang = settings.get("method"), settings.get("lang")
        self.lowercase = bool(settings.get("lowercase"))
        #: where the tokeniser settings came from: ``arpa`` (recorded in the file) or ``given``
        self.tokenizer_source = "arpa" if recorded else "given"

    def _tokens(self, sentence: str) -> list[str]:
        return get_tokenizer(lang=self.lang, method=self.method, lowercase=self.lowercase)(sentence)

    def log_prob(self, sentence: str) -> float:
        """Total log10 probability with ``<s>`` / ``</s>`` of the tokenised sentence."""
        return float(self.model_.score(" ".join(self._tokens(sentence)), bos=True, eos=True))

    def n_tokens(self, sentence: str) -> int:
        """Predicted tokens of the sentence (words + ``</s>``)."""
        return len(self._tokens(sentence)) + 1


def _arpa_tokenizer(path: Path) -> dict[str, Any] | None:
    """The tokeniser settings an ARPA file of :meth:`NgramLM.to_arpa` records, else None."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    if head[:2] == b"\x1f\x8b":  # gzipped ARPA
        import zlib

        head = zlib.decompressobj(31).decompress(head)
    for line in head.decode("utf-8", errors="replace").splitlines():
        if line.startswith("\\data\\"):
            break
        if line.startswith(ARPA_TOKENIZER_TAG):
            try:
                settings = json.loads(line[len(ARPA_TOKENIZER_TAG) :])
            except json.JSONDecodeError:
                return None
            return settings if isinstance(settings, dict) else None
    return None


def load_lm(
    path: str | Path,
    lang: str | None = None,
    method: str | None = None,
    lowercase: bool = False,
) -> Any:
    """KenLM for ``.arpa`` / ``.bin`` / ``.binary`` / ``.klm`` paths, else a saved NgramLM.

    ``lang``, ``method`` and ``lowercase`` say how a KenLM model's training text was tokenised
    (see :class:`KenLM`; an ARPA export of :class:`NgramLM` records its own); a saved NgramLM
    keeps its settings."""
    suffixes = "".join(Path(path).suffixes)
    if any(s in suffixes for s in (".arpa", ".bin", ".klm")):
        return KenLM(path, lang=lang, method=method, lowercase=lowercase)
    return NgramLM.load(path)


#: how :func:`lm_order` scores a sentence; the first is the default
LM_SCORES: tuple[str, ...] = ("sentence", "token")


def lm_order(
    sentences: Sequence[str], lm: Any, score: str = "sentence"
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of ``sentences`` from most to least probable, and the scores (J2).

    Args:
        sentences: the source sentences.
        lm: a language model (:class:`NgramLM`, :class:`KenLM`).
        score: ``sentence`` (default, as in the paper: the sentence's total log10 probability,
            KenLM's ``score(s, bos=True, eos=True)``) or ``token`` (log10 probability per
            predicted token, words plus ``</s>``). The total favours short sentences, which
            are cheap to translate and easy to judge; per token ranks sentences of any length
            by how typical their words are.

    Returns:
        ``(order, scores)``: ``sentences[order[0]]`` is the most probable; ``scores[i]`` is
        the score of ``sentences[i]``. Ties keep the input order.

    Example:
        >>> lm = NgramLM(order=2).fit(["a b", "a c", "a b"])
        >>> lm_order(["a c", "a"], lm)[0].tolist(), lm_order(["a c", "a"], lm, "token")[0].tolist()
        ([1, 0], [0, 1])
    """
    if score not in LM_SCORES:
        raise ParakitError(
            Errors.E507_unknown_lm_score.format(score=score, lm_scores=" or ".join(LM_SCORES))
        )
    per_token = score == "token"
    scores = np.array(
        [lm.log_prob(s) / (lm.n_tokens(s) if per_token else 1) for s in sentences], dtype=np.float64
    )
    order = np.argsort(-scores, kind="stable")
    return order, scores

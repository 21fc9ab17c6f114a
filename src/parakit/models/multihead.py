"""The Turku multi-head paraphrase classifier (T14) and a plain multi-class comparison model.

The pair is encoded as ``[CLS] A [SEP] B [SEP]``; the features are the concatenation of five
vectors of the last layer: [CLS], the first and the last [SEP], and the mean of statement A's and
statement B's tokens. :class:`MultiHeadClassifier` puts four heads on them: the base label
(e.g. {2, 3, 4}), subsumption {none, <, >}, style {none, s} and minor deviation {none, i}; the
three flag losses count only for pairs whose base label is 4, so flag heads never learn from
pairs that cannot carry flags. Decoding takes the arg-max base label and, for 4, the arg-max of
each flag head, which always yields a valid Turku label. :class:`MultiClassClassifier` uses the
same features with one softmax over the complete label strings seen in training.

``predict_proba`` of the multi-head model is the factorised joint distribution over every
complete label (``P(4<s) = P(4)·P(<)·P(s)·P(no i)``); ``predict`` decodes head by head as in
the paper, which can differ from the arg-max of the joint for near ties.

Inputs / Requirements / Recommendations:
    * labels in the Turku scheme (``x`` must be removed first);
    * all fine-tuning settings of :class:`~parakit.models.cross_encoder.CrossEncoderClassifier`;
    * evaluate with :func:`parakit.evaluate.classification.turku_table` (Table 4 layout).

Example:
    >>> from parakit.models.multihead import decode_heads, label_space
    >>> classes = label_space(["2", "3", "4"])
    >>> len(classes), classes[:4]
    (14, ['2', '3', '4', '4s'])
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np

from parakit.errors import Errors, ModelError
from parakit.labels import get_scheme
from parakit.models.base import PairInput
from parakit.models.cross_encoder import CrossEncoderClassifier

SUBSUMPTION = ("", "<", ">")
STYLE = ("", "s")
MINOR = ("", "i")


def label_space(bases: list[str]) -> list[str]:
    """Every complete label the heads can produce: the non-4 bases, then each flag combination
    of 4 in canonical Turku spelling."""
    turku = get_scheme("turku")
    out = [b for b in bases if b != "4"]
    if "4" in bases:
        flags = itertools.product(SUBSUMPTION, MINOR, STYLE)
        out += [turku.normalize("4" + "".join(combination)) for combination in flags]
    # stable, readable order: by base, then by the combination order above
    return sorted(dict.fromkeys(out), key=lambda s: (s[0], len(s) > 1, out.index(s)))


def _parts(label: str) -> tuple[str, int, int, int]:
    """(base, subsumption index, style index, minor index) of a canonical Turku label."""
    parsed = get_scheme("turku").parse(label)
    sub = 1 if parsed.has("<") else 2 if parsed.has(">") else 0
    return parsed.base, sub, int(parsed.has("s")), int(parsed.has("i"))


def decode_heads(proba: np.ndarray, classes: list[str]) -> np.ndarray:
    """Head-by-head decoding from the factorised joint distribution over ``classes``.

    The marginals of each head are recovered from the joint (it is a product), then the
    arg-max base label is taken and, if it is 4, the arg-max of each flag.

    Example:
        >>> classes = label_space(["2", "4"])
        >>> joint = np.zeros((1, len(classes))); joint[0, classes.index("4<")] = 0.6
        >>> joint[0, classes.index("2")] = 0.4
        >>> decode_heads(joint, classes).tolist()
        ['4<']
    """
    parts = [_parts(c) for c in classes]
    bases = sorted({p[0] for p in parts})
    base_p = np.stack(
        [proba[:, [i for i, p in enumerate(parts) if p[0] == b]].sum(1) for b in bases], axis=1
    )
    best_base = [bases[i] for i in np.argmax(base_p, axis=1)]
    four = [i for i, p in enumerate(parts) if p[0] == "4"]
    out = []
    for row, base in enumerate(best_base):
        if base != "4":
            out.append(base)
            continue
        flags = []
        for position, symbols in ((1, SUBSUMPTION), (3, MINOR), (2, STYLE)):
            marg = [
                proba[row, [i for i in four if parts[i][position] == k]].sum()
                for k in range(len(symbols))
            ]
            flags.append(symbols[int(np.argmax(marg))])
        out.append(get_scheme("turku").normalize("4" + "".join(flags)))
    return np.array(out, dtype=object)


def _pooled_features(hidden: Any, input_ids: Any, attention_mask: Any, sep_id: int) -> Any:
    """Concatenate [CLS], first [SEP], last [SEP], mean of A tokens and mean of B tokens.

    Works for BERT (``[CLS] A [SEP] B [SEP]``) and RoBERTa-style (``<s> A </s></s> B </s>``)
    layouts: A is before the first separator, B between the last two.
    """
    import torch

    is_sep = input_ids == sep_id
    count = torch.cumsum(is_sep.int(), dim=1)
    n_sep = is_sep.sum(dim=1, keepdim=True)
    positions = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
    attended = attention_mask.bool()
    mask_a = (count == 0) & (positions > 0) & attended
    mask_b = (count == n_sep - 1) & ~is_sep & attended
    first_sep = is_sep.int().argmax(dim=1)
    last_sep = input_ids.shape[1] - 1 - is_sep.flip(dims=[1]).int().argmax(dim=1)
    rows = torch.arange(input_ids.shape[0], device=input_ids.device)

    def mean(mask: Any) -> Any:
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)

    return torch.cat(
        [hidden[:, 0], hidden[rows, first_sep], hidden[rows, last_sep], mean(mask_a), mean(mask_b)],
        dim=-1,
    )


def _network_class() -> Any:
    from torch import nn

    class PooledHeadsNetwork(nn.Module):
        """Encoder + five-vector pooling + one linear layer per head."""

        def __init__(self, encoder: Any, heads: dict[str, int], sep_id: int) -> None:
            super().__init__()
            self.encoder = encoder
            self.sep_id = sep_id
            hidden = encoder.config.hidden_size
            self.dropout = nn.Dropout(getattr(encoder.config, "hidden_dropout_prob", 0.1))
            self.heads = nn.ModuleDict(
                {name: nn.Linear(5 * hidden, n) for name, n in heads.items()}
            )

        def forward(self, input_ids: Any, attention_mask: Any, **extra: Any) -> dict[str, Any]:
            kwargs = {k: v for k, v in extra.items() if k == "token_type_ids"}
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, **kwargs
            ).last_hidden_state
            pooled = self.dropout(_pooled_features(hidden, input_ids, attention_mask, self.sep_id))
            return {name: head(pooled).float() for name, head in self.heads.items()}

    return PooledHeadsNetwork


class _PooledHeadsClassifier(CrossEncoderClassifier):
    """Shared network building and saving of the two pooled-feature models."""

    def _head_sizes(self) -> dict[str, int]:
        raise NotImplementedError

    def _build_network(self, source: str) -> Any:
        from transformers import AutoModel

        encoder = self._pretrained(AutoModel, source)
        sep_id = self.tokenizer_.sep_token_id
        if sep_id is None:
            raise ModelError(Errors.E713_tokenizer_separator_token.format(source=source))
        return _network_class()(encoder, self._head_sizes(), sep_id)

    def _save_network(self, folder: Path) -> None:
        import json

        import torch

        self.network_.encoder.save_pretrained(str(folder))
        torch.save(self.network_.heads.state_dict(), folder / "heads.pt")
        (folder / "heads.json").write_text(json.dumps(self._head_sizes()), encoding="utf-8")

    def _load_network(self, folder: Path) -> None:
        import torch

        self.network_ = self._build_network(str(folder))
        self.network_.heads.load_state_dict(
            torch.load(folder / "heads.pt", map_location="cpu", weights_only=True)
        )


class MultiHeadClassifier(_PooledHeadsClassifier):
    """The Turku multi-output classifier (T14); hyperparameters as
    :class:`~parakit.models.cross_encoder.CrossEncoderClassifier` (``f1`` selection =
    macro F1 over the complete labels)."""

    model_type = "multihead"

    def _fit(self, data: PairInput, dev: PairInput | None) -> None:
        turku = get_scheme("turku")
        bases = set()
        for pid, label in zip(data.ids, data.labels or [], strict=True):
            if not turku.is_valid(label) or label == "x":
                raise ModelError(Errors.E704_pair_label_turku.format(pid=pid, label=label))
            bases.add(label[0])
        self.classes_ = np.array(label_space(sorted(bases)), dtype=object)
        self.scheme_ = turku.spec()
        super()._fit(data, dev)

    def _check_dev_labels(self, dev: PairInput, classes: list[str]) -> None:
        turku = get_scheme("turku")
        for pid, label in zip(dev.ids, dev.labels or [], strict=True):
            if not turku.is_valid(label) or label == "x":
                raise ModelError(Errors.E704_development_pair_label.format(pid=pid, label=label))

    @property
    def base_labels_(self) -> list[str]:
        """The base labels of ``classes_`` (``["2", "3", "4"]``): the classes of the base head."""
        return sorted({str(c)[0] for c in self.classes_})

    def _head_sizes(self) -> dict[str, int]:
        return {"base": len(self.base_labels_), "subsumption": 3, "style": 2, "minor": 2}

    def _targets(self, labels: list[str]) -> dict[str, Any]:
        import torch

        parts = [_parts(label) for label in labels]
        index = {b: i for i, b in enumerate(self.base_labels_)}
        return {
            "base": torch.tensor([index[p[0]] for p in parts]),
            "subsumption": torch.tensor([p[1] for p in parts]),
            "style": torch.tensor([p[2] for p in parts]),
            "minor": torch.tensor([p[3] for p in parts]),
            "flag_mask": torch.tensor([p[0] == "4" for p in parts], dtype=torch.float32),
        }

    def _loss(self, network: Any, encoded: dict[str, Any], targets: dict[str, Any]) -> Any:
        import torch.nn.functional as F

        logits = network(**encoded)
        loss = F.cross_entropy(logits["base"], targets["base"])
        mask = targets["flag_mask"]
        denominator = mask.sum().clamp(min=1.0)
        for head in ("subsumption", "style", "minor"):
            # flags exist only on label 4: other pairs give the flag heads no gradient
            per_pair = F.cross_entropy(logits[head], targets[head], reduction="none")
            loss = loss + (per_pair * mask).sum() / denominator
        return loss

    def _probabilities(self, network: Any, encoded: dict[str, Any]) -> Any:
        import torch

        logits = network(**encoded)
        p = {name: value.softmax(dim=-1) for name, value in logits.items()}
        columns = []
        for label in self.classes_:
            base, sub, style, minor = _parts(str(label))
            column = p["base"][:, self.base_labels_.index(base)]
            if base == "4":
                column = (
                    column * p["subsumption"][:, sub] * p["style"][:, style] * p["minor"][:, minor]
                )
            columns.append(column)
        return torch.stack(columns, dim=1)

    def _labels_of(self, proba: np.ndarray) -> np.ndarray:
        return decode_heads(proba, [str(c) for c in self.classes_])


class MultiClassClassifier(_PooledHeadsClassifier):
    """The same pooled features with one softmax over the complete labels seen in training
    (the comparison model of T14; rare flag combinations are never predicted)."""

    model_type = "multiclass"

    def _head_sizes(self) -> dict[str, int]:
        return {"label": len(self.classes_)}

    def _loss(self, network: Any, encoded: dict[str, Any], targets: dict[str, Any]) -> Any:
        import torch.nn.functional as F

        return F.cross_entropy(network(**encoded)["label"], targets["labels"])

    def _probabilities(self, network: Any, encoded: dict[str, Any]) -> Any:
        return network(**encoded)["label"].softmax(dim=-1)

"""Training data for paraphrase generation (M10): directed pairs, BLEU filter, dedupe, test overlap.

MultiPIT trains its generators on (input, output) pairs that differ enough on the surface:
pairs whose sentence BLEU is at or above 14 are dropped. The exact computation was established
on the released, already filtered ``auto-train.csv``: SacreBLEU sentence BLEU with its default
settings (``13a`` tokenizer, ``exp`` smoothing, case-sensitive, effective order) of the
*output* (``sentence2``) against the *input* (``sentence1``) lets 100% of the file pass
(maximum 13.99); the reverse direction lets 99.57% pass. See ``docs/generation.md``.

Example:
    >>> from parakit.schema import Pair, PairSet
    >>> ps = PairSet([Pair("a", "the cat sat on the mat", "the cat sat on the mat"),
    ...               Pair("b", "the cat sat on the mat", "a feline rested on a rug")])
    >>> [p.id for p in bleu_filter(ps, threshold=14)]
    ['b']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from parakit.errors import Errors, GenerationDataError
from parakit.labels import TurkuScheme
from parakit.schema import Pair, PairSet
from parakit.text import dedup_key, sentence_bleu
from parakit.text.bleu import check_tokenizer

#: The paper's threshold (selected on the MultiPIT-auto dev set, App. F, Fig. 7).
DEFAULT_BLEU_THRESHOLD = 14.0

Directions = Literal["forward", "backward", "both", "label"]

_MIRROR = str.maketrans("<>", "><")


def directed_pairs(
    pairs: PairSet,
    directions: Directions = "label",
    reading: str | None = None,
    positives_only: bool = True,
) -> PairSet:
    """Turn a pair set into directed (input -> output) pairs: ``text1`` is the input.

    Args:
        pairs: any pair set. Unlabelled pairs (such as MultiPIT's ``auto-*`` files) count as
            paraphrases.
        directions: ``forward`` (text1 -> text2), ``backward``, ``both``, or ``label``: with a
            Turku scheme, the directions its labels allow
            (:meth:`~parakit.labels.TurkuScheme.generation_directions`: label 4 both ways,
            ``4<``/``4>`` only from the more detailed to the more general statement, nothing
            for 1-3 or flags ``i``/``s``); for any other scheme ``label`` means ``forward``.
        reading: binary reading used to keep paraphrases (scheme default when None).
        positives_only: drop pairs whose binary label is 0 or undecided.

    Returns:
        A new pair set; ids get ``>`` (forward) or ``<`` (backward) appended, and
        ``metadata["direction"]`` records the direction. A backward copy of a Turku pair
        mirrors its subsumption flag (``4<`` becomes ``4>``), so the label still points to the
        more general statement.
    """
    if directions not in ("forward", "backward", "both", "label"):
        raise GenerationDataError(Errors.E901_unknown_directions_use.format(directions=directions))
    is_turku = isinstance(pairs.scheme, TurkuScheme)
    turku = is_turku and directions == "label"
    out: list[Pair] = []
    for pair, binary in zip(pairs, pairs.binary_labels(reading), strict=True):
        if turku:
            if pair.label is None:
                continue
            dirs = pairs.scheme.generation_directions(pair.label)
        else:
            if positives_only and pair.label is not None and binary != 1:
                continue
            dirs = {
                "forward": [(1, 2)],
                "label": [(1, 2)],
                "backward": [(2, 1)],
                "both": [(1, 2), (2, 1)],
            }[directions]
        for source, _target in dirs:
            forward = source == 1
            meta = dict(
                pair.metadata, direction="forward" if forward else "backward", pair_id=pair.id
            )
            label = pair.label
            if is_turku and not forward and label is not None:
                # the subsumption arrow points to the general statement: swapped texts, swapped
                # arrow
                label = label.translate(_MIRROR)
            out.append(
                pair.replace(
                    id=f"{pair.id}{'>' if forward else '<'}",
                    text1=pair.text1 if forward else pair.text2,
                    text2=pair.text2 if forward else pair.text1,
                    span1=pair.span1 if forward else pair.span2,
                    span2=pair.span2 if forward else pair.span1,
                    label=label,
                    metadata=meta,
                )
            )
    return pairs.derive(out)


def pair_bleu(pairs: PairSet, tokenize: str = "13a", lowercase: bool = False) -> list[float]:
    """Sentence BLEU of each pair's output (``text2``) against its input (``text1``), 0–100.

    The direction and settings are those that reproduce MultiPIT's filter (module docstring).

    Raises:
        GenerationDataError: a tokenizer SacreBLEU does not know (E902) or cannot load (E903).
    """
    check_tokenizer(tokenize)
    return [
        sentence_bleu(p.text2, [p.text1], tokenize=tokenize, lowercase=lowercase) for p in pairs
    ]


def bleu_filter(
    pairs: PairSet,
    threshold: float = DEFAULT_BLEU_THRESHOLD,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> PairSet:
    """Drop pairs whose sentence BLEU (output vs input) is ``>= threshold``.

    Args:
        pairs: directed pairs (``text1`` input, ``text2`` output).
        threshold: BLEU on the 0–100 scale; 14 in MultiPIT.
        tokenize: SacreBLEU tokenizer (``13a``; ``ja-mecab`` or ``char`` for Japanese).
        lowercase: case-insensitive BLEU (not the paper's setting).

    Returns:
        The kept pairs, each with ``metadata["bleu"]``.
    """
    scores = pair_bleu(pairs, tokenize=tokenize, lowercase=lowercase)
    return pairs.derive(
        [
            p.replace(metadata=dict(p.metadata, bleu=round(s, 4)))
            for p, s in zip(pairs, scores, strict=True)
            if s < threshold
        ],
    )


def deduplicate(pairs: PairSet, drop_identical: bool = True) -> PairSet:
    """Drop repeated (input, output) pairs, compared case- and punctuation-insensitively
    (:func:`parakit.text.dedup_key`), keeping the first; with ``drop_identical`` also drop pairs
    whose output equals the input under that key (copies teach a generator to copy)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for pair in pairs:
        key = (dedup_key(pair.text1), dedup_key(pair.text2))
        if key in seen or (drop_identical and key[0] == key[1]):
            continue
        seen.add(key)
        out.append(pair)
    return pairs.derive(out)


def remove_test_overlap(
    pairs: PairSet,
    test: PairSet | Iterable[Pair],
    by_group: bool = True,
    by_text: bool = True,
) -> PairSet:
    """Remove training pairs that share a group (trend, URL, document) or a sentence with a
    test set, so the test set stays unseen (MultiPIT §4.1, M9).

    Args:
        pairs: training pairs.
        test: the test pairs (a multi-reference set read with
            :func:`parakit.io.read_multireference` works: its sources and references count).
        by_group: drop pairs whose ``group`` is a test group.
        by_text: drop pairs containing any test sentence (compared with
            :func:`parakit.text.dedup_key`).
    """
    test_pairs = list(test)
    groups = {p.group for p in test_pairs if p.group is not None}
    texts = {dedup_key(t) for p in test_pairs for t in (p.text1, p.text2)}

    def keep(pair: Pair) -> bool:
        if by_group and pair.group is not None and pair.group in groups:
            return False
        return not (by_text and (dedup_key(pair.text1) in texts or dedup_key(pair.text2) in texts))

    return pairs.filter(keep)


@dataclass
class GenerationDataReport:
    """How many pairs each preparation step kept."""

    steps: list[tuple[str, int]] = field(default_factory=list)

    def add(self, name: str, count: int) -> None:
        self.steps.append((name, count))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.steps)


def prepare_generation_data(
    pairs: PairSet,
    directions: Directions = "label",
    reading: str | None = None,
    bleu_threshold: float | None = DEFAULT_BLEU_THRESHOLD,
    dedupe: bool = True,
    test: PairSet | None = None,
    tokenize: str = "13a",
) -> tuple[PairSet, GenerationDataReport]:
    """Directed pairs -> test-overlap removal -> dedupe -> BLEU filter, with counts.

    Args:
        pairs: the corpus.
        directions: see :func:`directed_pairs`.
        reading: binary reading for keeping paraphrases.
        bleu_threshold: drop pairs at or above this BLEU; None disables the filter.
        dedupe: see :func:`deduplicate`.
        test: a test set whose groups and sentences must not appear in training.
        tokenize: SacreBLEU tokenizer for the filter.

    Returns:
        ``(pairs, report)``.

    Raises:
        GenerationDataError: no pair is left (E904; the first step that left none is named).

    Example:
        >>> from parakit.schema import Pair, PairSet
        >>> ps = PairSet([Pair("a", "I love this song so much", "I adore that tune")])
        >>> out, report = prepare_generation_data(ps, directions="both")
        >>> report.to_dict()
        {'input': 1, 'directed': 2, 'dedupe': 2, 'bleu<14': 2}
    """
    report = GenerationDataReport()
    report.add("input", len(pairs))
    out = directed_pairs(pairs, directions=directions, reading=reading)
    report.add("directed", len(out))
    if test is not None:
        out = remove_test_overlap(out, test)
        report.add("test-overlap", len(out))
    if dedupe:
        out = deduplicate(out)
        report.add("dedupe", len(out))
    if bleu_threshold is not None:
        out = bleu_filter(out, threshold=bleu_threshold, tokenize=tokenize)
        report.add(f"bleu<{bleu_threshold:g}", len(out))
    if not out:
        step = next((name for name, count in report.steps if count == 0), report.steps[-1][0])
        raise GenerationDataError(
            Errors.E904_no_pair_left.format(step=step, counts=report.to_dict())
        )
    out.metadata = dict(out.metadata, generation_data=report.to_dict())
    return out, report

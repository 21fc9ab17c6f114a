"""Label schemes: parse, validate and print labels, and read them as binary decisions.

A :class:`LabelScheme` turns label strings into :class:`Label` values and knows the readings
of its labels that the papers use (the Turku *loose* and *strict* binary readings and its
*generation* reading, the crowd vote threshold of MultiPIT, ...).

Example:
    >>> from parakit.labels import get_scheme
    >>> turku = get_scheme("turku")
    >>> label = turku.parse("4si<")
    >>> str(label), label.base, label.flags
    ('4<is', '4', ('<', 'i', 's'))
    >>> turku.to_binary(label), turku.to_binary(label, reading="strict")
    (1, 0)
    >>> get_scheme("votes", threshold=3).to_binary("3") is None   # a tie is undecided
    True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from parakit.errors import Errors, LabelError
from parakit.registry import Registry


@dataclass(frozen=True, slots=True)
class Label:
    """A parsed label: a base value and (Turku only) an ordered tuple of flags."""

    base: str
    flags: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.base + "".join(self.flags)

    def has(self, flag: str) -> bool:
        """Whether the label carries ``flag``."""
        return flag in self.flags


LabelLike = Label | str | int


class LabelScheme(ABC):
    """A set of valid labels with parsing, printing and binary readings.

    Subclasses define :attr:`name`, :meth:`parse`, :attr:`values` and their readings.
    """

    name: ClassVar[str]
    #: the reading used when ``to_binary`` is called without one
    default_reading: ClassVar[str] = "default"

    @abstractmethod
    def parse(self, value: LabelLike) -> Label:
        """Parse ``value`` into a :class:`Label`; raise :class:`LabelError` when it is invalid."""

    @property
    @abstractmethod
    def values(self) -> list[str]:
        """The valid label strings, in display order (flag combinations included)."""

    def readings(self) -> dict[str, Callable[[Label], int | None]]:
        """Binary readings of this scheme: name -> function from label to 1, 0 or None (dropped)."""
        return {}

    def normalize(self, value: LabelLike) -> str:
        """The canonical string of ``value``."""
        return str(self.parse(value))

    def is_valid(self, value: LabelLike) -> bool:
        try:
            self.parse(value)
        except LabelError:
            return False
        return True

    def to_binary(self, value: LabelLike, reading: str | None = None) -> int | None:
        """Read a label as paraphrase (1), not paraphrase (0) or undecided/dropped (None)."""
        label = self.parse(value)
        readings = self.readings()
        name = reading or self.default_reading
        if name not in readings:
            if not readings:
                raise LabelError(Errors.E203_label_scheme_binary.format(name=self.name))
            raise LabelError(
                Errors.E203_unknown_reading_label.format(
                    name=name, name_2=self.name, readings=sorted(readings)
                )
            )
        return readings[name](label)

    def spec(self) -> dict[str, Any]:
        """A JSON-serialisable description, the inverse of :func:`scheme_from_spec`."""
        return {"name": self.name}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelScheme) and self.spec() == other.spec()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.spec().items())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.spec().items() if k != "name")
        return f"{type(self).__name__}({args})"

    @staticmethod
    def _as_text(value: LabelLike) -> str:
        if isinstance(value, Label):
            return str(value)
        if isinstance(value, bool):
            return str(int(value))
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        if not isinstance(value, str):
            raise LabelError(Errors.E201_label_must_string.format(value=value))
        return value.strip()


class _EnumeratedScheme(LabelScheme):
    """A scheme whose labels are a fixed list of strings."""

    _values: ClassVar[tuple[str, ...]] = ()
    _aliases: ClassVar[dict[str, str]] = {}

    def parse(self, value: LabelLike) -> Label:
        text = self._as_text(value)
        text = self._aliases.get(text, text)
        if text not in self._values:
            raise LabelError(
                Errors.E201_invalid_label_scheme.format(
                    text=text, name=self.name, values=", ".join(self._values)
                )
            )
        return Label(text)

    @property
    def values(self) -> list[str]:
        return list(self._values)


class TurkuScheme(LabelScheme):
    """The Turku Paraphrase Corpus labels (T7).

    Base labels ``1`` (unrelated), ``2`` (related but not paraphrase), ``3`` (paraphrase in
    context), ``4`` (paraphrase in all contexts) and ``x`` (skipped). Label ``4`` may carry the
    flags ``<`` or ``>`` (subsumption; mutually exclusive), ``s`` (style) and ``i`` (minor
    deviation). Flags are printed in the canonical order ``<``/``>``, ``i``, ``s`` (``4<is``).

    Readings:
        * ``loose`` (default): 3 and 4 with any flags are paraphrases, 1 and 2 are not, x is
          dropped.
        * ``strict``: the upstream README mapping (``i`` → 2, ``<``/``>`` → 3), then only
          label 4 is a paraphrase.
    """

    name = "turku"
    default_reading = "loose"
    BASES: ClassVar[tuple[str, ...]] = ("1", "2", "3", "4", "x")
    FLAG_ORDER: ClassVar[tuple[str, ...]] = ("<", ">", "i", "s")

    def parse(self, value: LabelLike) -> Label:
        text = self._as_text(value)
        if not text:
            raise LabelError(Errors.E201_empty_turku_label)
        base, flags = text[0], text[1:]
        if base not in self.BASES:
            raise LabelError(Errors.E201_invalid_turku_label.format(text=text))
        if flags and base != "4":
            raise LabelError(Errors.E202_invalid_turku_label.format(text=text))
        unknown = [f for f in flags if f not in self.FLAG_ORDER]
        if unknown:
            raise LabelError(
                Errors.E202_invalid_turku_label_unknown.format(text=text, unknown="".join(unknown))
            )
        if len(set(flags)) != len(flags):
            raise LabelError(Errors.E202_invalid_turku_label_repeated.format(text=text))
        if "<" in flags and ">" in flags:
            raise LabelError(Errors.E202_invalid_turku_label_subsumption.format(text=text))
        ordered = tuple(f for f in self.FLAG_ORDER if f in flags)
        return Label(base, ordered)

    @property
    def values(self) -> list[str]:
        out = ["1", "2", "3"]
        for sub in ("", "<", ">"):
            for minor in ("", "i"):
                for style in ("", "s"):
                    out.append("4" + sub + minor + style)
        out.append("x")
        return out

    def base_of(self, value: LabelLike | None) -> str | None:
        """The base label ``1``-``4`` of a label, None for ``x`` and for no label: the one
        place a Turku label is read by its base (never ``label[0]``; a bad label raises).

        Example:
            >>> [TurkuScheme().base_of(v) for v in ("4<i", "2", "x", None)]
            ['4', '2', None, None]
        """
        if value is None or value == "":
            return None
        base = self.parse(value).base
        return None if base == "x" else base

    def strict(self, value: LabelLike) -> Label:
        """The strict reading as a label: ``i`` → 2, otherwise ``<``/``>`` → 3, else unchanged."""
        label = self.parse(value)
        if label.base != "4":
            return label
        if label.has("i"):
            return Label("2")
        if label.has("<") or label.has(">"):
            return Label("3")
        return label

    def reduce(self, value: LabelLike, level: str = "subsumption") -> Label:
        """Drop flags for agreement on reduced labels (T9).

        ``level="subsumption"`` keeps the base and ``<``/``>``; ``level="base"`` keeps the base.
        """
        label = self.parse(value)
        if level == "base":
            return Label(label.base)
        if level == "subsumption":
            return Label(label.base, tuple(f for f in label.flags if f in "<>"))
        raise LabelError(Errors.E200_unknown_reduction_level.format(level=level))

    def generation_directions(self, value: LabelLike) -> list[tuple[int, int]]:
        """Directed (source, target) statement indices usable for generation training.

        Labels 1, 2, 3, x and flags ``i``/``s`` yield nothing. A subsumption pair yields one
        direction, from the more detailed statement to the more general one (``4<``: txt1 is
        more general, so ``(2, 1)``); other label-4 pairs yield both directions.
        """
        label = self.parse(value)
        if label.base != "4" or label.has("i") or label.has("s"):
            return []
        if label.has("<"):
            return [(2, 1)]
        if label.has(">"):
            return [(1, 2)]
        return [(1, 2), (2, 1)]

    def readings(self) -> dict[str, Callable[[Label], int | None]]:
        def loose(label: Label) -> int | None:
            if label.base == "x":
                return None
            return int(label.base in ("3", "4"))

        def strict(label: Label) -> int | None:
            if label.base == "x":
                return None
            return int(self.strict(label).base == "4")

        return {"loose": loose, "strict": strict}


class BinaryScheme(_EnumeratedScheme):
    """Binary labels ``0`` (not paraphrase) and ``1`` (paraphrase)."""

    name = "binary"
    _values = ("0", "1")
    _aliases: ClassVar[dict[str, str]] = {
        "True": "1",
        "False": "0",
        "true": "1",
        "false": "0",
        "yes": "1",
        "no": "0",
    }

    def readings(self) -> dict[str, Callable[[Label], int | None]]:
        return {"default": lambda label: int(label.base)}


class GradedScheme(_EnumeratedScheme):
    """Graded labels 1–4 as in Opusparcus (4 good, 3 mostly good, 2 mostly bad, 1 bad).

    The default binary reading calls 3 and 4 paraphrases.
    """

    name = "graded"
    _values = ("1", "2", "3", "4")

    def readings(self) -> dict[str, Callable[[Label], int | None]]:
        return {"default": lambda label: int(label.base in ("3", "4"))}


class JapaneseScheme(_EnumeratedScheme):
    """The four labels of the Japanese MT paraphrase corpus (J6).

    Positive and Negative are kept (1 and 0); Unnatural and Other are dropped (None).
    """

    name = "japanese"
    _values = ("Positive", "Negative", "Unnatural", "Other")
    _aliases: ClassVar[dict[str, str]] = {
        "positive": "Positive",
        "negative": "Negative",
        "unnatural": "Unnatural",
        "other": "Other",
    }

    def readings(self) -> dict[str, Callable[[Label], int | None]]:
        mapping = {"Positive": 1, "Negative": 0}
        return {"default": lambda label: mapping.get(label.base)}


class VoteScheme(LabelScheme):
    """Crowd vote counts: the label is the number of paraphrase votes out of ``n_judgments`` (M4).

    The binary reading is ``> threshold`` → 1, ``< threshold`` → 0 and ``= threshold`` →
    undecided (None, the pair is dropped). MultiPIT uses 6 judgments with threshold 3; its
    strict variant uses threshold 4.
    """

    name = "votes"

    def __init__(self, n_judgments: int = 6, threshold: int = 3) -> None:
        for name, value in (("n_judgments", n_judgments), ("threshold", threshold)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise LabelError(Errors.E204_must_integer_got.format(name=name, value=value))
        if not 0 <= threshold <= n_judgments:
            raise LabelError(
                Errors.E204_vote_threshold_must.format(threshold=threshold, n_judgments=n_judgments)
            )
        self.n_judgments = n_judgments
        self.threshold = threshold

    def parse(self, value: LabelLike) -> Label:
        text = self._as_text(value)
        if not text.isdigit() or not 0 <= int(text) <= self.n_judgments:
            raise LabelError(
                Errors.E201_invalid_vote_count.format(text=text, n_judgments=self.n_judgments)
            )
        return Label(str(int(text)))

    @property
    def values(self) -> list[str]:
        return [str(i) for i in range(self.n_judgments + 1)]

    def readings(self) -> dict[str, Callable[[Label], int | None]]:
        def threshold(label: Label) -> int | None:
            votes = int(label.base)
            if votes == self.threshold:
                return None
            return int(votes > self.threshold)

        return {"default": threshold}

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "n_judgments": self.n_judgments, "threshold": self.threshold}


class LikertScheme(_EnumeratedScheme):
    """A 5-point Likert scale 1–5 for human evaluation of generations (M13); no binary reading."""

    name = "likert"
    _values = ("1", "2", "3", "4", "5")


_BUILT_IN = (TurkuScheme, BinaryScheme, GradedScheme, JapaneseScheme, VoteScheme, LikertScheme)
#: name -> scheme class; other packages add schemes with a ``parakit.schemes`` entry point
SCHEMES: Registry[type[LabelScheme]] = Registry(
    "schemes", {c.name: c for c in _BUILT_IN}, what="label scheme", error=LabelError, code="E205"
)


def available_schemes() -> list[str]:
    """Names accepted by :func:`get_scheme`."""
    return sorted(SCHEMES)


def get_scheme(name: str | LabelScheme, **params: Any) -> LabelScheme:
    """Build a label scheme by name (``turku``, ``binary``, ``graded``, ``japanese``, ``votes``,
    ``likert``); ``params`` go to its constructor (``get_scheme("votes", threshold=4)``)."""
    if isinstance(name, LabelScheme):
        return name
    return SCHEMES.lookup(name)(**params)


def scheme_from_spec(spec: dict[str, Any] | str) -> LabelScheme:
    """Rebuild a scheme from :meth:`LabelScheme.spec`."""
    if isinstance(spec, str):
        return get_scheme(spec)
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise LabelError(Errors.E205_label_scheme_spec.format(spec=str(spec)[:100]))
    params = dict(spec)
    name = params.pop("name")
    try:
        return get_scheme(name, **params)
    except TypeError:
        raise LabelError(
            Errors.E205_label_scheme_does.format(name=name, params=sorted(params))
        ) from None

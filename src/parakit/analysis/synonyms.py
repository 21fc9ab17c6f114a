"""Synonym resources for the synonym patterns of T13.

Two sources are read:

* a user synonym file: UTF-8 text, one synonym set per line, words separated by tabs, commas or
  ``|``; blank lines and lines starting with ``#`` are skipped;
* a MyThes thesaurus (the LibreOffice format: first line the encoding, then ``word|n`` followed
  by ``n`` lines ``(pos)|syn1|syn2...``). Debian ships them as ``mythes-sv`` (Swedish, from
  Folkets synonymlexikon) and ``mythes-en-us`` (English, from WordNet) under
  ``/usr/share/mythes``; :meth:`SynonymResource.shipped` finds them. Entries marked
  ``(generic term)``, ``(related term)``, ``(antonym)`` ... are not synonyms and are skipped.

No Finnish thesaurus is shipped by a package we can depend on: pass a synonym file for Finnish,
or induce one from the corpus (:func:`induce_synonyms`: single-word substitutions of label-4
pairs, written by :func:`write_thesaurus` as a synonym file).

Example:
    >>> res = SynonymResource.from_sets([["car", "automobile"], ["big", "large"]])
    >>> res.are_synonyms("Car", "automobile"), res.are_synonyms("car", "large")
    (True, False)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from parakit.analysis import _text
from parakit.errors import DataFormatError, Errors
from parakit.schema import PairSet

#: Where Debian's mythes-* packages put their thesauri.
MYTHES_DIRS = (Path("/usr/share/mythes"), Path("/usr/share/myspell/dicts"))
_MYTHES_NAMES = {"en": "th_en_US_v2.dat", "sv": "th_sv_SE_v2.dat"}
_SPLIT = re.compile(r"[\t,|]")


@dataclass
class SynonymResource:
    """Symmetric single-word synonym relation, lowercased.

    Attributes:
        synonyms: word -> the set of its synonyms.
        name: where it came from (file path or ``sets``), recorded in report signatures.
    """

    synonyms: dict[str, set[str]] = field(default_factory=dict)
    name: str = "sets"
    #: pairs of an induced thesaurus with the number of pairs that showed them
    counts: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)

    def add(self, words: Iterable[str]) -> None:
        """Make every word of ``words`` a synonym of every other (single words only)."""
        group = {w.strip().lower() for w in words if w.strip() and " " not in w.strip()}
        for word in group:
            self.synonyms.setdefault(word, set()).update(group - {word})

    def are_synonyms(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` (case-insensitive, different words) are listed as synonyms."""
        a, b = a.lower(), b.lower()
        return a != b and b in self.synonyms.get(a, ())

    def __len__(self) -> int:
        return len(self.synonyms)

    @classmethod
    def from_sets(cls, sets: Iterable[Iterable[str]], name: str = "sets") -> SynonymResource:
        """From an iterable of synonym sets."""
        res = cls(name=name)
        for group in sets:
            res.add(group)
        return res

    @classmethod
    def from_file(cls, path: str | Path) -> SynonymResource:
        """Read a user synonym file (one set per line; tab, comma or ``|`` separated).

        Raises:
            DataFormatError: the file is missing, not UTF-8, or a line has a single word.
        """
        path = Path(path)
        if not path.exists():
            raise DataFormatError(Errors.E1010_synonym_file_found, path=path)
        res = cls(name=str(path))
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as err:
            raise DataFormatError(
                Errors.E1011_synonym_file_utf.format(err=err), path=path
            ) from None
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            words = [w for w in _SPLIT.split(line) if w.strip()]
            if len(words) < 2:
                raise DataFormatError(Errors.E1012_synonym_line_needs, path=path, line=number)
            res.add(words)
        return res

    @classmethod
    def from_mythes(cls, path: str | Path) -> SynonymResource:
        """Read a MyThes ``.dat`` thesaurus (LibreOffice format)."""
        path = Path(path)
        if not path.exists():
            raise DataFormatError(Errors.E1010_thesaurus_file_found, path=path)
        raw = path.read_bytes()
        first, _, body = raw.partition(b"\n")
        encoding = first.decode("ascii", errors="replace").strip() or "utf-8"
        try:
            text = body.decode(encoding, errors="replace")
        except LookupError:
            raise DataFormatError(
                Errors.E1011_unknown_encoding_first.format(encoding=encoding), path=path, line=1
            ) from None
        res = cls(name=str(path))
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            head = lines[i]
            i += 1
            word, sep, count = head.rpartition("|")
            if not sep or not count.strip().isdigit():
                continue
            for line in lines[i : i + int(count)]:
                parts = line.split("|")[1:]  # the first field is the (pos)
                plain = [p for p in parts if "(" not in p]
                res.add([word, *plain])
            i += int(count)
        return res

    @classmethod
    def shipped(cls, lang: str | None) -> SynonymResource | None:
        """The thesaurus an OS package ships for ``lang`` (``en``, ``sv``), or None."""
        path = shipped_thesaurus(lang)
        return _load_mythes_cached(str(path)) if path is not None else None


def shipped_thesaurus(lang: str | None) -> Path | None:
    """Path of the MyThes thesaurus installed for ``lang``, or None."""
    name = _MYTHES_NAMES.get((lang or "").split("-")[0].lower())
    if name is None:
        return None
    for folder in MYTHES_DIRS:
        if (folder / name).exists():
            return folder / name
    return None


@lru_cache(maxsize=4)
def _load_mythes_cached(path: str) -> SynonymResource:
    return SynonymResource.from_mythes(path)


def load_synonyms(
    spec: str | Path | SynonymResource | None, lang: str | None
) -> SynonymResource | None:
    """Resolve a synonym option: None, ``"auto"`` (a shipped thesaurus for ``lang`` if any),
    a path (``.dat`` = MyThes, otherwise a synonym file), or a ready resource (e.g. from
    :func:`induce_synonyms`)."""
    if spec is None or isinstance(spec, SynonymResource):
        return spec
    if str(spec) == "auto":
        return SynonymResource.shipped(lang)
    if str(spec) == "induced":
        from parakit.errors import AnalysisError

        raise AnalysisError(Errors.E1023_induced_synonyms_come)
    path = Path(spec)
    return (
        SynonymResource.from_mythes(path)
        if path.suffix == ".dat"
        else SynonymResource.from_file(path)
    )


#: Subsumption flags: one side is more specific (a hypernym, not a synonym).
_SUBSUMPTION = ("<", ">")


def substitutions(
    pairs: PairSet,
    lang: str | None = None,
    *,
    exclude_flags: Iterable[str] = _SUBSUMPTION,
) -> Counter[tuple[str, str]]:
    """Single-word lemma substitutions between the two sides of the label-4 pairs (T13).

    Each side becomes its lemma sequence (the pattern detector's words and simplemma lemmas);
    :class:`difflib.SequenceMatcher` aligns the two, and every aligned block where exactly one
    lemma replaces exactly one other lemma at the same position is a substitution. Function
    words, numbers and one-letter tokens are skipped (a changed pronoun or digit is no synonym),
    and so are two lemmas of which one is an inflected form of the other
    (:func:`inflection_check`: the lemmatiser read *halua* as the noun *halu* where the other
    side's *haluaa* is the verb *haluta*).
    Each pair counts a substitution once; the key is the lemma pair in sorted order.

    Args:
        pairs: a Turku-scheme pair set.
        lang: lemmatiser / function-word language (default: the set's).
        exclude_flags: label-4 pairs with any of these flags are skipped (default the
            subsumption flags ``<``/``>``: one side is more specific).

    Raises:
        AnalysisError: the set does not use Turku labels (E1022).

    Example:
        >>> from parakit.schema import Pair
        >>> ps = PairSet([Pair("1", "Talo on suuri.", "Talo on iso.", "4"),
        ...               Pair("2", "Suuri koira.", "Iso kissa.", "4")], scheme="turku")
        >>> dict(substitutions(ps, "fi"))
        {('iso', 'suuri'): 1}
    """
    from difflib import SequenceMatcher

    from parakit.analysis.function_words import function_words
    from parakit.errors import AnalysisError

    if pairs.scheme.name != "turku":
        raise AnalysisError(
            Errors.E1022_inducing_synonyms_needs.format(pairs_scheme_name=pairs.scheme.name)
        )
    lang = lang or pairs.lang
    skip = function_words(lang)
    inflected = inflection_check(lang)
    flags = set(exclude_flags)
    counts: Counter[tuple[str, str]] = Counter()
    for pair in pairs:
        if pair.label is None:
            continue
        label = pairs.scheme.parse(pair.label)
        if label.base != "4" or flags & set(label.flags):
            continue
        sides = []
        for text in (pair.text1, pair.text2):
            words = _text.words(text)
            sides.append((words, [_text.lemma(w, lang) for w in words]))
        (w1, l1), (w2, l2) = sides
        found = set()
        matcher = SequenceMatcher(None, l1, l2, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op != "replace" or i2 - i1 != 1 or j2 - j1 != 1:
                continue
            a, b = l1[i1], l2[j1]
            if a == b or not _is_content(w1[i1], a, skip) or not _is_content(w2[j1], b, skip):
                continue
            if inflected(w1[i1], a, w2[j1], b):  # a lemmatiser error, not a synonym
                continue
            found.add((a, b) if a < b else (b, a))
        counts.update(found)
    return counts


def inflection_check(lang: str | None) -> Callable[[str, str, str, str], bool]:
    """``inflected(word1, lemma1, word2, lemma2)``: whether the two lemmas a substitution pairs
    are forms of one word, read apart by the lemmatiser (which gives one reading per word).

    Finnish with Voikko installed: when one word has a reading whose base form is the other's
    lemma (*halua* = *halu* or *haluta*; *lähetti* = *lähetti* or *lähettää*). Otherwise (other
    languages, or no Voikko): when the shorter lemma, of at least 4 letters, and the longer
    share all but at most 2 letters of the shorter one, and the longer adds at most 3
    (*halu*/*haluta*, *lähetti*/*lähettää*; not *alkaa*/*aloittaa*).
    """
    if _text.base_lang(lang) == "fi":
        from parakit.analysis.verbs import finnish_analyser

        analyser = finnish_analyser()
        if analyser is not None:

            def by_readings(word1: str, lemma1: str, word2: str, lemma2: str) -> bool:
                return lemma2 in analyser.baseforms(word1) or lemma1 in analyser.baseforms(word2)

            return by_readings
    return _same_stem


def _same_stem(word1: str, lemma1: str, word2: str, lemma2: str) -> bool:
    short, long = sorted((lemma1, lemma2), key=len)
    if len(short) < 4 or len(long) - len(short) > 3:
        return False
    pairs = zip(short, long, strict=False)
    shared = next((i for i, (x, y) in enumerate(pairs) if x != y), len(short))
    return shared >= 4 and len(short) - shared <= 2


def _is_content(word: str, lemma: str, function_words: frozenset[str]) -> bool:
    return (
        len(lemma) > 1
        and word not in function_words
        and lemma not in function_words
        and not any(ch.isdigit() for ch in word)
    )


def induce_synonyms(
    pairs: PairSet, lang: str | None = None, *, min_count: int = 2, name: str | None = None
) -> SynonymResource:
    """A thesaurus of the corpus itself: the :func:`substitutions` seen in at least
    ``min_count`` label-4 pairs (T13 for languages without a packaged thesaurus, e.g. Finnish).

    With ``min_count=2`` every entry is backed by at least two pairs, so a pair never counts as
    a synonym substitution on its own evidence alone.
    """
    kept = {k: n for k, n in substitutions(pairs, lang).items() if n >= min_count}
    label = name or f"induced from {pairs.name or 'corpus'} (>= {min_count} pairs)"
    res = SynonymResource(name=label, counts=kept)
    for pair in kept:
        res.add(pair)
    return res


def write_thesaurus(
    counts: Mapping[tuple[str, str], int], path: str | Path, *, source: str = ""
) -> Path:
    """Write substitution pairs as a synonym file (one ``a<TAB>b`` line per pair, most frequent
    first, the count in a comment line above the block of each count), readable by
    :meth:`SynonymResource.from_file`. Written atomically."""
    from parakit.io.atomic import atomic_write

    path = Path(path)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    with atomic_write(path) as handle:
        handle.write(f"# parakit induced thesaurus: {len(rows)} single-word substitutions")
        handle.write(f"{' in ' + source if source else ''}\n")
        last = None
        for (a, b), n in rows:
            if n != last:
                handle.write(f"# seen in {n} label-4 pairs\n")
                last = n
            handle.write(f"{a}\t{b}\n")
    return path

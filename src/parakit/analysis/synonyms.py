"""Synonym resources for the synonym patterns of T13.

Two sources are read:

* a user synonym file: UTF-8 text, one synonym set per line, words separated by tabs, commas or
  ``|``; blank lines and lines starting with ``#`` are skipped;
* a MyThes thesaurus (the LibreOffice format: first line the encoding, then ``word|n`` followed
  by ``n`` lines ``(pos)|syn1|syn2...``). Debian ships them as ``mythes-sv`` (Swedish, from
  Folkets synonymlexikon) and ``mythes-en-us`` (English, from WordNet) under
  ``/usr/share/mythes``; :meth:`SynonymResource.shipped` finds them. Entries marked
  ``(generic term)``, ``(related term)``, ``(antonym)`` ... are not synonyms and are skipped.

No Finnish thesaurus is shipped by a package we can depend on: pass a synonym file for Finnish.

Example:
    >>> res = SynonymResource.from_sets([["car", "automobile"], ["big", "large"]])
    >>> res.are_synonyms("Car", "automobile"), res.are_synonyms("car", "large")
    (True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from parakit.errors import DataFormatError

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
            raise DataFormatError("synonym file not found", path=path, code="E1010")
        res = cls(name=str(path))
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as err:
            raise DataFormatError(
                f"synonym file is not UTF-8: {err}", path=path, code="E1011"
            ) from None
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            words = [w for w in _SPLIT.split(line) if w.strip()]
            if len(words) < 2:
                raise DataFormatError(
                    "a synonym line needs at least two words separated by tab, comma or |",
                    path=path,
                    line=number,
                    code="E1012",
                )
            res.add(words)
        return res

    @classmethod
    def from_mythes(cls, path: str | Path) -> SynonymResource:
        """Read a MyThes ``.dat`` thesaurus (LibreOffice format)."""
        path = Path(path)
        if not path.exists():
            raise DataFormatError("thesaurus file not found", path=path, code="E1010")
        raw = path.read_bytes()
        first, _, body = raw.partition(b"\n")
        encoding = first.decode("ascii", errors="replace").strip() or "utf-8"
        try:
            text = body.decode(encoding, errors="replace")
        except LookupError:
            raise DataFormatError(
                f"unknown encoding {encoding!r} on the first line", path=path, line=1, code="E1011"
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
    a path (``.dat`` = MyThes, otherwise a synonym file), or a ready resource."""
    if spec is None or isinstance(spec, SynonymResource):
        return spec
    if str(spec) == "auto":
        return SynonymResource.shipped(lang)
    path = Path(spec)
    return (
        SynonymResource.from_mythes(path)
        if path.suffix == ".dat"
        else SynonymResource.from_file(path)
    )

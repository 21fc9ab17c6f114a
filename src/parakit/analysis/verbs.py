"""The main-verb part of T12's well-formedness test: does a sentence contain a verb?

The Turku paper (§6.2) calls a sentence well-formed when it starts with a capital letter, ends
with final punctuation *and includes a main verb*, found with a Finnish dependency parser. Here
the verb test is a callable ``has_verb(sentence) -> bool`` chosen by a spec:

``voikko``
    Finnish, with the Voikko morphological analyser (Debian ``libvoikko1`` + ``voikko-fi``, and
    the ``libvoikko`` Python binding in the ``analysis`` extra). A word is a verb when one of
    its analyses has the word class ``teonsana`` (verb; includes *olla*, the copula) or
    ``kieltosana``, the negation verb (*ei*, *en*, *et*, *emme*, *ette*, *eivät*, *etten*...),
    which Voikko classes apart: in "En kai nähnyt häntä." the negation verb is the finite verb
    and *nähnyt* is analysed as a participle (an adjective) alone. Voikko does not
    disambiguate, so an ambiguous form such as *tuli* (fire / came) counts as a verb.
``module:function``
    any other tagger: an importable callable taking a sentence and returning a bool (or a
    factory called with no arguments that returns one, when it is a class). For example a
    spaCy wrapper for Swedish::

        # mytaggers.py
        import spacy
        _nlp = spacy.load("sv_core_news_sm")
        def has_verb(sentence: str) -> bool:
            return any(t.pos_ in ("VERB", "AUX") for t in _nlp(sentence))

    and ``parakit report corpus sv-test.json --verb-test mytaggers:has_verb``.
``none``
    no verb test (capital + final punctuation only).

Example:
    >>> make_verb_test("none") is None
    True
    >>> make_verb_test("operator:truth")("Anything.")
    True
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from functools import lru_cache

from parakit.analysis import _text
from parakit.errors import AnalysisError, Errors

#: Voikko's word classes of verbs: ``teonsana`` (verb) and ``kieltosana`` (the negation verb).
VOIKKO_VERB_CLASSES = frozenset({"teonsana", "kieltosana"})


class VoikkoVerbTest:
    """``has_verb`` for Finnish with Voikko (see the module docstring).

    Args:
        language: Voikko language code (``fi``).

    Raises:
        AnalysisError: the Python binding, the C library or the Finnish dictionary is missing
            (E1020), with the install command.
    """

    name = "voikko"

    def __init__(self, language: str = "fi") -> None:
        hint = (
            "install it with `apt-get install libvoikko1 voikko-fi` (Debian) and "
            "`pip install libvoikko` (the analysis extra)"
        )
        try:
            import libvoikko
        except ImportError:
            raise AnalysisError(Errors.E1020_verb_test_needs.format(hint=hint)) from None
        try:
            self._voikko = libvoikko.Voikko(language)
        except (OSError, libvoikko.VoikkoException) as err:
            raise AnalysisError(
                Errors.E1020_voikko_start.format(language=language, err=err, hint=hint)
            ) from None
        self.language = language
        self._is_verb = lru_cache(maxsize=200_000)(self._word_is_verb)

    def _word_is_verb(self, word: str) -> bool:
        return any(a.get("CLASS") in VOIKKO_VERB_CLASSES for a in self._voikko.analyze(word))

    def __call__(self, sentence: str) -> bool:
        """Whether any word of ``sentence`` can be a verb."""
        return any(self._is_verb(w) for w in _text.words(sentence))

    def baseforms(self, word: str) -> frozenset[str]:
        """The lower-cased base forms of every reading of ``word`` (empty when Voikko does not
        know it): *halua* gives ``{"halu", "haluta"}`` (the noun's partitive, the verb's
        imperative)."""
        return self._baseforms(word.lower())

    @functools.cached_property
    def _baseforms(self) -> Callable[[str], frozenset[str]]:
        def analyse(word: str) -> frozenset[str]:
            forms = (a.get("BASEFORM") for a in self._voikko.analyze(word))
            return frozenset(f.lower() for f in forms if f)

        return lru_cache(maxsize=200_000)(analyse)


def make_verb_test(spec: str | None, lang: str | None = None) -> Callable[[str], bool] | None:
    """The ``has_verb`` callable of a spec: ``voikko``, ``module:function`` or ``none``.

    Args:
        spec: the spec (None = ``none``).
        lang: the corpus language, checked against analysers for one language (Voikko: ``fi``).

    Raises:
        AnalysisError: an unknown spec, an import that fails (E1020), or Voikko asked for a
            corpus in another language (E1021).
    """
    if spec is None or spec.strip().lower() in ("", "none"):
        return None
    spec = spec.strip()
    if spec.lower() == "voikko":
        code = _text.base_lang(lang)
        if code not in (None, "fi"):
            raise AnalysisError(Errors.E1021_voikko_analyses_finnish.format(lang=lang))
        return _voikko()
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise AnalysisError(Errors.E1020_unknown_verb_test.format(spec=spec))
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise AnalysisError(Errors.E1020_verb_test_imported.format(spec=spec, err=err)) from None
    if isinstance(target, type):  # a class: its instance is the test
        target = target()
    if not callable(target):
        raise AnalysisError(Errors.E1020_verb_test_callable.format(spec=spec))
    return target


@lru_cache(maxsize=1)
def _voikko() -> VoikkoVerbTest:
    """One analyser per process: starting Voikko loads its dictionary."""
    return VoikkoVerbTest("fi")


def finnish_analyser() -> VoikkoVerbTest | None:
    """The process's Voikko analyser for Finnish, or None when Voikko is not installed."""
    try:
        return _voikko()
    except AnalysisError:
        return None


def verb_test_label(has_verb: Callable[[str], bool] | None) -> str | None:
    """What a report records for a verb test: its ``name``, function name, or None."""
    if has_verb is None:
        return None
    return str(getattr(has_verb, "name", None) or getattr(has_verb, "__name__", "callable"))

"""Closed-class (function) words per language, for pattern (4) of T13 and content-word checks.

Hand-curated lists of pronouns, determiners, articles, adpositions, conjunctions, auxiliary and
negation verbs, and common particles, in both surface and lemma form (the pattern detector looks
up lowercased words and their simplemma lemmas). They are not stop-word lists: content words
such as "thing" or "say" are deliberately absent. Pass your own set to
:class:`parakit.analysis.patterns.PatternDetector` for another language or a stricter list.
"""

from __future__ import annotations

_EN = """
a an the this that these those some any no every each either neither all both half several
few many much more most less least other another such what which who whom whose whatever
whichever whoever i me my mine myself you your yours yourself yourselves he him his himself
she her hers herself it its itself we us our ours ourselves they them their theirs themselves
one ones oneself there here where when why how then than
and or but nor so yet for because although though while whereas if unless until till since
as whether lest once that
of in on at by to from with without within into onto upon about above below under over
between among through throughout during before after against across along around behind
beyond beside besides near off out up down toward towards via per like unlike despite
except inside outside past
be am is are was were been being 's 're 'm have has had having 've 'd do does did done doing
will would shall should can could may might must ought wo ca 'll
not n't no never nor none nobody nothing nowhere
also just only even too very quite rather really still already again ever
"""

_SV = """
en ett den det de dem denna detta dessa denne samma sådan sådant sådana någon något några
ingen inget inga varje all allt alla båda bägge annan annat andra vilken vilket vilka vad
vem vems som själv själva
jag mig mej min mitt mina du dig dej din ditt dina han honom hans hon henne hennes hen
hens den dess vi oss vår vårt våra ni er ert era de dem dom deras sig sin sitt sina man
här där var hit dit vart då nu sen sedan
och eller men utan samt så för att om när medan eftersom fast fastän innan tills än som
ty både varken
av i på till från med utan vid under över efter före mot hos genom mellan bland kring runt
om åt ur inom utom bakom framför bredvid enligt trots per längs
vara är var varit bli blir blev blivit ha har hade haft kunna kan kunde kunnat ska skall
skulle vilja vill ville velat måste må få får fick fått bör borde låta lät
inte ej icke aldrig ingenting
också bara även ju nog väl redan ännu fortfarande just mycket mer mest
"""

# Finnish: many function words are inflected; both common surface forms and lemmas are listed.
_FI = """
minä mä sinä sä hän me te he se ne tämä tää tuo nämä nää nuo joka jotka mikä mitkä kuka ketkä
itse jokin joku jotain jotakin mikään kukaan mitään ketään kaikki kaikkea jokainen muu muut
sama samat toinen molemmat
minun minua minulla minulle minut sinun sinua sinulla sinulle sinut hänen häntä hänellä
hänelle meidän meitä meillä meille teidän teitä teillä teille heidän heitä heillä heille sen
sitä siinä siitä siihen sillä sille niiden niitä niissä niistä niihin niillä tämän tätä tässä
tästä tähän tällä näiden näitä tuon tuota siellä täällä tuolla sinne tänne mitä missä mistä
mihin miksi miten milloin kuinka jonka jota jossa josta johon jolla joita joiden
ja sekä tai vai mutta vaan että jos kun koska kuin jotta vaikka eli sillä niin joten
kanssa ilman yli alla päällä jälkeen ennen takia vuoksi luona kautta mukaan välillä aikana
lähellä vastaan kohti asti saakka sisällä ulkona ympäri läpi
olla on ovat oli olivat ollut olleet olen olet olemme olette olisi olisivat ole
ei en et emme ette eivät älä älkää
myös vain jo vielä nyt sitten siis kyllä aivan ihan hyvin kovin liian
"""


def _words(block: str) -> frozenset[str]:
    return frozenset(block.split())


FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": _words(_EN),
    "sv": _words(_SV),
    "fi": _words(_FI),
}


def function_words(lang: str | None) -> frozenset[str]:
    """The function-word set of ``lang`` (``en``, ``sv``, ``fi``); empty for other languages."""
    return FUNCTION_WORDS.get((lang or "").split("-")[0].lower(), frozenset())

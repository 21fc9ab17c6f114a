"""Corpus construction: from raw text to annotation-ready candidate pairs.

One module per method of the corpus papers (ids as in ``docs/methods.md``):

* :mod:`~parakit.build.align` — TF-IDF char 4-gram document alignment in a similarity band (T1)
* :mod:`~parakit.build.subtitles` — alternative subtitle versions in 15-minute segments (T2)
* :mod:`~parakit.build.news` — news articles in a 7-day window, heading candidates (T3)
* :mod:`~parakit.build.forum` — forum thread openers with identical title and sub-forum (T4)
* :mod:`~parakit.build.assignments` — answers to the same assignment (T5)
* :mod:`~parakit.build.translate`, :mod:`~parakit.build.quality`, :mod:`~parakit.build.lm` —
  MT round-trip candidates, back-translation QE, n-gram LM ordering (J1–J3)
* :mod:`~parakit.build.sample` — balanced sampling over similarity bins (J4, T15; the T15 kNN
  candidates come from :func:`parakit.mine.mining.mine` with ``same_source=True``)
* :mod:`~parakit.build.negatives` — random negatives from a monolingual corpus (J5)
* :mod:`~parakit.build.social` — cleaning, ranking and grouped pairing of posts (M1–M3)

Heavy libraries (torch, transformers, faiss, sklearn) are imported inside the functions that
need them, so importing this package is cheap. Error codes of this package are ``E5xx``.
"""

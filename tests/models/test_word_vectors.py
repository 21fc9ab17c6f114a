"""Q7 with pretrained word vectors: word2vec/GloVe files read through gensim KeyedVectors."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from parakit.errors import DataFormatError, ModelError
from parakit.models.base import load_model, make_model
from parakit.models.features import WordVectors, load_word_vectors

pytest.importorskip("gensim")

# "cat" and "feline" share a vector, as synonyms do in good pretrained vectors
VECTORS = {
    "a": [1.0, 0.0, 0.0],
    "cat": [0.0, 2.0, 0.0],
    "feline": [0.0, 2.0, 0.0],
    "dog": [0.0, 0.0, 2.0],
    "sat": [1.0, 1.0, 1.0],
}


def write_text(path, header: bool) -> None:
    lines = [f"{len(VECTORS)} 3"] if header else []
    lines += [f"{w} " + " ".join(str(x) for x in v) for w, v in VECTORS.items()]
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


@pytest.fixture(params=["w2v.txt", "glove.txt", "w2v.txt.gz", "w2v.bin"])
def vectors_file(request, tmp_path):
    path = tmp_path / request.param
    if request.param == "w2v.bin":
        from gensim.models import KeyedVectors

        kv = KeyedVectors(vector_size=3)
        kv.add_vectors(list(VECTORS), np.array(list(VECTORS.values()), dtype=np.float32))
        kv.save_word2vec_format(str(path), binary=True)
    else:
        write_text(path, header=not request.param.startswith("glove"))
    return path


def test_every_format_gives_the_same_vectors_and_averages_by_hand(vectors_file):
    wv = WordVectors(pretrained=str(vectors_file)).fit([])
    assert wv.vector_size == 3 and len(wv.vectors_) == 5
    # mean of a, cat, sat = ([1,0,0] + [0,2,0] + [1,1,1]) / 3; unknown words are left out
    got = wv.encode(["A cat sat", "a zebra", "zebra okapi"])
    assert got[0] == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert got[1] == pytest.approx([1.0, 0.0, 0.0])
    assert got[2].tolist() == [0.0, 0.0, 0.0]  # nothing known: zeros
    assert len(WordVectors(pretrained=str(vectors_file), limit=2).fit([]).vectors_) == 2


def test_classifier_with_pretrained_vectors_sees_synonyms(vectors_file, tmp_path):
    texts1 = ["a cat sat", "a dog sat", "a cat sat", "a dog sat"] * 3
    texts2 = ["a cat sat", "a dog sat", "a dog sat", "a cat sat"] * 3
    labels = [1, 1, 0, 0] * 3
    model = make_model("word-vectors", vectors=str(vectors_file), C=100.0)
    model.fit(texts1, texts2, labels)
    # "feline" is never in the training pairs: only the pretrained vectors know it means cat
    assert model.predict(["a feline sat", "a feline sat"], ["a cat sat", "a dog sat"]).tolist() == [
        1,
        0,
    ]
    model.save(tmp_path / "model")
    again = load_model(tmp_path / "model")
    assert np.array_equal(
        again.predict_proba(["a feline sat"], ["a cat sat"]),
        model.predict_proba(["a feline sat"], ["a cat sat"]),
    )
    # the folder is self-contained: the vectors file may go away
    vectors_file.unlink()
    assert load_model(tmp_path / "model").predict(["a feline sat"], ["a cat sat"]).tolist() == [1]


def test_bad_vectors_files_name_the_file(tmp_path):
    with pytest.raises(DataFormatError, match=r"E103.*missing\.txt"):
        load_word_vectors(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("2 3\ncat 0.1 0.2\n", encoding="utf-8")  # a row too short
    with pytest.raises(DataFormatError, match=r"E104.*bad\.txt"):
        load_word_vectors(bad)
    words = tmp_path / "words.txt"
    words.write_text("cat\ndog\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"E104.*words\.txt"):
        load_word_vectors(words)
    good = tmp_path / "good.txt"
    write_text(good, header=True)
    with pytest.raises(ModelError, match="E712.*not both"):
        make_model("word-vectors", vectors=str(good), corpus=str(good)).fit(
            ["a cat", "a dog"], ["a dog", "a dog"], [0, 1]
        )


def test_cli_trains_with_pretrained_vectors(tmp_path):
    from parakit.cli.app import main

    vectors = tmp_path / "vectors.txt"
    write_text(vectors, header=False)
    rows = [("a cat sat", "a cat sat", 1), ("a dog sat", "a cat sat", 0)] * 4
    train = tmp_path / "train.jsonl"
    train.write_text(
        "".join(json.dumps({"text1": a, "text2": b, "label": y}) + "\n" for a, b, y in rows),
        encoding="utf-8",
    )
    args = ["identify", "train", train, "-m", "word-vectors", "-p", f"vectors={vectors}",
            "-p", "C=100", "-o", tmp_path / "model"]  # fmt: skip
    assert main([str(a) for a in args]) == 0
    model = load_model(tmp_path / "model")
    assert model.vectors == str(vectors)
    assert model.predict(["a feline sat"], ["a cat sat"]).tolist() == ["1"]  # labels as read


def test_pretrained_lookup_keeps_case_and_splits_clitics(tmp_path):
    """Issue 29.12: a case-preserving file (as GoogleNews) has "US" and "us" apart, "it" and
    "'s" apart: lookups keep the case, fall back to lower case, split clitics."""
    cased = {
        "US": [1.0, 0.0, 0.0],
        "us": [0.0, 1.0, 0.0],
        "Microsoft": [0.0, 0.0, 1.0],
        "it": [2.0, 0.0, 0.0],
        "'s": [0.0, 2.0, 0.0],
        "do": [0.0, 0.0, 2.0],
        "n't": [4.0, 4.0, 4.0],
        "said": [3.0, 3.0, 3.0],
    }
    path = tmp_path / "cased.txt"
    lines = [f"{len(cased)} 3"] + [f"{w} " + " ".join(map(str, v)) for w, v in cased.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    wv = WordVectors(pretrained=str(path)).fit([])
    assert wv.encode(["US"])[0].tolist() == [1.0, 0.0, 0.0]  # not "us"
    assert wv.encode(["us"])[0].tolist() == [0.0, 1.0, 0.0]
    assert wv.encode(["Said"])[0].tolist() == [3.0, 3.0, 3.0]  # lower-case fallback
    assert wv.encode(["it's"])[0] == pytest.approx([1.0, 1.0, 0.0])  # it + 's
    assert wv.encode(["Don’t"])[0] == pytest.approx([2.0, 2.0, 3.0])  # do + n't
    assert wv.lookup("MICROSOFT") == []  # neither as written nor lower-cased
    # word tokens: The, US, said, it's (found in 2 parts), Microsoft, zebra: 4 of 6 found
    assert wv.coverage(["The US said it's Microsoft, zebra."]) == pytest.approx(4 / 6)


def test_vectors_trained_here_are_still_found(tmp_path):
    """Word2vec trained on the corpus is lower-cased: the fallback finds "The" as "the"."""
    wv = WordVectors(vector_size=4, epochs=1).fit(["The cat sat.", "the dog sat."])
    assert "the" in wv.vectors_.key_to_index and "The" not in wv.vectors_.key_to_index
    assert wv.lookup("The") == wv.lookup("the") != []
    assert wv.coverage(["The cat sat."]) == 1.0

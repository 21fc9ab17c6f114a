"""``parakit embed distill-static``: the folder it writes, its card's gold recall, and a
``mine run`` that takes it as its encoder (issue 28)."""

from __future__ import annotations

import json

import pytest

from parakit.cli.app import main
from parakit.io import read

pytest.importorskip("model2vec", reason="pip install 'parakit[static]' for static encoders")

GOLD = """text1,text2,label
the cat sat on the mat,a cat sat on a mat,1
the dog ran,a dog ran,1
she likes fish,she likes the fish,1
the cat sat,the dog ran,0
"""


def test_distill_static_then_mine_with_it(run, tiny_model, mine_words, tmp_path, capsys):
    gold = tmp_path / "gold.csv"
    gold.write_text(GOLD)
    pool = tmp_path / "pool.txt"
    pool.write_text(
        "\n".join(
            f"{a} {b} {c}" for a, b, c in zip(*[mine_words[i::3] for i in range(3)], strict=False)
        )
        + "\n"
    )
    out = tmp_path / "static"
    run("embed", "distill-static", tiny_model, "-o", out, "--pca-dims", "16",
        "--gold", gold, "--pool", pool, "--k", "1", "--k", "3")  # fmt: skip
    printed = json.loads(capsys.readouterr().out)
    recorded = json.loads((out / "parakit_static.json").read_text())
    assert printed["saved"] == str(out) and recorded["dim"] == 16
    recall = recorded["gold_recall"]
    assert recall["pairs"] == 3 and recall["ks"] == [1, 3]  # the three paraphrases only
    assert set(recall["static"]) == {"1", "3"} and 0 <= recall["static"]["1"] <= 1
    card = (out / "README.md").read_text()
    assert "Gold recall against the teacher" in card and "| static |" in card

    # a second run into its own folder replaces it; into a folder of other files, refused
    run("embed", "distill-static", tiny_model, "-o", out, "--pca-dims", "8")
    assert json.loads((out / "parakit_static.json").read_text())["dim"] == 8
    assert "gold_recall" not in json.loads((out / "parakit_static.json").read_text())
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert main(["embed", "distill-static", str(tiny_model), "-o", str(other)]) != 0
    assert "[E141]" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]

    # the static folder is an encoder like any other: embed evaluate (under the default
    # precision, which means bf16 autocast on such a CPU: a static encoder runs without it) ...
    run("embed", "evaluate", out, gold, "-o", tmp_path / "ev.json")
    assert json.loads((tmp_path / "ev.json").read_text())["test_retrieval_n_positive"] == 3
    # ... and mine run -m DIR
    sentences = tmp_path / "s.txt"
    sentences.write_text("the cat sat on the mat\na cat sat on a mat\nthe dog ran\na dog ran\n")
    mined = tmp_path / "m.jsonl"
    run("mine", "run", sentences, "-o", mined, "--workdir", tmp_path / "w", "-m", out,
        "-k", 2, "--index-kind", "flat")  # fmt: skip
    pairs = read(mined)
    assert len(pairs) >= 2
    texts = {frozenset((p.text1, p.text2)) for p in pairs}
    assert frozenset(("the cat sat on the mat", "a cat sat on a mat")) in texts
    # ... and build knn (the Turku setting: Euclidean, unnormalised vectors)
    run("build", "knn", sentences, "-o", tmp_path / "knn", "-m", out, "--k", 2,
        "--metric", "l2", "--n", 2)  # fmt: skip
    assert len(read(tmp_path / "knn" / "candidates.jsonl")) >= 2
    # the ONNX backend has no static graph: a clear refusal, not an internal error
    args = ["mine", "run", str(sentences), "-o", str(tmp_path / "o.jsonl"), "--workdir",
            str(tmp_path / "wo"), "-m", str(out), "--backend", "onnx"]  # fmt: skip
    assert main(args) != 0
    assert "[E806]" in capsys.readouterr().err


def test_careless_inputs_write_nothing_or_say_what_was_done(run, tiny_model, tmp_path, capsys):
    # gold pairs without a paraphrase: refused before anything is distilled or written
    gold = tmp_path / "negatives.csv"
    gold.write_text("text1,text2,label\nthe cat sat,the dog ran,0\n")
    out = tmp_path / "static"
    assert main(["embed", "distill-static", str(tiny_model), "-o", str(out), "--gold", str(gold)])
    assert "[E805]" in capsys.readouterr().err
    assert not out.exists()
    # more PCA dimensions than the teacher has (32): the card says what was kept
    run("embed", "distill-static", tiny_model, "-o", out, "--pca-dims", "64")
    assert json.loads((out / "parakit_static.json").read_text())["dim"] == 32
    card = (out / "README.md").read_text()
    assert "PCA kept the teacher's 32 dimensions; 64 were asked for" in card
    assert "PCA to 64" not in card

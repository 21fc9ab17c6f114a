"""`parakit mine ...` driven in-process: run, eval-retrieval, tiles, errors."""

from __future__ import annotations

import json

import numpy as np

from parakit.cli import main


def test_mine_run_index_search(tmp_path, tiny_model, capsys, mine_words):
    words = mine_words

    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, size=5)) for _ in range(120)]
    (tmp_path / "c.txt").write_text("\n".join(lines + lines[:10]) + "\n")
    args = [
        "mine",
        "run",
        str(tmp_path / "c.txt"),
        "-o",
        str(tmp_path / "o.jsonl"),
        "--workdir",
        str(tmp_path / "w"),
        "--model",
        str(tiny_model),
        "-k",
        "2",
        "--chunk-size",
        "50",
    ]
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)  # one JSON object, nothing else on stdout
    assert summary["sentences"] == len(set(lines))
    assert summary["written"] == summary["candidates"] > 0
    # a second call resumes from the finished work folder and writes the same file
    before = (tmp_path / "o.jsonl").read_text()
    assert main(args) == 0 and (tmp_path / "o.jsonl").read_text() == before
    written = summary["written"]  # without --json: one line of prose
    assert f"{written} written to {tmp_path / 'o.jsonl'}" in capsys.readouterr().out
    # the same run as a folder of two parts (the work folder resumes), read back as one
    from parakit.io import read

    parts = [*args[:3], "-o", str(tmp_path / "parts"), *args[5:], "--output-parts", "2"]
    assert main(parts) == 0 and len(list((tmp_path / "parts").glob("pairs-*.jsonl"))) == 2
    assert [p.to_dict() for p in read(tmp_path / "parts")] == [
        p.to_dict() for p in read(tmp_path / "o.jsonl")
    ]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("x")
    other = [*args[:3], "-o", str(tmp_path / "other"), *args[5:], "--output-parts", "2"]
    capsys.readouterr()
    assert main(other) == 2 and "E141" in capsys.readouterr().err
    assert (
        main(
            [
                "mine",
                "run",
                str(tmp_path / "c.txt"),
                "-o",
                str(tmp_path / "o.jsonl"),
                "--workdir",
                str(tmp_path / "w"),
                "--model",
                str(tiny_model),
                "-k",
                "3",
            ]
        )
        == 2
    )
    assert "E802" in capsys.readouterr().err
    assert (
        main(
            [
                "mine",
                "index",
                str(tmp_path / "c.txt"),
                "-o",
                str(tmp_path / "ix"),
                "--model",
                str(tiny_model),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["mine", "search", str(tmp_path / "ix"), lines[3], "-k", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith(lines[3])


def test_eval_retrieval_tfidf(data_path, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "mine",
                "eval-retrieval",
                str(data_path("turku/sv-test.json")),
                "-m",
                "tfidf",
                "--plot",
                str(tmp_path / "r.png"),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    metrics = json.loads(out.read_text())["tfidf"]
    assert metrics["n_candidates"] == 2154 and round(metrics["top1"], 3) == 0.676
    assert (tmp_path / "r.png").stat().st_size > 0


def test_tiles_with_scores_file(data_path, tmp_path, capsys):
    from parakit.io import read

    sample = data_path("turku/opus-pb-dev.json")
    pairs = read(sample)
    lex = np.array([p.metadata["lex_similarity"] for p in pairs])
    # a made-up score: negative confidence falls with lexical similarity
    scores = tmp_path / "s.csv"
    scores.write_text("neg_conf,pos_conf\n" + "".join(f"{1 - x:.6f},{x:.6f}\n" for x in lex))
    assert (
        main(["mine", "tiles", str(sample), "--scores", str(scores), "-o", str(tmp_path / "t")])
        == 0
    )
    out = capsys.readouterr().out
    assert "negatives:" in out and "(95% CI" in out
    selection = json.loads((tmp_path / "t" / "selection.json").read_text())
    # negatives: lex < 0.1 or 1 - lex > 0.4  <=>  lex < 0.6 ; positives: lex > 0.5 and lex >= .998
    labels = np.array([p.label[0] for p in pairs])
    expected = (labels[lex < 0.6] <= "2").mean()
    assert selection["negatives"]["precision"] == expected
    assert selection["negatives"]["selected"] == int((lex < 0.6).sum())
    assert (tmp_path / "t" / "tiles.png").exists() and (tmp_path / "t" / "tiles.md").exists()
    assert main(["mine", "tiles", str(sample), "-o", str(tmp_path / "t")]) == 2
    assert "exactly one of" in capsys.readouterr().err


def test_mine_grow_refuses_a_threshold_outside_0_1(tmp_path, capsys):
    # checked before anything is read or loaded (was: any value, e.g. 50 for 50 %)
    args = ["mine", "grow", str(tmp_path / "batch.jsonl"), "--dataset", str(tmp_path / "d")]
    assert main([*args, "--classifier", str(tmp_path / "clf"), "--threshold", "50"]) == 2
    assert "--threshold" in capsys.readouterr().err and not (tmp_path / "d").exists()

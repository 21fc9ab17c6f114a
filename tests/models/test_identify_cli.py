"""``parakit identify train|predict|evaluate`` end to end on real MultiPIT pairs."""

from __future__ import annotations

import json

from parakit.cli import main
from parakit.io import write


def test_train_evaluate_predict(multipit, tmp_path, capsys):
    train, dev = multipit
    write(train, tmp_path / "train.jsonl")
    write(dev, tmp_path / "dev.jsonl")
    model_dir = tmp_path / "model"
    assert (
        main(
            [
                "identify",
                "train",
                str(tmp_path / "train.jsonl"),
                "--model",
                "tfidf",
                "-p",
                "ngram_range=[2, 3]",
                "-p",
                "criterion=f1",
                "--dev",
                str(tmp_path / "dev.jsonl"),
                "-o",
                str(model_dir),
            ]
        )
        == 0
    )
    meta = json.loads((model_dir / "parakit_model.json").read_text())
    assert meta["model_type"] == "tfidf" and meta["params"]["ngram_range"] == [2, 3]
    assert (model_dir / "dev_metrics.json").exists()
    assert (
        main(
            [
                "identify",
                "evaluate",
                str(model_dir),
                str(tmp_path / "dev.jsonl"),
                "-o",
                str(tmp_path / "report"),
            ]
        )
        == 0
    )
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())["metrics"]
    assert metrics["n"] == len(dev)
    assert (
        main(
            [
                "identify",
                "predict",
                str(model_dir),
                str(tmp_path / "dev.jsonl"),
                "-o",
                str(tmp_path / "pred.jsonl"),
            ]
        )
        == 0
    )
    lines = (tmp_path / "pred.jsonl").read_text().splitlines()
    first = json.loads(lines[1])
    assert first["metadata"]["gold_label"] == dev[0].label
    assert first["label"] in ("0", "1")
    assert 0 <= first["metadata"]["prediction"]["p_paraphrase"] <= 1


def test_cli_errors_are_clear(tmp_path, capsys):
    assert (
        main(
            [
                "identify",
                "predict",
                str(tmp_path),
                str(tmp_path / "x.jsonl"),
                "-o",
                str(tmp_path / "y.jsonl"),
            ]
        )
        == 2
    )
    assert "E710" in capsys.readouterr().err
    (tmp_path / "t.jsonl").write_text('{"id": "a", "text1": "x", "text2": "y", "label": "1"}\n')
    assert (
        main(
            [
                "identify",
                "train",
                str(tmp_path / "t.jsonl"),
                "--model",
                "nope",
                "-o",
                str(tmp_path / "m"),
            ]
        )
        == 2
    )
    assert "E711" in capsys.readouterr().err
    assert (
        main(
            [
                "identify",
                "train",
                str(tmp_path / "t.jsonl"),
                "-p",
                "oops",
                "-o",
                str(tmp_path / "m"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--param" in err and "KEY=VALUE" in err and err.count("\n") == 1


def test_evaluate_writes_the_file_it_is_given_and_json_on_stdout(tmp_path, capsys):
    from parakit.examples import example_path

    example = str(example_path())
    model = str(tmp_path / "wor")
    assert main(["identify", "train", example, "--binary", "-m", "wor", "-o", model]) == 0
    evaluate = ["identify", "evaluate", model, example, "--binary"]
    assert main([*evaluate, "-o", str(tmp_path / "folder")]) == 0
    in_folder = json.loads((tmp_path / "folder" / "metrics.json").read_text())
    assert main([*evaluate, "-o", str(tmp_path / "ev.json")]) == 0
    assert (tmp_path / "ev.json").is_file()  # a file, not a folder named ev.json
    assert json.loads((tmp_path / "ev.json").read_text()) == in_folder
    assert main([*evaluate, "-o", str(tmp_path / "ev.md")]) == 0
    assert (tmp_path / "ev.md").read_text() == (tmp_path / "folder" / "metrics.md").read_text()
    capsys.readouterr()
    assert main([*evaluate, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == in_folder  # one object, nothing else


def test_epochs_is_one_spelling_across_groups(tmp_path, capsys):
    from parakit.examples import example_path

    argv = ["identify", "train", str(example_path()), "--binary", "-m", "wor", "--epochs", "2",
            "-o", str(tmp_path / "m")]  # fmt: skip
    assert main(argv) == 2  # a baseline has no epochs: said, not ignored
    assert "--epochs" in capsys.readouterr().err

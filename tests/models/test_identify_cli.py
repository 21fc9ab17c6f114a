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

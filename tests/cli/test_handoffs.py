"""Outputs of one command fed, as written, to the next (the CLI side of the chain)."""

from __future__ import annotations

import json

from parakit.cli import main
from parakit.examples import example_path

EXAMPLE = str(example_path())


def test_report_profile_reads_identify_predict(tmp_path, capsys):
    """`report profile --predictions` takes the canonical JSONL of `identify predict -o`."""
    model, preds = tmp_path / "m", tmp_path / "preds.jsonl"
    assert main(["identify", "train", EXAMPLE, "-o", str(model), "-m", "tfidf", "--binary"]) == 0
    assert main(["identify", "predict", str(model), EXAMPLE, "-o", str(preds)]) == 0
    capsys.readouterr()
    out = tmp_path / "profile"
    assert main(["report", "profile", EXAMPLE, "--predictions", str(preds), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    # the system is named after the file; its accuracy is the share of predicted labels that
    # match the gold binary reading, counted here from the file itself
    records = [json.loads(line) for line in preds.read_text().splitlines()[1:]]
    records = [r for r in records if "text1" in r]  # the file also carries the documents
    gold = {"1": 0, "2": 0, "3": 1, "4": 1}
    correct = sum(r["label"] == str(gold[r["metadata"]["gold_label"][0]]) for r in records)
    assert f"preds: accuracy {correct / len(records):.3f}" in printed
    profile = json.loads(out.with_suffix(".json").read_text())
    assert "preds" in json.dumps(profile)


def test_convert_drop_labels_counts_what_it_writes(data_path, tmp_path, capsys):
    """Issue 12: the count was taken before dropping (4,894 instead of 3,278)."""
    out = tmp_path / "release.json"
    source = data_path("turku/opus-pb-dev.json")
    assert main(["convert", str(source), "-o", str(out), "--drop-labels", "1,x"]) == 0
    written = json.loads(out.read_text())
    assert len(written) == 3278
    assert "wrote 3278 pairs" in capsys.readouterr().out

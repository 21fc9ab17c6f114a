"""Model cards (parakit.models.card) against huggingface_hub's own reading of card metadata,
offline: licence, base_model (offline aliases as Hub ids), datasets, a model-index whose
results are the development metrics, and counts printed as integers."""

from __future__ import annotations

import json

import pytest

from parakit.cli import main
from parakit.io import write
from parakit.io.hub import HUB_LICENSES
from parakit.models.card import card_datasets, eval_dataset, write_model_card

huggingface_hub = pytest.importorskip("huggingface_hub")
datasets = pytest.importorskip("datasets")


def _valid(card_path) -> object:
    """The card as huggingface_hub reads it, checked as the Hub checks metadata offline: YAML
    that ModelCardData takes (model-index parsed into eval_results, errors raised), a licence
    id of the Hub's list, repository ids that are ids, a task the Hub knows."""
    card = huggingface_hub.ModelCard.load(card_path, ignore_metadata_errors=False)
    data = card.data
    assert data.license in HUB_LICENSES
    from huggingface_hub.utils import validate_repo_id

    for repo in [data.base_model, *(data.datasets or [])]:
        if repo:
            validate_repo_id(repo)
    assert data.pipeline_tag in ("text-classification", "sentence-similarity")
    again = huggingface_hub.ModelCardData(**data.to_dict())  # the round trip the Hub does
    assert again.eval_results == data.eval_results
    return card


def test_identify_train_card_carries_licence_datasets_and_the_dev_metrics(multipit, tmp_path):
    train, dev = multipit
    write(train, tmp_path / "train.jsonl")
    # the dev pairs as a Hugging Face dataset folder, read as hf:FOLDER@validation
    rows = {"sentence1": [p.text1 for p in dev], "sentence2": [p.text2 for p in dev],
            "label": [int(p.label) for p in dev]}  # fmt: skip
    (tmp_path / "mp" / "data").mkdir(parents=True)
    datasets.Dataset.from_dict(rows).to_parquet(tmp_path / "mp" / "data" / "validation.parquet")
    model = tmp_path / "model"
    argv = [
        "identify",
        "train",
        str(tmp_path / "train.jsonl"),
        "-m",
        "wor",
        "--dev",
        f"hf:{tmp_path / 'mp'}@validation",
        "--license",
        "cc-by-4.0",
        "-o",
        str(model),
    ]
    assert main(argv) == 0
    card = _valid(model / "README.md")
    assert card.data.license == "cc-by-4.0"
    metrics = json.loads((model / "dev_metrics.json").read_text())["metrics"]
    results = {(r.metric_type, r.metric_config): r for r in card.data.eval_results}
    assert results[("accuracy", None)].metric_value == pytest.approx(metrics["accuracy"], abs=1e-6)
    assert results[("f1", None)].metric_value == pytest.approx(metrics["positive"]["f1"], abs=1e-6)
    assert results[("f1", "macro")].metric_value == pytest.approx(metrics["macro"]["f1"], abs=1e-6)
    first = card.data.eval_results[0]
    assert (first.task_type, first.dataset_name, first.dataset_split) == (
        "text-classification", "mp", "validation"
    )  # fmt: skip
    assert "| n | 300 |" in card.text  # a count, not 300.0000
    assert f"| accuracy | {metrics['accuracy']:.4f} |" in card.text


def test_base_model_of_an_offline_alias_is_its_hub_id(tmp_path):
    path = write_model_card(tmp_path, title="ce: cross-encoder", model_type="cross-encoder",
                            classes=["0", "1"], positive=["1"], base_model="offline-minilm",
                            license="apache-2.0", datasets=["nyu-mll/glue"],
                            metrics={"n": 408, "accuracy": 0.75},
                            eval_dataset={"name": "glue (mrpc)", "type": "nyu-mll/glue",
                                          "split": "validation"})  # fmt: skip
    card = _valid(path)
    assert card.data.base_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert card.data.datasets == ["nyu-mll/glue"]
    assert [(r.metric_type, r.metric_value) for r in card.data.eval_results] == [("accuracy", 0.75)]
    assert "| n | 408 |" in card.text and "| accuracy | 0.7500 |" in card.text
    # a local folder has no Hub id: no base_model rather than a path
    local = write_model_card(tmp_path / "b", title="b", model_type="bi-encoder",
                             base_model=str(tmp_path))  # fmt: skip
    assert huggingface_hub.ModelCard.load(local).data.base_model is None


def test_hub_ids_of_inputs(tmp_path):
    assert card_datasets(["train.jsonl", "hf:nyu-mll/glue:mrpc@train", None]) == ["nyu-mll/glue"]
    assert card_datasets([f"hf:{tmp_path}@train"]) == []  # a local folder is not a Hub id
    assert eval_dataset("hf:nyu-mll/glue:mrpc@validation") == {
        "name": "nyu-mll/glue (mrpc)", "type": "nyu-mll/glue", "split": "validation"
    }  # fmt: skip


def test_an_unknown_licence_is_refused_before_training(tmp_path, capsys):
    argv = ["identify", "train", "nothing.jsonl", "-m", "tfidf", "--license", "cc-by-sa",
            "-o", str(tmp_path / "m")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "[E142]" in err and "cc-by-sa-4.0" in err  # the closest ids are offered

"""Publishing from the command line: ``parakit release`` (a file or an annotation store), model
cards of ``identify train`` / ``embed train``, a cross-encoder folder that sentence-transformers
opens, and ``--push-to-hub`` with huggingface_hub's calls intercepted (no network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import pytest
import typer

from parakit.cli import main
from parakit.examples import example_path
from parakit.io import read
from parakit.schema import PairSet

datasets = pytest.importorskip("datasets")
huggingface_hub = pytest.importorskip("huggingface_hub")
EXAMPLE = str(example_path())


def _docs_per_split(folder: Path) -> dict[str, set[str]]:
    """document id -> the splits whose pairs point into it, read through datasets alone."""
    found: dict[str, set[str]] = {}
    for split, rows in datasets.load_dataset(str(folder)).items():
        for row in rows:
            for span in (row["span1"], row["span2"]):
                if span is not None:
                    found.setdefault(span["doc"], set()).add(split)
    return found


def _same_pairs(back: PairSet, original: PairSet) -> None:
    """The same pairs in the same order (the release adds the split) and the same documents."""
    assert [p.replace(split=None) for p in back] == [p.replace(split=None) for p in original]
    assert back.documents == original.documents


def test_release_of_the_swedish_turku_test_set(data_path, tmp_path, run):
    source = data_path("turku/sv-test.json")  # its texts file sv-texts.json.gz lies beside it
    run("release", source, "-o", tmp_path / "rel", "--license", "cc-by-sa-4.0")
    loaded = datasets.load_dataset(str(tmp_path / "rel"))
    assert sorted(loaded) == ["test", "train", "validation"]
    assert sum(len(s) for s in loaded.values()) == 1081
    documents = datasets.load_dataset(str(tmp_path / "rel"), "documents")
    assert sum(len(s) for s in documents.values()) == 34
    # documents never cross splits, and each lies in the documents split of its pairs
    crossing = _docs_per_split(tmp_path / "rel")
    assert all(len(splits) == 1 for splits in crossing.values())
    assert all(crossing[d["id"]] == {split} for split, rows in documents.items() for d in rows)
    back = read(tmp_path / "rel")
    original = read(source)
    _same_pairs(back, original)
    assert back.lang == "sv" and back.metadata == original.metadata
    card = huggingface_hub.DatasetCard.load(tmp_path / "rel" / "README.md")
    assert card.data.license == "cc-by-sa-4.0" and card.data.language == ["sv"]
    assert card.data.size_categories == ["1K<n<10K"]
    # the card's label table counts what datasets loads
    test_4 = sum(1 for row in loaded["test"] if row["label"] == "4")
    assert f"| `4` | {sum(1 for r in loaded['train'] if r['label'] == '4')} |" in card.text
    assert f"| {test_4} |" in card.text.split("| `4` |")[1].split("\n")[0] + "|"


def test_release_keeps_splits_it_is_given_and_writes_turku_files(tmp_path, run):
    run("split", EXAMPLE, "-o", tmp_path / "split.jsonl", "--names", "train,validation,test",
        "--folds", 0)  # fmt: skip
    split = read(tmp_path / "split.jsonl")
    run("release", tmp_path / "split.jsonl", "-o", tmp_path / "rel", "--license", "cc-by-4.0",
        "--turku", "--name", "Example")  # fmt: skip
    back = read(tmp_path / "rel")
    assert {p.id: p.split for p in back} == {p.id: p.split for p in split}
    card = huggingface_hub.DatasetCard.load(tmp_path / "rel" / "README.md")
    assert card.data.language == ["en", "fi", "ja"] and card.text.lstrip().startswith("# Example")
    turku = sorted(p.name for p in (tmp_path / "rel" / "turku").iterdir())
    assert turku == ["dev.json", "test.json", "texts.json.gz", "train.json"][: len(turku)]
    assert "texts.json.gz" in turku


def test_release_of_official_split_files_keeps_them_and_adds_the_binary_reading(
    data_path, tmp_path, run
):
    train, test = data_path("turku/opus-pb-dev.json"), data_path("turku/sv-test.json")
    run("release", "--split", f"train={train}", "--split", f"test={test}", "-o",
        tmp_path / "rel", "--license", "cc-by-sa-4.0", "--reading", "strict")  # fmt: skip
    loaded = datasets.load_dataset(str(tmp_path / "rel"))
    # the files as they are: no split anew, no pair moved; both files number their pairs
    # from 0, so the ids take the split's name
    assert {s: len(rows) for s, rows in loaded.items()} == {"train": 4894, "test": 1081}
    assert loaded["test"]["id"] == [f"test-{p.id}" for p in read(test)]
    # a graded scheme gets its binary reading beside the label, the one the card names
    from parakit.labels import get_scheme

    turku = get_scheme("turku")
    for rows in loaded.values():
        expected = [turku.to_binary(label, "strict") for label in rows["label"]]
        assert rows["binary_label"] == expected
    assert loaded["test"]["binary_label"].count(1) == 312 + 40  # the sv test set's 4 and 4s
    card = huggingface_hub.DatasetCard.load(tmp_path / "rel" / "README.md")
    assert "`binary_label` is the `strict` reading of `label`" in card.text
    back = read(tmp_path / "rel")
    assert [p.id for p in back] == [f"train-{p.id}" for p in read(train)] + [
        f"test-{p.id}" for p in read(test)
    ]


def test_official_split_files_with_repeated_ids_and_errors(tmp_path, run, capsys):
    from parakit.io import write

    pairs = read(EXAMPLE).map(lambda p: p.replace(span1=None, span2=None))
    write(pairs[:6], tmp_path / "a.parquet")
    for name, part in (("b", pairs[6:10]), ("c", pairs[:4])):  # both number from 0
        write(part.derive([p.replace(id=str(i)) for i, p in enumerate(part)]),
              tmp_path / f"{name}.jsonl")  # fmt: skip
    run("release", "--split", f"train={tmp_path / 'c.jsonl'}", "--split",
        f"test={tmp_path / 'b.jsonl'}", "-o", tmp_path / "rel", "--license", "mit")  # fmt: skip
    loaded = datasets.load_dataset(str(tmp_path / "rel"))
    assert loaded["train"]["id"] == ["train-0", "train-1", "train-2", "train-3"]
    assert loaded["test"]["id"] == ["test-0", "test-1", "test-2", "test-3"]
    out = ["-o", str(tmp_path / "rel2"), "--license", "mit"]
    capsys.readouterr()
    assert main(["release", "--split", f"train={tmp_path / 'a.parquet'}", "--resplit", *out]) == 2
    assert "--resplit" in capsys.readouterr().err
    assert main(["release", EXAMPLE, "--split", f"train={tmp_path / 'a.parquet'}", *out]) == 2
    assert main(["release", "--split", f"tr-ain={tmp_path / 'a.parquet'}", *out]) == 2
    assert "[E131]" in capsys.readouterr().err


def _double_annotated_store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A store with 10 example pairs, labelled by two annotators who disagree on 2 of them
    (resolved by an adjudicator); returns the store and the final label per text1."""
    from parakit.annotate.store import Store

    store = tmp_path / "store.db"
    pairs = read(EXAMPLE)[:10]
    candidates = tmp_path / "candidates.jsonl"
    from parakit.io import write

    write(pairs.map(lambda p: p.replace(label=None)), candidates)
    assert main(["annotate", "init", str(store), "--admin", "boss", "--password", "pw-boss-1"]) == 0
    assert main(["annotate", "create-project", str(store), "ex", "--candidates",
                 str(candidates)]) == 0  # fmt: skip
    for name in ("ann1", "ann2"):
        assert main(["annotate", "add-user", str(store), name, "--password", f"pw-{name}-1",
                     "--project", "ex"]) == 0  # fmt: skip
    assert main(["annotate", "assign", str(store), "ex", "--mode", "double",
                 "--annotators", "ann1,ann2"]) == 0  # fmt: skip
    st = Store.open(str(store))
    pid = st.projects.project_id("ex")
    gold = {p.text1: p.label for p in pairs}
    disagree = sorted(gold)[:2]
    for name in ("ann1", "ann2"):
        uid = st.accounts.annotator_id(name)
        while (assignment := st.queue.lease_next(pid, uid)) is not None:
            item = st.item(assignment.item_id)
            label = gold[item.text1]
            if name == "ann2" and item.text1 in disagree:
                label = "2" if label != "2" else "1"
            st.queue.save(item.id, uid, label=label, revision=0, submit=True)
    boss = st.accounts.annotator_id("boss")
    for item, _ in st.review.disagreements(pid):
        st.review.resolve(item.id, gold[item.text1], boss)
    return store, gold


def test_release_from_an_annotation_store(tmp_path, run):
    pytest.importorskip("sqlalchemy")
    store, gold = _double_annotated_store(tmp_path)
    run("release", "--store", store, "--project", "ex", "-o", tmp_path / "rel",
        "--license", "cc-by-4.0", "--lang", "en",
        "--candidates", "News headings (T3).")  # fmt: skip
    from parakit.annotate.store import Store

    st = Store.open(str(store))
    exported = st.exports.to_pairset(st.projects.project_id("ex"))
    exported.lang = "en"
    back = read(tmp_path / "rel")
    _same_pairs(back, exported)
    assert {p.text1: p.label for p in back} == gold
    assert sorted(datasets.load_dataset(str(tmp_path / "rel"))) == ["test", "train", "validation"]
    text = (tmp_path / "rel" / "README.md").read_text()
    # 20 judgments of 10 double-annotated items, 2 wrong against the consensus: 18/20
    assert "| full | 0.900 |" in text
    assert "News headings (T3)." in text
    assert all(not p.judgments for p in back)  # annotator names stay out unless --judgments

    # the same figures from a file: the store's export with its judgments
    run("annotate", "export", store, "ex", "-o", tmp_path / "judged.jsonl", "--judgments")
    run("release", tmp_path / "judged.jsonl", "-o", tmp_path / "rel-file", "--license",
        "cc-by-4.0", "--judgments")  # fmt: skip
    text = (tmp_path / "rel-file" / "README.md").read_text()
    assert "| full | 0.900 |" in text
    judged = read(tmp_path / "rel-file")
    assert all(sorted(j.annotator for j in p.judgments) == ["ann1", "ann2"] for p in judged)


def test_recipe_command_names_what_differs_from_the_defaults():
    from parakit.cli.release import recipe_command

    app = typer.Typer()
    seen: list[str] = []

    @app.command()
    def train(
        ctx: typer.Context,
        path: str,
        param: Annotated[list[str] | None, typer.Option("--param", "-p")] = None,
        binary: Annotated[bool, typer.Option("--binary")] = False,
        wor: Annotated[bool, typer.Option("--wor/--no-wor")] = True,
        seed: Annotated[int, typer.Option("--seed")] = 0,
        name: Annotated[str, typer.Option("--name")] = "x",
    ) -> None:
        seen.append(recipe_command(ctx))

    command = typer.main.get_command(app)
    command.main(["a b.jsonl", "-p", "k=1", "-p", "m=2", "--binary", "--no-wor", "--seed", "0"],
                 prog_name="parakit identify train", standalone_mode=False)  # fmt: skip
    assert seen == ["parakit identify train 'a b.jsonl' --param k=1 --param m=2 --binary --no-wor"]


def test_release_usage_errors(tmp_path, capsys):
    out = ["-o", str(tmp_path / "rel")]
    assert main(["release", EXAMPLE, *out]) == 2  # no --license
    assert "--license" in capsys.readouterr().err
    assert main(["release", *out, "--license", "mit"]) == 2  # no input
    assert main(["release", EXAMPLE, *out, "--license", "mit", "--store", "x.db"]) == 2
    # the example's pairs carry no split: unlabelled pairs are refused with the data error
    unlabelled = tmp_path / "u.jsonl"
    from parakit.io import write

    write(read(EXAMPLE).map(lambda p: p.replace(label=None)), unlabelled)
    capsys.readouterr()
    assert main(["release", str(unlabelled), *out, "--license", "mit"]) == 2
    assert "[E130]" in capsys.readouterr().err


@pytest.fixture
def intercepted_hub(monkeypatch):
    """huggingface_hub's repository calls recorded instead of sent (so offline mode, which the
    test environment may set, is lifted: nothing can reach the network)."""
    calls: list[tuple[str, dict]] = []
    monkeypatch.setattr(pytest.importorskip("huggingface_hub.constants"), "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(
        huggingface_hub.HfApi,
        "create_repo",
        lambda self, repo_id, **kw: (
            calls.append(("create", {"repo_id": repo_id, **kw}))
            or f"https://huggingface.co/{repo_id}"
        ),
    )
    monkeypatch.setattr(
        huggingface_hub.HfApi,
        "upload_folder",
        lambda self, **kw: calls.append(
            ("upload", {**kw, "files": sorted(p.name for p in Path(kw["folder_path"]).iterdir())})
        ),
    )
    monkeypatch.setattr(
        huggingface_hub.RepoCard,
        "validate",
        lambda self, repo_type=None: calls.append(("validate", {"repo_type": repo_type})),
    )
    return calls


def test_release_push_to_hub(tmp_path, run, intercepted_hub):
    run("release", EXAMPLE, "-o", tmp_path / "rel", "--license", "cc-by-4.0",
        "--push-to-hub", "me/example", "--private")  # fmt: skip
    kinds = [kind for kind, _ in intercepted_hub]
    assert kinds == ["validate", "create", "upload"]
    assert intercepted_hub[0][1] == {"repo_type": "dataset"}
    assert intercepted_hub[1][1]["private"] is True
    upload = intercepted_hub[2][1]
    assert upload["repo_id"] == "me/example" and upload["repo_type"] == "dataset"
    assert upload["files"] == ["README.md", "data", "documents", "parakit.json"]


def test_push_offline_is_one_error_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(pytest.importorskip("huggingface_hub.constants"), "HF_HUB_OFFLINE", True)
    argv = ["release", EXAMPLE, "-o", str(tmp_path / "rel"), "--license", "mit"]
    assert main([*argv, "--push-to-hub", "me/example"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: [E125]") and "offline" in err and len(err.splitlines()) == 1
    assert (tmp_path / "rel" / "README.md").exists()  # the release itself was written


def test_cross_encoder_folder_opens_in_sentence_transformers(
    tiny_model, tmp_path, capsys, intercepted_hub
):
    """identify train writes a card with the dev metrics; CrossEncoder(folder) predicts the
    probabilities identify predict writes (in fp32)."""
    st = pytest.importorskip("sentence_transformers")
    import numpy as np

    model = tmp_path / "ce"
    argv = ["identify", "train", EXAMPLE, "--binary", "-m", "cross-encoder", "--dev", EXAMPLE,
            "-p", f"model_name_or_path={tiny_model}", "-p", "epochs=1", "-p", "max_length=32",
            "-o", str(model), "--push-to-hub", "me/ce"]  # fmt: skip
    assert main(argv) == 0
    # fp32: the default "auto" uses bf16 autocast where the CPU has it (sentence-transformers
    # computes in fp32 unless told otherwise)
    predict = ["identify", "predict", str(model), EXAMPLE, "-o", str(tmp_path / "p.jsonl")]
    assert main([*predict, "--precision", "fp32"]) == 0
    predicted = read(tmp_path / "p.jsonl")
    ours = np.array([[p.metadata["prediction"]["proba"][c] for c in ("0", "1")] for p in predicted])
    cross = st.CrossEncoder(str(model), device="cpu")
    theirs = cross.predict([(p.text1, p.text2) for p in predicted], apply_softmax=True)
    assert np.abs(theirs - ours).max() < 1e-5  # identify predict rounds to 6 decimals
    assert cross.config.id2label == {0: "0", 1: "1"}
    card = huggingface_hub.ModelCard.load(model / "README.md")
    assert card.data.library_name == "sentence-transformers"
    metrics = json.loads((model / "dev_metrics.json").read_text())["metrics"]
    assert f"| accuracy | {metrics['accuracy']:.4f} |" in card.text
    assert f"| positive f1 | {metrics['positive']['f1']:.4f} |" in card.text
    assert "| 1 | `1` | yes |" in card.text and "| 0 | `0` | no |" in card.text
    assert "parakit identify train" in card.text and "--binary" in card.text
    upload = [kw for kind, kw in intercepted_hub if kind == "upload"]
    assert upload[0]["repo_id"] == "me/ce" and upload[0]["repo_type"] == "model"
    assert "README.md" in upload[0]["files"] and "modules.json" in upload[0]["files"]


def test_baseline_and_biencoder_folders_get_cards(tiny_model, tmp_path):
    pytest.importorskip("sentence_transformers")
    assert main(["identify", "train", EXAMPLE, "-m", "bow", "-o", str(tmp_path / "wor")]) == 0
    card = huggingface_hub.ModelCard.load(tmp_path / "wor" / "README.md")
    assert "No development set was given." in card.text
    assert card.data.language == ["en", "fi", "ja"]  # the example's lang "en,fi,ja"
    assert "| 0 | `1` | no |" in card.text  # Turku labels: 1 and 2 are not paraphrases
    assert "`ex00`" not in card.text and "25 pairs" in card.text
    argv = ["embed", "train", EXAMPLE, "-o", str(tmp_path / "bi"), "-m", str(tiny_model),
            "--epochs", "1", "--max-seq-length", "32"]  # fmt: skip
    assert main(argv) == 0
    card = huggingface_hub.ModelCard.load(tmp_path / "bi" / "README.md")
    assert card.data.pipeline_tag == "sentence-similarity"
    assert "paraphrase bi-encoder" in card.text and "parakit embed train" in card.text

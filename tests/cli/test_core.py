"""The command line, driven in-process."""

import json
import subprocess
import sys

import pytest

from parakit.cli import main


def test_help_lists_core_commands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("convert", "info", "split", "similarity", "demo"):
        assert command in out


def test_convert_info_split_similarity(data_path, tmp_path, capsys):
    source = data_path("turku/sv-test.json")
    jsonl = tmp_path / "sv.jsonl"
    assert main(["convert", str(source), "-o", str(jsonl)]) == 0
    assert main(["info", str(jsonl), "--json"]) == 0
    out = capsys.readouterr().out
    summary = json.loads(out[out.index("{") :])
    assert summary["pairs"] == 1081
    assert summary["binary"]["loose"]["1"] == 1078  # all but the three label-2 pairs
    split = tmp_path / "split.jsonl"
    assert main(["split", str(jsonl), "-o", str(split), "--folds", "10", "--seed", "1"]) == 0
    assert main(["similarity", str(split), "-o", str(tmp_path / "sim.jsonl"), "--idf"]) == 0
    first = json.loads((tmp_path / "sim.jsonl").read_text().splitlines()[2 + 34])
    assert {"wor", "char_tfidf_2_4"} <= set(first["metadata"])
    assert "split" in first and "fold" in first


def test_convert_with_column_mapping(tmp_path):
    source = tmp_path / "in.tsv"
    source.write_text("a\tb\tgold\nx y\tx z\t1\n")
    out = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "convert",
                str(source),
                "-o",
                str(out),
                "-c",
                "text1=a",
                "-c",
                "text2=b",
                "-c",
                "label=gold",
            ]
        )
        == 0
    )
    assert json.loads(out.read_text().splitlines()[1])["label"] == "1"


def test_demo_end_to_end(tmp_path):
    assert main(["demo", "-o", str(tmp_path / "demo")]) == 0
    report = (tmp_path / "demo" / "report.md").read_text()
    assert "| strict | 12 | 13 | 0 | 48.0% |" in report
    assert (tmp_path / "demo" / "corpus.jsonl").exists()
    assert (tmp_path / "demo" / "turku" / "example-texts.json.gz").exists()
    assert (tmp_path / "demo" / "release" / "parakit.json").exists()
    # every installed stage adds its section, in the order of the flow
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    stages = [
        "Corpus construction",
        "annotate",
        "Paraphrase identification",
        "mine",
        "Generation data",
        "Corpus analysis",
    ]
    found = [next(i for i, h in enumerate(headings) if stage in h) for stage in stages]
    assert found == sorted(found)
    assert "directed 22" in report
    assert (
        "free rewording (T13 pattern 'other')" in report
    )  # why the T13 figure has no bars  # 9 plain 4s both ways + 2 '4<' + 2 '4>' one way


def test_import_parakit_stays_light():
    code = (
        "import sys, parakit, parakit.io, parakit.text, parakit.split, parakit.cli; "
        "heavy = [m for m in ('torch', 'transformers', 'faiss', 'fastapi', 'datasets', "
        "'sentence_transformers', 'sqlalchemy') if m in sys.modules]; print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_json_is_one_object_on_stdout_and_prose_without_it(tmp_path, capsys):
    from parakit.examples import example_path
    from parakit.io import read

    example = str(example_path())
    out = str(tmp_path / "split.jsonl")
    assert main(["split", example, "-o", out, "--folds", "0", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)  # the whole of stdout
    sizes = {name: len(part) for name, part in read(out).by_split().items()}
    assert printed == {"output": out, "pairs": len(read(out)), "splits": sizes, "folds": 0}
    assert main(["split", example, "-o", out, "--folds", "0"]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"wrote {len(read(out))} pairs to {out}: ") and "{" not in line


def test_demo_without_datasets_says_what_to_install(tmp_path, monkeypatch):
    """Without the datasets extra the demo goes on and its report says what to install (it
    caught a code nothing raises, so the missing extra ended the demo)."""
    import sys

    from parakit.cli.demo import write_demo_release
    from parakit.examples import load_example

    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError
    line = write_demo_release(load_example(), tmp_path / "release")
    assert line == "not written (a release needs datasets: pip install 'parakit[datasets]')"
    assert not (tmp_path / "release").exists()


def test_demo_release_opens_with_load_dataset(tmp_path, monkeypatch):
    """The demo's release folder: datasets.load_dataset reads every example pair from it, no
    document's pairs in two splits, and parakit reads it back."""
    datasets = pytest.importorskip("datasets")
    from parakit.cli.demo import write_demo_release
    from parakit.examples import load_example
    from parakit.io import read

    example = load_example()
    line = write_demo_release(example, tmp_path / "release")
    assert line.startswith("a release folder (") and "load_dataset" in line
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    loaded = datasets.load_dataset(str(tmp_path / "release"))
    assert sum(len(part) for part in loaded.values()) == len(example) == 25
    ids = sorted(row["id"] for part in loaded.values() for row in part)
    assert ids == sorted(p.id for p in example)
    back = read(tmp_path / "release")
    seen: dict[str, str] = {}
    for pair in back:
        for span in (pair.span1, pair.span2):
            if span is not None:
                assert seen.setdefault(span.doc_id, pair.split) == pair.split, span.doc_id
    assert {p.id: p.label for p in back} == {p.id: p.label for p in example}
    # three splits, each as large in datasets as in parakit's reading
    sizes = {name: len(part) for name, part in back.by_split().items()}
    assert len(sizes) == 3 and all(sizes.values())
    assert sorted(len(part) for part in loaded.values()) == sorted(sizes.values())


def test_examples_writes_the_inputs_of_the_annotate_guide(tmp_path, capsys):
    """``parakit examples annotate``: the files docs/annotate.md works on, as the page says."""
    import csv

    from parakit.examples import load_example
    from parakit.io import read

    assert main(["examples"]) == 0
    assert "mturk.csv: crowd judgments" in capsys.readouterr().out
    assert main(["examples", "annotate", "-o", str(tmp_path)]) == 0
    example = load_example()
    assert read(tmp_path / "candidates.jsonl") == example
    judged = read(tmp_path / "corpus.jsonl")
    assert [p.id for p in judged] == [p.id for p in example]
    assert {tuple(j.annotator for j in p.judgments) for p in judged} == {("ann1", "ann2")}
    docpairs = read(tmp_path / "docpairs.jsonl")
    assert all(p.text1 == example.documents[p.span1.doc_id].text for p in docpairs)
    rows = list(csv.DictReader((tmp_path / "mturk.csv").open(encoding="utf-8")))
    assert len(rows) == 6 * len(example)  # 6 workers on every pair
    assert sum(r["gold"] == "true" for r in rows) == 6 * 2  # two gold pairs
    ratings = list(csv.DictReader((tmp_path / "ratings.csv").open(encoding="utf-8")))
    assert len(ratings) == 20 * 3 and {r["label"] for r in ratings} <= set("12345")
    assert main(["examples", "nothing", "-o", str(tmp_path)]) == 2


def test_examples_writes_the_inputs_of_the_build_guide(tmp_path):
    from parakit.examples import EXAMPLE_SETS, load_example
    from parakit.io import read

    assert main(["examples", "build", "-o", str(tmp_path)]) == 0
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == sorted(EXAMPLE_SETS["build"])
    example = load_example()
    assert read(tmp_path / "corpus.jsonl") == example
    docs = [json.loads(line) for line in (tmp_path / "docs.jsonl").read_text().splitlines()]
    assert {d["id"]: d["text"] for d in docs} == {i: d.text for i, d in example.documents.items()}
    assert (tmp_path / "a.txt").read_text() == example.documents["en-storm-a"].text

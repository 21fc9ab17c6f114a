import json

from typer.testing import CliRunner

from parakit.cli.build import app
from parakit.io import read

runner = CliRunner()


def _jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


def test_align_and_assignments(tmp_path):
    docs = _jsonl(
        tmp_path / "docs.jsonl",
        [
            {"id": "a", "text": "The committee approved the budget on Tuesday.", "site": "x"},
            {"id": "b", "text": "On Tuesday the committee approved a budget.", "site": "x"},
            {"id": "c", "text": "", "site": "x"},
            {"id": "d", "text": "Snow closed the roads.", "site": "y"},
        ],
    )
    result = runner.invoke(
        app,
        [
            "align",
            str(docs),
            "-o",
            str(tmp_path / "out.jsonl"),
            "--low",
            "0.1",
            "--high",
            "0.99",
            "--group-by",
            "site",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "skipped: {'empty-document': 1}" in result.output
    ps = read(tmp_path / "out.jsonl")
    assert [p.id for p in ps] == ["a|b"] and set(ps.documents) == {"a", "b"}
    answers = _jsonl(
        tmp_path / "answers.jsonl",
        [{"id": f"s{i}", "assignment": "q", "text": f"answer {i} text"} for i in range(4)],
    )
    result = runner.invoke(
        app, ["assignments", str(answers), "-o", str(tmp_path / "as.jsonl"), "--max-pairs", "2"]
    )
    assert result.exit_code == 0 and len(read(tmp_path / "as.jsonl")) == 2


def test_sample_prints_report_and_short_bins(tmp_path):
    pairs = _jsonl(
        tmp_path / "pairs.jsonl",
        [
            {"id": str(i), "text1": "a b c d", "text2": "a b c d" + (" x" if i % 2 else " x y")}
            for i in range(10)
        ],
    )
    out = tmp_path / "sample.jsonl"
    result = runner.invoke(app, ["sample", str(pairs), "-o", str(out), "--n", "3"])
    assert result.exit_code == 0, result.output
    assert "short bins" in result.output and len(read(out)) == 6


def test_wor_histogram_on_tmup(data_path):
    path = data_path("tmup/tmup.tsv")
    result = runner.invoke(
        app, ["wor-histogram", str(path), "--format", "tmup", "--method", "whitespace"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[-2:] == ["mt", "wikipedia"]
    total = next(line for line in lines if "total" in line).split()
    assert total[-2:] == ["465", "190"]


def test_social_and_negatives(tmp_path):
    posts = _jsonl(
        tmp_path / "posts.jsonl",
        [
            {"group": "t", "text": f"the new phone model {i} has a great camera sensor"}
            for i in range(25)
        ],
    )
    result = runner.invoke(app, ["social", str(posts), "-o", str(tmp_path / "pilot.jsonl")])
    assert result.exit_code == 0, result.output
    assert len(read(tmp_path / "pilot.jsonl")) == 20
    counts = tmp_path / "counts.json"
    counts.write_text('{"t": 5}')
    result = runner.invoke(
        app,
        [
            "social",
            str(posts),
            "-o",
            str(tmp_path / "more.jsonl"),
            "--stage",
            "follow-up",
            "--pilot-counts",
            str(counts),
        ],
    )
    assert result.exit_code == 0 and len(read(tmp_path / "more.jsonl")) == 20
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"sentence number {i} is here" for i in range(30)))
    result = runner.invoke(
        app,
        [
            "negatives",
            str(corpus),
            "-o",
            str(tmp_path / "neg.jsonl"),
            "--n",
            "5",
            "--wor-low",
            "0.5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert all(p.metadata["wor"] >= 0.5 for p in read(tmp_path / "neg.jsonl"))


def test_nearest_negatives_command(tmp_path, data_path):
    out = tmp_path / "negs.jsonl"
    source = data_path("multipit/auto-val.csv")
    result = runner.invoke(
        app,
        ["nearest-negatives", str(source), "-o", str(out), "--keep-pairs", "--pair-label", "1"],
    )
    assert result.exit_code == 0, result.output
    pairs = read(out)
    originals, negatives = pairs[:215], pairs[215:]
    assert len(originals) == len(negatives) == 215  # auto-val: 215 positive pairs
    assert all(n.label == "0" and n.source == "nearest" for n in negatives)
    assert all(p.label == "1" for p in originals)  # auto-val has no label column
    assert [n.text1 for n in negatives] == [p.text1 for p in originals]
    known = {(p.text1, p.text2) for p in originals}
    assert not any((n.text1, n.text2) in known for n in negatives)


def test_wor_histogram_by_an_unknown_field_is_a_bad_option(tmp_path):
    pairs = _jsonl(tmp_path / "p.jsonl", [{"id": "1", "text1": "a b c", "text2": "a b d"}])
    result = runner.invoke(app, ["wor-histogram", str(pairs), "--by", "sorce"])
    assert result.exit_code == 2, result.output
    assert "--by" in result.output and "'sorce'" in result.output
    assert "internal error" not in result.output
    ok = runner.invoke(app, ["wor-histogram", str(pairs), "--by", "label"])
    assert ok.exit_code == 0, ok.output
    assert ok.output.splitlines()[0].split()[-1] == "None"  # the one group: no label


def test_social_seed_and_count_tables_are_checked_naming_file_and_group(tmp_path):
    from parakit.errors import DataFormatError

    posts = _jsonl(
        tmp_path / "posts.jsonl",
        [
            {"group": "u", "kind": "url", "text": f"read the report on topic {i} now"}
            for i in range(12)
        ]
        + [
            {"group": "t", "text": f"the new phone model {i} has a great camera"} for i in range(12)
        ],
    )
    seeds = tmp_path / "seeds.json"
    seeds.write_text('{"u": "3"}')  # a string, as a spreadsheet export writes it
    out = tmp_path / "url.jsonl"
    result = runner.invoke(
        app, ["social", str(posts), "-o", str(out), "--stage", "url", "--url-seeds", str(seeds)]
    )
    err = result.exception
    assert isinstance(err, DataFormatError) and err.code == "E502", result.output
    assert err.path == str(seeds) and err.field == "u" and "'3'" in err.message
    assert not out.exists()
    seeds.write_text('{"u": 3}')
    result = runner.invoke(
        app, ["social", str(posts), "-o", str(out), "--stage", "url", "--url-seeds", str(seeds)]
    )
    assert result.exit_code == 0, result.output
    assert sorted((p.metadata["rank1"], p.metadata["rank2"]) for p in read(out))[:2] == [
        (4, 1),
        (4, 2),
    ]
    counts = tmp_path / "counts.json"
    counts.write_text('{"t": -1}')
    result = runner.invoke(
        app,
        [
            "social",
            str(posts),
            "-o",
            str(out),
            "--stage",
            "follow-up",
            "--pilot-counts",
            str(counts),
        ],
    )
    assert isinstance(result.exception, DataFormatError) and result.exception.field == "t"


def test_expert_batches_of_a_corpus_without_paraphrases_says_so(tmp_path):
    # was: "no cluster has more than --n-seeds 2 members (largest: 0)"
    from parakit.errors import ParakitError

    rows = [{"id": str(i), "text1": f"s{i}", "text2": f"t{i}", "group": "g"} for i in range(3)]
    corpus = _jsonl(tmp_path / "c.jsonl", rows)
    result = runner.invoke(app, ["expert-batches", str(corpus), "-o", str(tmp_path / "b.jsonl")])
    err = result.exception
    assert isinstance(err, ParakitError) and err.code == "E501", result.output
    assert "of the 3 pairs, 0 are labelled paraphrases" in err.message
    assert not (tmp_path / "b.jsonl").exists()

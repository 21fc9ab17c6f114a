"""Label Studio, doccano and Prodigy: the tools' export shapes in, parakit's pairs out and back.

The fixtures in ``tests/io/data`` follow each tool's documented export: Label Studio's JSON
export (tasks with ``data``, ``annotations`` by ``completed_by``, a cancelled annotation, a
prediction, a rating of another control, a comment box), doccano's unzipped per-user export
(``ann1.jsonl``, ``ann2.jsonl``) and a Prodigy ``db-out`` of a choice task (one line per
annotator, grouped by ``_input_hash``, one ``ignore``). All three hold the same judgments:
two annotators on four pairs, A = 4, 3, 2, 4 and B = 4, 4, 2, 3.

Agreement of A and B, by hand: observed 2/4 = 0.5; both annotators give 4 twice, 3 once and
2 once, so chance agreement is (2*2 + 1 + 1)/16 = 0.375 and Cohen's kappa
(0.5 - 0.375)/(1 - 0.375) = 0.2 (Fleiss' kappa for two raters gives the same 0.2). The
coincidence matrix has 4 of 8 values off the diagonal: Krippendorff's D_o = 0.5, D_e =
(2*4*2 + 2*4*2 + 2*2*2)/(8*7) = 40/56, alpha = 1 - 0.5*56/40 = 0.3. Read loosely (3 and 4
paraphrases, 2 not) the two agree everywhere: kappa 1.
"""

from __future__ import annotations

import json
import logging
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from parakit.cli import main
from parakit.errors import DataFormatError, WriteError
from parakit.io import detect_format, labeling_config, read, write
from parakit.schema import Judgment, Pair, PairSet

DATA = Path(__file__).parent / "data"
LABEL_STUDIO = DATA / "label-studio-export.json"
DOCCANO = DATA / "doccano-export"
PRODIGY = DATA / "prodigy-export.jsonl"
A = ["4", "3", "2", "4"]
B = ["4", "4", "2", "3"]
#: the pair label read without one given: the majority, a tie (pairs 2 and 4) unlabelled
MAJORITY = ["4", None, "2", None]


def _labels(pairs: PairSet, annotator: str) -> list[str | None]:
    return [next((j.label for j in p.judgments if j.annotator == annotator), None) for p in pairs]


@pytest.mark.parametrize(
    ("path", "fmt", "annotators"),
    [
        (LABEL_STUDIO, "label-studio", ("10", "11")),
        (DOCCANO, "doccano", ("ann1", "ann2")),
        (PRODIGY, "prodigy", ("pairs-alice", "pairs-bob")),
    ],
    ids=["label-studio", "doccano", "prodigy"],
)
def test_each_tools_export_reads_as_pairs_with_judgments(path, fmt, annotators):
    assert detect_format(path) == fmt
    pairs = read(path)
    assert pairs.scheme.name == "turku"  # inferred: 2, 3 and 4 are not binary labels
    assert len(pairs) == 4
    assert pairs[0].text1 == "The storm closed every road to the coast."
    assert pairs[3].text2 == "After years of renovation the museum opens its doors again."
    assert _labels(pairs, annotators[0]) == A
    assert _labels(pairs, annotators[1]) == B
    assert [len(p.judgments) for p in pairs] == [2, 2, 2, 2]  # cancelled / ignored: none
    assert [p.label for p in pairs] == MAJORITY


def test_label_studio_keeps_what_a_task_says():
    pairs = read(LABEL_STUDIO)
    assert [p.id for p in pairs] == ["101", "102", "103", "104"]  # the task ids
    first, second, third = pairs[0], pairs[1], pairs[2]
    assert first.metadata == {
        "batch": "news-1",
        "predictions": [{"label": "4", "model_version": "tfidf-v1", "score": 0.91}],
    }
    assert first.judgments[0].time == "2026-11-02T09:14:03.512344Z"
    assert second.judgments[0].comment == "the second adds a date"
    assert [j.gold for j in third.judgments] == [False, True]  # ground_truth


def test_prodigy_and_doccano_keep_time_and_columns():
    prodigy = read(PRODIGY)
    assert prodigy[0].id == "-1742618351"  # the input hash groups a pair's lines
    assert prodigy[0].judgments[0].time == "2026-11-02T09:40:00+00:00"  # _timestamp 1793612400
    doccano = read(DOCCANO)
    assert doccano.name == "doccano-export"
    assert [p.metadata for p in doccano[:2]] == [
        {"batch": "news-1", "Comments": []},
        {"batch": "news-1", "Comments": []},
    ]


# -- agreement on the imported judgments --------------------------------------------------------


@pytest.mark.parametrize("path", [LABEL_STUDIO, DOCCANO, PRODIGY], ids=lambda p: p.name)
def test_judgments_from_each_tool_feed_agreement(path):
    from parakit.annotate.agreement import agreement_report, judgments_frame

    pairs = read(path)
    frame = judgments_frame([(p.id, j.annotator, j.label) for p in pairs for j in p.judgments])
    report = agreement_report(frame, "turku", consensus={p.id: p.label for p in pairs})
    assert report["full_pairwise_kappa"] == pytest.approx(0.2)
    assert report["full_fleiss_kappa"] == pytest.approx(0.2)
    assert report["full_alpha_nominal"] == pytest.approx(0.3)
    assert report["binary_pairwise_kappa"] == pytest.approx(1.0)


def test_agreement_command_reads_a_tools_export(capsys):
    assert main(["annotate", "agreement", str(LABEL_STUDIO), "--scheme", "turku"]) == 0
    lines = dict(line.split("\t")[:2] for line in capsys.readouterr().out.splitlines())
    assert lines["full_pairwise_kappa"] == "0.2000"
    assert lines["full_alpha_nominal"] == "0.3000"
    assert lines["binary_fleiss_kappa"] == "1.0000"


# -- round trips ----------------------------------------------------------------------------------


def _corpus() -> PairSet:
    """Pairs with every field the tools can carry, two annotators on the first two."""
    return PairSet(
        [
            Pair(
                "p1",
                "A cat sat on the mat.",
                "On the mat sat a cat.",
                label="4",
                group="g1",
                split="train",
                fold=3,
                source="news",
                metadata={"score": 0.5, "tags": ["a", "b"]},
                judgments=(
                    Judgment("ann1", "4", time="2026-11-02T09:00:00Z"),
                    Judgment("ann2", "4<", time="2026-11-02T09:05:00Z", comment="wider"),
                ),
            ),
            Pair(
                "p2",
                "It rained all day.",
                "The sun shone all day.",
                label="2",
                time="2026-03-01",
                judgments=(Judgment("ann1", "2", gold=True), Judgment("ann2", "2")),
            ),
            Pair("p3", "Nobody judged this.", "Nobody judged that.", group="g2"),
        ],
        scheme="turku",
    )


@pytest.mark.parametrize("fmt", ["label-studio", "prodigy"])
def test_parakit_to_tool_to_parakit_gives_the_pairs_back(tmp_path, fmt):
    corpus = _corpus()
    path = tmp_path / ("out.json" if fmt == "label-studio" else "out.jsonl")
    write(corpus, path, format=fmt)
    assert detect_format(path) == fmt
    back = read(path)
    assert back.scheme == corpus.scheme
    assert back.pairs == corpus.pairs


def test_parakit_to_doccano_to_parakit(tmp_path):
    # a file: the pairs and their labels (judgments need a folder)
    corpus = _corpus()
    plain = corpus.map(lambda p: p.replace(judgments=()))
    write(corpus, tmp_path / "pairs.jsonl", format="doccano")
    assert read(tmp_path / "pairs.jsonl", format="doccano", scheme="turku").pairs == plain.pairs
    # a folder: each annotator's labels in <annotator>.jsonl, read back as their judgments
    write(corpus, tmp_path / "export", format="doccano")
    assert sorted(f.name for f in (tmp_path / "export").iterdir()) == ["ann1.jsonl", "ann2.jsonl"]
    back = read(tmp_path / "export", scheme="turku")
    for pair, original in zip(back, corpus, strict=True):
        assert [(j.annotator, j.label) for j in pair.judgments] == [
            (j.annotator, j.label) for j in original.judgments
        ]
        # the label is the annotators' majority: p1's 4 and 4< tie
        assert pair.label == {"p1": None, "p2": "2", "p3": None}[pair.id]
        assert (pair.group, pair.split, pair.fold, pair.metadata) == (
            original.group,
            original.split,
            original.fold,
            original.metadata,
        )


def test_a_second_doccano_folder_write_leaves_no_earlier_annotator_behind(tmp_path):
    # every <user>.jsonl of the folder is read as a user's judgments: ann2's and ann3's files
    # of the first write stayed and outvoted ann1, the only annotator of the second (label 1)
    folder = tmp_path / "export"
    judged = (Judgment("ann1", "1"), Judgment("ann2", "1"), Judgment("ann3", "1"))
    write(PairSet([Pair("p", "x", "y", judgments=judged)]), folder, format="doccano")
    write(PairSet([Pair("p", "x", "y", judgments=(Judgment("ann1", "0"),))]), folder,
          format="doccano")  # fmt: skip
    assert sorted(f.name for f in folder.iterdir()) == ["ann1.jsonl"]
    back = read(folder)
    assert [(p.label, [(j.annotator, j.label) for j in p.judgments]) for p in back] == [
        ("0", [("ann1", "0")])
    ]
    # a folder that is not a doccano export is refused, not mixed with the files
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(WriteError) as err:
        write(PairSet([Pair("p", "x", "y", judgments=judged)]), other, format="doccano")
    assert err.value.code == "E141" and sorted(f.name for f in other.iterdir()) == ["notes.txt"]


def test_doccano_separator_puts_both_texts_in_text(tmp_path):
    corpus = _corpus()
    path = tmp_path / "joined.jsonl"
    write(corpus, path, format="doccano", separator="\n---\n")
    first = json.loads(path.read_text().splitlines()[0])
    assert first["text"] == "A cat sat on the mat.\n---\nOn the mat sat a cat."
    assert first["label"] == ["4"] and first["pair_id"] == "p1"
    back = read(path, format="doccano", separator="\n---\n", scheme="turku")
    assert [(p.text1, p.text2, p.label) for p in back] == [
        (p.text1, p.text2, p.label) for p in corpus
    ]


@pytest.mark.parametrize(
    ("path", "fmt", "suffix"),
    [
        (LABEL_STUDIO, "label-studio", ".json"),
        (DOCCANO, "doccano", ""),
        (PRODIGY, "prodigy", ".jsonl"),
    ],
    ids=["label-studio", "doccano", "prodigy"],
)
def test_tool_export_to_parakit_to_tool_keeps_labels_and_annotators(tmp_path, path, fmt, suffix):
    first = read(path)
    out = tmp_path / f"again{suffix}"
    write(first, out, format=fmt)
    again = read(out, format=fmt)
    assert [[(j.annotator, j.label) for j in p.judgments] for p in again] == [
        [(j.annotator, j.label) for j in p.judgments] for p in first
    ]
    assert [p.label for p in again] == MAJORITY


def test_label_studio_annotators_keep_their_names(tmp_path):
    write(_corpus(), tmp_path / "ls.json", format="label-studio")
    tasks = json.loads((tmp_path / "ls.json").read_text())
    assert [a["completed_by"] for a in tasks[0]["annotations"]] == [
        {"id": 1, "email": "ann1"},
        {"id": 2, "email": "ann2"},
    ]
    assert tasks[0]["data"]["text1"] == "A cat sat on the mat."
    assert tasks[0]["annotations"][1]["result"][1] == {
        "from_name": "comment",
        "to_name": "text1",
        "type": "textarea",
        "value": {"text": ["wider"]},
    }
    assert tasks[2]["annotations"] == []  # a task still to annotate
    # numeric names are Label Studio user ids and stay ids
    write(read(LABEL_STUDIO), tmp_path / "ids.json", format="label-studio")
    tasks = json.loads((tmp_path / "ids.json").read_text())
    assert [a["completed_by"] for a in tasks[0]["annotations"]] == [10, 11]


def test_label_studio_annotators_with_leading_zeros_or_other_digits_keep_their_names(tmp_path):
    # '007'.isdigit(): written as user id 7 and read back as '7', merged with annotator '7';
    # '²'.isdigit() too, and int('²') raised a ValueError
    judged = (Judgment("007", "1"), Judgment("7", "0"), Judgment("²", "1"), Judgment("x", "0"))
    write(PairSet([Pair("p", "a", "b", judgments=judged)]), tmp_path / "t.json",
          format="label-studio")  # fmt: skip
    tasks = json.loads((tmp_path / "t.json").read_text())
    assert [a["completed_by"] for a in tasks[0]["annotations"]] == [
        {"id": 1, "email": "007"}, 7, {"id": 2, "email": "²"}, {"id": 3, "email": "x"},
    ]  # fmt: skip
    back = read(tmp_path / "t.json")
    assert [(j.annotator, j.label) for j in back[0].judgments] == [
        ("007", "1"), ("7", "0"), ("²", "1"), ("x", "0"),
    ]  # fmt: skip


def test_writers_say_what_the_layout_leaves_out(tmp_path, caplog):
    corpus = _corpus().map(
        lambda p: p.replace(
            judgments=tuple(j.__class__(j.annotator, j.label, unsure=True) for j in p.judgments)
        )
    )
    with caplog.at_level(logging.WARNING):
        write(corpus, tmp_path / "ls.json", format="label-studio")
    assert "unsure (4 judgments)" in caplog.text


# -- the labeling config --------------------------------------------------------------------------


def test_labeling_config_names_what_the_tasks_use(tmp_path):
    xml = labeling_config("turku")
    root = ET.fromstring(xml)
    texts = {t.get("name"): t.get("value") for t in root.iter("Text")}
    assert texts == {"text1": "$text1", "text2": "$text2"}
    (choices,) = root.iter("Choices")
    assert choices.get("choice") == "single"
    assert [c.get("value") for c in choices] == [
        "1", "2", "3", "4", "4s", "4i", "4is", "4<", "4<s", "4<i", "4<is",
        "4>", "4>s", "4>i", "4>is", "x",
    ]  # fmt: skip
    controls = {c.get("name") for c in root if c.get("toName")}
    # every result of the written tasks names a control of the config and one of its texts
    write(_corpus(), tmp_path / "ls.json", format="label-studio")
    for task in json.loads((tmp_path / "ls.json").read_text()):
        assert set(texts) <= set(task["data"])
        for annotation in task["annotations"]:
            for region in annotation["result"]:
                assert region["from_name"] in controls and region["to_name"] in texts


def test_labeling_config_command(tmp_path, capsys):
    assert main(["annotate", "labeling-config", "--scheme", "binary", "--no-comment"]) == 0
    root = ET.fromstring(capsys.readouterr().out)
    assert [c.get("value") for c in root.iter("Choice")] == ["0", "1"]
    assert not list(root.iter("TextArea"))


def test_convert_and_info_take_the_tools_formats(tmp_path, capsys):
    out = tmp_path / "ls.jsonl"
    assert main(["convert", str(LABEL_STUDIO), "-o", str(out)]) == 0
    assert read(out).pairs == read(LABEL_STUDIO).pairs
    assert main(["convert", str(out), "-o", str(tmp_path / "p.jsonl"), "-t", "prodigy"]) == 0
    assert _labels(read(tmp_path / "p.jsonl"), "11") == B
    assert main(["info", str(DOCCANO), "--json"]) == 0
    assert '"pairs": 4' in capsys.readouterr().out


# -- bad input ------------------------------------------------------------------------------------


def _error(path, **options) -> DataFormatError:
    with pytest.raises(DataFormatError) as err:
        read(path, **options)
    return err.value


def _tasks(tmp_path, tasks) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def _task(choices=("4",), **data):
    result = [
        {
            "from_name": "label",
            "to_name": "text1",
            "type": "choices",
            "value": {"choices": list(choices)},
        }
    ]
    return {
        "data": {"text1": "a b", "text2": "b a", **data},
        "annotations": [{"completed_by": 1, "result": result}],
    }


@pytest.mark.parametrize(
    ("tasks", "code", "record", "field"),
    [
        ({"text1": "no data"}, "E151", None, None),
        ([_task(), {"text1": "a", "text2": "b"}], "E151", 2, "data"),
        ([_task(), _task(choices=("4", "3"))], "E152", 2, "annotations[0].result.value.choices"),
        ([_task(), {"data": {"text1": "a"}}], "E106", 2, "data.text2"),
        ([_task(choices=("9",))], "E201", 1, "annotations[0].result"),
        ([_task(label="7")], "E201", 1, "data.label"),
        ([{**_task(), "annotations": [{"result": _task()["annotations"][0]["result"]}]}], "E106", 1,
         "annotations[0].completed_by"),
    ],
    ids=["not a list", "no data", "two choices", "no text2", "bad label", "bad data label",
         "no annotator"],
)  # fmt: skip
def test_label_studio_bad_input_names_file_task_and_field(tmp_path, tasks, code, record, field):
    path = _tasks(tmp_path, tasks)
    err = _error(path, format="label-studio", **({} if code != "E201" else {"scheme": "turku"}))
    if record is None and code == "E151":  # a dict without data is taken for one task
        assert (err.code, err.line, err.field) == ("E151", 1, "data")
        return
    assert (err.code, err.line, err.field) == (code, record, field), str(err)
    assert str(path) in str(err)


def test_label_studio_several_choice_controls_need_a_name(tmp_path):
    task = _task()
    extra = {
        "from_name": "quality",
        "to_name": "text1",
        "type": "choices",
        "value": {"choices": ["ok"]},
    }
    task["annotations"][0]["result"].append(extra)
    path = _tasks(tmp_path, [task])
    err = _error(path, format="label-studio")
    assert err.code == "E152" and "choice=NAME" in str(err)
    assert read(path, format="label-studio", choice="label")[0].judgments[0].label == "4"


def _lines(tmp_path, records, name="x.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_prodigy_bad_input(tmp_path):
    good = {"text1": "a", "text2": "b", "_input_hash": 1, "answer": "accept", "label": "PARA"}
    err = _error(_lines(tmp_path, [good, {**good, "answer": "maybe"}]), format="prodigy")
    assert (err.code, err.line, err.field) == ("E152", 2, "answer")
    err = _error(_lines(tmp_path, [good, {"text": "a", "_input_hash": 2}]), format="prodigy")
    assert (err.code, err.line, err.field) == ("E151", 2, "text1")
    err = _error(_lines(tmp_path, [good, {**good, "text2": "c"}]), format="prodigy")
    assert (err.code, err.line) == ("E153", 2) and "line 1" in str(err)
    choice = {**good, "options": [{"id": "0"}, {"id": "1"}], "accept": ["0", "1"]}
    err = _error(_lines(tmp_path, [choice]), format="prodigy")
    assert (err.code, err.line, err.field) == ("E152", 1, "accept")


def test_prodigy_binary_answers(tmp_path):
    line = {"text1": "a", "text2": "b", "_input_hash": 1, "label": "PARAPHRASE"}
    path = _lines(
        tmp_path,
        [
            {**line, "answer": "accept", "_annotator_id": "x-ann1"},
            {**line, "answer": "reject", "_annotator_id": "x-ann2"},
            {**line, "answer": "ignore", "_annotator_id": "x-ann3"},
            {**line, "answer": "accept", "_session_id": "x-ann4"},
        ],
    )
    (pair,) = read(path, format="prodigy")
    assert [(j.annotator, j.label) for j in pair.judgments] == [
        ("x-ann1", "1"),
        ("x-ann2", "0"),
        ("x-ann4", "1"),
    ]
    assert pair.label == "1"  # two accepts against one reject


def test_doccano_bad_input(tmp_path):
    err = _error(
        _lines(tmp_path, [{"text": "a", "text2": "b", "label": ["1", "0"]}]), format="doccano"
    )
    assert (err.code, err.line, err.field) == ("E152", 1, "label")
    err = _error(_lines(tmp_path, [{"words": "a", "label": []}]), format="doccano")
    assert (err.code, err.field) == ("E151", "text")
    err = _error(_lines(tmp_path, [{"text": "a b", "label": []}]), format="doccano", separator="|")
    assert (err.code, err.field) == ("E151", "text")
    err = _error(_lines(tmp_path, [{"text": "a", "label": []}]), format="doccano")
    assert (err.code, err.field) == ("E106", "text2")
    folder = tmp_path / "export"
    folder.mkdir()
    _lines(folder, [{"id": 1, "text": "a", "text2": "b", "label": ["1"]}], "u1.jsonl")
    _lines(folder, [{"id": 1, "text": "a", "text2": "c", "label": ["1"]}], "u2.jsonl")
    err = _error(folder, format="doccano")
    assert (err.code, err.line) == ("E153", 1) and "u2.jsonl" in str(err) and "u1.jsonl" in str(err)


def test_labels_that_fit_no_scheme_ask_for_one(tmp_path):
    path = _tasks(tmp_path, [_task(choices=("maybe",))])  # binary takes yes/no, not maybe
    err = _error(path, format="label-studio")
    assert err.code == "E201" and "scheme=" in str(err)

"""Bad input: clear errors naming file, line/record and field; nothing half-written."""

import json
import os

import pytest

from parakit.cli import main
from parakit.errors import DataFormatError
from parakit.io import read, write
from parakit.io.atomic import atomic_write
from parakit.schema import Pair, PairSet


def test_malformed_jsonl_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "text1": "x", "text2": "y"}\n{"id": "b", "text1": \n')
    with pytest.raises(DataFormatError) as err:
        read(path)
    assert err.value.line == 2 and str(path) in str(err.value)
    assert "malformed JSON" in str(err.value)


def test_jsonl_missing_field_and_invalid_label(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"parakit": 1, "scheme": {"name": "turku"}}\n'
        '{"id": "a", "text1": "x", "text2": "y", "label": "4"}\n'
        '{"id": "b", "text1": "x", "label": "4"}\n'
    )
    with pytest.raises(DataFormatError) as err:
        read(path)
    assert (err.value.line, err.value.field) == (3, "text2")
    path.write_text(
        '{"parakit": 1, "scheme": {"name": "turku"}}\n'
        '{"id": "a", "text1": "x", "text2": "y", "label": "4<>"}\n'
    )
    with pytest.raises(DataFormatError) as err:
        read(path)
    assert (err.value.line, err.value.field) == (2, "label")
    assert "mutually exclusive" in str(err.value)


def test_csv_missing_column_and_bad_label(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("sentence1,label\na,1\n")
    with pytest.raises(DataFormatError) as err:
        read(path)
    assert err.value.field == "text2" and err.value.line == 1
    path.write_text("sentence1,sentence2,label\na,b,1\nc,d,5\n")
    with pytest.raises(DataFormatError) as err:
        read(path)
    assert (err.value.line, err.value.field) == (3, "label")
    assert "invalid label '5'" in str(err.value)
    path.write_text("sentence1,sentence2,label\na,b,1\nc,d\n")
    with pytest.raises(DataFormatError, match="expected 3 fields"):
        read(path)
    with pytest.raises(DataFormatError, match="not in the header"):
        read(path, columns={"text1": "nope"})


def test_turku_invalid_label_and_span_outside_document(tmp_path):
    texts = tmp_path / "toy-texts.json"
    texts.write_text(json.dumps({"d1": "Hello there.", "d2": "Hi."}))
    item = {
        "txt1": "Hello",
        "txt2": "Hi",
        "label": "4",
        "fold": 0,
        "goeswith": "g",
        "rewrites": [],
        "context": {"doc1": "d1", "beg1": 0, "end1": 5, "doc2": "d2", "beg2": 0, "end2": 2},
    }
    path = tmp_path / "toy-test.json"
    path.write_text(json.dumps([item, {**item, "label": "4<>"}]))
    with pytest.raises(DataFormatError) as err:
        read(path)
    assert (err.value.line, err.value.field) == (2, "label") and "record 2" in str(err.value)
    outside = {**item, "context": {**item["context"], "end2": 40}}
    path.write_text(json.dumps([item, outside]))
    with pytest.raises(DataFormatError) as err:
        read(path)
    assert (err.value.line, err.value.field) == (2, "context.end2")
    assert "outside document 'd2'" in str(err.value)


def test_unknown_encoding_names_the_line(tmp_path):
    path = tmp_path / "latin.tsv"
    path.write_bytes("text1\ttext2\nok\tfine\ncafé\tthé\n".encode("latin-1"))
    with pytest.raises(DataFormatError, match="cannot decode") as err:
        read(path)
    assert err.value.code == "E104"
    assert len(read(path, encoding="latin-1")) == 2


def test_atomic_write_leaves_previous_file_on_error(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("previous\n")
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write("partial")
        raise RuntimeError("crash mid-way")
    assert target.read_text() == "previous\n"
    assert os.listdir(tmp_path) == ["out.jsonl"]  # no temp file left behind


def test_writer_error_leaves_no_half_written_turku_file(tmp_path):
    from parakit.schema import Span

    pairs = PairSet(
        [Pair("a", "x", "y", label="4", span1=Span("missing", 0, 1), span2=Span("missing", 0, 1))],
        scheme="turku",
    )
    with pytest.raises(Exception, match="documents the pair set does not hold"):
        write(pairs, tmp_path / "rel.json")
    assert not (tmp_path / "rel-texts.json.gz").exists()
    assert not (tmp_path / "rel.json").exists()


def test_cli_error_exit_code_and_no_output(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("sentence1,sentence2,label\na,b,7\n")
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(path), "-o", str(out)]) == 2
    assert "line 2" in capsys.readouterr().err
    assert not out.exists()


def test_iter_jsonl_reports_the_callers_code(tmp_path):
    from parakit.evaluate.generation import read_generations
    from parakit.io.jsonl import iter_jsonl

    path = tmp_path / "gen.jsonl"
    path.write_text('{"source": "a", "generation": "b"}\n{"source": 1\n')
    with pytest.raises(DataFormatError) as err:
        list(iter_jsonl(path))
    assert (err.value.code, err.value.line) == ("E105", 2)
    with pytest.raises(DataFormatError) as err:
        read_generations(path)
    assert (err.value.code, err.value.line) == ("E915", 2)

"""Writers that cannot lose information silently; atomic multi-file output; temp files."""

import json
import os

import pytest

from parakit.errors import DataFormatError, ParakitError, WriteError
from parakit.io import read, write
from parakit.io.atomic import atomic_write, remove_orphans
from parakit.schema import Document, Judgment, Pair, PairSet, Span


def _binary():
    return PairSet(
        [Pair("a", "x", "y", label="1"), Pair("b", "u", "v", label="0")], scheme="binary"
    )


def test_turku_writer_refuses_labels_it_cannot_express(tmp_path):
    with pytest.raises(DataFormatError) as err:
        write(_binary(), tmp_path / "en-pairs.json")
    assert err.value.code == "E120" and "label_map" in str(err.value)
    assert list(tmp_path.iterdir()) == []
    path, texts = write(_binary(), tmp_path / "en-pairs.json", label_map={"1": "4", "0": "2"})
    back = read(path)
    assert [(p.id, p.label) for p in back] == [("a", "4"), ("b", "2")] and texts is None
    with pytest.raises(DataFormatError, match="no entry in label_map"):
        write(_binary(), tmp_path / "x.json", label_map={"1": "4"})
    unlabelled = PairSet([Pair("a", "x", "y")], scheme="turku")
    with pytest.raises(DataFormatError, match="has no label"):
        write(unlabelled, tmp_path / "y.json")


def test_turku_writer_keeps_every_field_it_can(tmp_path):
    doc = Document("d", "Hello world.")
    pair = Pair(
        "p-7",
        "Hello",
        "world",
        label="4<",
        span1=Span("d", 0, 5),
        span2=Span("d", 6, 11),
        group="g",
        split="test",
        fold=3,
        time="2020-01-01",
        source="opus",
        rewrites=(("a", "b"),),
        judgments=(Judgment("ann", "4<", time="t", unsure=True),),
        metadata={"score": 0.5, "flag": False},
    )
    pairs = PairSet([pair], scheme="turku", documents=[doc], lang="fi")
    path, _texts = write(pairs, tmp_path / "fi-rel.json")
    back = read(path)
    assert back.pairs == pairs.pairs and back.documents == pairs.documents
    assert back.lang == "fi" and back.metadata["lang_from"] == "file name"
    with pytest.raises(DataFormatError, match="metadata key 'label'"):
        write(
            PairSet([Pair("a", "x", "y", "4", metadata={"label": 1})], scheme="turku"),
            tmp_path / "z.json",
        )


def test_turku_writer_warns_when_the_name_changes_the_language(tmp_path, caplog):
    pairs = PairSet([Pair("a", "x", "y", label="4")], scheme="turku", lang="en")
    write(pairs, tmp_path / "pairs.json")
    assert "no language field" in caplog.text
    assert read(tmp_path / "pairs.json").lang == "fi"
    assert read(tmp_path / "pairs.json", lang="en").lang == "en"
    write(pairs, tmp_path / "en-pairs.json")
    assert read(tmp_path / "en-pairs.json").lang == "en"


def test_turku_pair_and_texts_files_are_written_both_or_neither(tmp_path, monkeypatch):
    doc = Document("d", "Hello world.")
    old = PairSet(
        [Pair("0", "Hello", "world", "4", Span("d", 0, 5), Span("d", 6, 11))],
        scheme="turku",
        documents=[doc],
    )
    data, texts = write(old, tmp_path / "rel.json")
    before = (data.read_bytes(), texts.read_bytes())
    new_doc = Document("d", "Brave new world.")
    new = PairSet(
        [Pair("0", "Brave", "world", "3", Span("d", 0, 5), Span("d", 10, 15))],
        scheme="turku",
        documents=[new_doc],
    )
    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        calls.append(dst)
        if str(dst) == str(data) and str(src).endswith(".tmp") and ".old." not in str(src):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(WriteError) as err:
        write(new, tmp_path / "rel.json")
    monkeypatch.setattr(os, "replace", real_replace)
    assert str(data) in str(err.value) and ".tmp" not in str(err.value)
    assert (data.read_bytes(), texts.read_bytes()) == before  # the old pair kept its old texts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel-texts.json.gz", "rel.json"]
    assert read(data).verify_spans() == 2


def test_csv_writer_quotes_bare_cr_and_keeps_metadata_types(tmp_path):
    pairs = PairSet(
        [
            Pair(
                "a",
                "line\rbreak",
                "trailing\r",
                label="1",
                metadata={"ok": False, "score": 0.5, "note": "n", "source": "s"},
            ),
            Pair(
                "b",
                'say "hi"',
                "x,y",
                label="0",
                metadata={"ok": True, "tags": ["t"], "note": "m", "source": "r"},
            ),
        ],
        scheme="binary",
    )
    for suffix in ("csv", "tsv"):
        path = write(pairs, tmp_path / f"p.{suffix}")
        back = read(path)
        assert back.pairs == pairs.pairs, suffix
    header = (tmp_path / "p.csv").read_text().splitlines()[0]
    assert header == "id,text1,text2,label,ok:json,score:json,note,metadata.source,tags:json"


def test_table_metadata_keys_the_reader_would_decode_come_back_as_written(tmp_path):
    # a text key ending in ':json' was a plain column the reader decoded as JSON ('1' came back
    # as the number 1 under key 'n', 'hi' failed to read); an empty key gave a nameless column
    pairs = PairSet(
        [
            Pair("a", "x", "y", metadata={"n:json": "1", "w:json": "hi", "": "e"}),
            Pair("b", "x", "z", metadata={"n:json": "2", "w:json": "ho", "": "f"}),
        ]
    )
    for suffix in ("csv", "tsv"):
        back = read(write(pairs, tmp_path / f"k.{suffix}"))
        assert [p.metadata for p in back] == [
            {"n:json": "1", "w:json": "hi", "": "e"},
            {"n:json": "2", "w:json": "ho", "": "f"},
        ], suffix


def test_writers_refuse_values_json_cannot_hold(tmp_path):
    nan = PairSet([Pair("a", "x", "y", metadata={"s": float("nan")})])
    for name in ("n.jsonl", "n.csv"):
        with pytest.raises(DataFormatError) as err:
            write(nan, tmp_path / name)
        assert err.value.code == "E120"
    surrogate = PairSet([Pair("a", "x\ud800", "y")])
    with pytest.raises(ParakitError) as err:
        write(surrogate, tmp_path / "s.jsonl")
    assert err.value.code == "E120" and "s.jsonl" in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_write_failure_names_the_users_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WriteError) as err:
        write(_binary(), blocker / "out.jsonl")
    assert str(blocker / "out.jsonl") in str(err.value) and err.value.code == "E121"
    assert isinstance(err.value, OSError)


def test_orphan_temp_files_are_removed(tmp_path):
    target = tmp_path / "out.jsonl"
    dead = tmp_path / ".out.jsonl.999999999.abcd.tmp"  # a pid that cannot exist
    dead.write_text("half")
    alive = tmp_path / f".out.jsonl.{os.getpid()}.efgh.tmp"  # a write in progress here
    alive.write_text("busy")
    other = tmp_path / ".other.jsonl.999999999.x.tmp"
    other.write_text("not ours")
    write(_binary(), target)
    assert not dead.exists() and alive.exists() and other.exists()
    assert remove_orphans(target) == []
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write("partial")
        raise RuntimeError("crash")
    assert {p.name for p in tmp_path.iterdir()} == {alive.name, other.name, "out.jsonl"}
    json.loads(target.read_text().splitlines()[0])  # the previous file is intact


def _turku_split(name, docs):
    documents = [Document(d, text) for d, text in docs.items()]
    pairs = [
        Pair(
            f"{name}-{d}",
            text[:5],
            text[6:11],
            label="4",
            span1=Span(d, 0, 5),
            span2=Span(d, 6, 11),
        )
        for d, text in docs.items()
    ]
    return PairSet(pairs, scheme="turku", documents=documents, lang="sv")


def test_turku_files_written_one_by_one_share_their_texts_file(tmp_path):
    # sv-train.json and sv-test.json read sv-texts.json.gz: the second write replaced it with
    # its own documents, and sv-train.json then pointed into documents that were gone (E101)
    train = _turku_split("train", {"d1": "Hello world.", "d2": "Alpha omega."})
    test = _turku_split("test", {"d2": "Alpha omega.", "d3": "Gamma delta."})
    write(train, tmp_path / "sv-train.json")
    write(test, tmp_path / "sv-test.json")
    for name, split in (("train", train), ("test", test)):
        back = read(tmp_path / f"sv-{name}.json")
        assert back.pairs == split.pairs and back.documents == split.documents
    # a rewrite of sv-train.json may change a document only it points into ...
    edited = _turku_split("train", {"d1": "Hallo world.", "d2": "Alpha omega."})
    write(edited, tmp_path / "sv-train.json")
    assert read(tmp_path / "sv-train.json").documents == edited.documents
    assert read(tmp_path / "sv-test.json").documents == test.documents
    # ... but not one sv-test.json reads: refused before anything is written
    clash = _turku_split("train", {"d2": "Alpha OMEGA."})
    with pytest.raises(DataFormatError, match=r"E120.*'d2'.*sv-test\.json"):
        write(clash, tmp_path / "sv-train.json")
    assert read(tmp_path / "sv-train.json").documents == edited.documents
    assert read(tmp_path / "sv-test.json").documents == test.documents

"""SentenceStore and collection reading."""

from __future__ import annotations

import json

import pytest

from parakit.errors import MineError
from parakit.vectors.collection import iter_collection
from parakit.vectors.store import SentenceStore


def test_store_random_access_with_unicode_and_newlines(tmp_path):
    records = [
        {"text": "Hyvää päivää", "source": "pb"},
        {"text": "line\nbreak"},
        {"text": "三番目", "id": "x"},
    ]
    store = SentenceStore.write(tmp_path / "s", records)
    assert len(store) == 3
    assert store.text(2) == "三番目" and store.text(1) == "line\nbreak"
    assert store.record(0)["source"] == "pb" and store.record(2)["id"] == "x"
    assert store.texts(1, 3) == ["line\nbreak", "三番目"]
    with pytest.raises(IndexError):
        store.record(3)
    store.close()  # a closed store maps its file again on the next look-up
    assert store.text(0) == "Hyvää päivää"


def _text_in_child(store: SentenceStore, row: int, queue) -> None:
    queue.put(store.text(row))


def test_store_maps_its_file_again_in_a_forked_process(tmp_path):
    """Look-ups go through a memory map of ``sentences.jsonl``; a forked worker must not use
    the parent's map or file position, so each process maps the file for itself."""
    import multiprocessing

    store = SentenceStore.write(tmp_path / "s", [{"text": f"row {i}"} for i in range(50)])
    assert store.text(7) == "row 7"  # the parent's map exists before the fork
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_text_in_child, args=(store, 41, queue))
    child.start()
    assert queue.get(timeout=60) == "row 41"
    child.join(60)
    assert store.text(49) == "row 49"


def test_collection_formats(tmp_path, data_path):
    (tmp_path / "a.jsonl").write_text(
        json.dumps({"text": "one", "source": "s"}) + "\n\n" + json.dumps({"text": " two "}) + "\n"
    )
    assert [(r["text"], r["source"]) for r in iter_collection(tmp_path / "a.jsonl")] == [
        ("one", "s"),
        ("two", None),
    ]
    (tmp_path / "b.jsonl").write_text(json.dumps({"text": 3}) + "\n")
    with pytest.raises(MineError, match="line 1, field 'text'"):
        list(iter_collection(tmp_path / "b.jsonl"))
    (tmp_path / "c.tsv").write_text("id\ttext\tsource\n7\thello\tweb\n")
    assert list(iter_collection(tmp_path / "c.tsv")) == [
        {"text": "hello", "source": "web", "id": "7"}
    ]
    pb = list(iter_collection(data_path("turku/opus-pb-dev.json")))
    assert pb[0] == {"text": "Aalto BIZ Prof.", "source": "pb", "id": "0:1"}

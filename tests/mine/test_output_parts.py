"""``mine(..., output_parts=N)``: a folder of part files, one task each, whose pair lines in
order are the single file's; read back by ``parakit.io.read``; resumed; refused folders."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parakit.errors import DataFormatError, MineError, WriteError
from parakit.io import read
from parakit.io.jsonl import PARTS_MANIFEST
from parakit.mine.mining import mine
from parakit.vectors.encode import TfidfEncoder


@pytest.fixture(scope="module")
def job(tmp_path_factory, mine_words):
    """A 300-sentence collection, its encoder, and the single-file output of its run."""
    folder = tmp_path_factory.mktemp("parts")
    rng = np.random.default_rng(4)
    texts = list(
        dict.fromkeys(" ".join(rng.choice(mine_words, size=rng.integers(3, 8))) for _ in range(300))
    )
    collection = folder / "c.txt"
    collection.write_text("\n".join(texts) + "\n", encoding="utf-8")
    encoder = TfidfEncoder((2, 3), dense=True).fit(texts)
    settings = dict(k=4, index_kind="flat", chunk_size=70, min_score=0.1, progress=False)
    single = folder / "one" / "pairs.jsonl"
    result = mine(collection, folder / "work", encoder, single, **settings)
    return folder, collection, encoder, settings, single, result


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_parts_concatenated_are_the_single_file(job):
    folder, collection, encoder, settings, single, alone = job
    out = folder / "three" / "pairs"
    result = mine(collection, folder / "work", encoder, out, output_parts=3, **settings)
    manifest = json.loads((out / PARTS_MANIFEST).read_text())
    assert manifest["complete"] and [p["file"] for p in manifest["parts"]] == [
        "pairs-00000.jsonl",
        "pairs-00001.jsonl",
        "pairs-00002.jsonl",
    ]
    parts = [_lines(out / p["file"]) for p in manifest["parts"]]
    one = _lines(single)
    assert all(part[0] == one[0] for part in parts)  # the single file's header in each part
    assert [line for part in parts for line in part[1:]] == one[1:]
    assert [len(part) - 1 for part in parts] == [p["pairs"] for p in manifest["parts"]]
    assert result.n_written == alone.n_written == len(one) - 1 == manifest["pairs"]
    assert not (folder / "work" / "parts").exists()  # the staged arrays are removed

    # split by query rows, and a pair found in both directions is written once across parts
    pairs = [json.loads(line) for line in one[1:]]
    found = {(p["metadata"]["row1"], p["metadata"]["row2"]) for p in pairs}
    assert not any((b, a) in found for a, b in found)
    for part, entry in zip(parts, manifest["parts"], strict=True):
        lo, hi = entry["rows"]
        assert all(lo <= json.loads(line)["metadata"]["row1"] < hi for line in part[1:])
    assert any(
        json.loads(line)["metadata"]["row2"] < manifest["parts"][2]["rows"][0]
        for line in parts[2][1:]
    )  # the last part points back into the earlier ones

    again = read(out)  # parakit's reader reads the folder as one corpus
    assert again.name == "pairs" and again.metadata == read(single).metadata
    assert [p.to_dict() for p in again] == [p.to_dict() for p in read(single)]


def test_a_killed_write_is_finished_by_a_rerun(job):
    folder, collection, encoder, settings, single, _ = job
    out = folder / "resume"
    mine(collection, folder / "work", encoder, out, output_parts=4, **settings)
    manifest = json.loads((out / PARTS_MANIFEST).read_text())
    # as a run killed while writing leaves it: the first manifest, a part missing
    (out / PARTS_MANIFEST).write_text(json.dumps({**manifest, "complete": False}))
    (out / "pairs-00002.jsonl").unlink()
    with pytest.raises(DataFormatError, match="unfinished") as err:
        read(out)
    assert err.value.code == "E145"
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("pairs-*.jsonl")}
    mine(collection, folder / "work", encoder, out, output_parts=4, **settings)
    assert {
        p.name: p.stat().st_mtime_ns for p in out.glob("pairs-*.jsonl") if p.name in stamps
    } == stamps
    assert [p.to_dict() for p in read(out)] == [p.to_dict() for p in read(single)]

    (out / "pairs-00001.jsonl").unlink()  # a part lost after the run: refused, not skipped
    with pytest.raises(DataFormatError, match="missing") as err:
        read(out)
    assert err.value.code == "E145" and "pairs-00001.jsonl" in str(err.value)


def test_folders_that_are_not_this_runs_are_refused(job):
    folder, collection, encoder, settings, _, _ = job
    foreign = folder / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(WriteError, match="not empty") as err:
        mine(collection, folder / "w-new", encoder, foreign, output_parts=2, **settings)
    assert err.value.code == "E141" and str(foreign) in str(err.value)
    assert not (folder / "w-new").exists()  # refused before any mining
    with pytest.raises(WriteError, match="not empty"):  # --overwrite never removes other files
        mine(
            collection, folder / "work", encoder, foreign, output_parts=2, overwrite=True,
            **settings,
        )  # fmt: skip
    assert (foreign / "notes.txt").read_text() == "mine"

    out = folder / "earlier"
    mine(collection, folder / "work", encoder, out, output_parts=3, **settings)
    with pytest.raises(WriteError, match="earlier mining run") as err:
        mine(collection, folder / "work", encoder, out, output_parts=2, **settings)
    assert err.value.code == "E141" and str(out) in str(err.value)
    mine(collection, folder / "work", encoder, out, output_parts=2, overwrite=True, **settings)
    assert sorted(p.name for p in out.iterdir()) == [
        "pairs-00000.jsonl",
        "pairs-00001.jsonl",
        PARTS_MANIFEST,
    ]

    (folder / "a-file").write_text("x")
    with pytest.raises(WriteError, match="in the way"):
        mine(collection, folder / "work", encoder, folder / "a-file", output_parts=2, **settings)
    with pytest.raises(MineError, match="output_parts") as err:
        mine(collection, folder / "work", encoder, None, output_parts=2, **settings)
    assert err.value.code == "E801"
    with pytest.raises(MineError, match="at least 1 part"):
        mine(collection, folder / "work", encoder, folder / "zero", output_parts=0, **settings)


def test_records_read_in_one_pass_or_by_seek_write_the_same_lines(job, tmp_path, monkeypatch):
    """The writer reads a small store in one pass and a large one a record at a time: the
    bytes written are the same either way."""
    import parakit.mine.output as output

    folder, collection, encoder, settings, single, _ = job
    monkeypatch.setattr(output, "READ_SPAN_BYTES", 0)  # every look-up seeks
    by_seek = tmp_path / "pairs.jsonl"
    mine(collection, folder / "work", encoder, by_seek, **settings)
    assert _lines(by_seek)[1:] == _lines(single)[1:]
    assert len(_lines(single)) > 300  # several pairs per query row: look-ups repeat

    # mining a collection against itself, the one pass serves both sides of every pair
    monkeypatch.undo()
    from parakit.vectors.store import SentenceStore

    passes = []
    real_iter = SentenceStore.iter_records
    monkeypatch.setattr(
        SentenceStore,
        "iter_records",
        lambda self, *span: passes.append(span) or real_iter(self, *span),
    )
    again = tmp_path / "again.jsonl"
    mine(collection, folder / "work", encoder, again, **settings)
    assert _lines(again)[1:] == _lines(single)[1:] and len(passes) == 1

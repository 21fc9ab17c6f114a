"""The annotation store's export to, and import from, the other tools' formats: a double-
annotated project goes out as Label Studio tasks (each annotator's judgment an annotation by
``completed_by``) and comes back in as a new project."""

from __future__ import annotations

import json

import pytest

from parakit.annotate.services.projects import read_pairs
from parakit.io import read

pytest.importorskip("sqlalchemy")

#: what ann1 and ann2 submit: they agree on p1 and p3 and disagree on p2
LABELS = {"ann1": {"p1": "4", "p2": "3", "p3": "2"}, "ann2": {"p1": "4", "p2": "4", "p3": "2"}}


def _annotate(store, pid, ids) -> None:
    store.queue.assign(pid, mode="double")
    for name, labels in LABELS.items():
        while (lease := store.queue.lease_next(pid, ids[name])) is not None:
            key = store.item(lease.item_id).key
            store.queue.save(lease.item_id, ids[name], label=labels[key], revision=0, submit=True)


@pytest.mark.parametrize("fmt", ["label-studio", "prodigy"])
def test_a_double_annotated_project_goes_out_and_comes_back(project, tmp_path, fmt):
    store, pid, ids = project
    _annotate(store, pid, ids)
    out = tmp_path / ("out.json" if fmt == "label-studio" else "out.jsonl")
    store.exports.export(pid, out, format=fmt, judgments=True)
    back = read(out, scheme="turku")
    # the agreed pairs are exported (p2 waits for its disagreement to be resolved)
    assert [p.id for p in back] == ["p1", "p3"]
    assert [p.label for p in back] == ["4", "2"]
    assert [sorted((j.annotator, j.label) for j in p.judgments) for p in back] == [
        [("ann1", "4"), ("ann2", "4")],
        [("ann1", "2"), ("ann2", "2")],
    ]
    if fmt == "label-studio":
        tasks = json.loads(out.read_text())
        assert {a["completed_by"]["email"] for a in tasks[0]["annotations"]} == {"ann1", "ann2"}
    # and a new project made from the tool's file has the same pairs, to annotate again
    pairs = read_pairs(out, format=fmt)
    new, count = store.projects.create_with_pairs("again", "turku", pairs, kind="candidates")
    assert count == 2
    again = store.exports.to_pairset(new, labelled_only=False)
    assert [(p.id, p.text1, p.text2) for p in again] == [(p.id, p.text1, p.text2) for p in back]

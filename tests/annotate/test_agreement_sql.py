"""Issue 30 item 9: the statistics page's agreement, aggregated in SQL, equals the reference
implementations (scikit-learn, statsmodels, krippendorff) run on the judgments in Python."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from parakit.annotate.agreement import (
    agreement_report,
    alpha_from_coincidences,
    fleiss_from_counts,
    fleiss_kappa_table,
    judgments_frame,
    kappa_from_table,
)
from parakit.schema import Pair, PairSet


def test_count_formulas_on_hand_computed_tables():
    # y,y,n,n against y,n,n,n: kappa 0.5 (the module's doctest, by hand)
    assert kappa_from_table(np.array([[2, 0], [1, 1]])) == pytest.approx(0.5)
    assert math.isnan(kappa_from_table(np.array([[3]])))
    # Fleiss on a 3 items x 2 categories table, 2 raters each: [[2,0],[1,1],[0,2]]
    table = [[2, 0], [1, 1], [0, 2]]
    squares = sum(c * c for row in table for c in row)
    assert fleiss_from_counts(3, 2, [3, 3], squares) == pytest.approx(fleiss_kappa_table(table))
    # alpha: two units (a,a) and (a,b): o = [[2,1],[1,0]]; n=4, De=(16-10)/3=2, Do=2 -> 0
    assert alpha_from_coincidences(np.array([[2.0, 1.0], [1.0, 0.0]])) == pytest.approx(0.0)


def _reference(store, pid):
    """The figures the page showed before: every judgment read and passed to pandas."""
    scheme = store.scheme(pid)
    anns = store.queue.submitted(pid)
    frame = judgments_frame([(a.item_id, a.annotator_id, a.label) for a in anns])
    consensus = {a.item_id: store.item(a.item_id).label for a in anns}
    consensus = {k: v for k, v in consensus.items() if v is not None}
    return agreement_report(frame, scheme, consensus=consensus)


@pytest.mark.parametrize("scheme", ["turku", "binary"])
def test_agreement_in_sql_equals_the_reference_implementations(store, scheme):
    rng = random.Random(7)
    who = [store.accounts.add_annotator(f"a{n}", f"password-{n}") for n in range(4)]
    pid = store.projects.create_project("agree", scheme)
    store.projects.import_pairs(
        pid, PairSet([Pair(f"p{n}", f"left {n}", f"right {n}") for n in range(60)], scheme=scheme)
    )
    for uid in who:
        store.projects.add_member(pid, uid)
    store.queue.assign(pid, mode="double", seed=1)
    values = ["4", "4<", "4>", "4i", "4s", "3", "2", "1", "x"] if scheme == "turku" else ["1", "0"]
    for uid in who:  # four annotators drawing from a double pool: pairs of every combination
        for _ in range(rng.randint(20, 34)):
            work = store.queue.lease_next(pid, uid)
            if work is None:
                break
            label = rng.choice(values[:3]) if rng.random() < 0.5 else rng.choice(values)
            store.queue.save(work.item_id, uid, label=label, revision=0, submit=True)
    # a third judgment on a few items (Fleiss then takes the most common count), and
    # adjudicated labels on others
    items = [i for i, anns in _by_item(store, pid).items() if len(anns) == 2]
    third = store.accounts.add_annotator("late", "password-late")
    _add_judgments(store, pid, third, items[:5], values[0])
    for item_id in items[5:12]:
        store.review.resolve(item_id, values[1], who[0])
    got = store.review.agreement(pid)
    want = _reference(store, pid)
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        if math.isnan(value):
            assert math.isnan(got[key]), key
        else:
            assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    assert "full_accuracy" in want and "binary_alpha_nominal" in want
    assert not math.isnan(want["full_fleiss_kappa"])


def _add_judgments(store, pid, annotator, items, label):
    """Submitted judgments written straight to the table (a third judgment on items that
    the double queue already served twice)."""
    from sqlalchemy import insert

    from parakit.annotate.db import utcnow
    from parakit.annotate.models import Annotation

    now = utcnow()
    rows = [
        dict(
            project_id=pid,
            item_id=i,
            annotator_id=annotator,
            task="classify",
            status="submitted",
            label=label,
            flags="",
            unsure=False,
            revision=1,
            created_at=now,
            updated_at=now,
            submitted_at=now,
        )
        for i in items
    ]
    with store.transaction() as session:
        session.execute(insert(Annotation), rows)


def _by_item(store, pid):
    out = {}
    for ann in store.queue.submitted(pid):
        out.setdefault(ann.item_id, []).append(ann)
    return out


def test_no_double_annotation_gives_an_empty_report(project):
    store, pid, ids = project
    store.queue.assign(pid)
    work = store.queue.lease_next(pid, ids["ann1"])
    store.queue.save(work.item_id, ids["ann1"], label="4", revision=0, submit=True)
    assert store.review.agreement(pid) == {}

"""Model in the loop on both stores: an attached classifier orders single-annotation queues by
uncertainty and pre-selects its guess (the server records whether it was kept); double
annotation stays blind (no guess, the seeded order unchanged)."""

from __future__ import annotations

import json
import re

import pytest

from parakit.errors import AnnotateError
from parakit.schema import Pair, PairSet

#: hand-set P(paraphrase) of items i1..i6: |p - 0.5| = .40 .06 .45 .03 .20 .01, so the
#: uncertainty order is i6, i4, i2, i5, i1, i3
P = {"i1": 0.9, "i2": 0.56, "i3": 0.05, "i4": 0.47, "i5": 0.7, "i6": 0.51}
UNCERTAIN_FIRST = ["i6", "i4", "i2", "i5", "i1", "i3"]
#: the guesses: Turku labels, and one class the project's scheme does not know
GUESS = {"i1": "4", "i2": "3", "i3": "1", "i4": "2", "i5": "4<", "i6": "paraphrase"}


def _pairs(prefix: str = "i", n: int = 6) -> PairSet:
    return PairSet(
        [Pair(f"{prefix}{k}", f"first text {k}", f"second text {k}") for k in range(1, n + 1)],
        scheme="turku",
    )


@pytest.fixture
def loop(store):
    """(store, project id, {name: id}, {item key: item id}) with items i1..i6."""
    ids = {name: store.accounts.add_annotator(name, f"{name}-password-x") for name in "abc"}
    pid = store.projects.create_project("loop", "turku")
    for uid in ids.values():
        store.projects.add_member(pid, uid)
    store.projects.import_pairs(pid, _pairs())
    keys = {key: item_id for item_id, key, _, _ in store.model.items(pid)}
    return store, pid, ids, keys


def _attach(store, pid, keys, order="uncertainty", only=None):
    scores = {keys[k]: (P[k], GUESS[k]) for k in keys if only is None or k in only}
    return store.model.attach(
        pid, scores, model={"name": "hand"}, order=order, model_scheme="turku"
    )


def _lease_order(store, pid, uid, keys) -> list[str]:
    """Keys in the order one annotator is served them (each submitted as label 2)."""
    by_id = {v: k for k, v in keys.items()}
    served = []
    while (a := store.queue.lease_next(pid, uid)) is not None:
        served.append(by_id[a.item_id])
        store.queue.save(a.item_id, uid, label="2", revision=0, submit=True)
    return served


def test_single_queue_serves_the_most_uncertain_first(loop):
    store, pid, ids, keys = loop
    done = _attach(store, pid, keys)
    # "paraphrase" is no Turku label: stored as no guess
    assert (done.scored, done.guesses, done.reordered) == (6, 5, 0)
    assert store.queue.assign(pid, mode="single", seed=3) == 6
    assert _lease_order(store, pid, ids["a"], keys) == UNCERTAIN_FIRST


def test_attach_reorders_open_single_work_but_never_double(loop):
    store, pid, _, keys = loop
    single = [keys[k] for k in ("i1", "i2", "i3", "i4")]
    double = [keys[k] for k in ("i5", "i6")]
    store.queue.assign(pid, mode="single", items=single, seed=1, batch="a")
    store.queue.assign(pid, mode="double", items=double, seed=1, batch="b")

    def positions() -> dict[tuple[int, int], int]:
        from sqlalchemy import select

        from parakit.annotate.models import Assignment

        with store.transaction() as s:
            return {
                (a.item_id, a.slot): a.position
                for a in s.scalars(select(Assignment).where(Assignment.project_id == pid))
            }

    before = positions()
    done = _attach(store, pid, keys)
    after = positions()
    # the double items keep their positions exactly; the single ones re-dealt the same
    # positions by uncertainty: i4 (.03), i2 (.06), i1 (.40), i3 (.45)
    assert {k: v for k, v in after.items() if k[0] in double} == {
        k: v for k, v in before.items() if k[0] in double
    }
    old = sorted(v for k, v in before.items() if k[0] in single)
    want = dict(zip([keys[k] for k in ("i4", "i2", "i1", "i3")], old, strict=True))
    assert {k[0]: v for k, v in after.items() if k[0] in single} == want
    assert done.reordered == sum(before[(i, 1)] != want[i] for i in single)


def test_double_annotation_is_blind_and_keeps_its_seeded_order(loop):
    store, pid, ids, keys = loop
    # the same project and seed without a model: the order double annotation must keep
    twin = store.projects.create_project("twin", "turku")
    for uid in ids.values():
        store.projects.add_member(twin, uid)
    store.projects.import_pairs(twin, _pairs())
    twin_keys = {key: i for i, key, _, _ in store.model.items(twin)}
    store.queue.assign(twin, mode="double", seed=7)
    expected = _lease_order(store, twin, ids["a"], twin_keys)

    _attach(store, pid, keys)
    store.queue.assign(pid, mode="double", seed=7)
    assert expected != UNCERTAIN_FIRST  # the check below could not tell otherwise
    first = store.queue.lease_next(pid, ids["a"])
    assert store.model.guess(first.item_id) is None  # no guess shown
    store.queue.release(first.id, ids["a"])
    assert _lease_order(store, pid, ids["a"], keys) == expected
    # the server records no guess on a double annotation, whatever the label
    a = store.queue.lease_next(pid, ids["b"])
    store.queue.save(a.item_id, ids["b"], label=GUESS["i1"], revision=0, submit=True)
    ann = store.queue.annotation(a.item_id, ids["b"])
    assert (ann.model_guess, ann.model_kept) == (None, None)


def test_kept_or_changed_guess_is_recorded_by_the_server(loop):
    store, pid, ids, keys = loop
    _attach(store, pid, keys, order="queue")
    store.queue.assign(pid, mode="single", seed=0)
    assert store.model.guess(keys["i5"]) == {"label": "4<", "p": 0.7}
    assert store.model.guess(keys["i6"]) is None  # its class is not a label of the scheme
    assert store.model.guess(keys["i1"], task="rewrite-check") is None
    uid = ids["a"]
    answers = {"i1": "4", "i2": "2", "i5": "4<"}  # kept, changed, kept (with its flag)
    for key, label in answers.items():
        item = keys[key]
        store.queue.assign(pid, items=[item])  # already queued: no new assignment
        while (lease := store.queue.lease_next(pid, uid)).item_id != item:
            store.queue.skip(lease.item_id, uid)
        draft = store.queue.save(item, uid, label="1", revision=0, submit=False)
        store.queue.save(item, uid, label=label, revision=draft.revision, submit=True)
    got = {k: store.queue.annotation(keys[k], uid) for k in answers}
    assert {k: (a.model_guess, a.model_kept) for k, a in got.items()} == {
        "i1": ("4", True),
        "i2": ("3", False),
        "i5": ("4<", True),
    }
    assert store.model.summary(pid) == {"shown": 3, "kept": 2, "kept_rate": 2 / 3}
    # the export's judgments carry the provenance (and only where a guess was shown)
    exported = store.exports.to_pairset(pid, judgments=True)
    assert {p.id: p.judgments[0].metadata for p in exported} == {
        "i1": {"model_guess": "4", "model_kept": True},
        "i2": {"model_guess": "3", "model_kept": False},
        "i5": {"model_guess": "4<", "model_kept": True},
    }
    store.model.detach(pid)
    assert store.model.info(pid) is None and store.model.guess(keys["i1"]) is None


def test_attach_refuses_bad_input(loop):
    store, pid, _, keys = loop
    with pytest.raises(AnnotateError, match="E645.*not in \\[0, 1\\]"):
        store.model.attach(pid, {keys["i1"]: (1.5, "4")}, model={})
    with pytest.raises(AnnotateError, match="E645.*unknown order"):
        store.model.attach(pid, {}, model={}, order="random")
    other = store.projects.create_project("other", "turku")
    store.projects.import_pairs(other, _pairs("o", 1))
    (stray, *_), *_ = store.model.items(other)
    with pytest.raises(AnnotateError, match="E645.*not in project"):
        store.model.attach(pid, {stray: (0.5, "4")}, model={})
    assert store.model.info(pid) is None  # nothing attached by a refused call


def _page_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert match, "no data block in page"
    return json.loads(match.group(1))


def test_a_binary_model_on_a_turku_project_guesses_nothing_unless_mapped(loop):
    """A binary model's "1" is paraphrase, Turku "1" is unrelated: never taken as the same
    label. Its P(paraphrase) still orders the queue; an explicit map gives guesses."""
    store, pid, _, keys = loop
    binary = {keys[k]: (P[k], "1" if P[k] >= 0.5 else "0") for k in keys}
    done = store.model.attach(pid, binary, model={"name": "bin"}, model_scheme="binary")
    assert (done.scored, done.guesses) == (6, 0)
    assert all(store.model.guess(i) is None for i in keys.values())
    # an unknown scheme (a third-party model) is no better
    done = store.model.attach(pid, binary, model={"name": "bin"}, model_scheme=None)
    assert done.guesses == 0
    done = store.model.attach(
        pid, binary, model={"name": "bin"}, model_scheme={"name": "binary"},
        label_map={"1": "4", "0": "2"},
    )  # fmt: skip
    assert done.guesses == 6
    assert {k: store.model.guess(keys[k])["label"] for k in ("i1", "i3")} == {"i1": "4", "i3": "2"}
    with pytest.raises(AnnotateError, match="E645.*'paraphrase' is not a label of the project"):
        store.model.attach(pid, binary, model={}, label_map={"1": "paraphrase"})


def test_pages_show_the_guess_only_in_single_annotation(loop):
    pytest.importorskip("httpx", reason="pip install httpx (FastAPI's TestClient needs it)")
    from fastapi.testclient import TestClient

    from parakit.annotate.web import create_app

    store, pid, ids, keys = loop
    _attach(store, pid, keys)
    store.queue.assign(pid, mode="single", items=[keys["i1"], keys["i2"]])
    store.queue.assign(pid, mode="double", items=[keys["i4"], keys["i5"]])
    client = TestClient(create_app(store))
    r = client.post("/login", data={"name": "a", "password": "a-password-x"}, follow_redirects=0)
    assert r.status_code == 303
    # single first (batch "default", positions 1-2; i2 is the more uncertain)
    page = client.get(f"/p/{pid}/classify")
    assert _page_data(page.text)["guess"] == {"label": "3", "p": 0.56}
    assert 'id="model-guess"' in page.text and "P(paraphrase) 0.56" in page.text
    h = {"X-Parakit": "1"}
    saved = client.post(
        f"/api/items/{keys['i2']}/save", json={"label": "3", "submit": True}, headers=h
    )
    assert saved.status_code == 200, saved.text
    nxt = client.get(f"/api/projects/{pid}/next", headers=h).json()
    assert (nxt["item"], nxt["guess"]) == (keys["i1"], {"label": "4", "p": 0.9})
    skipped = client.post(f"/api/items/{keys['i1']}/skip", json={"task": "classify"}, headers=h)
    assert skipped.status_code == 200, skipped.text
    nxt = client.get(f"/api/projects/{pid}/next", headers=h).json()
    # skipped i1 went to the back: a double item comes next, blind
    assert nxt["item"] in (keys["i4"], keys["i5"]) and nxt["guess"] is None
    page = client.get(f"/p/{pid}/classify")
    assert _page_data(page.text)["guess"] is None and 'id="model-guess"' not in page.text
    assert store.queue.annotation(keys["i2"], ids["a"]).model_kept is True
    # the admin sees the model and the kept rate, and may detach it
    store.accounts.add_annotator("boss", "boss-password-x", role="admin")
    admin = TestClient(create_app(store))
    r = admin.post(
        "/login", data={"name": "boss", "password": "boss-password-x"}, follow_redirects=0
    )
    assert r.status_code == 303
    got = admin.get(f"/api/admin/projects/{pid}/model", headers=h).json()
    assert got["model"]["name"] == "hand" and got["model"]["order"] == "uncertainty"
    assert got["guesses"] == {"shown": 1, "kept": 1, "kept_rate": 1.0}
    assert 'id="model-info"' in admin.get(f"/admin/p/{pid}/stats").text
    assert client.get(f"/api/admin/projects/{pid}/model", headers=h).status_code == 403
    assert admin.post(f"/api/admin/projects/{pid}/model/detach", headers=h).json() == {
        "model": None
    }
    assert store.model.guess(keys["i1"]) is None


def test_cli_attaches_a_model_from_identify_train(tmp_path):
    """``identify train`` (tfidf) -> ``annotate attach-model``: the stored scores are the
    model's own P(paraphrase) and guesses, and the single queue follows them."""
    from typer.testing import CliRunner

    from parakit import io
    from parakit.annotate.store import Store
    from parakit.cli.app import build_app
    from parakit.models.base import load_model

    words = ["cat", "dog", "sun", "rain", "tree", "boat"]
    words += ["milk", "bread", "road", "lamp", "chair", "door"]
    train = [
        Pair(
            f"t{k}",
            f"the {a} and the {b}",
            f"a {a} with a {b}" if k % 2 else f"no {c} here",
            "1" if k % 2 else "0",
        )
        for k, (a, b, c) in enumerate(
            zip(words, words[3:] + words[:3], words[6:] + words[:6], strict=True)
        )
    ]
    io.write(PairSet(train, scheme="binary"), tmp_path / "train.jsonl")
    cands = PairSet(
        [
            Pair(f"c{k}", f"the {w} is here", f"a {w} {'is here' if k % 3 else 'went away'}")
            for k, w in enumerate(words)
        ],
        scheme="binary",
    )
    io.write(cands, tmp_path / "cands.jsonl")
    runner, app = CliRunner(), build_app()

    def run(*args) -> str:
        result = runner.invoke(
            app, [str(a) for a in args], env={"PARAKIT_PASSWORD": "cli-password"}
        )
        assert result.exit_code == 0, result.output + repr(result.exception)
        return result.output

    model_dir = tmp_path / "tfidf"
    run("identify", "train", tmp_path / "train.jsonl", "-m", "tfidf", "-o", model_dir)
    db = tmp_path / "p.sqlite"
    run("annotate", "init", db, "--admin", "boss")
    # a binary project: the model's labels mean what the project's do (unlabelled candidates
    # would make a Turku project, where the binary "1" must not be pre-selected: below)
    run("annotate", "create-project", db, "demo", "--candidates", tmp_path / "cands.jsonl",
        "--scheme", "binary")  # fmt: skip
    out = run("annotate", "attach-model", db, "demo", model_dir, "--order", "uncertainty")
    assert "12 items scored, 12 guesses" in out
    run("annotate", "assign", db, "demo", "--annotators", "boss")

    model = load_model(model_dir)
    want_p = dict(zip([p.id for p in cands], model.paraphrase_proba(cands), strict=True))
    want_guess = dict(zip([p.id for p in cands], model.predict(cands), strict=True))
    st = Store.open(db)
    pid = st.projects.project_id("demo")
    boss = st.accounts.annotator_id("boss")
    with st.transaction() as s:
        from sqlalchemy import select

        from parakit.annotate.models import Item

        rows = {i.key: (i.model_p, i.model_label) for i in s.scalars(select(Item))}
    assert rows == {k: (pytest.approx(want_p[k], abs=1e-12), str(want_guess[k])) for k in rows}
    served = []
    while (a := st.queue.lease_next(pid, boss)) is not None:
        served.append(st.item(a.item_id).key)
        st.queue.save(a.item_id, boss, label=str(want_guess[served[-1]]), revision=0, submit=True)
    assert [abs(want_p[k] - 0.5) for k in served] == sorted(abs(p - 0.5) for p in want_p.values())
    assert "model_guess_kept_rate\t1.0000" in run("annotate", "stats", db, "demo")
    # the same binary model on a Turku project: its "1" (paraphrase) is not Turku "1"
    # (unrelated), so it pre-selects nothing unless told how its labels map
    turku = tmp_path / "cands-turku.jsonl"
    io.write(PairSet([Pair(p.id, p.text1, p.text2) for p in cands], scheme="turku"), turku)
    run("annotate", "create-project", db, "tk", "--candidates", turku, "--scheme", "turku")
    out = run("annotate", "attach-model", db, "tk", model_dir)
    assert "12 items scored, 0 guesses" in out and "--map" in out
    tk = st.projects.project_id("tk")
    assert all(st.model.guess(i) is None for i, *_ in st.model.items(tk))
    out = run("annotate", "attach-model", db, "tk", model_dir, "--map", "1=4,0=2")
    assert "12 items scored, 12 guesses" in out
    with st.transaction() as s:
        rows = {i.key: i.model_label for i in s.scalars(select(Item).where(Item.project_id == tk))}
    assert rows == {k: {"1": "4", "0": "2"}[str(want_guess[k])] for k in rows}
    st.close()


def test_browser_preselects_the_guess_and_double_stays_blind(tmp_path, browser, serve):
    """In Chromium: the guess (flags included) is chosen when the page opens, Enter keeps it,
    another key changes it; a double-annotated item opens with nothing chosen."""
    from playwright.sync_api import expect

    from parakit.annotate.store import Store

    store = Store.open(tmp_path / "b.sqlite", cheap_hashing=True)
    uid = store.accounts.add_annotator("a", "a-password-x")
    pid = store.projects.create_project("loop", "turku")
    store.projects.add_member(pid, uid)
    store.projects.add_member(pid, store.accounts.add_annotator("b", "b-password-x"))
    store.projects.import_pairs(pid, _pairs())
    keys = {key: i for i, key, _, _ in store.model.items(pid)}
    _attach(store, pid, keys)
    # single: i2 (|p-.5| .06, guess 3), i5 (.20, 4<), i1 (.40, 4); then the double items
    store.queue.assign(pid, mode="single", items=[keys[k] for k in ("i1", "i2", "i5")])
    store.queue.assign(pid, mode="double", items=[keys["i4"], keys["i6"]])
    base = serve(store)
    page = browser.new_page()
    page.goto(f"{base}/login")
    page.fill("#name", "a")
    page.fill("#password", "a-password-x")
    page.click("#login")
    page.wait_for_url(f"{base}/")
    shown = []
    for press in ("2", None, None):  # change the first guess, keep the next two
        page.goto(f"{base}/p/{pid}/classify")
        expect(page.locator("#model-guess")).to_be_visible()
        shown.append((page.inner_text("#label-value"), page.locator("#flag-lt.on").count()))
        page.click("body", position={"x": 5, "y": 5})
        if press:
            page.keyboard.press(press)
            expect(page.locator("#saved")).to_contain_text("draft")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{base}/p/{pid}/classify?task=classify")
    assert shown == [("3", 0), ("4<", 1), ("4", 0)]  # the guess's flag is chosen too
    kept = {k: store.queue.annotation(keys[k], uid) for k in ("i2", "i5", "i1")}
    assert {k: (a.label, a.model_guess, a.model_kept) for k, a in kept.items()} == {
        "i2": ("2", "3", False),
        "i5": ("4<", "4<", True),
        "i1": ("4", "4", True),
    }
    # a double item: blind, nothing chosen
    page.goto(f"{base}/p/{pid}/classify")
    expect(page.locator("#label-value")).to_have_text("–")
    assert page.locator("#model-guess").count() == 0
    assert page.locator("button.label.on").count() == 0
    store.close()

"""``parakit annotate ...`` commands on a temporary store."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from parakit import io
from parakit.annotate.crowd import simulate_crowd
from parakit.cli.annotate import app
from parakit.schema import Document, Pair, PairSet, Span

runner = CliRunner()


def run(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"PARAKIT_PASSWORD": "cli-password"})
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


def test_store_commands(tmp_path):
    db = str(tmp_path / "p.sqlite")
    doc1, doc2 = Document("a", "One two. Three."), Document("b", "Uno dos. Tres.")
    cands = tmp_path / "c.jsonl"
    io.write(
        PairSet(
            [Pair("x", "One two.", "Uno dos.", span1=Span("a", 0, 8), span2=Span("b", 0, 8))],
            scheme="turku",
            documents=[doc1, doc2],
        ),
        cands,
    )
    assert "store ready" in run("init", db, "--admin", "boss")
    run("add-user", db, "ann")
    assert "1 pairs" in run(
        "create-project",
        db,
        "demo",
        "--candidates",
        str(cands),
        "--question",
        "Are these paraphrases?",
    )
    assert "1 assignments" in run("assign", db, "demo", "--annotators", "ann")
    from parakit.annotate.store import Store

    st = Store.open(db)
    pid = st.projects.project_id("demo")
    assert st.project(pid).settings == {
        "classify_mode": "single",
        "question": "Are these paraphrases?",
    }
    uid = st.accounts.annotator_id("ann")
    item = st.queue.lease_next(pid, uid).item_id
    st.queue.save(item, uid, label="4s", revision=0, submit=True)
    run("export", db, "demo", "-o", str(tmp_path / "out.json"), "--drop", "1,x")
    data = json.loads((tmp_path / "out.json").read_text())
    assert [(d["txt1"], d["label"], d["context"]["doc2"]) for d in data] == [
        ("One two.", "4s", "b")
    ]
    run("stats", db, "demo")


def test_crowd_and_agreement_commands(tmp_path):
    pytest.importorskip("krippendorff", reason="pip install krippendorff (parakit[annotate])")
    judgments, _ = simulate_crowd(n_items=60, n_workers=10, n_spammers=2, seed=1)
    path = tmp_path / "j.csv"
    judgments.to_csv(path, index=False)
    cands = PairSet([Pair(f"p{i:04d}", f"a {i}", f"b {i}") for i in range(60)], scheme="binary")
    io.write(cands, tmp_path / "cands.jsonl")
    out = run(
        "crowd",
        str(path),
        "--method",
        "majority",
        "--min-gold-accuracy",
        "0.6",
        "--output",
        str(tmp_path / "labels.csv"),
        "--pairs",
        str(tmp_path / "cands.jsonl"),
        "--corpus-out",
        str(tmp_path / "labelled.jsonl"),
    )
    assert "workers kept" in out
    labelled = io.read(tmp_path / "labelled.jsonl")
    assert 20 < len(labelled) <= 48  # 12 of 60 pairs are gold questions
    from collections import Counter

    for pair in labelled:  # the label is the majority of the judgments kept after QC
        votes = Counter(j.label for j in pair.judgments).most_common()
        assert 1 <= len(pair.judgments) <= 6 and pair.label == votes[0][0]
    lines = (tmp_path / "labels.csv").read_text().splitlines()
    assert lines[0] == "pair,label" and len(lines) > 20
    table = tmp_path / "a.csv"
    table.write_text("item,annotator,label\n1,a,4\n1,b,4\n2,a,2\n2,b,3\n3,a,1\n3,b,1\n")
    out = run("agreement", str(table), "--scheme", "turku")
    assert "base_pairwise_kappa" in out and "binary_fleiss_kappa" in out


def test_clusters_command(tmp_path):
    pairs = PairSet(
        [Pair(f"p{i}", "source", f"ref {i}", label="1") for i in range(3)], scheme="binary"
    )
    io.write(pairs, tmp_path / "c.jsonl")
    run(
        "clusters",
        str(tmp_path / "c.jsonl"),
        "-o",
        str(tmp_path / "refs.json"),
        "--min-references",
        "3",
    )
    assert json.loads((tmp_path / "refs.json").read_text()) == {
        "source": ["ref 0", "ref 1", "ref 2"]
    }


def test_quick_start_projects_members_and_delete(tmp_path):
    db = str(tmp_path / "q.sqlite")
    cands = tmp_path / "c.jsonl"
    io.write(PairSet([Pair("a", "One.", "Uno."), Pair("b", "Two.", "Dos.")], scheme="turku"), cands)
    run("init", db, "--admin", "boss")
    run("add-user", db, "ann1")
    run("add-user", db, "ann2")
    run("create-project", db, "demo", "--candidates", str(cands))
    # double annotation from the pool needs two members: a clear error, no assignments
    result = runner.invoke(app, ["assign", db, "demo", "--mode", "double"])
    assert result.exit_code != 0 and "E616" in str(result.exception)
    assert "members of demo: ann1, ann2" in run("members", db, "demo", "ann1", "ann2")
    assert "4 assignments" in run("assign", db, "demo", "--mode", "double")
    listing = run("projects", db)
    assert listing.splitlines()[1].split("\t") == ["1", "demo", "turku", "2", "0", "2"]
    bad = runner.invoke(app, ["create-project", db, "../x", "--candidates", str(cands)])
    assert bad.exit_code != 0 and "E613" in str(bad.exception)
    assert "deleted" in run("delete-project", db, "demo", "--yes")
    assert run("projects", db).splitlines()[1:] == []
    assert "2 pairs" in run("create-project", db, "demo", "--candidates", str(cands))


def test_serve_prints_its_url_and_leaves_proxy_headers_to_the_app(tmp_path, monkeypatch):
    import uvicorn

    from parakit.annotate.web.settings import WebSettings, env_name

    seen = {}
    for field in WebSettings.model_fields:  # serve sets them; restored after the test
        monkeypatch.setenv(env_name(field), "")
        monkeypatch.delenv(env_name(field))
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: seen.update(kw, app=app))
    db = str(tmp_path / "s.sqlite")
    run("init", db)
    out = run("serve", db, "--port", "8123", "--forwarded-allow-ips", "10.0.0.1")
    assert "http://127.0.0.1:8123/" in out
    assert seen["proxy_headers"] is False and seen["port"] == 8123 and seen["workers"] == 1
    # each worker builds the app from the settings the command leaves in the environment
    from parakit.annotate.web.app import create_app

    assert seen["factory"] and seen["app"].endswith(":create_app")
    app = create_app()
    assert app.state.settings.forwarded_allow_ips == ("10.0.0.1",)

"""Extraction assist in the store (issue 16): suggestions per project, provenance, export."""

from __future__ import annotations

from datetime import timedelta

import pytest

from parakit.errors import AnnotateError, Forbidden
from parakit.schema import Pair, PairSet

DOC1 = "Ge mig nåt fint.\nDet regnar\nute i kväll.\n- Vi går hem.\n- Nu?"
DOC2 = "Ge mig nåt fint.\nDet regnar utomhus i kväll.\nNu går vi hem.\nOkej."


def _project(store, settings):
    uid = store.accounts.add_annotator("ann1", "password-one")
    pid = store.projects.create_project("assist", "turku", settings=settings)
    store.projects.import_document_pairs(pid, PairSet([Pair("dp1", DOC1, DOC2)]))
    store.projects.add_member(pid, uid)
    store.queue.assign_document_pairs(pid, [uid])
    assignment = store.queue.lease_next(pid, uid, "extract", timedelta(minutes=10))
    return pid, uid, assignment.doc_pair_id


def test_suggestions_are_off_by_default(store):
    _pid, uid, dp = _project(store, {"classify_mode": "single"})
    with pytest.raises(Forbidden, match="suggestions are off"):
        store.extraction.suggestions(dp, uid)
    # without suggestions provenance does not apply (and exports stay as they were)
    item = store.extraction.add_extracted_pair(dp, uid, 17, 40, 17, 44)
    assert store.item(item).suggested is None


def test_suggestions_provenance_and_export(store):
    from parakit.build.suggest import PairSuggester
    from parakit.schema import Document

    pid, uid, dp = _project(store, {"suggestions": {"max_window": 1}})
    got = store.extraction.suggestions(dp, uid)
    expected = [
        s
        for s in PairSuggester(max_window=1).suggest(Document("a", DOC1), Document("b", DOC2))
        if not s.suppressed
    ]
    assert [(g["begin1"], g["end1"], g["begin2"], g["end2"]) for g in got] == [
        (s.span1.begin, s.span1.end, s.span2.begin, s.span2.end) for s in expected
    ]
    assert [g["rank"] for g in got] == list(range(1, len(got) + 1))
    first = got[0]
    spans = (first["begin1"], first["end1"], first["begin2"], first["end2"])
    # the provenance is the server's: the spans of served suggestion 1, whatever the client
    # claims (here nothing) ...
    a = store.extraction.add_extracted_pair(dp, uid, *spans)
    # ... suggestion 3 (0-16 / 0-16) accepted, then its right side cut to 0-10: adjusted
    b = store.extraction.add_extracted_pair(dp, uid, 0, 16, 0, 10, suggestion={"rank": 3})
    assert store.item(a).suggested is True
    assert store.item(a).meta == {"suggestion": {"rank": 1, "adjusted": False}}
    assert store.item(b).meta == {"suggestion": {"rank": 3, "adjusted": True}}
    # the annotator's own pairs are no longer suggested (neither is what overlaps them)
    left = store.extraction.suggestions(dp, uid)
    assert first not in left and len(left) < len(got)
    with pytest.raises(AnnotateError, match="E640"):
        store.extraction.add_extracted_pair(dp, uid, 0, 3, 0, 3, suggestion={"rank": "x"})
    c = store.extraction.add_extracted_pair(dp, uid, 0, 3, 0, 3)  # by hand
    assert store.item(c).suggested is False and store.item(c).meta == {}
    # a false claim: suggestion 4 is '- Nu?' / 'Okej.' (55-60 / 60-65), nowhere near 0-5
    d = store.extraction.add_extracted_pair(dp, uid, 0, 5, 0, 5, suggestion={"rank": 4})
    assert store.item(d).suggested is False and store.item(d).meta == {}
    # exact spans of suggestion 2 claimed as 4: the spans decide
    e = store.extraction.add_extracted_pair(dp, uid, 41, 54, 45, 59, suggestion={"rank": 4})
    assert store.item(e).meta == {"suggestion": {"rank": 2, "adjusted": False}}
    exported = store.exports.to_pairset(pid, labelled_only=False)
    assert [p.metadata.get("suggested") for p in exported] == [True, True, False, False, True]
    assert exported.pairs[0].metadata["suggestion"] == {"rank": 1, "adjusted": False}


def test_provenance_needs_a_served_suggestion(store):
    """Nothing served yet for this document pair: even the exact spans of what would be
    suggestion 1, claimed as such, were selected by hand."""
    _pid, uid, dp = _project(store, {"suggestions": {"max_window": 1}})
    item = store.extraction.add_extracted_pair(dp, uid, 17, 40, 17, 44, suggestion={"rank": 1})
    assert store.item(item).suggested is False and store.item(item).meta == {}


def test_suggestions_are_computed_once_per_document_pair_and_settings(store, monkeypatch):
    from parakit.build.suggest import PairSuggester

    pid, uid, dp = _project(store, {"suggestions": {"max_window": 1}})
    calls = []
    real = PairSuggester.suggest

    def counting(self, *args, **kwargs):
        calls.append(self.max_window)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PairSuggester, "suggest", counting)
    first = store.extraction.suggestions(dp, uid)
    assert store.extraction.suggestions(dp, uid) == first
    assert store.extraction.ranked_suggestions(dp) == first
    assert calls == [1]  # once, then read from the store
    cached = store.doc_pair(dp).meta["suggestions"]
    assert cached["signature"]["max_window"] == 1 and cached["ranked"] == first
    # another store object (another server worker) reads the same cache
    from parakit.annotate.models import Project
    from parakit.annotate.store import Store

    other = Store.open(store.engine.url.render_as_string(hide_password=False), migrate=False)
    assert other.extraction.ranked_suggestions(dp) == first
    other.close()
    assert calls == [1]
    # new settings: computed again, for the new settings
    with store.transaction() as session:
        row = session.get(Project, pid)
        row.settings = {**row.settings, "suggestions": {"max_window": 2}}
    store.extraction.suggestions(dp, uid)
    assert calls == [1, 2]
    assert store.doc_pair(dp).meta["suggestions"]["signature"]["max_window"] == 2


def test_bad_suggestion_setting(store):
    _pid, uid, dp = _project(store, {"suggestions": {"no_such_option": 1}})
    with pytest.raises(AnnotateError, match="E640"):
        store.extraction.suggestions(dp, uid)


def test_create_project_with_suggestions(tmp_path):
    from typer.testing import CliRunner

    from parakit import io
    from parakit.annotate.store import Store
    from parakit.cli.annotate import app

    docs = tmp_path / "d.jsonl"
    io.write(PairSet([Pair("dp1", DOC1, DOC2)], scheme="binary"), docs)
    db = str(tmp_path / "p.sqlite")
    env = {"PARAKIT_PASSWORD": "cli-password"}
    runner = CliRunner()
    for args in (
        ["init", db, "--admin", "boss"],
        ["create-project", db, "a", "--documents", str(docs), "--suggestions"],
        ["create-project", db, "b", "--documents", str(docs)],
    ):
        result = runner.invoke(app, args, env=env)
        assert result.exit_code == 0, result.output
    st = Store.open(db)
    assert st.project(st.projects.project_id("a")).settings["suggestions"] is True
    assert "suggestions" not in st.project(st.projects.project_id("b")).settings
    st.close()

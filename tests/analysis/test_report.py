"""Reports: files written, numbers in JSON/Markdown, and the HTML looked at in Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from parakit.analysis.corpus import corpus_stats
from parakit.analysis.phenomena import Phenomena, surface_phenomena
from parakit.analysis.profile import profile
from parakit.analysis.report import corpus_report, profile_report
from parakit.schema import Pair, PairSet

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture
def prof():
    rng = np.random.default_rng(1)
    n = 80
    y = rng.integers(0, 2, n)
    matrix = rng.random((n, 5)) < 0.35
    ph = Phenomena(
        [f"phen {i}" for i in range(5)],
        ["cat A"] * 3 + ["cat B"] * 2,
        matrix,
        [str(i) for i in range(n)],
    )
    preds = {}
    for name, noise in (("S1", 0.1), ("S2", 0.25), ("S3", 0.4)):
        flip = rng.random(n) < noise
        preds[name] = np.where(flip, 1 - y, y)
    return profile(y, preds, ph, min_support=5)


def test_profile_report_files(tmp_path, prof):
    paths = profile_report(prof, tmp_path / "p.v1", title="Toy profile", save_png=True)
    assert paths["html"].name == "p.v1.html"
    html = paths["html"].read_text()
    assert "data:image/png;base64," in html and "Toy profile" in html
    assert "critical difference" in html.lower()
    data = json.loads(paths["json"].read_text())
    assert data["overall"]["S1"]["accuracy"] == pytest.approx(prof.overall["S1"]["accuracy"])
    assert data["friedman"]["cd"] == pytest.approx(prof.friedman.cd)
    md = paths["md"].read_text()
    assert "| system | accuracy | F1 | pairs |" in md
    assert paths["png:profile"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths["png:cd"].exists()


def test_corpus_report_single_and_comparison(tmp_path):
    a = PairSet(
        [
            Pair(str(i), f"The cat {i} sat.", f"A cat {i} sat down.", label=str(i % 2))
            for i in range(30)
        ],
        name="A",
        lang="en",
    )
    b = PairSet(
        [Pair(str(i), f"Dogs bark {i}", f"dogs bark {i}!", label="1") for i in range(20)],
        name="B",
        lang="en",
    )
    one = corpus_report(corpus_stats(a, synonyms=None), tmp_path / "one")
    assert "Corpus statistics: A" in one["html"].read_text()
    both = corpus_report(
        [corpus_stats(a, synonyms=None), corpus_stats(b, synonyms=None)], tmp_path / "both"
    )
    data = json.loads(both["json"].read_text())
    assert [c["name"] for c in data["corpora"]] == ["A", "B"]
    assert data["corpora"][1]["patterns_positive"]["surface_only"] == 1.0


def test_profile_report_in_headless_chromium(tmp_path):
    """Open a generated report in a real browser and take a screenshot."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed (Debian package chromium)")
    playwright = pytest.importorskip(
        "playwright.sync_api", reason="playwright is needed to drive Chromium"
    )
    pairs = PairSet(
        [
            Pair(str(i), f"He is {'not ' * (i % 2)}here {i}.", f"He is here {i}.", label=str(i % 2))
            for i in range(40)
        ],
        lang="en",
    )
    ph = surface_phenomena(pairs)
    y = np.array(pairs.binary_labels())
    preds = {"S1": 1 - y, "S2": np.ones_like(y), "S3": y}
    paths = profile_report(profile(y, preds, ph, min_support=3), tmp_path / "report")
    shot = tmp_path / "screenshot.png"
    with playwright.sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        except Exception as err:  # a broken browser install is an environment problem
            pytest.skip(f"Chromium did not start: {err}")
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(paths["html"].as_uri())
        assert page.title() == "Performance profile"
        heading = page.locator("h2", has_text="Phenomena performance")
        assert heading.count() == 1
        # Every embedded figure decoded to a real image in the browser.
        widths = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
        assert widths and all(w > 100 for w in widths)
        assert "negation mismatch" in page.inner_text("body")
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    keep = Path(__file__).parent / "_screenshots"
    if keep.exists():  # developers can look at it: mkdir tests/analysis/_screenshots
        shutil.copy(shot, keep / "profile-report.png")


def test_report_corpus_refuses_two_corpora_of_one_name_and_a_negative_sample(tmp_path, capsys):
    from parakit.cli import main
    from parakit.io import write

    for folder, n in (("a", 3), ("b", 2)):
        (tmp_path / folder).mkdir()
        pairs = [Pair(str(i), f"The cat {i} sat.", f"A cat {i} sat.", label="1") for i in range(n)]
        write(PairSet(pairs, name=folder, lang="en"), tmp_path / folder / "test.jsonl")
    a, b = str(tmp_path / "a" / "test.jsonl"), str(tmp_path / "b" / "test.jsonl")
    out = tmp_path / "r"
    common = ["-o", str(out), "--synonyms", "none"]
    # both are named 'test' after their file: the second replaced the first (exit 0, one corpus)
    assert main(["report", "corpus", a, b, *common]) == 2
    err = capsys.readouterr().err
    assert "'test'" in err and "NAME=PATH" in err and not out.with_suffix(".json").exists()
    assert main(["report", "corpus", f"a={a}", f"b={b}", *common]) == 0
    corpora = json.loads(out.with_suffix(".json").read_text())["corpora"]
    assert [(c["name"], c["n_pairs"]) for c in corpora] == [("a", 3), ("b", 2)]
    # a negative sample size crashed inside numpy (ValueError: negative dimensions)
    assert main(["report", "corpus", a, *common, "--sample-size", "-1"]) == 2
    assert "--sample-size" in capsys.readouterr().err

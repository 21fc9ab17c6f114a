"""M8 from the CLI (issue 20 item 5): the student trained on clean + the real output of
``identify clean-labels``, and the λ grid of MultiPIT's Table 3 scored on dev."""

from __future__ import annotations

import json

import pytest

from parakit.cli import main
from parakit.examples import example_path
from parakit.io import read, write

EXAMPLE = str(example_path())


@pytest.fixture
def noisy(tmp_path):
    """The example corpus, binary, with the first three labels turned around."""
    pairs = read(EXAMPLE).to_binary()
    turned = [p.replace(label=str(1 - int(p.label))) if i < 3 else p for i, p in enumerate(pairs)]
    path = tmp_path / "noisy.jsonl"
    write(pairs.derive(turned), path)
    return path


def _table(text: str) -> dict[tuple[str, str], list[str]]:
    """Rows of the printed grid by (training data, λ)."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0] not in ("training data", "---"):
            rows[(cells[0], cells[1])] = cells
    return rows


def test_student_on_clean_plus_relabelled(tmp_path, noisy, capsys):
    teacher = tmp_path / "teacher"
    assert main(["identify", "train", EXAMPLE, "--binary", "-m", "tfidf", "-o", str(teacher)]) == 0
    relabelled = tmp_path / "relabelled.jsonl"
    argv = ["identify", "clean-labels", str(noisy), "--teacher", str(teacher), "-o"]
    assert main([*argv, str(relabelled), "--method", "flip", "--threshold", "0.5"]) == 0
    # the two files joined by hand are not one JSONL file (a second header: E107) ...
    clean = tmp_path / "clean.jsonl"
    write(read(EXAMPLE).to_binary(), clean)
    joined = tmp_path / "joined.jsonl"
    joined.write_text(clean.read_text() + relabelled.read_text())
    assert main(["identify", "train", str(joined), "-m", "tfidf", "-o", str(tmp_path / "x")]) != 0
    assert "E107" in capsys.readouterr().err
    # ... but identify train takes both files
    student = tmp_path / "student"
    argv = ["identify", "train", EXAMPLE, str(relabelled), "--binary", "-m", "tfidf"]
    assert main([*argv, "-o", str(student)]) == 0
    n_clean, n_relabelled = len(read(EXAMPLE).to_binary()), len(read(relabelled))
    assert f"on {n_clean + n_relabelled} pairs" in capsys.readouterr().out
    # the same model as one trained on the two sets joined in the library
    from parakit.models.base import load_model, make_model
    from parakit.models.noisy import concatenate

    both = concatenate([read(EXAMPLE).to_binary(), read(relabelled)], ["corpus", "relabelled"])
    by_hand = make_model("tfidf").fit(both)
    test = read(EXAMPLE).to_binary()
    assert load_model(student).predict_proba(test) == pytest.approx(by_hand.predict_proba(test))
    # the flipped labels reached training: the student differs from the teacher
    assert load_model(student).predict_proba(test) != pytest.approx(
        load_model(teacher).predict_proba(test)
    )


def test_lambda_grid_scored_on_dev(tmp_path, noisy, capsys):
    out = tmp_path / "best.jsonl"
    argv = ["identify", "clean-labels", str(noisy), "--clean", EXAMPLE, "--dev", EXAMPLE]
    argv += ["--binary", "-m", "tfidf", "--grid", "0.15,0.25,0.35", "--method", "flip"]
    assert main([*argv, "-o", str(out)]) == 0
    rows = _table(capsys.readouterr().out)
    # the paper's table: references, then every method at every λ
    settings = {k for k in rows}
    assert ("clean only (teacher)", "") in settings and ("clean + noisy as is", "") in settings
    for lam in ("0.15", "0.25", "0.35"):
        assert ("clean + filtered noisy", lam) in settings
        assert ("clean + flipped noisy", lam) in settings
    # counts: the teacher (tfidf on the clean set) doubts the pairs whose label it gives <= λ
    teacher = tmp_path / "teacher"
    assert main(["identify", "train", EXAMPLE, "--binary", "-m", "tfidf", "-o", str(teacher)]) == 0
    predicted = tmp_path / "predicted.jsonl"
    assert main(["identify", "predict", str(teacher), str(noisy), "-o", str(predicted)]) == 0
    p_own = [p.metadata["prediction"]["proba"][p.metadata["gold_label"]] for p in read(predicted)]
    for lam in (0.15, 0.25, 0.35):
        doubted = sum(x <= lam for x in p_own)
        assert rows[("clean + filtered noisy", f"{lam:.2f}")][2] == str(doubted)
        assert rows[("clean + flipped noisy", f"{lam:.2f}")][3] == str(doubted)
    # the output is the noisy set flipped at the λ with the best dev F1 ...
    flips = {lam: float(r[7]) for (name, lam), r in rows.items() if name.endswith("flipped noisy")}
    meta = read(out).metadata["noisy_labels"]
    best = f"{meta['threshold']:.2f}"
    assert meta["method"] == "flip" and flips[best] == max(flips.values())
    assert meta["flipped"] == sum(x <= float(best) for x in p_own)
    # ... and the student trained on clean + that output scores the table's F1 on dev
    student = tmp_path / "student"
    assert main(["identify", "train", EXAMPLE, str(out), "--binary", "-o", str(student)]) == 0
    report = tmp_path / "eval"
    assert main(["identify", "evaluate", str(student), EXAMPLE, "--binary", "-o", str(report)]) == 0
    metrics = json.loads((report / "metrics.json").read_text())["metrics"]
    assert 100 * metrics["positive"]["f1"] == pytest.approx(flips[best], abs=0.051)


def test_grid_needs_clean_and_dev(tmp_path, noisy):
    argv = ["identify", "clean-labels", str(noisy), "--clean", EXAMPLE, "--binary"]
    assert main([*argv, "--grid", "0.25", "-o", str(tmp_path / "o.jsonl")]) == 2
    argv += ["--dev", EXAMPLE, "-o", str(tmp_path / "o.jsonl")]
    assert main([*argv, "--grid", "0.25", "--threshold", "0.3"]) == 2

"""Demo step of the identification models: cheap baselines on the bundled example."""

from __future__ import annotations

from pathlib import Path

from parakit.schema import PairSet


def demo_step(workdir: Path, pairs: PairSet) -> str:
    """Train the WOR and MT-feature baselines on the example (binary loose reading), save and
    reload one, and evaluate an MT-feature model on the complete Turku labels (Table 4 layout).

    The example is tiny, so the scores are training-set scores: a smoke test, not a benchmark.
    """
    from parakit.evaluate.classification import evaluate_classifier, turku_table_markdown
    from parakit.models.base import load_model, make_model

    binary = pairs.to_binary() if pairs.scheme.name != "binary" else pairs
    lines = ["## Paraphrase identification", ""]
    lines += ["| model | training accuracy | positive F1 |", "|---|---:|---:|"]
    for name, params in (("wor", {}), ("mt-features", {"n_estimators": 50})):
        model = make_model(name, **params).fit(binary)
        folder = model.save(workdir / "models" / name)
        again = load_model(folder)
        report = evaluate_classifier(again, binary)
        m = report.metrics
        lines.append(f"| `{name}` | {100 * m['accuracy']:.1f} | {100 * m['positive']['f1']:.1f} |")
    if pairs.scheme.name == "turku":
        full = pairs.filter(lambda p: p.label not in (None, "x"))
        model = make_model("mt-features", n_estimators=50).fit(full)
        report = evaluate_classifier(model, full, name="MT features on complete Turku labels")
        report.save(workdir / "models", stem="mt-features-turku")
        lines += ["", "Complete Turku labels (training set, Table 4 layout):", ""]
        lines.append(turku_table_markdown(report.turku))
    lines += ["", "Models in `models/`; `parakit identify --help` for the CLI.", ""]
    return "\n".join(lines)

"""The generation step of ``parakit demo``: generation data (M10) and its metrics (M12)."""

from __future__ import annotations

from pathlib import Path

from parakit.schema import PairSet


def demo_step(workdir: Path, pairs: PairSet) -> str:
    """Directed generation pairs from the Turku *generation* reading, and the BLEU / Self-BLEU
    of two reference-free "systems" (copy the input; output the other statement)."""
    from parakit.evaluate.generation import bleu, self_bleu
    from parakit.io import write
    from parakit.models.generation_data import prepare_generation_data

    data, report = prepare_generation_data(pairs, directions="label")
    write(data, workdir / "generation-pairs.jsonl")
    sources = [p.text1 for p in data]
    references = [[p.text2] for p in data]
    rows = []
    for name, outputs in (
        ("copy the input", sources),
        ("the reference itself", [p.text2 for p in data]),
    ):
        score, signature = bleu(outputs, references)
        selfb, _ = self_bleu(outputs, sources)
        rows.append(f"| {name} | {score:.1f} | {selfb:.1f} |")
    counts = ", ".join(f"{k} {v}" for k, v in report.to_dict().items())
    return (
        "\n".join(
            [
                "## Generation data and metrics (parakit.models.generation_data, parakit.evaluate)",
                "",
                "Directed pairs from the Turku generation reading (label 4 without i/s; "
                "subsumption pairs one way, from the detailed to the general statement): "
                f"{counts}. Written to `generation-pairs.jsonl`.",
                "",
                "| system | BLEU vs reference | Self-BLEU vs input |",
                "|---|---:|---:|",
                *rows,
                "",
                f"SacreBLEU signature: `{signature}`. Training a generator: "
                "`parakit generate --help`.",
            ]
        )
        + "\n"
    )

"""Demo step: the example corpus through the annotation store, double annotation, agreement."""

from __future__ import annotations

import random
from pathlib import Path

from parakit.schema import PairSet


def demo_step(workdir: Path, pairs: PairSet) -> str:
    """Import the example pairs into a SQLite store, double-annotate them with two simulated
    annotators (one copies the gold label, one changes 30 % of them, seeded), adjudicate the
    disagreements back to gold, and report agreement and the export."""
    from parakit.annotate.agreement import agreement_report, judgments_frame
    from parakit.annotate.store import Store

    gold = {p.id: p.label for p in pairs}
    unlabelled = PairSet(
        [p.replace(label=None, judgments=()) for p in pairs],
        scheme=pairs.scheme,
        documents=pairs.documents,
        name=pairs.name,
    )
    path = workdir / "annotate.sqlite"
    for old in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))):
        old.unlink(missing_ok=True)  # a rerun starts from a fresh store, like every other output
    store = Store.open(path, cheap_hashing=True)
    pid = store.projects.create_project("demo", pairs.scheme)
    ids = [store.accounts.add_annotator(n, "demo-password") for n in ("careful", "hasty")]
    adjudicator = store.accounts.add_annotator("lead", "demo-password", role="adjudicator")
    store.projects.import_pairs(pid, unlabelled)
    store.queue.assign(pid, mode="double", seed=0)
    rng = random.Random(0)
    values = pairs.scheme.values
    for who in ids:
        while (work := store.queue.lease_next(pid, who)) is not None:
            key = store.item(work.item_id).key
            label = gold[key]
            if who == ids[1] and rng.random() < 0.3:
                label = rng.choice([v for v in values if v != label])
            store.queue.save(work.item_id, who, label=label, revision=0, submit=True)
    conflicts = store.review.disagreements(pid)
    for item, _ in conflicts:
        store.review.resolve(item.id, gold[item.key], adjudicator)
    anns = store.queue.submitted(pid)
    frame = judgments_frame([(a.item_id, a.annotator_id, a.label) for a in anns])
    consensus = {a.item_id: store.item(a.item_id).label for a in anns}
    report = agreement_report(frame, pairs.scheme, consensus=consensus)
    out = store.exports.export(pid, workdir / "annotated.jsonl")
    store.close()
    lines = [
        "## annotate",
        "",
        f"{len(pairs)} example pairs imported into a SQLite store (`annotate.sqlite`), "
        f"double-annotated by two simulated annotators (one changes 30 % of the labels), "
        f"{len(conflicts)} disagreements adjudicated; export: `{out.name}`.",
        "",
        "| level | pairwise κ | Fleiss κ | α nominal | accuracy vs consensus |",
        "|---|---:|---:|---:|---:|",
    ]
    for level in ("full", "subsumption", "base", "binary"):
        lines.append(
            f"| {level} | {report[f'{level}_pairwise_kappa']:.3f} | "
            f"{report[f'{level}_fleiss_kappa']:.3f} | "
            f"{report[f'{level}_alpha_nominal']:.3f} | "
            f"{report[f'{level}_accuracy']:.3f} |"
        )
    return "\n".join(lines) + "\n"

"""A continually growing paraphrase dataset (M9, MultiPIT §4.1).

Each new batch of grouped sentences (e.g. one month of tweets grouped by trend) is mined within
its groups, re-ranked by a pair classifier, thresholded, cleaned of pairs whose group appears in
a protected test set, de-duplicated against earlier versions, and appended as a new version::

    dataset/
      manifest.json          {"versions": [{"version", "date", "counts", "models", ...}, ...]}
      v0001/pairs.jsonl      canonical JSONL of the pairs added by version 1
      v0002/pairs.jsonl      ...

Example:
    >>> ds = GrowingDataset("dataset/")  # doctest: +SKIP
    >>> ds.grow("batch-2024-05.jsonl", encoder, classifier, threshold=0.9,
    ...         protected=read("test.jsonl"))  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parakit.errors import Errors, MineError
from parakit.io.atomic import save_json
from parakit.schema import PairSet

if TYPE_CHECKING:
    from parakit.vectors.encode import Encoder


def _key(text1: str, text2: str) -> str:
    a, b = sorted((text1.strip().lower(), text2.strip().lower()))
    return hashlib.blake2b(f"{a}\x00{b}".encode(), digest_size=12).hexdigest()


class GrowingDataset:
    """A versioned dataset folder with a manifest.

    Args:
        root: the dataset folder (created on first ``grow``).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def manifest(self) -> dict[str, Any]:
        path = self.root / "manifest.json"
        if not path.exists():
            return {"versions": []}
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise MineError(
                Errors.E807_unreadable_manifest_restore.format(path=path, err_msg=err.msg)
            ) from None

    def versions(self) -> list[str]:
        return [v["version"] for v in self.manifest["versions"]]

    def pairs(self) -> PairSet:
        """All pairs of all versions, oldest first, with ids ``<version>:<id>`` (each version's
        ids come from its own batch, so they repeat across versions)."""
        from parakit.io import read

        out = []
        for version in self.versions():
            pairs = read(self.root / version / "pairs.jsonl")
            out.extend(p.replace(id=f"{version}:{p.id}") for p in pairs)
        return PairSet(out, scheme="binary", name=self.root.name)

    def grow(
        self,
        batch: str | Path,
        encoder: Encoder,
        classifier: Any,
        threshold: float = 0.5,
        protected: PairSet | None = None,
        k: int = 5,
        group_field: str = "group",
        text_field: str = "text",
        workdir: str | Path | None = None,
        notes: str | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        """Mine ``batch`` within its groups, keep P(paraphrase) ≥ ``threshold``, append.

        Args:
            batch: sentence collection whose records carry ``group_field`` (JSONL/TSV, or a pair
                corpus whose pairs have ``group``).
            encoder: sentence encoder for the kNN stage.
            classifier: pair classifier (``predict_proba(PairSet)``) for the second stage.
            threshold: minimum P(paraphrase) to keep a pair.
            protected: test pairs; every mined pair of one of their groups is removed, and so is
                any pair sharing a statement with them.
            k: neighbours per sentence.
            workdir: mining checkpoint folder (default: a temporary folder, removed after).
            notes: free text stored in the manifest entry.

        Returns:
            the manifest entry of the new version.
        """
        from parakit.io import read
        from parakit.io.jsonl import write_jsonl
        from parakit.mine.mining import mine

        own_tmp = workdir is None
        work = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="parakit-grow-"))
        try:
            mined = work / "mined.jsonl"
            result = mine(
                batch,
                work / "job",
                encoder,
                output=mined,
                k=k,
                same_source=True,
                classifier=classifier,
                min_probability=threshold,
                text_field=text_field,
                source_field=group_field,
                progress=progress,
            )
            candidates = read(mined)
        finally:
            if own_tmp:
                shutil.rmtree(work, ignore_errors=True)
        protected_groups = {p.group for p in protected or [] if p.group is not None}
        protected_texts = {t.strip().lower() for p in protected or [] for t in (p.text1, p.text2)}
        seen = {_key(p.text1, p.text2) for p in self.pairs()} if self.versions() else set()
        kept, removed_group, removed_text, duplicates = [], 0, 0, 0
        for pair in candidates:
            group = pair.source  # mining stores the group in the source field
            if group in protected_groups:
                removed_group += 1
                continue
            if (
                pair.text1.strip().lower() in protected_texts
                or pair.text2.strip().lower() in protected_texts
            ):
                removed_text += 1
                continue
            key = _key(pair.text1, pair.text2)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            kept.append(pair.replace(label="1", group=group, source="mined"))
        version = f"v{len(self.versions()) + 1:04d}"
        signature = encoder.signature() if hasattr(encoder, "signature") else {}
        classifier_sig = (
            classifier.signature()
            if hasattr(classifier, "signature")
            else {"class": type(classifier).__name__}
        )
        entry = {
            "version": version,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "batch": str(batch),
            "threshold": threshold,
            "k": k,
            "counts": {
                "sentences": result.n_sentences,
                "candidates": result.n_candidates,
                "above_threshold": len(candidates),
                "removed_test_group": removed_group,
                "removed_test_text": removed_text,
                "duplicates": duplicates,
                "added": len(kept),
                "total": sum(v["counts"]["added"] for v in self.manifest["versions"]) + len(kept),
            },
            "models": {"encoder": signature, "classifier": classifier_sig},
            "protected_groups": len(protected_groups),
            "notes": notes,
        }
        write_jsonl(
            PairSet(kept, scheme="binary", name=version, metadata={"growth": entry}),
            self.root / version / "pairs.jsonl",
        )
        manifest = self.manifest
        manifest["versions"].append(entry)
        save_json(self.root / "manifest.json", manifest, indent=2, ensure_ascii=False)
        return entry

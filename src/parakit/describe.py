"""Summaries of a pair set: counts, labels, binary balance, splits, groups (``parakit info``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from parakit.errors import LabelError
from parakit.schema import PairSet


def describe(pairs: PairSet) -> dict[str, Any]:
    """A JSON-serialisable summary of ``pairs``.

    Keys: ``name``, ``scheme``, ``pairs``, ``labelled``, ``labels`` (label -> count),
    ``binary`` (reading -> {"1": n, "0": n, "dropped": n}), ``splits``, ``folds``,
    ``groups``, ``documents``, ``with_context``, ``with_rewrites``, ``sources``, plus the set's
    metadata summaries (``span_check``, ``etpc``) when present.
    """
    labels = Counter(p.label for p in pairs)
    summary: dict[str, Any] = {
        "name": pairs.name,
        "lang": pairs.lang,
        "scheme": pairs.scheme.spec(),
        "pairs": len(pairs),
        "labelled": sum(v for k, v in labels.items() if k is not None),
        "labels": {
            str(k): v for k, v in sorted(labels.items(), key=lambda kv: str(kv[0])) if k is not None
        },
    }
    readings = list(pairs.scheme.readings()) if summary["labelled"] else []
    binary: dict[str, dict[str, int]] = {}
    for reading in readings:
        try:
            values = Counter(pairs.binary_labels(reading))
        except LabelError:
            continue
        unlabelled = labels.get(None, 0)
        binary[reading] = {
            "1": values.get(1, 0),
            "0": values.get(0, 0),
            "dropped": values.get(None, 0) - unlabelled,
        }
    if binary:
        summary["binary"] = binary
    splits = Counter(p.split for p in pairs if p.split is not None)
    if splits:
        summary["splits"] = dict(sorted(splits.items()))
    folds = {p.fold for p in pairs if p.fold is not None}
    if folds:
        summary["folds"] = len(folds)
    groups = {p.group for p in pairs if p.group is not None}
    summary["groups"] = len(groups)
    summary["documents"] = len(pairs.documents)
    summary["with_context"] = sum(1 for p in pairs if p.span1 is not None)
    summary["with_rewrites"] = sum(1 for p in pairs if p.rewrites)
    sources = Counter(p.source for p in pairs if p.source is not None)
    if sources:
        summary["sources"] = dict(sources.most_common())
    for key in ("span_check", "etpc"):
        if key in pairs.metadata:
            summary[key] = pairs.metadata[key]
    return summary


def render_markdown(summary: dict[str, Any]) -> str:
    """The summary of :func:`describe` as a Markdown section."""
    lines = [f"## {summary.get('name') or 'pair set'}", ""]
    lines.append(
        f"- pairs: {summary['pairs']} ({summary['labelled']} labelled), scheme "
        f"`{summary['scheme']['name']}`, language {summary.get('lang') or '?'}"
    )
    lines.append(
        f"- groups: {summary['groups']}, documents: {summary['documents']}, "
        f"pairs with context: {summary['with_context']}, with rewrites: "
        f"{summary['with_rewrites']}"
    )
    if summary.get("splits"):
        lines.append("- splits: " + ", ".join(f"{k} {v}" for k, v in summary["splits"].items()))
    if summary.get("sources"):
        lines.append("- sources: " + ", ".join(f"{k} {v}" for k, v in summary["sources"].items()))
    if summary["labels"]:
        lines += ["", "| label | pairs | share |", "|---|---:|---:|"]
        total = max(summary["labelled"], 1)
        for label, count in summary["labels"].items():
            lines.append(f"| `{label}` | {count} | {count / total:.1%} |")
    if summary.get("binary"):
        lines += [
            "",
            "| binary reading | paraphrase (1) | not (0) | dropped | positive share |",
            "|---|---:|---:|---:|---:|",
        ]
        for reading, counts in summary["binary"].items():
            kept = counts["1"] + counts["0"]
            share = counts["1"] / kept if kept else 0.0
            lines.append(
                f"| {reading} | {counts['1']} | {counts['0']} | {counts['dropped']} | {share:.1%} |"
            )
    if summary.get("span_check"):
        check = summary["span_check"]
        lines += ["", "Context spans: " + ", ".join(f"{k} {v}" for k, v in check.items())]
    if summary.get("etpc"):
        info = summary["etpc"]
        lines += [
            "",
            f"ETPC files present: {', '.join(info['present'])}; missing: "
            f"{', '.join(info['missing']) or 'none'}; labels from {info['label_source']}",
        ]
    return "\n".join(lines) + "\n"

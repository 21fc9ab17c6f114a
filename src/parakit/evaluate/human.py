"""Human evaluation of generated paraphrases (M13): rating sheets, agreement, metric correlation,
error typology.

MultiPIT (§4.4, App. F, H) rates each generation on a 5-point Likert scale (5 best) for
fluency, semantic similarity and diversity, by three raters; agreement is ordinal
Krippendorff's alpha per aspect; automatic metrics are compared with the item-level human scores
by Spearman correlation ("overall" = the sum of the three aspects); a manual inspection labels
generations with five good and six poor paraphrase types (Table 6).

The paper shows its rating instructions only as screenshots (Figures 11-13); the instructions
below restate them from the text: what each aspect means and that 5 is the best score.

Example:
    >>> items = [{"source": "I love it", "generation": "I adore it", "system": "t5"}]
    >>> paths = export_rating_sheet(items, "sheet", raters=["ann", "bob"])   # doctest: +SKIP
    >>> ratings = read_ratings(paths["sheets"])                              # doctest: +SKIP
    >>> from parakit.annotate.agreement import krippendorff_alpha
    >>> krippendorff_alpha(aspect_judgments(ratings, "fluency"), "ordinal", SCALE)  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from parakit.errors import DataFormatError, Errors, HumanEvalError
from parakit.io.atomic import atomic_write

ASPECTS: tuple[str, ...] = ("fluency", "semantic_similarity", "diversity")

#: What each point of the 5-point scale means for each aspect (5 = best).
LIKERT_SCALE: dict[str, dict[int, str]] = {
    "fluency": {
        5: "perfectly fluent and grammatical; reads like a natural sentence",
        4: "fluent with a minor slip that does not hinder reading",
        3: "understandable but clearly awkward or with several errors",
        2: "hard to read; major grammatical problems",
        1: "not a sentence; incomprehensible",
    },
    "semantic_similarity": {
        5: "means exactly the same as the source",
        4: "same meaning, with a minor detail lost or added",
        3: "mostly the same meaning, but some important information is lost, added or changed",
        2: "related topic, but the meaning differs substantially",
        1: "unrelated or contradicts the source",
    },
    "diversity": {
        5: "very different wording and/or structure from the source",
        4: "substantially reworded (several phrases or the structure changed)",
        3: "some rewording (a phrase or a few words changed)",
        2: "small changes only (an article, tense, preposition or a single word)",
        1: "a copy of the source",
    },
}

INSTRUCTIONS: dict[str, str] = {
    "fluency": "Fluency: is the generated sentence well-formed, grammatical English that a "
    "native speaker could have written? Judge the generation on its own; informal "
    "social-media style is fine.",
    "semantic_similarity": "Semantic similarity: does the generated sentence mean the same "
    "thing as the source sentence? Judge by meaning, not by wording. "
    "Adding commonsense or world knowledge is fine; adding, dropping or "
    "changing information is not.",
    "diversity": "Diversity: how different is the generated sentence from the source in its "
    "wording and structure? Judge the surface form only, whatever the meaning.",
}

#: MultiPIT Table 6: the error typology of generations, as a label set.
ERROR_TYPES: dict[str, tuple[str, str]] = {
    "add_new": ("good", "Add new phrases while keeping the meaning of given sentence."),
    "word_synonym": ("good", "Substitute a word with its synonym (another word)."),
    "phrase_synonym": ("good", "Replace a phrase with synonym or expand a word to a phrase."),
    "structure": ("good", "Use different sentence structures to express the same thing."),
    "simplification": (
        "good",
        "Delete minor details or shorten phrases while maintaining the meaning of given sentence.",
    ),
    "copy": ("poor", "Copy the given sentence."),
    "small_change": ("poor", "Only have small changes such as changing article, tense, or prep."),
    "hallucination": ("poor", "Add new info that is not commonsense or world knowledge."),
    "missing_info": ("poor", "Miss important info in the given sentence."),
    "misinterpretation": ("poor", "Misinterpret or contradict meaning of the given sentence."),
    "bad_grammar": ("poor", "Contain grammar error."),
}

SHEET_COLUMNS = ("item_id", "rater", "source", "generation", *ASPECTS, "error_types", "comment")
KEY_COLUMNS = ("item_id", "system", "source", "generation")


def instructions_markdown(error_types: bool = True) -> str:
    """The rater instructions: aspects, the Likert scale and (optionally) the error typology."""
    lines = [
        "# Rating paraphrase generations",
        "",
        "Each row shows a source sentence and a generated paraphrase of it. Rate the "
        "generation on each aspect from 1 to 5 (5 = best). Rate every aspect "
        "independently of the others. Leave a cell empty only if you cannot judge.",
        "",
    ]
    for aspect in ASPECTS:
        lines += [f"## {aspect.replace('_', ' ').capitalize()}", "", INSTRUCTIONS[aspect], ""]
        lines += [f"- **{score}**: {text}" for score, text in LIKERT_SCALE[aspect].items()]
        lines.append("")
    if error_types:
        lines += [
            "## Paraphrase types (column `error_types`)",
            "",
            "List every type that applies, separated by `;` (for example "
            "`word_synonym;structure`).",
            "",
        ]
        for name, (kind, definition) in ERROR_TYPES.items():
            lines.append(f"- `{name}` ({kind}): {definition}")
        lines.append("")
    return "\n".join(lines)


def export_rating_sheet(
    items: Iterable[Mapping[str, Any]],
    out_dir: str | Path,
    raters: Sequence[str] = ("rater1", "rater2", "rater3"),
    sample: int | None = None,
    seed: int = 0,
    error_types: bool = True,
) -> dict[str, Any]:
    """Write blind rating sheets: one CSV per rater (items shuffled per rater, systems hidden),
    ``key.csv`` (item -> system) and ``instructions.md``.

    Args:
        items: dicts with ``source``, ``generation`` and optionally ``system`` and ``id``.
        out_dir: output folder.
        raters: one sheet per rater (three in the paper).
        sample: rate a random sample of this many items (200 per system in the paper).
        seed: seed of the sample and of the shuffles.
        error_types: add the ``error_types`` column and its instructions.

    Returns:
        ``{"sheets": [paths], "key": path, "instructions": path}``.
    """
    rows = []
    for number, item in enumerate(items, start=1):
        for field in ("source", "generation"):
            if not isinstance(item.get(field), str):
                raise HumanEvalError(Errors.E941_item_string.format(number=number, field=field))
        rows.append(item)
    if not rows:
        raise HumanEvalError(Errors.E941_items_rate)
    if not raters or len(set(raters)) != len(raters):
        raise HumanEvalError(Errors.E941_give_one_more)
    rng = random.Random(seed)
    if sample is not None and sample < len(rows):
        rows = rng.sample(rows, sample)
    keyed = [
        {
            "item_id": f"i{n:05d}",
            "system": str(r.get("system", "")),
            "source": r["source"],
            "generation": r["generation"],
        }
        for n, r in enumerate(rows, start=1)
    ]
    out = Path(out_dir)
    with atomic_write(out / "key.csv", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=KEY_COLUMNS)
        writer.writeheader()
        writer.writerows(keyed)
    with atomic_write(out / "instructions.md") as handle:
        handle.write(instructions_markdown(error_types))
    columns = [c for c in SHEET_COLUMNS if error_types or c != "error_types"]
    sheets = []
    for rater in raters:
        order = list(keyed)
        rng.shuffle(order)
        path = out / f"ratings-{rater}.csv"
        with atomic_write(path, newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            for row in order:
                writer.writerow(
                    {
                        "item_id": row["item_id"],
                        "rater": rater,
                        "source": row["source"],
                        "generation": row["generation"],
                    }
                )
        sheets.append(path)
    return {"sheets": sheets, "key": out / "key.csv", "instructions": out / "instructions.md"}


def parse_error_types(value: str, path: Path | None = None, line: int | None = None) -> list[str]:
    """``"word_synonym; structure"`` -> ``["word_synonym", "structure"]``, validated."""
    names = [v.strip().lower().replace(" ", "_") for v in value.replace(",", ";").split(";")]
    names = [n for n in names if n]
    for name in names:
        if name not in ERROR_TYPES:
            raise DataFormatError(
                Errors.E942_unknown_paraphrase_type.format(
                    name=name, error_types=", ".join(ERROR_TYPES)
                ),
                path=path,
                line=line,
                field="error_types",
            )
    return names


def read_ratings(paths: Iterable[str | Path]) -> pd.DataFrame:
    """Read filled rating sheets into one long table.

    Returns:
        Columns ``item_id, rater, source, generation, aspect, score`` (one row per filled
        cell; empty cells are missing ratings) with the error types of each (item, rater) in
        the ``error_types`` column (a list).

    Raises:
        DataFormatError: a score outside 1-5, a missing column, an unknown paraphrase type or
            an item rated twice by one rater (file, line and field named).
    """
    records = []
    seen: set[tuple[str, str]] = set()
    for path in map(Path, paths):
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            missing = [
                c for c in ("item_id", "rater", *ASPECTS) if c not in (reader.fieldnames or [])
            ]
            if missing:
                raise DataFormatError(
                    Errors.E943_missing_column_export.format(missing=missing), path=path, line=1
                )
            for line, row in enumerate(reader, start=2):
                item, rater = (row["item_id"] or "").strip(), (row["rater"] or "").strip()
                if not item or not rater:
                    raise DataFormatError(Errors.E943_empty_item_id, path=path, line=line)
                if (item, rater) in seen:
                    raise DataFormatError(
                        Errors.E944_item_rated_twice.format(item=item, rater=rater),
                        path=path,
                        line=line,
                        field="item_id",
                    )
                seen.add((item, rater))
                types = parse_error_types(row.get("error_types") or "", path, line)
                for aspect in ASPECTS:
                    raw = (row.get(aspect) or "").strip()
                    if not raw:
                        continue
                    try:
                        score = float(raw)
                    except ValueError:
                        score = float("nan")
                    if score not in (1, 2, 3, 4, 5):
                        raise DataFormatError(
                            Errors.E945_score_integer.format(raw=raw),
                            path=path,
                            line=line,
                            field=aspect,
                        )
                    records.append(
                        {
                            "item_id": item,
                            "rater": rater,
                            "source": row.get("source"),
                            "generation": row.get("generation"),
                            "aspect": aspect,
                            "score": int(score),
                            "error_types": types,
                        }
                    )
    if not records:
        raise HumanEvalError(Errors.E946_ratings_found_sheets)
    return pd.DataFrame.from_records(records)


def read_key(path: str | Path, ratings: pd.DataFrame | None = None) -> pd.DataFrame:
    """The item -> system key written by :func:`export_rating_sheet`.

    Args:
        path: ``key.csv``.
        ratings: the rated items (:func:`read_ratings`): each must be in the key with the
            source and generation the sheet showed.

    Raises:
        DataFormatError: E140 a rated item the key gives other texts (the key of another
            export; the first item named), E943 a rated item the key does not list.
    """
    key = pd.read_csv(path, dtype=str, keep_default_na=False)
    if ratings is None:
        return key
    from parakit.io.validate import Where, check_joined_texts

    fields = [f for f in ("source", "generation") if f in key.columns and f in ratings.columns]
    lines = {item: line for line, item in enumerate(key["item_id"], start=2)}
    known = {row.item_id: tuple(getattr(row, f) for f in fields) for row in key.itertuples()}
    rated = ratings.drop_duplicates("item_id")
    for row in rated.itertuples():
        if row.item_id not in known:
            raise DataFormatError(
                Errors.E943_rated_item_key.format(row_item_id=row.item_id),
                path=path,
                field="item_id",
            )
        if len(fields) == 2:
            check_joined_texts(
                {row.item_id: (row.source, row.generation)},
                row.item_id,
                known[row.item_id],
                Where(path, lines[row.item_id]),
                "the rating sheets",
                ("source", "generation"),
            )
    return key


#: the rating scale, alpha's value domain: a point nobody used still counts as a level
SCALE = (1, 2, 3, 4, 5)


def aspect_judgments(ratings: pd.DataFrame, aspect: str) -> pd.DataFrame:
    """One aspect's ratings as judgments ``(item, annotator, label)``: the input of the one
    Krippendorff's alpha, :func:`parakit.annotate.agreement.krippendorff_alpha` (ordinal,
    ``order=SCALE``, as the paper; raters x items, missing ratings allowed).

    Raises:
        HumanEvalError: fewer than two raters rated the aspect (E947).
    """
    rows = ratings[ratings["aspect"] == aspect]
    if rows["rater"].nunique() < 2:
        raise HumanEvalError(Errors.E947_agreement_needs_least.format(aspect=aspect))
    return pd.DataFrame(
        {"item": rows["item_id"], "annotator": rows["rater"], "label": rows["score"]}
    )


def item_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """Mean score per item and aspect over raters, plus ``overall`` (the sum of the aspects).

    Returns:
        One row per item: ``item_id, source, generation, fluency, semantic_similarity,
        diversity, overall``.
    """
    means = ratings.pivot_table(index="item_id", columns="aspect", values="score", aggfunc="mean")
    means = means[[a for a in ASPECTS if a in means.columns]]
    means["overall"] = means.sum(axis=1, skipna=False)
    texts = ratings.groupby("item_id")[["source", "generation"]].first()
    return texts.join(means).reset_index()


def mean_scores(ratings: pd.DataFrame, key: pd.DataFrame | None = None) -> pd.DataFrame:
    """Average rating per aspect, per system when a key is given (Table 7)."""
    items = item_scores(ratings)
    if key is None:
        return items[[a for a in ASPECTS if a in items]].mean().to_frame("all").T
    merged = items.merge(key[["item_id", "system"]], on="item_id", how="left")
    return merged.groupby("system")[[a for a in ASPECTS if a in merged]].mean()


def metric_correlations(
    ratings: pd.DataFrame,
    metrics: pd.DataFrame,
    metric_columns: Sequence[str] | None = None,
    on: Sequence[str] = ("source", "generation"),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Spearman correlation of each automatic metric with each human aspect (Tables 12-13).

    Args:
        ratings: :func:`read_ratings` output.
        metrics: per-item metric values, for example the per-sentence table of
            ``parakit generate evaluate``; joined with the rated items on ``on``.
        metric_columns: the metrics to correlate (default: every numeric column).
        on: join columns (``item_id`` works when ``metrics`` carries it).

    Returns:
        ``(rho, p_value)`` tables: rows metrics, columns aspects + ``overall``; NaN where
        fewer than 3 items match or either side is constant.
    """
    from scipy.stats import spearmanr

    items = item_scores(ratings)
    metrics = metrics.drop_duplicates(subset=list(on))
    merged = items.merge(metrics, on=list(on), how="inner", suffixes=("", "_metric"))
    if merged.empty:
        raise HumanEvalError(Errors.E948_rated_item_matches.format(on=list(on)))
    if metric_columns is None:
        metric_columns = [
            c for c in metrics.columns if c not in on and pd.api.types.is_numeric_dtype(metrics[c])
        ]
    aspects = [a for a in (*ASPECTS, "overall") if a in merged.columns]
    rho = pd.DataFrame(index=list(metric_columns), columns=aspects, dtype=float)
    pval = rho.copy()
    for metric in metric_columns:
        for aspect in aspects:
            pair = merged[[metric, aspect]].dropna()
            if len(pair) < 3 or pair[metric].nunique() < 2 or pair[aspect].nunique() < 2:
                continue  # undefined for constant input: left NaN
            result = spearmanr(pair[metric], pair[aspect])
            rho.loc[metric, aspect] = float(result.statistic)
            pval.loc[metric, aspect] = float(result.pvalue)
    return rho, pval


def error_type_summary(ratings: pd.DataFrame, key: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 6 statistics: for each system, occurrences per generation of each good type and
    the percentage of generations showing each poor type (an item counts for a type when at
    least one rater gave it)."""
    per_item = (
        ratings.drop_duplicates(["item_id", "rater"])
        .groupby("item_id")["error_types"]
        .agg(lambda lists: set().union(*map(set, lists)))
    )
    frame = per_item.to_frame("types").reset_index()
    frame["system"] = "all"
    if key is not None:
        frame = frame.drop(columns="system").merge(
            key[["item_id", "system"]], on="item_id", how="left"
        )
    rows = {}
    for system, group in frame.groupby("system"):
        n = len(group)
        row: dict[str, float] = {"n": float(n)}
        good = [t for t, (kind, _) in ERROR_TYPES.items() if kind == "good"]
        poor = [t for t in ERROR_TYPES if t not in good]
        for t in good:
            row[t] = sum(t in s for s in group["types"]) / n
        row["good_per_generation"] = float(sum(row[t] for t in good))
        for t in poor:
            row[t] = 100.0 * sum(t in s for s in group["types"]) / n
        row["poor_percent"] = 100.0 * sum(bool(s & set(poor)) for s in group["types"]) / n
        rows[system] = row
    return pd.DataFrame.from_dict(rows, orient="index")

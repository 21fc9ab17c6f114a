"""Reports: one self-contained HTML page (tables + embedded PNG figures), the same numbers as
JSON and as Markdown, and optionally the figures as PNG files.

* :func:`profile_report` — a :class:`~parakit.analysis.profile.PerformanceProfile`.
* :func:`corpus_report` — one :class:`~parakit.analysis.corpus.CorpusStats` or a comparison of
  several.

Every file is written atomically. matplotlib runs on the Agg backend (no display needed).

Example:
    >>> import tempfile, pathlib, numpy as np
    >>> from parakit.analysis.phenomena import Phenomena
    >>> from parakit.analysis.profile import profile
    >>> ph = Phenomena(["a", "b", "c"], ["x"] * 3, np.eye(3, dtype=bool).repeat(4, 0),
    ...                [str(i) for i in range(12)])
    >>> prof = profile([1, 0] * 6, {"S1": [1] * 12, "S2": [1, 0] * 6}, ph, min_support=1)
    >>> out = profile_report(prof, pathlib.Path(tempfile.mkdtemp()) / "profile")
    >>> sorted(p.suffix for p in out.values())
    ['.html', '.json', '.md']
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from parakit.analysis.corpus import STATEMENT_CLASSES, CorpusStats
from parakit.analysis.patterns import PATTERN_TITLES, PATTERNS
from parakit.analysis.profile import PerformanceProfile
from parakit.io.atomic import atomic_write

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;border-bottom:2px solid #3b6ea5;padding-bottom:.3rem}
h2{font-size:1.25rem;margin-top:2rem;color:#2c4f78}
table{border-collapse:collapse;margin:.6rem 0 1.2rem;font-size:.88rem}
th,td{border:1px solid #ccd;padding:.25rem .55rem;text-align:right}
th{background:#eef2f8}td:first-child,th:first-child{text-align:left}
tr:nth-child(even) td{background:#fafbfd}
.sig{font-weight:700;color:#a0301b}.na{color:#999}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #e3e6ee}
figcaption{font-size:.85rem;color:#555}
.meta{font-size:.8rem;color:#666}code{background:#f3f3f6;padding:0 .2rem}
"""


@dataclass
class _Table:
    title: str
    header: list[str]
    rows: list[list[Any]]
    note: str = ""
    sig: list[list[bool]] = field(default_factory=list)


@dataclass
class _Figure:
    name: str
    caption: str
    png: bytes


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "na"
    if isinstance(value, float | np.floating):
        if np.isnan(value):
            return "na"
        return f"{value:.{digits}f}"
    return str(value)


def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _write(path: Path, text: str | bytes) -> None:
    mode = "wb" if isinstance(text, bytes) else "w"
    with atomic_write(path, mode=mode) as handle:
        handle.write(text)


def _render(
    title: str,
    intro: str,
    tables: Sequence[_Table],
    figures: Sequence[_Figure],
    data: dict[str, Any],
    out: Path,
    save_png: bool,
) -> dict[str, Path]:
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    from parakit import __version__

    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{intro}</p>",
    ]
    md = [f"# {title}", "", intro.replace("<code>", "`").replace("</code>", "`"), ""]
    for fig in figures:
        b64 = base64.b64encode(fig.png).decode("ascii")
        parts.append(
            f"<figure><img alt='{html.escape(fig.caption)}' "
            f"src='data:image/png;base64,{b64}'><figcaption>"
            f"{html.escape(fig.caption)}</figcaption></figure>"
        )
    for table in tables:
        parts.append(f"<h2>{html.escape(table.title)}</h2>")
        if table.note:
            parts.append(f"<p class='meta'>{html.escape(table.note)}</p>")
        parts.append(
            "<table><thead><tr>"
            + "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
            + "</tr></thead><tbody>"
        )
        md += [f"## {table.title}", ""]
        if table.note:
            md += [table.note, ""]
        md += [
            "| " + " | ".join(table.header) + " |",
            "|" + "|".join("---" for _ in table.header) + "|",
        ]
        for i, row in enumerate(table.rows):
            cells = []
            for j, cell in enumerate(row):
                text = _fmt(cell)
                cls = " class='na'" if text == "na" else ""
                if table.sig and table.sig[i][j]:
                    cls = " class='sig'"
                cells.append(f"<td{cls}>{html.escape(text)}</td>")
            parts.append("<tr>" + "".join(cells) + "</tr>")
            md.append(
                "| "
                + " | ".join(
                    (f"**{_fmt(c)}**" if table.sig and table.sig[i][j] else _fmt(c))
                    for j, c in enumerate(row)
                )
                + " |"
            )
        parts.append("</tbody></table>")
        md.append("")
    parts.append(
        f"<p class='meta'>parakit {__version__} · {stamp} · numbers also in "
        f"<code>{html.escape(out.name)}.json</code></p></body></html>"
    )
    paths = {kind: out.parent / f"{out.name}.{kind}" for kind in ("html", "json", "md")}
    _write(paths["html"], "\n".join(parts))
    _write(
        paths["json"],
        json.dumps(
            {"title": title, "created": stamp, **data},
            indent=1,
            ensure_ascii=False,
            default=_json_default,
        ),
    )
    if save_png:
        for fig in figures:
            path = out.parent / f"{out.name}-{fig.name}.png"
            _write(path, fig.png)
            paths[f"png:{fig.name}"] = path
            md.append(f"![{fig.caption}]({path.name})")
    _write(paths["md"], "\n".join(md) + "\n")
    return paths


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


# --- profile -------------------------------------------------------------------------------


def _profile_figure(prof: PerformanceProfile, min_support: int) -> bytes:
    plt = _plt()
    rows = [r for r in prof.table if r["support"] >= max(min_support, 1)] or [
        r for r in prof.table if r["support"]
    ]
    k, m = len(rows), len(prof.systems)
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.32 * k * max(m, 1) ** 0.6 + 0.6))
    height = 0.8 / max(m, 1)
    colors = plt.get_cmap("tab10").colors
    y = np.arange(k)
    for i, system in enumerate(prof.systems):
        acc = [r["accuracy"][system] for r in rows]
        ax.barh(
            y + i * height - 0.4 + height / 2,
            acc,
            height=height,
            color=colors[i % 10],
            label=f"{system} (overall {prof.overall[system]['accuracy']:.2f})",
        )
        ax.axvline(prof.overall[system]["accuracy"], color=colors[i % 10], ls="--", lw=1)
        for j, r in enumerate(rows):
            p = r["p"][system]
            if p is not None and p < 0.05:
                ax.text(
                    min(acc[j] + 0.005, 1.0),
                    y[j] + i * height - 0.4 + height / 2,
                    "*",
                    va="center",
                    fontsize=8,
                )
    ax.set_yticks(y, [f"{r['phenomenon']} (n={r['support']})" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.05)
    ax.set_xlabel(
        "accuracy on the pairs with the phenomenon (dashed: overall; * Mann–Whitney p < 0.05)"
    )
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def _cd_figure(prof: PerformanceProfile) -> bytes:
    import pandas as pd
    import scikit_posthocs as sp

    plt = _plt()
    fr = prof.friedman
    assert fr is not None
    k = len(fr.groups)
    fig, ax = plt.subplots(figsize=(10, 2.0 + 0.22 * k))
    ranks = pd.Series(fr.average_ranks, index=fr.groups)
    sig = pd.DataFrame(fr.pvalues, index=fr.groups, columns=fr.groups)
    sp.critical_difference_diagram(
        ranks, sig, ax=ax, alpha=fr.alpha, cd=fr.cd, label_props={"fontsize": 8}
    )
    ax.set_title(
        f"Average rank of the phenomena over {fr.ranks.shape[0]} systems "
        f"(1 = highest accuracy); Nemenyi CD = {fr.cd:.2f} at p < {fr.alpha}; "
        f"Friedman χ² = {fr.friedman.statistic:.1f}, p = {fr.friedman.p:.3g}",
        fontsize=9,
    )
    return _png(fig)


def profile_report(
    prof: PerformanceProfile,
    out: str | Path,
    *,
    title: str | None = None,
    description: str = "",
    save_png: bool = False,
    mcnemar_max_p: float = 0.1,
) -> dict[str, Path]:
    """Write the HTML/JSON/Markdown report of a performance profile.

    Args:
        prof: the profile.
        out: output path without suffix (``reports/profile`` -> ``reports/profile.html``...).
        title: page title.
        description: a sentence about the test set and systems (HTML allowed).
        save_png: also write each figure as ``<out>-<figure>.png``.
        mcnemar_max_p: McNemar rows shown in the tables (all rows are in the JSON).

    Returns:
        kind -> path of each written file.
    """
    out = Path(out)
    min_support = int(prof.settings.get("min_support", 5))
    sig_level = 0.05
    systems = prof.systems
    tables = [
        _Table(
            "Overall performance",
            ["system", "accuracy", "F1", "pairs"],
            [
                [s, prof.overall[s]["accuracy"], prof.overall[s]["f1"], prof.overall[s]["n"]]
                for s in systems
            ],
        )
    ]
    header = ["phenomenon", "category", "pairs", "% positive"]
    for s in systems:
        header += [f"{s} acc", f"{s} p"]
    rows, sig = [], []
    for r in prof.table:
        row: list[Any] = [
            r["phenomenon"],
            r["category"],
            r["support"],
            None if r["positive_share"] is None else 100 * r["positive_share"],
        ]
        marks = [False] * 4
        for s in systems:
            row += [r["accuracy"][s], r["p"][s]]
            marks += [False, r["p"][s] is not None and r["p"][s] < sig_level]
        rows.append(row)
        sig.append(marks)
    tables.append(
        _Table(
            "Phenomena performance",
            header,
            rows,
            note=f"Accuracy on the pairs containing each phenomenon; p = Mann–Whitney U of the "
            f"phenomenon's correct/incorrect predictions vs the whole test set (bold: "
            f"p < {sig_level}; na: fewer than {min_support} pairs).",
            sig=sig,
        )
    )
    mc = [
        r
        for r in prof.mcnemar
        if r["phenomenon"] == "OVERALL" or (r["p"] is not None and r["p"] < mcnemar_max_p)
    ]
    tables.append(
        _Table(
            "McNemar tests between systems",
            ["phenomenon", "A", "B", "pairs", "acc A", "acc B", "A only", "B only", "p", "test"],
            [
                [
                    r["phenomenon"],
                    r["system_a"],
                    r["system_b"],
                    r["support"],
                    r["acc_a"],
                    r["acc_b"],
                    r["b"],
                    r["c"],
                    r["p"],
                    r["method"],
                ]
                for r in mc
            ],
            note=f"Whole test set and every phenomenon with p < {mcnemar_max_p} (all rows in the "
            "JSON). Exact binomial test when fewer than 25 discordant pairs.",
            sig=[[False] * 8 + [r["p"] is not None and r["p"] < sig_level, False] for r in mc],
        )
    )
    figures = [
        _Figure(
            "profile",
            "Performance profile: accuracy per phenomenon and system",
            _profile_figure(prof, min_support),
        )
    ]
    if prof.friedman is not None:
        fr = prof.friedman
        order = np.argsort(fr.average_ranks)
        tables.append(
            _Table(
                "Friedman test and Nemenyi critical difference",
                ["phenomenon", "average rank"],
                [[fr.groups[i], float(fr.average_ranks[i])] for i in order],
                note=f"k = {len(fr.groups)} phenomena with >= {min_support} pairs, N = "
                f"{fr.ranks.shape[0]} systems; Friedman χ² = {fr.friedman.statistic:.2f}, "
                f"p = {fr.friedman.p:.3g}; Nemenyi CD = {fr.cd:.2f} at p < {fr.alpha}.",
            )
        )
        figures.append(
            _Figure("cd", "Critical difference diagram of the phenomena", _cd_figure(prof))
        )
    else:
        tables.append(_Table("Friedman test", ["note"], [[prof.friedman_note]]))
    checks = prof.checks
    corr = checks["correlation"]
    tables.append(
        _Table(
            "Checks before profiling (Q3)",
            ["phenomenon", "share among positives", "share among negatives"],
            [[d["phenomenon"], d["positives"], d["negatives"]] for d in checks["distribution"]],
            note=f"Distribution of phenomenon occurrences over positive and negative pairs "
            f"(total variation distance {checks['total_variation']:.3f}). Pairwise Pearson r "
            f"of the phenomena: max |r| = {_fmt(corr['max_abs_r'])}; "
            f"{corr['n_over_threshold']} of {corr['n_pairs']} phenomenon pairs have "
            f"|r| >= {corr['threshold']}.",
        )
    )
    n = len(prof.y_true)
    intro = (description + " " if description else "") + (
        f"{n} test pairs ({int(prof.y_true.sum())} positive), {len(systems)} system(s), "
        f"{len(prof.phenomena.names)} phenomena from <code>{prof.phenomena.source}</code>."
    )
    return _render(
        title or "Performance profile", intro, tables, figures, prof.to_dict(), out, save_png
    )


# --- corpus --------------------------------------------------------------------------------


def _corpus_figures(stats: Sequence[CorpusStats]) -> list[_Figure]:
    plt = _plt()
    colors = plt.get_cmap("tab10").colors
    figs = []
    single = len(stats) == 1

    # Labels.
    fig, ax = plt.subplots(figsize=(8, 3.2))
    if single:
        counts = stats[0].label_counts
        ax.bar(list(counts), list(counts.values()), color=colors[0])
        ax.set_ylabel("pairs")
        ax.tick_params(axis="x", rotation=45)
    else:
        names = [s.name for s in stats]
        pos = np.array([(s.binary == 1).mean() for s in stats])
        neg = np.array([(s.binary == 0).mean() for s in stats])
        ax.bar(names, pos, color=colors[2], label="positive")
        ax.bar(names, neg, bottom=pos, color=colors[3], label="negative")
        ax.set_ylabel("share of pairs")
        ax.legend(fontsize=8)
    ax.set_title("Label distribution", fontsize=10)
    figs.append(_Figure("labels", "Label distribution", _png(fig)))

    # Tokens per statement.
    fig, ax = plt.subplots(figsize=(8, 3.2))
    top = max(int(np.percentile(np.concatenate([s.tokens for s in stats]), 99)), 5) + 1
    bins = np.arange(0, top + 1)
    for i, s in enumerate(stats):
        ax.hist(
            np.minimum(s.tokens, top),
            bins=bins,
            density=True,
            histtype="step",
            lw=1.6,
            color=colors[i % 10],
            label=f"{s.name} (mean {s.tokens.mean():.1f})",
        )
    ax.set_xlabel(f"tokens per statement (last bin: >= {top})")
    ax.set_ylabel("share")
    ax.legend(fontsize=8)
    figs.append(_Figure("tokens", "Tokens per statement", _png(fig)))

    # Lexical similarity: per label (single corpus, stacked like Fig. 2) or per corpus.
    fig, ax = plt.subplots(figsize=(8, 3.2))
    bins = np.linspace(0, 1, 21)
    if single:
        s = stats[0]
        labels = sorted(
            {lab for lab in s.labels if lab is not None},
            key=lambda lab: (-s.label_counts.get(lab, 0), lab),
        )[:10]
        data = [s.similarity[np.array([lab == x for x in s.labels])] for lab in labels]
        ax.hist(
            data,
            bins=bins,
            stacked=True,
            label=labels,
            color=[colors[i % 10] for i in range(len(labels))],
        )
        ax.set_ylabel("pairs")
    else:
        for i, s in enumerate(stats):
            ax.hist(
                s.similarity,
                bins=bins,
                density=True,
                histtype="step",
                lw=1.6,
                color=colors[i % 10],
                label=f"{s.name} (mean {s.similarity.mean():.2f})",
            )
        ax.set_ylabel("density")
    ax.set_xlabel("lexical similarity (cosine of TF-IDF character 2–4-grams)")
    ax.legend(fontsize=7, ncol=2)
    figs.append(_Figure("similarity", "Lexical similarity of the pairs", _png(fig)))

    # Sentence structure of statements and pairs.
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    width = 0.8 / len(stats)
    x = np.arange(len(STATEMENT_CLASSES))
    for i, s in enumerate(stats):
        total = max(sum(s.statement_structure.values()), 1)
        axes[0].bar(
            x + i * width - 0.4 + width / 2,
            [s.statement_structure[c] / total for c in STATEMENT_CLASSES],
            width,
            color=colors[i % 10],
            label=s.name,
        )
    axes[0].set_xticks(x, ["phrase", "1 sentence", "2 sentences", "3+"])
    axes[0].set_title("Statements", fontsize=10)
    axes[0].set_ylabel("share")
    pair_types = [k for s in stats for k in s.pair_structure]
    top_types = list(
        dict.fromkeys(
            sorted(
                pair_types,
                key=lambda t: (
                    -sum(s.pair_structure.get(t, 0) / max(len(s.pair_classes), 1) for s in stats)
                ),
            )
        )
    )[:7]
    x = np.arange(len(top_types))
    for i, s in enumerate(stats):
        total = max(len(s.pair_classes), 1)
        axes[1].bar(
            x + i * width - 0.4 + width / 2,
            [s.pair_structure.get(t, 0) / total for t in top_types],
            width,
            color=colors[i % 10],
            label=s.name,
        )
    axes[1].set_xticks(x, top_types)
    axes[1].set_title("Pairs (1 = one well-formed sentence)", fontsize=10)
    axes[0].legend(fontsize=7)
    figs.append(_Figure("structure", "Sentence structure of statements and pairs", _png(fig)))

    # Patterns.
    fig, ax = plt.subplots(figsize=(10, 3.4))
    shown = [p for p in PATTERNS if p != "other"]
    x = np.arange(len(shown))
    for i, s in enumerate(stats):
        shares = s.pattern_shares(True)
        ax.bar(
            x + i * width - 0.4 + width / 2,
            [100 * shares[p] for p in shown],
            width,
            color=colors[i % 10],
            label=f"{s.name} (other {100 * shares['other']:.0f}%)",
        )
    ax.set_xticks(x, [PATTERN_TITLES[p] for p in shown], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("% of positive pairs")
    if not any(s.pattern_shares(True)[p] for s in stats for p in shown):  # say why it is empty
        ax.text(0.5, 0.5, "no positive pair follows one of these patterns (all 'other')",
                transform=ax.transAxes, ha="center", va="center", fontsize=9)  # fmt: skip
    ax.set_title("Systematic paraphrase patterns (T13)", fontsize=10)
    ax.legend(fontsize=7)
    figs.append(
        _Figure("patterns", "Systematic paraphrase patterns among positive pairs", _png(fig))
    )
    return figs


def corpus_report(
    stats: CorpusStats | Sequence[CorpusStats],
    out: str | Path,
    *,
    title: str | None = None,
    description: str = "",
    save_png: bool = False,
) -> dict[str, Path]:
    """Write the HTML/JSON/Markdown report of one corpus or a comparison of several.

    Args:
        stats: one :class:`CorpusStats` or several (comparison).
        out: output path without suffix.
        title: page title.
        description: a sentence of context (HTML allowed).
        save_png: also write each figure as ``<out>-<figure>.png``.
    """
    stats = [stats] if isinstance(stats, CorpusStats) else list(stats)
    out = Path(out)
    summaries = [s.summary() for s in stats]
    tables = [
        _Table(
            "Overview",
            [
                "corpus",
                "lang",
                "pairs used",
                "pairs in corpus",
                "% positive",
                "tokens/statement",
                "lexical similarity",
                "sim. positives",
                "sim. negatives",
            ],
            [
                [
                    m["name"],
                    m["lang"] or "",
                    m["n_pairs"],
                    m["n_total"],
                    100 * m["binary"]["positive"] / max(m["n_pairs"], 1),
                    m["tokens_per_statement"]["mean"],
                    m["similarity"]["mean"],
                    m["similarity"]["by_label"].get("positive", {}).get("mean"),
                    m["similarity"]["by_label"].get("negative", {}).get("mean"),
                ]
                for m in summaries
            ],
            note="Lexical similarity: mean cosine of TF-IDF character 2–4-gram vectors.",
        )
    ]
    tables.append(
        _Table(
            "Sentence structure of statements (%)",
            ["corpus", "phrase", "1 well-formed sentence", "2 sentences", "3+ sentences"],
            [
                [m["name"], *(100 * m["statement_structure"][c] for c in STATEMENT_CLASSES)]
                for m in summaries
            ],
            note="Well-formed: starts with a capital letter and ends with final punctuation"
            + (
                f" and contains a verb ({stats[0].signature['verb_check']})."
                if stats[0].signature.get("verb_check")
                else " (no POS tagger: the verb test is off; turn it on with --verb-test)."
            ),
        )
    )
    # The 8 pair types with the largest summed share over the corpora.
    totals: dict[str, float] = {}
    for m in summaries:
        for t, share in m["pair_structure"].items():
            totals[t] = totals.get(t, 0.0) + share
    pair_types = sorted(totals, key=lambda t: -totals[t])[:8]
    tables.append(
        _Table(
            "Sentence structure of pairs (%)",
            ["corpus", *pair_types],
            [
                [m["name"], *(100 * m["pair_structure"].get(t, 0.0) for t in pair_types)]
                for m in summaries
            ],
        )
    )
    tables.append(
        _Table(
            "Systematic paraphrase patterns among positive pairs (%)",
            ["corpus", *(PATTERN_TITLES[p] for p in PATTERNS), "lemmatiser", "synonyms"],
            [
                [
                    m["name"],
                    *(100 * m["patterns_positive"][p] for p in PATTERNS),
                    m["signature"]["patterns"]["lemmatizer"],
                    Path(m["signature"]["patterns"]["synonyms"]).name
                    if m["signature"]["patterns"]["synonyms"]
                    else "none",
                ]
                for m in summaries
            ],
            note="First matching pattern wins, in column order ((4) before (5), as in the paper).",
        )
    )
    if len(stats) == 1:
        tables.append(
            _Table(
                "Labels", ["label", "pairs"], [[k, v] for k, v in summaries[0]["labels"].items()]
            )
        )
    sample = stats[0].signature.get("sample_size")
    intro = (description + " " if description else "") + (
        f"{len(stats)} corpus/corpora"
        + (
            f", random samples of at most {sample} pairs (seed {stats[0].signature.get('seed')})"
            if sample
            else ""
        )
        + "."
    )
    return _render(
        title or ("Corpus comparison" if len(stats) > 1 else f"Corpus statistics: {stats[0].name}"),
        intro,
        tables,
        _corpus_figures(stats),
        {"corpora": summaries},
        out,
        save_png,
    )

"""Alternative subtitle versions aligned into 15-minute segments (T2).

Pipeline (Turku journal §3.1):

1. read every SRT version of every movie/episode (a real parser: the ``srt`` package);
2. compare the versions of a title by TF-IDF char 4-gram cosine (:class:`DocumentAligner`),
   drop version pairs outside the band, and keep the *most lexically distant* pair left;
3. align the two versions by their timestamps: cut both into windows of 15 minutes of
   playing time (a subtitle belongs to the window its start time falls in);
4. keep 1–2 random segment pairs per title (both sides must have text in the window);
5. cap the number of episodes per TV series (default 10), chosen at random.

Layout of the input folder: ``ROOT/<title>/<version>.srt``; a title folder nested one level
deeper, ``ROOT/<series>/<episode>/<version>.srt``, makes ``<series>`` its series (movies have
none). A manifest (JSONL ``{"path", "title", "series"?}``) can replace the layout.

Bad files (undecodable, broken timestamps, empty) are skipped, logged and counted in the
output's ``metadata["skipped"]`` (or raise with ``on_error="raise"``).

Example:
    >>> import datetime as dt, srt
    >>> subs = [srt.Subtitle(1, dt.timedelta(minutes=1), dt.timedelta(minutes=1, seconds=2),
    ...         "Hi."), srt.Subtitle(2, dt.timedelta(minutes=16), dt.timedelta(minutes=16,
    ...         seconds=2), "Bye.")]
    >>> segment_texts(subs, minutes=15)
    {0: 'Hi.', 1: 'Bye.'}
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parakit.build.align import DocumentAligner, DocumentPair, document_pairs_to_pairset
from parakit.build.documents import DEFAULT_ENCODINGS, SkipCounter, read_text_file
from parakit.errors import DataFormatError, ParakitError
from parakit.schema import Document, PairSet


@dataclass
class SubtitleVersion:
    """One subtitle file of a title (movie or episode)."""

    title: str
    version: str
    path: str
    subtitles: list[Any]
    series: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(s.content for s in self.subtitles)


def read_srt(path: str | Path, encodings: Sequence[str] = DEFAULT_ENCODINGS) -> list[Any]:
    """Parse an SRT file into ``srt.Subtitle`` objects, sorted by start time.

    Raises:
        DataFormatError: ``E503`` undecodable, ``E504`` broken SRT (bad timestamps, garbage
            between blocks), ``E501`` no subtitle with text.
    """
    import srt

    text = read_text_file(path, encodings)
    try:
        subtitles = list(srt.parse(text))
    except (srt.SRTParseError, ValueError) as err:
        # SRTParseError reports a character offset: turn it into a line number
        line = None
        start = getattr(err, "actual_start", None)
        if isinstance(start, int):
            line = text.count("\n", 0, start) + 1
        raise DataFormatError(
            f"broken SRT block (timestamps must look like 00:01:02,345 --> 00:01:04,000): {err}",
            path=path,
            line=line,
            code="E504",
        ) from None
    subtitles = [s for s in subtitles if s.content.strip()]
    if not subtitles:
        raise DataFormatError("no subtitle with text", path=path, code="E501")
    for sub in subtitles:
        if sub.end < sub.start:
            raise DataFormatError(
                f"subtitle {sub.index} ends before it starts", path=path, code="E504"
            )
    subtitles.sort(key=lambda s: (s.start, s.end))
    return subtitles


def _layout_entries(root: Path) -> list[dict[str, Any]]:
    entries = []
    for path in sorted(root.rglob("*.srt")):
        rel = path.relative_to(root)
        if len(rel.parts) < 2:
            raise DataFormatError(
                "SRT files must be inside a title folder (ROOT/<title>/<version>.srt)",
                path=path,
                code="E502",
            )
        title = "/".join(rel.parts[:-1])
        series = "/".join(rel.parts[:-2]) or None
        entries.append({"path": str(path), "title": title, "series": series, "version": path.stem})
    return entries


def _manifest_entries(manifest: Path) -> list[dict[str, Any]]:
    from parakit.build.documents import iter_records

    entries = []
    for line, record in iter_records(manifest):
        if not isinstance(record, dict) or "path" not in record or "title" not in record:
            raise DataFormatError(
                "each manifest line needs 'path' and 'title'", path=manifest, line=line, code="E502"
            )
        path = Path(record["path"])
        if not path.is_absolute():
            path = manifest.parent / path
        entries.append(
            {
                "path": str(path),
                "title": str(record["title"]),
                "series": record.get("series"),
                "version": str(record.get("version") or path.stem),
            }
        )
    return entries


def load_versions(
    source: str | Path,
    encodings: Sequence[str] = DEFAULT_ENCODINGS,
    on_error: str = "skip",
    skips: SkipCounter | None = None,
) -> list[SubtitleVersion]:
    """Read all subtitle versions from a folder (see the module layout) or a manifest JSONL.

    Args:
        source: folder or ``.jsonl`` manifest.
        encodings: encodings tried in order for each file.
        on_error: ``skip`` (log and count bad files) or ``raise``.
        skips: counter of skipped files by reason.
    """
    if on_error not in ("skip", "raise"):
        raise ParakitError("on_error must be 'skip' or 'raise'", code="E500")
    skips = skips if skips is not None else SkipCounter()
    source = Path(source)
    if source.is_dir():
        entries = _layout_entries(source)
    elif source.is_file():
        entries = _manifest_entries(source)
    else:
        raise DataFormatError("no such folder or manifest", path=source, code="E103")
    versions = []
    for entry in entries:
        try:
            subs = read_srt(entry["path"], encodings)
        except DataFormatError as err:
            if on_error == "raise":
                raise
            reason = {"E503": "undecodable", "E504": "broken-srt", "E501": "empty"}.get(
                err.code, "bad-file"
            )
            skips.skip(reason, entry["path"], str(err))
            continue
        versions.append(
            SubtitleVersion(
                entry["title"], entry["version"], entry["path"], subs, series=entry["series"]
            )
        )
    return versions


def segment_texts(
    subtitles: Iterable[Any], minutes: float = 15.0, offset: dt.timedelta = dt.timedelta(0)
) -> dict[int, str]:
    """Texts of the ``minutes``-long windows of playing time, by window index.

    A subtitle belongs to the window its (start + ``offset``) falls in; lines are joined
    with newlines, in time order.
    """
    width = dt.timedelta(minutes=minutes)
    if width <= dt.timedelta(0):
        raise ParakitError("segment length must be positive", code="E500")
    lines: dict[int, list[str]] = {}
    for sub in subtitles:
        index = max(0, (sub.start + offset) // width)
        lines.setdefault(int(index), []).append(sub.content.strip())
    return {k: "\n".join(v) for k, v in sorted(lines.items())}


def align_lines(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int, int]]:
    """Approximate line alignment: each subtitle of ``a`` with the subtitle of ``b`` it
    overlaps most in time (pairs without overlap are left out)."""
    out = []
    j = 0
    for i, sub in enumerate(a):
        while j < len(b) and b[j].end <= sub.start:
            j += 1
        best, best_overlap = None, dt.timedelta(0)
        k = j
        while k < len(b) and b[k].start < sub.end:
            overlap = min(sub.end, b[k].end) - max(sub.start, b[k].start)
            if overlap > best_overlap:
                best, best_overlap = k, overlap
            k += 1
        if best is not None:
            out.append((i, best))
    return out


def choose_version_pair(
    versions: Sequence[SubtitleVersion], aligner: DocumentAligner
) -> tuple[SubtitleVersion, SubtitleVersion, float] | None:
    """The most lexically distant pair of versions whose cosine is inside the band."""
    best = None
    pairs = list(itertools.combinations(versions, 2))
    if not pairs:
        return None
    sims = aligner.similarity([a.text for a, _ in pairs], [b.text for _, b in pairs])
    for (a, b), sim in zip(pairs, sims, strict=True):
        if aligner.in_band(sim) and (best is None or sim < best[2]):
            best = (a, b, float(sim))
    return best


def build_subtitle_pairs(
    versions: Sequence[SubtitleVersion],
    aligner: DocumentAligner,
    segment_minutes: float = 15.0,
    min_segments: int = 1,
    max_segments: int = 2,
    max_episodes_per_series: int | None = 10,
    seed: int = 0,
    skips: SkipCounter | None = None,
    used_segments: Collection[tuple[str, int]] = (),
    priority: Mapping[str, float] | None = None,
    max_titles: int | None = None,
) -> PairSet:
    """Segment pairs of alternative subtitle versions (T2), ready for extraction.

    Args:
        versions: all versions (:func:`load_versions`); titles with one version are skipped.
        aligner: band and vectoriser settings; fitted here on all versions if not yet fitted.
        segment_minutes: segment length (15 in the paper).
        min_segments, max_segments: segments drawn per title, uniformly in this range.
        max_episodes_per_series: cap of titles per series (``None``: no cap).
        seed: random seed of segment and episode choices.
        used_segments: ``(title, segment index)`` already used (a second round draws other
            segments).
        priority: second round: only these titles, highest value first (the paper ranked
            titles by the number of candidates extracted in the first round).
        max_titles: process at most this many titles (after the series cap and priority).

    Returns:
        A PairSet of segment document pairs (document id ``<title>/<version>#<k>``), with
        ``group`` = title, ``metadata`` = version similarity, segment index and start time;
        ``metadata["skipped"]`` of the set counts skipped titles and files.
    """
    if not 1 <= min_segments <= max_segments:
        raise ParakitError("need 1 <= min_segments <= max_segments", code="E500")
    skips = skips if skips is not None else SkipCounter()
    rng = random.Random(seed)
    by_title: dict[str, list[SubtitleVersion]] = {}
    for version in versions:
        by_title.setdefault(version.title, []).append(version)
    if not hasattr(aligner, "vectorizer_"):
        aligner.fit([v.text for v in versions])
    chosen_titles = sorted(by_title)
    if max_episodes_per_series is not None:
        series: dict[str | None, list[str]] = {}
        for title in chosen_titles:
            series.setdefault(by_title[title][0].series, []).append(title)
        chosen_titles = []
        for name, titles in sorted(series.items(), key=lambda kv: str(kv[0])):
            if name is not None and len(titles) > max_episodes_per_series:
                for _ in range(len(titles) - max_episodes_per_series):
                    skips["series-cap"] += 1
                titles = sorted(rng.sample(titles, max_episodes_per_series))
            chosen_titles.extend(titles)
    if priority is not None:
        chosen_titles = sorted(
            (t for t in chosen_titles if t in priority), key=lambda t: (-priority[t], t)
        )
    else:
        chosen_titles = sorted(chosen_titles)
    if max_titles is not None:
        chosen_titles = chosen_titles[:max_titles]
    used = set(used_segments)
    pairs: list[DocumentPair] = []
    for title in chosen_titles:
        group = by_title[title]
        if len(group) < 2:
            skips.skip("single-version", f"title {title!r}")
            continue
        choice = choose_version_pair(group, aligner)
        if choice is None:
            skips.skip("no-version-pair-in-band", f"title {title!r}")
            continue
        a, b, sim = choice
        seg_a = segment_texts(a.subtitles, segment_minutes)
        seg_b = segment_texts(b.subtitles, segment_minutes)
        common = sorted(k for k in set(seg_a) & set(seg_b) if (title, k) not in used)
        if not common:
            skips.skip("no-common-segment", f"title {title!r}")
            continue
        n = min(len(common), rng.randint(min_segments, max_segments))
        for k in sorted(rng.sample(common, n)):
            start = dt.timedelta(minutes=segment_minutes * k)
            meta = {
                "title": title,
                "series": a.series,
                "segment": k,
                "start": str(start),
                "segment_minutes": segment_minutes,
            }
            doc_a = Document(
                f"{title}/{a.version}#{k}", seg_a[k], {**meta, "version": a.version, "path": a.path}
            )
            doc_b = Document(
                f"{title}/{b.version}#{k}", seg_b[k], {**meta, "version": b.version, "path": b.path}
            )
            pairs.append(
                DocumentPair(
                    doc_a,
                    doc_b,
                    sim,
                    {
                        "version_similarity": round(sim, 6),
                        "segment": k,
                        "start": str(start),
                        "versions": [a.version, b.version],
                        "n_versions": len(group),
                    },
                )
            )
    return document_pairs_to_pairset(
        pairs,
        source="subtitles",
        group=lambda dp: dp.doc1.metadata["title"],
        metadata={
            "skipped": skips.as_dict(),
            "band": [aligner.low, aligner.high],
            "segment_minutes": segment_minutes,
            "seed": seed,
        },
    )


def write_manifest(entries: Iterable[dict[str, Any]], path: str | Path) -> None:
    """Write a subtitle manifest JSONL (atomic)."""
    from parakit.io.atomic import atomic_write

    with atomic_write(path) as handle:
        for entry in entries:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")

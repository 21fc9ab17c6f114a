"""Alternative subtitle versions aligned into 15-minute segments (T2).

Pipeline (Turku journal §3.1):

1. read every SRT version of every movie/episode (a real parser: the ``srt`` package);
2. compare the versions of a title by TF-IDF char 4-gram cosine (:class:`DocumentAligner`),
   drop version pairs outside the band, and keep the *most lexically distant* pair left;
3. align the two versions by their timestamps: cut both into windows of 15 minutes of
   playing time (a subtitle belongs to the window its start time falls in);
4. keep one random segment pair per title and round (both sides must have text in the
   window; the paper: "ideally, only one 15-minute segment", a second round draws another);
5. cap the number of episodes per TV series (default 10), chosen at random.

Each segment pair carries ``metadata["alignment"]``: its lines aligned by timestamps
(:func:`align_lines`, :func:`line_rows`) as rows of character offsets, which the extraction view
of ``parakit annotate`` shows side by side; the title travels in the pair's and the
documents' metadata, through the annotation tool's import and export, so a second round can
count each title's first-round yield from the tool's own export.

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
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parakit.build.align import DocumentAligner, DocumentPair, document_pairs_to_pairset
from parakit.build.documents import DEFAULT_ENCODINGS, SkipCounter, read_text_file
from parakit.errors import DataFormatError, Errors, ParakitError
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
            Errors.E504_broken_srt_block.format(err=err), path=path, line=line
        ) from None
    subtitles = [s for s in subtitles if s.content.strip()]
    if not subtitles:
        raise DataFormatError(Errors.E501_subtitle_text, path=path)
    for sub in subtitles:
        if sub.end < sub.start:
            raise DataFormatError(
                Errors.E504_subtitle_ends_before.format(sub_index=sub.index), path=path
            )
    subtitles.sort(key=lambda s: (s.start, s.end))
    return subtitles


def _layout_entries(root: Path) -> list[dict[str, Any]]:
    entries = []
    for path in sorted(root.rglob("*.srt")):
        rel = path.relative_to(root)
        if len(rel.parts) < 2:
            raise DataFormatError(Errors.E502_srt_files_must, path=path)
        title = "/".join(rel.parts[:-1])
        series = "/".join(rel.parts[:-2]) or None
        entries.append({"path": str(path), "title": title, "series": series, "version": path.stem})
    return entries


def _manifest_entries(manifest: Path) -> list[dict[str, Any]]:
    from parakit.build.documents import iter_records

    entries = []
    for line, record in iter_records(manifest):
        if not isinstance(record, dict) or "path" not in record or "title" not in record:
            raise DataFormatError(Errors.E502_each_manifest_line, path=manifest, line=line)
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
        raise ParakitError(Errors.E500_error_must_skip)
    skips = skips if skips is not None else SkipCounter()
    source = Path(source)
    if source.is_dir():
        entries = _layout_entries(source)
    elif source.is_file():
        entries = _manifest_entries(source)
    else:
        raise DataFormatError(Errors.E103_such_folder_manifest, path=source)
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


def segment_lines(
    subtitles: Iterable[Any], minutes: float = 15.0, offset: dt.timedelta = dt.timedelta(0)
) -> dict[int, list[Any]]:
    """The subtitles of each ``minutes``-long window of playing time, by window index.

    A subtitle belongs to the window its (start + ``offset``) falls in; time order is kept.
    """
    width = dt.timedelta(minutes=minutes)
    if width <= dt.timedelta(0):
        raise ParakitError(Errors.E500_segment_length_must)
    lines: dict[int, list[Any]] = {}
    for sub in subtitles:
        index = max(0, (sub.start + offset) // width)
        lines.setdefault(int(index), []).append(sub)
    return dict(sorted(lines.items()))


def segment_texts(
    subtitles: Iterable[Any], minutes: float = 15.0, offset: dt.timedelta = dt.timedelta(0)
) -> dict[int, str]:
    """Texts of the ``minutes``-long windows of playing time, by window index: the lines of
    :func:`segment_lines` joined with newlines, in time order."""
    return {k: _join(v) for k, v in segment_lines(subtitles, minutes, offset).items()}


def _join(subtitles: Sequence[Any]) -> str:
    return "\n".join(s.content.strip() for s in subtitles)


def _line_offsets(subtitles: Sequence[Any]) -> list[tuple[int, int]]:
    """``(begin, end)`` of each line in :func:`_join` of the same subtitles."""
    out, begin = [], 0
    for sub in subtitles:
        end = begin + len(sub.content.strip())
        out.append((begin, end))
        begin = end + 1  # the newline
    return out


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


def line_rows(a: Sequence[Any], b: Sequence[Any]) -> list[list[int]]:
    """Rows of the extraction view for two segments: their lines aligned by timestamps,
    side by side (the paper: "approximately aligned line-by-line using the subtitle
    timestamps").

    A row starts at each line pair of :func:`align_lines` that moves both sides forward; lines
    without a partner (or matched out of order) stay in the row before them, lines before the
    first pair in the first row, so the rows cover both texts in order and every line can be
    selected.

    Args:
        a, b: the subtitles of one segment of each version (:func:`segment_lines`).
    Returns:
        ``[begin1, end1, begin2, end2]`` character offsets into the segment texts
        (:func:`segment_texts`), one list per row.
    """
    if not a or not b:
        return [[0, len(_join(a)), 0, len(_join(b))]]
    anchors: list[tuple[int, int]] = []
    for i, j in align_lines(a, b):
        if not anchors or (i > anchors[-1][0] and j > anchors[-1][1]):
            anchors.append((i, j))
    starts = [(0, 0), *anchors[1:]]
    ends = [(i - 1, j - 1) for i, j in starts[1:]] + [(len(a) - 1, len(b) - 1)]
    off_a, off_b = _line_offsets(a), _line_offsets(b)
    return [
        [off_a[i0][0], off_a[i1][1], off_b[j0][0], off_b[j1][1]]
        for (i0, j0), (i1, j1) in zip(starts, ends, strict=True)
    ]


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
    max_segments: int = 1,
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
        min_segments, max_segments: segments drawn per title, uniformly in this range (one
            per round by default, as in the paper).
        max_episodes_per_series: cap of titles per series (``None``: no cap).
        seed: random seed of segment and episode choices.
        used_segments: ``(title, segment index)`` already used (a second round draws other
            segments).
        priority: second round: only these titles, highest value first (the paper ranked
            titles by the number of candidates extracted in the first round); an empty table,
            or one naming none of the titles, is an error (E502), not an empty round.
        max_titles: process at most this many titles (after the series cap and priority).

    Returns:
        A PairSet of segment document pairs (document id ``<title>/<version>#<k>``), with
        ``group`` = title, ``metadata`` = title, series, version similarity, segment index,
        start time and the line alignment (``alignment``, :func:`line_rows`);
        ``metadata["skipped"]`` of the set counts skipped titles and files.
    """
    if not 1 <= min_segments <= max_segments:
        raise ParakitError(Errors.E500_need_min_segments)
    if priority is not None:
        _check_priority(priority, {v.title for v in versions})
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
        seg_a = segment_lines(a.subtitles, segment_minutes)
        seg_b = segment_lines(b.subtitles, segment_minutes)
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
                f"{title}/{a.version}#{k}",
                _join(seg_a[k]),
                {**meta, "version": a.version, "path": a.path},
            )
            doc_b = Document(
                f"{title}/{b.version}#{k}",
                _join(seg_b[k]),
                {**meta, "version": b.version, "path": b.path},
            )
            pairs.append(
                DocumentPair(
                    doc_a,
                    doc_b,
                    sim,
                    {
                        "title": title,
                        "series": a.series,
                        "version_similarity": round(sim, 6),
                        "segment": k,
                        "start": str(start),
                        "versions": [a.version, b.version],
                        "n_versions": len(group),
                        "alignment": line_rows(seg_a[k], seg_b[k]),
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


def used_segments(path: str | Path) -> set[tuple[str, int]]:
    """``(title, segment)`` of every pair of a `build subtitles` output (the first round, whose
    segments a second round does not draw again).

    Raises:
        DataFormatError: E500 a pair without title or segment.
    """
    from parakit.io import read

    used = set()
    for pair in read(path):
        title = pair.group or pair.metadata.get("title")
        segment = pair.metadata.get("segment")
        if title is None or segment is None:
            raise DataFormatError(
                Errors.E500_pair_title_group.format(pair_id=pair.id), path=path, field="segment"
            )
        used.add((str(title), int(segment)))
    return used


def title_yields(path: str | Path) -> dict[str, float]:
    """Title -> first-round yield, from a JSON object or from a pair set counted per title:
    the pair's ``metadata["title"]``, else its first document's (the annotation tool's export
    keeps the documents of `build subtitles` with their metadata), else its group. A table
    without any title is an error, not an empty second round.

    Raises:
        DataFormatError: E500/E502 a JSON table that is not numbers or is empty, a pair set
            without titles.
    """
    from collections import Counter

    from parakit.io import read
    from parakit.io._open import load_json

    if Path(path).suffix == ".json":
        data = load_json(path)
        if isinstance(data, dict):
            if not all(isinstance(v, int | float) for v in data.values()):
                raise DataFormatError(Errors.E500_yields_must_numbers, path=path)
            if not data:
                raise DataFormatError(Errors.E502_yields_table_empty_2, path=path)
            return {str(k): float(v) for k, v in data.items()}
    pairs = read(path)
    counts: Counter[str] = Counter()
    for pair in pairs:
        doc = pairs.documents.get(pair.span1.doc_id) if pair.span1 is not None else None
        title = pair.metadata.get("title") or (doc.metadata.get("title") if doc else None)
        title = title or pair.group
        if title is not None:
            counts[str(title)] += 1
    if not counts:
        why = (
            "the yields table is empty: the file holds no pairs (an export before any "
            "first-round candidate was labelled?)"
            if not len(pairs)
            else f"none of its {len(pairs)} pairs names a title (metadata 'title', its "
            "document's 'title', or its group): not candidates extracted from `parakit build "
            "subtitles` document pairs"
        )
        raise DataFormatError(why, path=path, field="title", code="E502")
    return {title: float(n) for title, n in counts.items()}


def _check_priority(priority: Mapping[str, float], titles: Collection[str]) -> None:
    """A second round needs yields, and yields of these titles: refuse an empty table or one
    naming no title at hand (it would draw nothing and look like a round without yield)."""
    if not priority:
        raise ParakitError(Errors.E502_yields_table_empty.format())
    if not any(t in priority for t in titles):
        example = next(iter(priority))
        raise ParakitError(
            Errors.E502_none_titles_yields.format(
                n_priority=len(priority),
                example=example,
                min_titles_default=min(titles, default=""),
            )
        )

import datetime as dt
import logging

import pytest
import srt

from parakit.build.align import DocumentAligner
from parakit.build.documents import SkipCounter
from parakit.build.subtitles import (
    align_lines,
    build_subtitle_pairs,
    line_rows,
    load_versions,
    read_srt,
    segment_texts,
)
from parakit.errors import DataFormatError, ParakitError

# Two versions of one episode, written for this test: lines at 0:01, 0:14:59, 0:15:00 (exact
# boundary), 0:29:30, 0:31 and 0:47 -> segments 0, 0, 1, 1, 2, 3.
VERSION_A = """1
00:00:01,000 --> 00:00:03,000
Where are you going?

2
00:14:58,500 --> 00:15:01,000
Home, I think.

3
00:15:00,000 --> 00:15:02,000
It is late already.

4
00:29:30,000 --> 00:29:33,000
We should have left earlier.

5
00:31:00,000 --> 00:31:02,000
Never mind that now.

6
00:47:10,000 --> 00:47:12,000
Good night.
"""

VERSION_B = """1
00:00:01,200 --> 00:00:03,100
Where are you off to?

2
00:14:59,000 --> 00:15:01,500
Back home, I guess.

3
00:15:00,200 --> 00:15:02,200
It's already late.

4
00:29:31,000 --> 00:29:34,000
We ought to have gone sooner.

5
00:31:00,400 --> 00:31:02,000
Forget about it.

6
00:47:10,100 --> 00:47:12,000
Sleep well.
"""

BROKEN = """1
00:00:01,000 --> 00:00:03,000
fine line

2
00:00:0X,000 -> 00:00:05,000
broken timestamp
"""


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "subs"
    (root / "Show" / "S01E01").mkdir(parents=True)
    (root / "Show" / "S01E01" / "v1.srt").write_text(VERSION_A, encoding="utf-8")
    (root / "Show" / "S01E01" / "v2.srt").write_text(VERSION_B, encoding="utf-8")
    return root


def test_authored_pair_is_cut_into_correct_15_minute_segments(corpus):
    a = read_srt(corpus / "Show" / "S01E01" / "v1.srt")
    assert segment_texts(a) == {
        0: "Where are you going?\nHome, I think.",
        1: "It is late already.\nWe should have left earlier.",
        2: "Never mind that now.",
        3: "Good night.",
    }
    versions = load_versions(corpus)
    assert [(v.title, v.series, v.version) for v in versions] == [
        ("Show/S01E01", "Show", "v1"),
        ("Show/S01E01", "Show", "v2"),
    ]
    ps = build_subtitle_pairs(versions, DocumentAligner(), min_segments=2, max_segments=2, seed=3)
    assert len(ps) == 2
    by_segment = {p.metadata["segment"]: p for p in ps}
    for k, pair in by_segment.items():
        assert pair.text1 == segment_texts(versions[0].subtitles)[k]
        assert pair.text2 == segment_texts(versions[1].subtitles)[k]
        assert pair.span1.end == len(pair.text1) and pair.group == "Show/S01E01"
        assert pair.metadata["start"] == f"0:{15 * k:02d}:00"
    if 1 in by_segment:
        assert by_segment[1].text2 == "It's already late.\nWe ought to have gone sooner."


def test_line_alignment_by_time_overlap(corpus):
    a = read_srt(corpus / "Show" / "S01E01" / "v1.srt")
    b = read_srt(corpus / "Show" / "S01E01" / "v2.srt")
    assert align_lines(a, b) == [(i, i) for i in range(6)]


def test_most_distant_version_pair_in_band_is_chosen(corpus):
    (corpus / "Show" / "S01E01" / "v3.srt").write_text(
        VERSION_A.replace("Good night.", "Good night, dear.")
    )
    versions = {v.version: v for v in load_versions(corpus)}
    fitted = DocumentAligner().fit([v.text for v in versions.values()])
    sim = {
        (a, b): fitted.similarity([versions[a].text], [versions[b].text])[0]
        for a, b in (("v1", "v2"), ("v1", "v3"), ("v2", "v3"))
    }
    assert sim[("v1", "v3")] > max(sim[("v1", "v2")], sim[("v2", "v3")])
    most_distant = min(sim, key=sim.get)
    ps = build_subtitle_pairs(list(versions.values()), DocumentAligner(), seed=0)
    assert {tuple(p.metadata["versions"]) for p in ps} == {most_distant}
    # a band that only the near-identical v1/v3 pair passes
    low = sim[("v1", "v3")] - 1e-4
    ps = build_subtitle_pairs(list(versions.values()), DocumentAligner(low=low, high=1.0))
    assert {tuple(p.metadata["versions"]) for p in ps} == {("v1", "v3")}
    # a band nothing passes: the title is skipped and counted
    ps = build_subtitle_pairs(list(versions.values()), DocumentAligner(low=0.0, high=0.01))
    assert len(ps) == 0 and ps.metadata["skipped"] == {"no-version-pair-in-band": 1}


def test_series_cap_limits_episodes(tmp_path):
    root = tmp_path / "subs"
    for e in range(5):
        for v, text in (("a", VERSION_A), ("b", VERSION_B)):
            folder = root / "Series" / f"E{e}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{v}.srt").write_text(text)
    versions = load_versions(root)
    ps = build_subtitle_pairs(
        versions, DocumentAligner(), max_episodes_per_series=3, min_segments=1, max_segments=1
    )
    assert len({p.group for p in ps}) == 3
    assert ps.metadata["skipped"]["series-cap"] == 2


def test_second_round_prefers_high_yield_titles_and_new_segments(tmp_path):
    root = tmp_path / "subs"
    for title in ("MovieA", "MovieB", "MovieC"):
        for v, text in (("a", VERSION_A), ("b", VERSION_B)):
            (root / title).mkdir(parents=True, exist_ok=True)
            (root / title / f"{v}.srt").write_text(text)
    versions = load_versions(root)
    first = build_subtitle_pairs(versions, DocumentAligner(), min_segments=1, max_segments=1)
    used = {(p.group, p.metadata["segment"]) for p in first}
    yields = {"MovieA": 2, "MovieB": 9, "MovieC": 5}
    second = build_subtitle_pairs(
        versions,
        DocumentAligner(),
        min_segments=1,
        max_segments=1,
        used_segments=used,
        priority=yields,
        max_titles=2,
    )
    assert [p.group for p in second] == ["MovieB", "MovieC"]
    assert not {(p.group, p.metadata["segment"]) for p in second} & used
    # an empty yields table, or one naming no title here, is an error, not an empty round
    for bad, words in (({}, "empty"), ({"Other": 3.0}, "'Other'")):
        with pytest.raises(ParakitError, match="E502") as err:
            build_subtitle_pairs(versions, DocumentAligner(), used_segments=used, priority=bad)
        assert words in str(err.value)


def _subs(*rows):
    return [
        srt.Subtitle(n, dt.timedelta(seconds=a), dt.timedelta(seconds=b), text)
        for n, (a, b, text) in enumerate(rows, 1)
    ]


def test_line_rows_put_lines_of_the_same_time_side_by_side():
    # a: three lines; b: two more, "Dos bis." (a's second line overlaps "Dos." more) and
    # "Extra." (overlapping nothing in a): both stay in the row before them
    a = _subs((0, 2, "One."), (3, 5, "Two."), (8, 9, "Three."))
    b = _subs((0, 2, "Uno."), (3, 4.5, "Dos."), (4.6, 5, "Dos bis."), (6, 7, "Extra."),
              (8, 9, "Tres."))  # fmt: skip
    assert align_lines(a, b) == [(0, 0), (1, 1), (2, 4)]
    text_a = "One.\nTwo.\nThree."
    text_b = "Uno.\nDos.\nDos bis.\nExtra.\nTres."
    rows = line_rows(a, b)
    # hand-computed offsets: a lines at 0-4, 5-9, 10-16; b at 0-4, 5-9, 10-18, 19-25, 26-31
    assert rows == [[0, 4, 0, 4], [5, 9, 5, 25], [10, 16, 26, 31]]
    assert [(text_a[r[0] : r[1]], text_b[r[2] : r[3]]) for r in rows] == [
        ("One.", "Uno."),
        ("Two.", "Dos.\nDos bis.\nExtra."),
        ("Three.", "Tres."),
    ]
    # two lines of a whose best partner is the same line of b share its row
    a2 = _subs((0, 2, "One."), (1.5, 3, "And one."), (3.2, 5, "Two."))
    b2 = _subs((0, 2.8, "Uno."), (2.9, 5, "Dos."))
    assert align_lines(a2, b2) == [(0, 0), (1, 0), (2, 1)]
    assert line_rows(a2, b2) == [[0, 13, 0, 4], [14, 18, 5, 9]]
    # nothing overlaps: one row with everything
    assert line_rows(a[:1], _subs((5, 6, "Later."))) == [[0, 4, 0, 6]]


def test_segment_pairs_carry_title_and_line_alignment(corpus):
    versions = load_versions(corpus)
    ps = build_subtitle_pairs(versions, DocumentAligner(), seed=0)
    assert len(ps) == 1  # one segment per title and round by default (the paper)
    pair = ps[0]
    assert pair.metadata["title"] == "Show/S01E01" and pair.metadata["series"] == "Show"
    k = pair.metadata["segment"]
    lines_a = segment_texts(versions[0].subtitles)[k].split("\n")
    lines_b = segment_texts(versions[1].subtitles)[k].split("\n")
    rows = pair.metadata["alignment"]
    assert [pair.text1[r[0] : r[1]] for r in rows] == lines_a  # one aligned line per row
    assert [pair.text2[r[2] : r[3]] for r in rows] == lines_b


def test_broken_timestamps_and_unknown_encoding_are_skipped_and_counted(corpus, caplog):
    (corpus / "Show" / "S01E01" / "broken.srt").write_text(BROKEN)
    (corpus / "Show" / "S01E01" / "latin.srt").write_bytes(
        VERSION_A.replace("Good night.", "Hyvää yötä.").encode("latin-1")
    )
    skips = SkipCounter()
    with caplog.at_level(logging.WARNING, logger="parakit.build"):
        versions = load_versions(corpus, skips=skips)
    assert sorted(v.version for v in versions) == ["v1", "v2"]
    assert skips == {"broken-srt": 1, "undecodable": 1}
    assert "broken.srt" in caplog.text and "latin.srt" in caplog.text
    with pytest.raises(DataFormatError, match=r"broken\.srt, line \d+.*E504|E504.*broken\.srt"):
        load_versions(corpus, on_error="raise")
    with pytest.raises(DataFormatError, match="E503") as err:
        read_srt(corpus / "Show" / "S01E01" / "latin.srt")
    assert "--encoding" in str(err.value)
    # with the right encoding the file reads
    subs = read_srt(corpus / "Show" / "S01E01" / "latin.srt", encodings=["utf-8", "latin-1"])
    assert subs[-1].content == "Hyvää yötä."

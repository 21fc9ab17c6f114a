import logging

import pytest

from parakit.build.align import DocumentAligner
from parakit.build.documents import SkipCounter
from parakit.build.subtitles import (
    align_lines,
    build_subtitle_pairs,
    load_versions,
    read_srt,
    segment_texts,
)
from parakit.errors import DataFormatError

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

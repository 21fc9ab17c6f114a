"""Every reader on the real corpora of the papers' authors (skipped without ../shared/data)."""

import json
from collections import Counter

import pytest

from parakit.errors import DataFormatError
from parakit.io import detect_format, read, read_etpc


def test_mrpc_train_counts(data_path):
    ps = read(data_path("mrpc/msr_paraphrase_train.txt"))
    assert detect_format(data_path("mrpc/msr_paraphrase_train.txt")) == "mrpc"
    assert len(ps) == 4076
    assert ps.label_counts()["1"] == 2753
    first = ps[0]
    # quotes inside fields are ordinary characters; the BOM is gone from the header
    assert first.text1 == (
        'Amrozi accused his brother, whom he called "the witness", of '
        "deliberately distorting his evidence."
    )
    assert first.metadata == {"sent1_id": "702876", "sent2_id": "702977"}
    assert first.id == "1"


def test_tmup_counts_and_sources(data_path):
    ps = read(data_path("tmup/tmup.tsv"))
    assert len(ps) == 655
    assert ps.label_counts()["1"] == 363 and ps.label_counts()["0"] == 292
    sources = Counter(p.source for p in ps)
    assert sources["mt"] + sources["wikipedia"] == 655 and sources["mt"] > 0
    assert ps[0].metadata["source_en"] == "Why are you coming ?"
    assert ps.lang == "ja"
    joined = read(data_path("tmup/tmup.tsv"), detokenize=True)
    assert joined[0].text1 == "なぜあなたは来ていますか？"


def test_multipit_expert_and_auto(data_path):
    train = read(data_path("multipit/expert-train.csv"))
    assert len(train) == 4458
    assert train.label_counts() == Counter({"1": 2459, "0": 1999})
    val = read(data_path("multipit/expert-val.csv"))
    assert len(val) == 555
    auto = read(data_path("multipit/auto-val.csv"))
    assert len(auto) == 215 and set(auto.label_counts()) == {None}


def test_multipit_crowd_votes_with_column_mapping(tmp_path):
    path = tmp_path / "crowd.csv"
    path.write_text("s1,s2,n_yes\na b,a c,5\nx y,x z,3\np q,r s,1\n")
    ps = read(path, format="multipit", columns={"text1": "s1", "text2": "s2"}, votes_column="n_yes")
    assert ps.scheme.name == "votes"
    assert ps.binary_labels() == [1, None, 0]
    strict = read(
        path,
        format="multipit",
        columns={"text1": "s1", "text2": "s2"},
        votes_column="n_yes",
        threshold=4,
    )
    assert strict.binary_labels() == [1, 0, 0]


def test_turku_swedish_test_and_context_spans(data_path):
    path = data_path("turku/sv-test.json")
    ps = read(path)
    assert detect_format(path) == "turku"
    assert len(ps) == 1081
    assert ps.scheme.name == "turku" and ps.lang == "sv"
    with_context = [p for p in ps if p.span1 is not None]
    assert len(with_context) == 1067  # 14 pairs have "context": null upstream
    # every span lies in its document; 2,129 of 2,134 cover their statement up to
    # whitespace/punctuation, 5 statements were edited by annotators after extraction
    assert ps.metadata["span_check"] == {
        "exact": 1201,
        "normalized": 928,
        "differ": 5,
        "no_context": 14,
    }
    assert ps.span_agreement() == ps.metadata["span_check"]
    assert ps.label_counts()["4<"] == 167
    assert len({p.group for p in ps}) == 17
    with pytest.raises(DataFormatError, match=r"record \d+, field 'context.beg\d'"):
        read(path, verify="text")


def test_turku_opus_parsebank(data_path):
    ps = read(data_path("turku/opus-pb-dev.json"))
    assert len(ps) == 4894
    counts = ps.label_counts()
    assert (counts["1"], counts["2"], counts["3"], counts["4>"]) == (1616, 1602, 667, 328)
    assert ps[0].metadata["lex_similarity"] == pytest.approx(0.0224224264665437)
    assert ps[0].source == "pb"


def test_opus_parsebank_tsv(tmp_path):
    path = tmp_path / "opus-parsebank-sample-annotated.tsv"
    path.write_text('4<\t0.5\topus\tMoi "kaikki"\tHei kaikki\n2\t0.1\tpb\ta\tb\n')
    ps = read(path, format="turku-opus-pb")
    assert [p.label for p in ps] == ["4<", "2"]
    assert ps[0].text1 == 'Moi "kaikki"' and ps[0].metadata["lex_similarity"] == 0.5


def test_etpc_with_mrpc_texts(data_path, caplog):
    folder = data_path("etpc")
    with pytest.raises(DataFormatError, match="text_pairs.xml is missing"):
        read(folder)
    ps = read_etpc(folder, mrpc=data_path("mrpc/msr_paraphrase_train.txt"))
    assert len(ps) == 4076
    info = ps.metadata["etpc"]
    assert info["missing"] == ["text_pairs.xml", "textual_paraphrases.xml"]
    assert info["label_source"] == "mrpc"
    assert "lacks text_pairs.xml, textual_paraphrases.xml" in caplog.text
    pair2 = ps[1]  # pair_id 2, an MRPC negative: its sense-preserving phenomena are present
    assert pair2.id == "2" and pair2.label == "0"
    names = [ph["type_name"] for ph in pair2.metadata["phenomena"]]
    assert names[:4] == [
        "Identity",
        "Inflectional Changes",
        "Same Polarity Substitution (contextual)",
        "Addition/Deletion",
    ]
    inflection = pair2.metadata["phenomena"][1]
    assert inflection["category"] == "Morphology" and inflection["sense_preserving"] is True
    assert inflection["s1_scope"] == [5] and inflection["s2_text"] == "sold"
    assert pair2.metadata["phenomena_annotated"] is True
    assert ps[0].metadata["phenomena_annotated"] is False  # positive: its file is missing
    negated = [p for p in ps if p.metadata.get("negation")]
    assert negated and all(p.id != "1" for p in negated)


def test_multireference_json(tmp_path):
    path = tmp_path / "refs.json"
    path.write_text(json.dumps({"I love it .": ["I adore it .", "Love it !"], "Hi": ["Hello"]}))
    ps = read(path)
    assert [(p.text1, p.text2, p.group) for p in ps] == [
        ("I love it .", "I adore it .", "src-0"),
        ("I love it .", "Love it !", "src-0"),
        ("Hi", "Hello", "src-1"),
    ]
    from parakit.io import multireference

    assert multireference(ps) == {"I love it .": ["I adore it .", "Love it !"], "Hi": ["Hello"]}
    listed = tmp_path / "refs2.json"
    listed.write_text(json.dumps([{"source": "a", "references": ["b", "c"]}]))
    assert len(read(listed, format="multipit-multiref")) == 2

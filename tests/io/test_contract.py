"""Regression tests: the minimal reproducers of issue 13 and of the fuzz runs.

Bad input never becomes wrong data: each input below was accepted silently (or raised a bare
Python exception) before; now it gives a located ParakitError with a stable code.
"""

import gzip
import json

import pytest

from parakit.errors import DataFormatError, ParakitError
from parakit.io import read


def _error(path, **options) -> DataFormatError:
    with pytest.raises(DataFormatError) as err:
        read(path, **options)
    return err.value


TURKU_ITEM = {
    "txt1": "Hello",
    "txt2": "Hi",
    "label": "4",
    "fold": 0,
    "goeswith": "g",
    "rewrites": [],
    "context": {"doc1": "d1", "beg1": 0, "end1": 5, "doc2": "d2", "beg2": 0, "end2": 2},
}


def _turku(tmp_path, items, texts=None):
    (tmp_path / "toy-texts.json").write_text(
        json.dumps(texts if texts is not None else {"d1": "Hello there.", "d2": "Hi."})
    )
    path = tmp_path / "toy-test.json"
    path.write_text(json.dumps(items))
    return path


# -- headers and quoting --------------------------------------------------------------------------


def test_repeated_header_name_is_refused_not_read_into_the_wrong_field(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("sentence1,sentence2,sentence1\na,b,1\n")
    err = _error(path)
    assert (err.code, err.line, err.field) == ("E116", 1, "sentence1")
    assert "columns 1 and 3" in str(err)
    path.write_text("sentence1,,label\na,b,1\n")
    assert _error(path).code == "E116"


def test_stray_quote_in_csv_is_reported_not_shifted(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text('sentence1,sentence2,label\na,b,1\nsay "hi",hello,1\nc,d,0\n')
    err = _error(path)
    assert (err.code, err.line) == ("E118", 3)
    path.write_text('sentence1,sentence2,label\n"a,b,1\nc,d,0\n')
    assert _error(path).code == "E118"
    path.write_text('sentence1,sentence2,label\n"a"b,c,1\n')
    assert _error(path).code == "E118"
    # a well-quoted field with a line break and doubled quotes is fine
    path.write_text('sentence1,sentence2,label\n"a ""q""\nb",c,1\nd,e,0\n')
    ps = read(path)
    assert ps[0].text1 == 'a "q"\nb' and ps[1].text1 == "d"


# RFC 4180: the last record may end without a line break. A file cut short is told by its
# structure instead: a quote left open, a last row with fewer fields than the header (issue 23.2,
# 23.8). A cut inside the last field cannot be told from a complete file.
COMPLETE_CSV = "sentence1,sentence2,label\nfirst pair,its twin,1\nsecond pair,its other twin,0"


def test_csv_without_a_final_line_break_is_read(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text(COMPLETE_CSV)
    pairs = read(path)
    assert [(p.text2, p.label) for p in pairs] == [("its twin", "1"), ("its other twin", "0")]
    path.write_text('sentence1,sentence2\na,"b, quoted"')  # a closed quote at the very end
    assert read(path)[0].text2 == "b, quoted"


@pytest.mark.parametrize(
    ("content", "code", "line"),
    [
        ("sentence1,sentence2,label\nfirst pair,its twin,1\nsecond pair,its tw", "E117", 3),
        ('sentence1,sentence2,label\nfirst pair,its twin,1\nsecond,"its tw', "E118", 3),
    ],
    ids=["short last row", "open quote"],
)
def test_file_cut_inside_its_last_record(tmp_path, content, code, line):
    path = tmp_path / "pairs.csv"
    path.write_text(content)
    err = _error(path)
    assert (err.code, err.line) == (code, line)


MRPC = (
    "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    "1\t702876\t702977\tAmrozi accused his brother.\tReferring to him, Amrozi accused him.\n"
    "0\t2108705\t2108831\tYucaipa owned Dominick's.\tYucaipa bought Dominick's in 1995."
)
TMUP = (
    "label\tsentence_A_ja\tsentence_B_ja\tsource_sentence_en\n"
    "1\t猫 が 好き\t猫 が 大好き\tI like cats\n"
    "0\t犬 が 走る\t鳥 が 飛ぶ\tA dog runs"
)
MULTIPIT = "sentence1,sentence2,label\nso tired today,i am so tired,1\nnew phone,rain again,0"


@pytest.mark.parametrize(
    ("fmt", "content", "cut"),
    [
        ("mrpc", MRPC, "\t2108831\tYucai"),
        ("tmup", TMUP, "\t犬 が 走る\t鳥"),
        ("multipit", MULTIPIT, ",rain"),
        ("tsv", MULTIPIT.replace(",", "\t"), "\train"),
    ],
)
def test_every_delimited_reader_reads_a_complete_file_and_refuses_a_cut_one(
    tmp_path, fmt, content, cut
):
    path = tmp_path / "pairs.txt"
    path.write_text(content, encoding="utf-8")
    assert len(read(path, format=fmt)) == 2  # no final line break: still the whole file
    path.write_text(content + "\n", encoding="utf-8")
    assert len(read(path, format=fmt)) == 2
    path.write_text(content[: content.index(cut) + len(cut)], encoding="utf-8")
    err = _error(path, format=fmt)
    assert (err.code, err.line) == ("E117", 3), str(err)
    assert "cut" in str(err)


def test_opus_parsebank_tsv_without_a_final_line_break(tmp_path):
    path = tmp_path / "opus.tsv"
    path.write_text("4\t0.5\tsrc\tHello there\tHi there\n2\t0.1\tsrc\tA\tB")
    assert len(read(path, format="turku-opus-pb")) == 2
    path.write_text("4\t0.5\tsrc\tHello there\tHi there\n2\t0.1\tsr")
    assert _error(path, format="turku-opus-pb").code == "E117"


def test_huge_header_is_not_echoed(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("x" * 2_000_000 + ",y\na,b\n")
    err = _error(path)
    assert err.code == "E106" and len(str(err)) < 1000


# -- types checked, never coerced -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"label": True}, "label"),
        ({"fold": 1.9}, "fold"),
        ({"fold": "abc"}, "fold"),
        ({"fold": True}, "fold"),
        ({"rewrites": ["ab"]}, "rewrites"),
        ({"txt1": 5}, "txt1"),
        ({"goeswith": 7}, "goeswith"),
        ({"context": {**TURKU_ITEM["context"], "beg1": 0.5}}, "context.beg1"),
    ],
)
def test_turku_values_are_type_checked(tmp_path, change, field):
    err = _error(_turku(tmp_path, [TURKU_ITEM, {**TURKU_ITEM, **change}]))
    assert (err.code, err.line, err.field) == ("E106", 2, field)


def test_turku_duplicate_ids_name_the_second_record(tmp_path):
    items = [{**TURKU_ITEM, "id": "a"}, {**TURKU_ITEM, "id": "b"}, {**TURKU_ITEM, "id": "a"}]
    err = _error(_turku(tmp_path, items))
    assert (err.code, err.line) == ("E102", 3) and "first seen on record 1" in str(err)


def test_opus_pb_lex_similarity_is_a_plain_decimal(tmp_path):
    item = {"label": "2", "lex-similarity": "1_0", "source": "pb", "txt1": "a", "txt2": "b"}
    path = tmp_path / "opus-pb.json"
    path.write_text(json.dumps([item]))
    err = _error(path, format="turku-opus-pb")
    assert (err.code, err.field) == ("E106", "lex-similarity")
    path.write_text(json.dumps([{**item, "lex-similarity": "0.25"}]))
    assert read(path, format="turku-opus-pb")[0].metadata["lex_similarity"] == 0.25


def test_csv_fold_is_an_integer_without_int_tricks(tmp_path):
    path = tmp_path / "pairs.tsv"
    for bad in ("1_0", "1.9", "\u0661", "-1"):
        path.write_text(f"text1\ttext2\tfold\na\tb\t{bad}\n")
        assert _error(path).field == "fold", bad
    path.write_text("text1\ttext2\tfold\na\tb\t7\n")
    assert read(path)[0].fold == 7


# -- spans and documents in canonical JSONL -------------------------------------------------------


def _jsonl(tmp_path, *lines):
    path = tmp_path / "corpus.jsonl"
    header = {"parakit": 1, "scheme": {"name": "binary"}}
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, *lines)))
    return path


DOC = {"document": {"id": "d", "text": "Hello world."}}


def _pair(**span):
    return {"id": "p", "text1": "Hello", "text2": "world", "span1": {"doc": "d", **span}}


def test_jsonl_spans_point_inside_known_documents(tmp_path):
    err = _error(_jsonl(tmp_path, DOC, _pair(begin=0, end=99)))
    assert (err.code, err.line, err.field) == ("E101", 3, "span1")
    err = _error(
        _jsonl(
            tmp_path, DOC, {**_pair(begin=0, end=5), "span1": {"doc": "x", "begin": 0, "end": 5}}
        )
    )
    assert err.code == "E101" and "'x'" in str(err)
    err = _error(_jsonl(tmp_path, DOC, DOC, _pair(begin=0, end=5)))
    assert (err.code, err.line) == ("E122", 3)
    assert read(_jsonl(tmp_path, DOC, _pair(begin=0, end=5))).verify_spans() == 1


def test_jsonl_repeated_key_nan_and_unknown_field(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"id": "a", "text1": "x", "text2": "y", "text1": "z"}\n')
    assert _error(path).code == "E105"
    path.write_text('{"id": "a", "text1": "x", "text2": "y", "metadata": {"s": NaN}}\n')
    assert _error(path).code == "E105"
    err = _error(_jsonl(tmp_path, {"id": "a", "text1": "x", "text2": "y", "labl": "1"}))
    assert (err.code, err.field) == ("E106", "labl")
    # a plain file keeps unknown keys as metadata
    path.write_text('{"id": "a", "text1": "x", "text2": "y", "score": 0.5}\n')
    assert read(path)[0].metadata == {"score": 0.5}


def test_jsonl_header_version_must_be_the_integer_1(tmp_path):
    path = tmp_path / "corpus.jsonl"
    for version in ("1", 1.0, True, 2):
        path.write_text(json.dumps({"parakit": version}) + "\n")
        assert _error(path).code in ("E106", "E107"), version


# -- texts: NUL and lone surrogates ---------------------------------------------------------------


def test_nul_and_lone_surrogates_are_refused_unless_allowed(tmp_path):
    for text in ("a\x00b", "a\ud800b"):
        err = _error(_turku(tmp_path, [{**TURKU_ITEM, "context": None, "txt1": text}]))
        assert (err.code, err.field) == ("E115", "txt1")
    path = _turku(tmp_path, [{**TURKU_ITEM, "context": None, "txt1": "a\x00b"}])
    assert read(path, allow_unsafe_text=True)[0].text1 == "a\x00b"
    csv_path = tmp_path / "pairs.csv"
    csv_path.write_bytes(b"text1,text2\na,b\nc\x00,d\n")
    assert (_error(csv_path).code, _error(csv_path).line) == ("E115", 3)


# -- every failure is a ParakitError -------------------------------------------------------------


def test_deeply_nested_json(tmp_path):
    path = tmp_path / "toy-test.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert _error(path, format="turku").code == "E105"
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id": "a", "text1": "x", "text2": "y", "metadata": ' + "[" * 5000 + "]" * 5000 + "}\n"
    )
    assert _error(path).code == "E105"


def test_texts_file_that_is_not_gzip_or_is_cut(tmp_path):
    data = tmp_path / "toy-test.json"
    data.write_text(json.dumps([TURKU_ITEM]))
    texts = tmp_path / "toy-texts.json.gz"
    texts.write_text(json.dumps({"d1": "Hello there.", "d2": "Hi."}))
    err = _error(data)
    assert err.code == "E119" and "toy-texts.json.gz" in str(err)
    texts.write_bytes(gzip.compress(b'{"d1": "Hello there.", "d2": "Hi."}')[:20])
    assert _error(data).code == "E119"


def test_texts_file_of_another_release_is_detected(tmp_path):
    items = [
        {
            **TURKU_ITEM,
            "context": {"doc1": "d1", "beg1": 0, "end1": 5, "doc2": "d2", "beg2": 0, "end2": 2},
        }
        for _ in range(3)
    ]
    items = [{**item, "id": str(i)} for i, item in enumerate(items)]
    # same document ids and lengths, other words: every span is "inside", none matches
    path = _turku(tmp_path, items, texts={"d1": "Qwrtz xyzzy.", "d2": "Ok."})
    err = _error(path)
    assert err.code == "E101" and "does not seem to belong" in str(err)
    assert len(read(path, verify="none")) == 3


def test_etpc_bad_values_are_located(tmp_path):
    folder = tmp_path / "etpc"
    folder.mkdir()
    relation = (
        "<relation><pair_id>{pid}</pair_id><type_id>1</type_id><type_name>x</type_name>"
        "<sense_preserving>yes</sense_preserving><s1_scope>{scope}</s1_scope></relation>"
    )
    mrpc = tmp_path / "msr.txt"
    mrpc.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\ta\tb\n")
    for pid, scope, field in (
        ("1", "0, x", "s1_scope"),
        ("\u00b2", "0", "pair_id"),
        ("abc", "0", "pair_id"),
    ):
        (folder / "negation.xml").write_text(f"<xml>{relation.format(pid=pid, scope=scope)}</xml>")
        with pytest.raises(DataFormatError) as err:
            read(folder, format="etpc", mrpc=mrpc)
        assert (err.value.code, err.value.line, err.value.field) == ("E106", 1, field)
    (folder / "negation.xml").write_text(
        "<xml><relation><pair_id>1</pair_id><pair_id>2</pair_id><type_id>1</type_id></relation></xml>"
    )
    with pytest.raises(DataFormatError, match="appears twice"):
        read(folder, format="etpc", mrpc=mrpc)


def test_mrpc_header_and_reader_options(tmp_path):
    path = tmp_path / "msr.txt"
    path.write_text("Quality\t#1 ID\tOther\t#1 String\t#2 String\n1\t1\t2\ta\tb\n")
    assert _error(path, format="mrpc").code == "E106"
    with pytest.raises(ParakitError) as err:
        read(path, format="mrpc", no_such_option=1)
    assert err.value.code == "E114"


def test_etpc_text_pairs_are_checked(tmp_path):
    folder = tmp_path / "etpc"
    folder.mkdir()
    pair = (
        "<text_pair><pair_id>{pid}</pair_id><sent1_raw>A b.</sent1_raw><sent2_raw>A c.</sent2_raw>"
        "<mrpc_label>1</mrpc_label><etpc_label>{label}</etpc_label></text_pair>"
    )
    path = folder / "text_pairs.xml"
    path.write_text(f"<xml>{pair.format(pid=1, label=1)}{pair.format(pid=2, label=0)}</xml>")
    ps = read(folder, format="etpc")
    assert [(p.id, p.label, p.metadata["mrpc_label"]) for p in ps] == [("1", "1", 1), ("2", "0", 1)]
    path.write_text(f"<xml>{pair.format(pid=1, label=1)}{pair.format(pid=1, label=0)}</xml>")
    assert (_error(folder, format="etpc").code, _error(folder, format="etpc").line) == ("E102", 2)
    path.write_text(f"<xml>{pair.format(pid=1, label=2)}</xml>")
    err = _error(folder, format="etpc")
    assert (err.code, err.line, err.field) == ("E201", 1, "etpc_label")
    path.write_text(f"<xml>{pair.format(pid='x', label=1)}</xml>")
    assert _error(folder, format="etpc").field == "pair_id"


# -- issue 23.8: the reader contract on held-out inputs -------------------------------------------


def test_etpc_xml_declaring_an_unknown_encoding(tmp_path):
    folder = tmp_path / "etpc"
    folder.mkdir()
    (folder / "paraphrase_types.xml").write_text(
        '<?xml version="1.0" encoding="x-nope"?>\n<xml></xml>\n'
    )
    err = _error(folder, format="etpc")
    assert err.code == "E112" and "x-nope" in str(err)


def _context_jsonl(tmp_path, *texts, verify=None):
    """Canonical JSONL: one document 'Hello there. Bye now.', pairs whose span1 covers
    'Hello there.' and whose text1 is each of ``texts``."""
    doc = {"document": {"id": "d", "text": "Hello there. Bye now."}}
    pairs = [
        {"id": f"p{i}", "text1": text, "text2": "x", "span1": {"doc": "d", "begin": 0, "end": 12}}
        for i, text in enumerate(texts)
    ]
    return _jsonl(tmp_path, doc, *pairs)


def test_jsonl_span_text_follows_the_turku_rule(tmp_path):
    """One rule for every reader with document context (schema.span_match): counted in
    metadata['span_check'], an error with verify='text', most spans differing is an error."""
    path = _context_jsonl(tmp_path, "Hello there.", "Hello  there", "Goodbye.")
    ps = read(path)
    assert ps.metadata["span_check"] == {
        "exact": 1,
        "normalized": 1,
        "differ": 1,
        "no_context": 0,
    }
    err = _error(path, verify="text")
    assert (err.code, err.line, err.field) == ("E101", 5, "span1")  # header, document, 3 pairs
    assert "'Goodbye.'" in str(err)
    most = _context_jsonl(tmp_path, "Goodbye.", "Farewell.", "See you.", "Hello there.")
    assert _error(most).code == "E101"
    assert len(read(most, verify="none")) == 4


def test_turku_and_jsonl_count_spans_alike(tmp_path):
    from parakit.io import write

    items = [
        {**TURKU_ITEM, "txt1": "Hello"},
        {**TURKU_ITEM, "txt1": "Bye", "goeswith": "h"},
    ]
    turku = read(_turku(tmp_path, items))
    assert turku.metadata["span_check"]["differ"] == 1
    turku.metadata = {}  # counted afresh by the JSONL reader, not carried in its header
    write(turku, tmp_path / "same.jsonl")
    assert read(tmp_path / "same.jsonl").metadata["span_check"] == {
        "exact": 3,
        "normalized": 0,
        "differ": 1,
        "no_context": 0,
    }

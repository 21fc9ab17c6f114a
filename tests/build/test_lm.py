import importlib.util
import math
import sys

import pytest

from parakit.build.lm import NgramLM, lm_order, load_lm
from parakit.errors import ParakitError

CORPUS = ["a b c", "a c b", "b c a d", "a b"]


@pytest.mark.parametrize("smoothing", ["kneser-ney", "add-k"])
@pytest.mark.parametrize("history", [(), ("<s>",), ("<s>", "a"), ("a", "b"), ("x", "y")])
def test_distributions_sum_to_one(smoothing, history):
    lm = NgramLM(order=3, smoothing=smoothing).fit(CORPUS)
    total = sum(lm.prob(w, history) for w in [*lm.vocabulary_, "<unk>"])
    assert total == pytest.approx(1.0, abs=1e-12)


def test_bigram_kneser_ney_by_hand():
    # sentences: <s> a b </s>, <s> a c </s>, <s> a b </s>; D = 0.75
    lm = NgramLM(order=2, discount=0.75).fit(["a b", "a c", "a b"])
    # continuation counts: b <- {a}, c <- {a}, </s> <- {b, c}, a <- {<s>} : total 5
    # vocabulary: </s>, a, b, c (+ <unk>) -> uniform 1/5
    # P1(b) = (1 - .75)/5 + .75 * 4/5 * 1/5 = 0.05 + 0.12 = 0.17
    # P(b | a) = (2 - .75)/3 + .75 * 2/3 * 0.17 = 0.416667 + 0.085 = 0.501667
    assert lm.prob("b", ["a"]) == pytest.approx(1.25 / 3 + 0.5 * 0.17)
    # P(</s> | b) = (2 - .75)/2 + .75 * 1/2 * P1(</s>); P1(</s>) = 1.25/5 + .12 = 0.37
    assert lm.prob("</s>", ["b"]) == pytest.approx(0.625 + 0.375 * 0.37)
    assert lm.log_prob("a b") == pytest.approx(
        math.log10(lm.prob("a", ["<s>"]))
        + math.log10(lm.prob("b", ["a"]))
        + math.log10(lm.prob("</s>", ["b"]))
    )


def test_lm_order_by_sentence_probability_or_per_token_by_hand():
    # the bigram model of test_bigram_kneser_ney_by_hand; P1(a) = P1(c) = 0.17, P1(</s>) = 0.37
    lm = NgramLM(order=2, discount=0.75).fit(["a b", "a c", "a b"])
    p_a = (3 - 0.75) / 3 + 0.75 * 1 / 3 * 0.17  # P(a | <s>) = 0.7925
    p_end_after_a = 0.75 * 2 / 3 * 0.37  # P(</s> | a) = 0.185: "a </s>" never seen
    p_c = (1 - 0.75) / 3 + 0.75 * 2 / 3 * 0.17  # P(c | a) = 0.168333
    p_end_after_c = (1 - 0.75) / 1 + 0.75 * 1 / 1 * 0.37  # P(</s> | c) = 0.5275
    short = math.log10(p_a * p_end_after_a)  # "a": -0.8338 over 2 predicted tokens
    longer = math.log10(p_a * p_c * p_end_after_c)  # "a c": -1.1526 over 3 tokens
    # the paper's default: the sentence probability, which favours the short sentence
    order, scores = lm_order(["a c", "a"], lm)
    assert order.tolist() == [1, 0]
    assert scores.tolist() == [pytest.approx(longer), pytest.approx(short)]
    # per token the longer sentence is the more typical one: -0.3842 > -0.4169
    order, scores = lm_order(["a c", "a"], lm, score="token")
    assert order.tolist() == [0, 1]
    assert scores.tolist() == [pytest.approx(longer / 3), pytest.approx(short / 2)]
    with pytest.raises(ParakitError, match=r"E507.*sentence or token"):
        lm_order(["a"], lm, score="perplexity")


def test_order_save_load_and_errors(tmp_path):
    lm = NgramLM(order=3).fit(["the cat sat", "the cat ran", "the dog sat", "the cat sat"])
    order, scores = lm_order(["zebra quantum flux", "the cat sat"], lm)
    assert order.tolist() == [1, 0] and scores[1] > scores[0]
    path = tmp_path / "lm.json.gz"
    lm.save(path)
    again = load_lm(path)
    assert again.log_prob("the cat ran") == pytest.approx(lm.log_prob("the cat ran"))
    with pytest.raises(ParakitError, match="E507"):
        NgramLM(order=3).fit([])
    with pytest.raises(ParakitError, match="E507"):
        NgramLM(discount=1.5).fit(["a"])
    with pytest.raises(ParakitError, match=r"E507.*model\.arpa: language model file not found"):
        load_lm(tmp_path / "model.arpa")


def test_kenlm_errors_name_the_file_or_the_missing_package(tmp_path, monkeypatch):
    bad = tmp_path / "bad.arpa"
    bad.write_text("\\data\\\nngram 1=two\n", encoding="utf-8")
    if importlib.util.find_spec("kenlm") is not None:
        with pytest.raises(ParakitError, match=r"E507.*bad\.arpa: KenLM cannot read"):
            load_lm(bad)
    monkeypatch.setitem(sys.modules, "kenlm", None)  # as if it were not installed
    with pytest.raises(ParakitError, match="E507.*pip install kenlm"):
        load_lm(bad)


# Interpolated Kneser–Ney by hand on two sentences, D = 0.75, order 4:
#   <s> a b </s>        <s> b a b </s>
# unigram continuation counts: a 2 ({<s>, b}), b 2 ({a, <s>}), </s> 1 ({b}); total 5, 3 types;
# vocabulary {</s>, a, b} + <unk> -> uniform 1/4, so P1(w) = max(c - .75, 0)/5 + .75*3/5 * 1/4
P1 = {"a": 0.3625, "b": 0.3625, "</s>": 0.1625, "<unk>": 0.1125}
# bigram counts (continuation; raw for <s> a, <s> b): <s> a 1, <s> b 1, a b 2, b </s> 1, b a 1
P2_B_A = 1.25 / 2 + 0.75 * 1 / 2 * P1["b"]  # P(b | a) = 0.7609375
P2_A_B = 0.25 / 2 + 0.75 * 2 / 2 * P1["a"]  # P(a | b) = 0.396875
P2_A_BOS = 0.25 / 2 + 0.75 * 2 / 2 * P1["a"]  # P(a | <s>) = 0.396875
P2_END_B = 0.25 / 2 + 0.75 * 2 / 2 * P1["</s>"]  # P(</s> | b) = 0.246875
P2_UNK_A = 0.75 * 1 / 2 * P1["<unk>"]  # P(<unk> | a) = 0.0421875
# trigram counts (continuation; raw for <s>-initial): <s> a b 1, <s> b a 1, a b </s> 2, b a b 1
P3_B_BOS_A = 0.25 + 0.75 * P2_B_A  # 0.820703125
P3_A_BOS_B = 0.25 + 0.75 * P2_A_B  # 0.54765625
P3_END_A_B = 1.25 / 2 + 0.75 * 1 / 2 * P2_END_B  # 0.717578125
P3_B_B_A = 0.25 + 0.75 * P2_B_A  # 0.820703125
P3_UNK_BOS_A = 0.75 * P2_UNK_A  # 0.031640625
# 4-gram raw counts: <s> a b </s> 1, <s> b a b 1, b a b </s> 1
P4_END_BOS_A_B = 0.25 + 0.75 * P3_END_A_B  # 0.78818359375
P4_B_BOS_B_A = 0.25 + 0.75 * P3_B_B_A  # 0.86552734375
P4_END_B_A_B = 0.25 + 0.75 * P3_END_A_B  # 0.78818359375


@pytest.fixture
def hand_lm():
    return NgramLM(order=4, method="whitespace").fit(["a b", "b a b"])


def test_kneser_ney_by_hand_at_every_history_length(hand_lm):
    lm = hand_lm
    for word, p in P1.items():
        assert lm.prob(word) == pytest.approx(p, abs=1e-12)
    assert lm.prob("zebra") == pytest.approx(P1["<unk>"], abs=1e-12)  # unknown -> <unk>
    assert lm.prob("a", ["<s>"]) == pytest.approx(P2_A_BOS, abs=1e-12)
    assert lm.prob("a", ["b"]) == pytest.approx(P2_A_B, abs=1e-12)
    assert lm.prob("</s>", ["b"]) == pytest.approx(P2_END_B, abs=1e-12)
    assert lm.prob("b", ["<s>", "a"]) == pytest.approx(P3_B_BOS_A, abs=1e-12)
    # the 2nd word after <s> keeps both history words (the old negative slice kept one)
    assert lm.prob("a", ["<s>", "b"]) == pytest.approx(P3_A_BOS_B, abs=1e-12)
    assert lm.prob("b", ["<s>", "b", "a"]) == pytest.approx(P4_B_BOS_B_A, abs=1e-12)
    assert lm.prob("</s>", ["b", "a", "b"]) == pytest.approx(P4_END_B_A_B, abs=1e-12)
    # only the last order - 1 = 3 words count
    assert lm.prob("</s>", ["x", "<s>", "a", "b"]) == pytest.approx(P4_END_BOS_A_B, abs=1e-12)


def test_sentence_log_probability_by_hand(hand_lm):
    lm = hand_lm
    cases = {
        "a b": P2_A_BOS * P3_B_BOS_A * P4_END_BOS_A_B,
        "b a b": P2_A_BOS * P3_A_BOS_B * P4_B_BOS_B_A * P4_END_B_A_B,  # P(b|<s>) = P(a|<s>)
        # unknown word, then a history never seen at any order: </s> falls back to P1
        "a x": P2_A_BOS * P3_UNK_BOS_A * P1["</s>"],
    }
    for sentence, p in cases.items():
        assert lm.log_prob(sentence) == pytest.approx(math.log10(p), abs=1e-12)
    assert lm.n_tokens("b a b") == 4


def test_arpa_export_holds_the_same_model(hand_lm, tmp_path):
    path = tmp_path / "hand.arpa"
    hand_lm.to_arpa(path)
    text = path.read_text()
    assert "ngram 1=5\nngram 2=5\nngram 3=4\nngram 4=3\n" in text
    # seen n-grams carry their interpolated probability, histories the back-off weight
    assert f"{math.log10(P4_B_BOS_B_A):.9f}\t<s> b a b\n" in text
    assert f"{math.log10(P3_A_BOS_B):.9f}\t<s> b a\t{math.log10(0.75):.9f}\n" in text
    assert f"{math.log10(P1['<unk>']):.9f}\t<unk>\n" in text
    assert "-99\t<s>\t" in text
    with pytest.raises(ParakitError, match="E507.*kneser-ney"):
        NgramLM(order=2, smoothing="add-k").fit(["a"]).to_arpa(tmp_path / "x.arpa")


def test_kenlm_reads_the_arpa_export_and_scores_the_same(tmp_path, data_path):
    """Real MRPC sentences as they are, punctuation glued to words ("said.", "(AP)"): KenLM
    is queried with the tokens the model was trained on (issue 29.10: untokenised queries
    differed on 60 of 60 sentences), so scores and order are parakit's own."""
    pytest.importorskip("kenlm", reason="the kenlm package is not installed (pip install kenlm)")
    from parakit.build.lm import lm_order
    from parakit.io import read

    sentences = [p.text1 for p in read(data_path("mrpc/msr_paraphrase_train.txt"))][:600]
    assert all(any(c in s for c in ",.;:'\"()") for s in sentences[500:560])
    ours = NgramLM(order=5).fit(sentences[:500])  # the default regex tokeniser
    ours.to_arpa(tmp_path / "mrpc.arpa")
    kenlm_model = load_lm(tmp_path / "mrpc.arpa")
    assert kenlm_model.tokenizer_source == "arpa"
    # training sentences and 100 unseen ones (unknown words, unseen histories)
    diffs = [abs(kenlm_model.log_prob(s) - ours.log_prob(s)) for s in sentences]
    assert max(diffs) < 1e-3  # KenLM stores float32
    assert [kenlm_model.n_tokens(s) for s in sentences] == [ours.n_tokens(s) for s in sentences]
    unseen = sentences[500:560]
    top = [set(lm_order(unseen, m)[0][:15].tolist()) for m in (ours, kenlm_model)]
    assert top[0] == top[1]


def test_kenlm_model_without_settings_is_tokenised_as_told(tmp_path):
    """An ARPA file from another tool records no tokeniser: parakit's tokeniser for the
    language by default, or the method given (whitespace for pre-tokenised text)."""
    pytest.importorskip("kenlm", reason="the kenlm package is not installed (pip install kenlm)")
    ours = NgramLM(order=3).fit(["The cat sat.", "The dog sat, then ran.", "A cat ran."])
    ours.to_arpa(tmp_path / "m.arpa")
    text = (tmp_path / "m.arpa").read_text()
    assert text.startswith("# parakit-tokenizer: ")
    foreign = tmp_path / "foreign.arpa"
    foreign.write_text(text[text.index("\\data\\") :])
    sentence = "The dog sat."
    given = load_lm(foreign)
    assert given.tokenizer_source == "given"
    assert given.log_prob(sentence) == pytest.approx(ours.log_prob(sentence), abs=1e-4)
    assert given.n_tokens(sentence) == 5  # The dog sat . </s>
    split = load_lm(foreign, method="whitespace")  # "sat." is one unknown word
    assert split.n_tokens(sentence) == 4
    assert split.log_prob(sentence) < given.log_prob(sentence)

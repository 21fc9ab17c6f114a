import math

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
    with pytest.raises(ParakitError, match="kenlm"):
        load_lm(tmp_path / "model.arpa")

import pytest
import sacrebleu

from parakit.build.quality import back_translation_qe


def test_qe_is_the_product_of_sentence_bleus():
    src = ["the cat sat on the mat today", "he went home early"]
    bt_a = ["the cat sat on the mat today", "he went home"]
    bt_b = ["a cat sat on the mat today", "he left early"]
    qe = back_translation_qe(src, [bt_a, bt_b])
    for i in range(2):
        a = sacrebleu.sentence_bleu(bt_a[i], [src[i]]).score / 100
        b = sacrebleu.sentence_bleu(bt_b[i], [src[i]]).score / 100
        assert qe[i] == pytest.approx(a * b)
    assert qe[0] > qe[1] and qe[0] < 1.0
    with pytest.raises(Exception, match="E505"):
        back_translation_qe(src, [bt_a[:1]])

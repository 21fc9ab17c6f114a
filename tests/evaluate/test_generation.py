"""Generation metrics against hand-computed values and direct SacreBLEU / bert-score outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from parakit.errors import GenerationMetricError
from parakit.evaluate.generation import (
    BertScore,
    GenerationDataset,
    GenerationEvaluator,
    align_references,
    bert_ibleu,
    bleu,
    cross_dataset_matrix,
    evaluate_generations,
    format_matrix,
    read_generations,
    reference_diversity,
    self_bleu,
    sentence_bleus,
    write_generations,
)
from parakit.io import multireference, read_multireference

NMR = Path(__file__).parent / "data" / "nmr_sample.json"


# -- BLEU family ---------------------------------------------------------------------------
def test_sentence_bleu_hand_computed():
    # p1 = 5/6, p2 = 3/5, p3 = 1/4, p4 = 0/3 -> exp smoothing 1/(2*3); BP = 1 (equal lengths)
    expected = 100 * (5 / 6 * 3 / 5 * 1 / 4 * 1 / 6) ** 0.25
    got = sentence_bleus(["the cat sat on the mat"], ["the cat is on the mat"])
    assert got[0] == pytest.approx(expected, abs=1e-6)
    assert round(expected, 2) == 37.99


def test_self_bleu_corpus_and_sentence_hand_computed():
    corpus, per_sentence = self_bleu(["a b c d", "w x y z"], ["a b c d", "p q r s"])
    # corpus counts: 4/8, 3/6, 2/4, 1/2 -> BLEU 50
    assert corpus == pytest.approx(50.0)
    assert per_sentence.tolist() == pytest.approx([100.0, 0.0])


def test_multi_reference_bleu_matches_sacrebleu():
    import sacrebleu

    refs = multireference(read_multireference(NMR))
    sources = list(refs)
    outputs = [
        "Please grant Julius Jones clemency, Governor Stitt.",
        "Austria locks down the unvaccinated",
        "Turn Bluetooth off when you don't use it.",
    ]
    ours, signature = bleu(outputs, [refs[s] for s in sources])
    streams = [[refs[s][i] for s in sources] for i in range(8)]
    direct = sacrebleu.corpus_bleu(outputs, streams)
    assert ours == pytest.approx(direct.score)
    assert signature.startswith("nrefs:8|")
    # a varying number of references: missing ones are ignored, as sacrebleu does with None
    uneven = [refs[sources[0]][:2], refs[sources[1]][:8], refs[sources[2]][:1]]
    padded = [[r[i] if i < len(r) else None for r in uneven] for i in range(8)]
    assert bleu(outputs, uneven)[0] == pytest.approx(sacrebleu.corpus_bleu(outputs, padded).score)


def test_reference_diversity_matches_direct_computation():
    import sacrebleu

    refs = multireference(read_multireference(NMR))
    got = reference_diversity(refs)
    per_source = [[sacrebleu.sentence_bleu(r, [s]).score for r in rs] for s, rs in refs.items()]
    assert got["min"] == pytest.approx(np.mean([min(x) for x in per_source]))
    assert got["avg"] == pytest.approx(np.mean([np.mean(x) for x in per_source]))
    assert got["max"] == pytest.approx(np.mean([max(x) for x in per_source]))
    assert got["n_sources"] == 3
    assert reference_diversity({"a b c d": ["a b c d", "w x y z"]})["avg"] == pytest.approx(50)


# -- BERT-iBLEU ------------------------------------------------------------------------------
def test_bert_ibleu_hand_computed():
    assert float(bert_ibleu(0.9, 0.4, beta=4)) == pytest.approx(5 / (4 / 0.9 + 1 / 0.6))
    assert float(bert_ibleu(0.9, 0.4, beta=1)) == pytest.approx(0.72)  # plain harmonic mean
    assert float(bert_ibleu(0.9, 0.4, beta=0)) == pytest.approx(0.6)  # diversity only
    # a copy (Self-BLEU 1) scores 0 whatever its BERTScore
    # ... and no overlap at all: 5 / (4 / 0.8 + 1 / 1) = 5/6
    assert bert_ibleu([0.99, 0.8], [1.0, 0.0]).tolist() == pytest.approx([0.0, 5 / 6])
    with pytest.raises(GenerationMetricError):
        bert_ibleu(0.9, 0.4, beta=-1)


def test_bert_ibleu_matches_niu_reference_formula():
    # Niu et al.'s code: ((beta * sem^-1 + 1 * (1 - lex)^-1) / (beta + 1))^-1
    rng = np.random.default_rng(0)
    sem, lex = rng.uniform(0.5, 1, 20), rng.uniform(0, 0.9, 20)
    niu = ((4.0 * sem**-1 + (1.0 - lex) ** -1) / 5.0) ** -1
    assert bert_ibleu(sem, lex, beta=4).tolist() == pytest.approx(niu.tolist())


# -- BERTScore with a local model -----------------------------------------------------------
@pytest.fixture(scope="module")
def minilm_scorer(minilm_path):
    import torch

    torch.set_num_threads(1)
    return BertScore(str(minilm_path), num_layers=4, batch_size=8, device="cpu")


def _hand_bertscore(model_path, layer, cand, ref):
    """Greedy cosine matching of layer-``layer`` token embeddings, [CLS]/[SEP] excluded."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_path))
    model = AutoModel.from_pretrained(str(model_path)).eval()

    def emb(text):
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**enc, output_hidden_states=True).hidden_states[layer][0]
        hidden = hidden[1:-1]  # drop [CLS] and [SEP] (idf weight 0 in bert-score)
        return torch.nn.functional.normalize(hidden, dim=-1)

    c, r = emb(cand), emb(ref)
    sim = c @ r.T
    p = sim.max(dim=1).values.mean().item()
    rec = sim.max(dim=0).values.mean().item()
    return p, rec, 2 * p * rec / (p + rec)


def test_bertscore_matches_hand_computation_and_bert_score(minilm_scorer, minilm_path):
    from bert_score import score as bs_score

    cands = ["Turn Bluetooth off when you don't use it.", "Austria locks down the unvaccinated"]
    refs = [
        "Turn off Bluetooth when you are not using it.",
        "Austria imposes COVID-19 lockdown that Applies only to the unvaccinated",
    ]
    ours = minilm_scorer(cands, refs)
    p, _r, f = bs_score(
        cands, refs, model_type=str(minilm_path), num_layers=4, batch_size=8, device="cpu"
    )
    assert ours["f1"].tolist() == pytest.approx(f.tolist(), abs=1e-6)
    assert ours["precision"].tolist() == pytest.approx(p.tolist(), abs=1e-6)
    hand = _hand_bertscore(minilm_path, 4, cands[0], refs[0])
    assert (ours["precision"][0], ours["recall"][0], ours["f1"][0]) == pytest.approx(hand, abs=1e-4)
    assert "L4" in minilm_scorer.signature


def test_unknown_model_needs_a_layer(tmp_path):
    with pytest.raises(GenerationMetricError, match="num_layers"):
        BertScore(str(tmp_path))(["a"], ["b"])
    with pytest.raises(GenerationMetricError, match="E918"):
        BertScore(str(tmp_path / "missing"), num_layers=2)(["a"], ["b"])


def test_evaluate_generations_table4_row(minilm_scorer):
    refs = multireference(read_multireference(NMR))
    sources = list(refs)
    outputs = [
        "Please grant Julius Jones clemency, Governor Stitt.",
        sources[1],
        "Turn Bluetooth off when you don't use it.",
    ]
    result = evaluate_generations(
        sources, outputs, [refs[s] for s in sources], scorer=minilm_scorer, beta=4
    )
    s = result.scores
    sb_corpus, sb_sent = self_bleu(outputs, sources)
    f1 = minilm_scorer(outputs, sources)["f1"]
    assert s["self_bleu"] == pytest.approx(sb_corpus)
    assert s["bertscore"] == pytest.approx(100 * f1.mean())
    expected = np.mean(bert_ibleu(f1, sb_sent / 100, beta=4)) * 100
    assert s["bert_ibleu"] == pytest.approx(expected)
    # the copied source has Self-BLEU 100 and BERT-iBLEU 0
    assert result.per_sentence[1]["self_bleu"] == pytest.approx(100)
    assert result.per_sentence[1]["bert_ibleu"] == 0.0
    assert s["bert_ibleu_of_means"] > s["bert_ibleu"]  # harmonic mean of means is higher
    assert (
        s["reference_self_bleu_min"] <= s["reference_self_bleu_avg"] <= s["reference_self_bleu_max"]
    )
    row = result.table_row("copy-ish").split("\t")
    assert row[0] == "copy-ish" and float(row[1]) == pytest.approx(s["bleu"], abs=0.01)
    assert set(result.signatures) == {"self_bleu", "bertscore", "bert_ibleu", "bleu"}


class _Echo:
    def fit(self, train, dev=None):
        # "learns" the first word of the first training target
        self.prefix_ = train[0][1].split()[0]
        return self

    def generate(self, texts):
        return [f"{self.prefix_} {t}" for t in texts]


class _FakeScorer:
    def __call__(self, c, r):
        return {"f1": np.full(len(c), 0.9)}


def test_evaluator_protocol_and_matrix(tmp_path):
    ev = GenerationEvaluator(["a b c d"], [["w x y z"]], scorer=_FakeScorer(), name="nmr")
    result = ev(_Echo().fit([("x", "so y")]), output_path=tmp_path)
    assert ev.primary_metric == "nmr_bert_ibleu" and ev.greater_is_better
    assert result["nmr_bertscore"] == pytest.approx(90.0)
    assert read_generations(tmp_path / "generations-nmr.jsonl")[0]["generation"] == "so a b c d"
    data = {
        "A": GenerationDataset(train=[("x", "alpha y")], test={"a b c": ["alpha a b c"]}),
        "B": GenerationDataset(train=[("x", "beta y")], test={"d e f": ["beta d e f"]}),
    }
    table = cross_dataset_matrix(data, _Echo, scorer=_FakeScorer(), output_dir=tmp_path)
    assert set(table) == {("A", "A"), ("A", "B"), ("B", "A"), ("B", "B")}
    # in-domain generations reproduce the reference exactly
    assert table[("A", "A")]["bleu"] == pytest.approx(100.0)
    assert table[("B", "B")]["bleu"] == pytest.approx(100.0)
    assert table[("A", "B")]["bleu"] < 100
    text = format_matrix(table)
    assert text.splitlines()[0].startswith("test \\ train\tA:BL\tA:S-B")
    assert (tmp_path / "A__on__B.jsonl").exists()


def test_generations_file_roundtrip_and_errors(tmp_path):
    path = write_generations(tmp_path / "g.jsonl", ["s1", "s2"], ["o1", "o2"], system="t5")
    rows = read_generations(path)
    assert [(r["source"], r["generation"], r["system"]) for r in rows] == [
        ("s1", "o1", "t5"),
        ("s2", "o2", "t5"),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"source": "s"}) + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"bad.jsonl, line 1, field 'generation'"):
        read_generations(bad)
    with pytest.raises(Exception, match="E916"):
        align_references(["unknown"], {"s": ["r"]})
    with pytest.raises(GenerationMetricError, match="E917"):
        self_bleu(["a"], ["a", "b"])
    assert bleu(["a b c d"], ["a b c d"])[0] == pytest.approx(100.0)


def test_a_source_with_an_empty_reference_list_is_named_not_a_crash():
    # sacrebleu cannot score a segment without any reference: it crashed (TypeError)
    class Fake:
        def __call__(self, c, r):
            return {"f1": np.full(len(c), 0.9)}

    with pytest.raises(GenerationMetricError) as err:
        evaluate_generations(
            ["a b c d", "e f g h"], ["a b c d", "e f g x"], [["a b c d"], []], scorer=Fake()
        )
    assert err.value.code == "E916" and "'e f g h'" in str(err.value)


def test_an_unknown_bleu_tokenizer_is_named_by_the_metrics_too():
    # was: SacreBLEU's KeyError from inside bleu/self_bleu (the BLEU filter checked its own)
    from parakit.errors import ParakitError
    from parakit.evaluate.generation import bleu, self_bleu

    same = ["the cat sat on the mat all day long"]
    with pytest.raises(ParakitError, match=r"E902.*'13A'.*13a"):
        bleu(same, [same], tokenize="13A")
    with pytest.raises(ParakitError, match="E902"):
        self_bleu(same, ["a dog sat"], tokenize="spaces")
    assert bleu(same, [same], tokenize="13a")[0] == pytest.approx(100.0)

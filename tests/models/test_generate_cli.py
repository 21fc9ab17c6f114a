"""``parakit generate``: prepare -> train -> run -> evaluate -> human sheets -> matrix, end to end
with a tiny model built from a config, the offline MiniLM for BERTScore and a local LLM server."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from parakit.cli import main  # noqa: E402

NMR = Path(__file__).parents[1] / "evaluate" / "data" / "nmr_sample.json"
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny_bart(tmp_path_factory) -> Path:
    from transformers import BartConfig, BartForConditionalGeneration, BertTokenizerFast

    words = sorted(
        {
            w.lower().strip(".,!?'@")
            for item in json.loads(NMR.read_text())
            for text in [item["source"], *item["references"]]
            for w in text.split()
        }
    )
    vocab = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        ".",
        ",",
        "!",
        "?",
        "'",
        "@",
        *[w for w in words if w],
    ]
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(dict.fromkeys(vocab))})
    config = BartConfig(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
        decoder_start_token_id=2,
        forced_eos_token_id=None,
    )
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("bart")
    BartForConditionalGeneration(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _pairs_csv(path: Path) -> Path:
    items = json.loads(NMR.read_text())
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sentence1", "sentence2"])
        for item in items:
            for ref in item["references"]:
                writer.writerow([item["source"], ref])
        writer.writerow([items[0]["source"], items[0]["source"]])  # a copy: filtered out
    return path


def test_full_loop(tmp_path, tiny_bart, minilm_path):
    corpus = _pairs_csv(tmp_path / "pairs.csv")
    train = tmp_path / "train.jsonl"
    assert (
        main(
            [
                "generate",
                "prepare",
                str(corpus),
                "-o",
                str(train),
                "--format",
                "multipit",
                "--directions",
                "both",
            ]
        )
        == 0
    )
    n_train = sum(1 for line in train.read_text().splitlines()[1:] if line.strip())
    assert 0 < n_train < 50  # 25 pairs both ways, minus the copy and high-BLEU pairs
    model = tmp_path / "model"
    assert (
        main(
            [
                "generate",
                "train",
                str(train),
                "-o",
                str(model),
                "--model",
                str(tiny_bart),
                "--dev",
                str(train),
                "--epochs",
                "2",
                "--batch-size",
                "16",
                "--lr",
                "1e-3",
                "--max-length",
                "32",
            ]
        )
        == 0
    )
    info = json.loads((model / "parakit_model.json").read_text())
    assert info["architecture"] == "encoder-decoder" and info["best_dev_perplexity"] > 1
    generations = tmp_path / "gen.jsonl"
    assert (
        main(
            [
                "generate",
                "run",
                str(NMR),
                "-o",
                str(generations),
                "--model",
                str(model),
                "--num-beams",
                "2",
                "--max-new-tokens",
                "8",
                "--system",
                "tiny",
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in generations.read_text().splitlines()]
    assert len(rows) == 3 and rows[0]["system"] == "tiny"
    scores, per_sentence = tmp_path / "scores.json", tmp_path / "per_sentence.csv"
    assert (
        main(
            [
                "generate",
                "evaluate",
                str(generations),
                "--references",
                str(NMR),
                "--bertscore-model",
                str(minilm_path),
                "--num-layers",
                "2",
                "-o",
                str(scores),
                "--per-sentence",
                str(per_sentence),
            ]
        )
        == 0
    )
    result = json.loads(scores.read_text())
    assert set(result["scores"]) >= {
        "bleu",
        "self_bleu",
        "bertscore",
        "bert_ibleu",
        "reference_self_bleu_avg",
    }
    assert result["signatures"]["bleu"].startswith("nrefs:8")
    # human evaluation sheets from the generations, filled by two raters, read back
    sheets = tmp_path / "sheets"
    assert (
        main(["generate", "human-export", str(generations), "-o", str(sheets), "--raters", "2"])
        == 0
    )
    for k, sheet in enumerate(sorted(sheets.glob("ratings-*.csv"))):
        table = list(csv.DictReader(sheet.open(encoding="utf-8")))
        for i, row in enumerate(table):
            row.update(fluency=str(1 + (i + k) % 5), semantic_similarity="4", diversity=str(1 + i))
        with sheet.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
    report = tmp_path / "human.json"
    assert (
        main(
            [
                "generate",
                "human-import",
                *map(str, sorted(sheets.glob("ratings-*.csv"))),
                "--key",
                str(sheets / "key.csv"),
                "--metrics",
                str(per_sentence),
                "-o",
                str(report),
            ]
        )
        == 0
    )
    human = json.loads(report.read_text())
    assert set(human["krippendorff_alpha_ordinal"]) == {
        "fluency",
        "semantic_similarity",
        "diversity",
    }
    assert "tiny" in human["mean_scores"]
    assert "self_bleu" in human["spearman_rho"]


def test_matrix_two_datasets(tmp_path, tiny_bart, minilm_path):
    items = json.loads(NMR.read_text())
    for k, item in enumerate(items[:2]):
        (tmp_path / f"test{k}.json").write_text(json.dumps([item]), encoding="utf-8")
        with (tmp_path / f"train{k}.csv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["sentence1", "sentence2"])
            writer.writerows([item["source"], ref] for ref in item["references"])
    out = tmp_path / "matrix"
    args = [
        "generate",
        "matrix",
        "--model",
        str(tiny_bart),
        "--epochs",
        "1",
        "--batch-size",
        "8",
        "--num-beams",
        "1",
        "--bertscore-model",
        str(minilm_path),
        "--num-layers",
        "2",
        "-o",
        str(out),
    ]
    for k, name in enumerate(("julius", "austria")):
        args += ["--dataset", f"{name}={tmp_path / f'train{k}.csv'}:{tmp_path / f'test{k}.json'}"]
    assert main(args) == 0
    cells = json.loads((out / "matrix.json").read_text())
    assert {(c["train"], c["test"]) for c in cells} == {
        ("julius", "julius"),
        ("julius", "austria"),
        ("austria", "julius"),
        ("austria", "austria"),
    }
    table = (out / "matrix.tsv").read_text().splitlines()
    assert table[0].split("\t")[:3] == ["test \\ train", "julius:BL", "julius:S-B"]
    assert [line.split("\t")[0] for line in table[1:]] == ["julius", "austria"]
    assert (out / "model-austria" / "parakit_model.json").exists()


def test_run_with_llm_endpoint(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from fake_openai_server import FakeOpenAI

    inputs = tmp_path / "in.txt"
    inputs.write_text("first one\nsecond one\n", encoding="utf-8")
    out = tmp_path / "llm.jsonl"
    with FakeOpenAI() as server:
        assert (
            main(
                [
                    "generate",
                    "run",
                    str(inputs),
                    "-o",
                    str(out),
                    "--llm-base-url",
                    server.url,
                    "--llm-model",
                    "m",
                    "--shots",
                    "4",
                    "--cache",
                    str(tmp_path / "cache.jsonl"),
                ]
            )
            == 0
        )
        body = server.requests[0]["body"]
    assert body["max_tokens"] == 100 and body["top_p"] == 0.9
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["generation"] for r in rows] == ["FIRST ONE", "SECOND ONE"]
    assert rows[0]["system"] == "m-4shot"


def test_learning_rate_grid_selects_on_dev_perplexity(tmp_path, tiny_bart, capsys):
    """M11: `generate train --lr a,b` trains one model per rate on the output of `prepare` and
    keeps the one with the lowest dev perplexity; the checkpoints make a rerun free."""
    corpus = _pairs_csv(tmp_path / "pairs.csv")
    train = tmp_path / "train.jsonl"
    assert main(["generate", "prepare", str(corpus), "-o", str(train), "-f", "multipit"]) == 0
    args = [
        "generate",
        "train",
        str(train),
        "-o",
        str(tmp_path / "model"),
        "--model",
        str(tiny_bart),
        "--dev",
        str(train),
        "--epochs",
        "3",
        "--batch-size",
        "16",
        "--max-length",
        "32",
        "--lr",
        "1e-6,3e-3",
        "--precision",
        "fp32",
        "--workdir",
        str(tmp_path / "work"),
    ]
    capsys.readouterr()
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    table = {
        float(line.split("\t")[0]): float(line.split("\t")[1].split()[0])
        for line in lines[lines.index("lr\tbest dev perplexity") + 1 :]
        if "\t" in line
    }
    assert set(table) == {1e-6, 3e-3}
    assert table[3e-3] < table[1e-6]  # a rate of 1e-6 barely moves a random model
    info = json.loads((tmp_path / "model" / "parakit_model.json").read_text())
    assert info["params"]["learning_rate"] == 3e-3
    assert info["best_dev_perplexity"] == pytest.approx(min(table.values()), rel=1e-3)
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["lr-0.003", "lr-1e-06"]
    # the same command again finds both runs finished: the same selection, no training
    assert main(args) == 0
    again = capsys.readouterr().out
    assert "0.003\t" in again and f"{table[3e-3]:.3f}  <- kept" in again
    # a grid without dev data cannot select
    assert main(args[:7] + args[9:]) == 2


def test_bad_input_gives_error_code(tmp_path, capsys):
    bad = tmp_path / "gen.jsonl"
    bad.write_text('{"source": "a"}\n', encoding="utf-8")
    assert main(["generate", "evaluate", str(bad)]) == 2
    assert "E915" in capsys.readouterr().err

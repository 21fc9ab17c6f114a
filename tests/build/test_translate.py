"""The MT path end to end: a tiny Marian model built from a config (its output is gibberish,
the code path is real) and an OpenAI-compatible server started by the test."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from parakit.build.lm import NgramLM, lm_order
from parakit.build.translate import (
    HFTranslator,
    MTSystem,
    OpenAITranslator,
    TranslationCache,
    Translator,
    mt_candidates,
    translate,
)
from parakit.errors import ParakitError

SOURCES = [
    "the cat sat on the mat",
    "a dog ran in the park",
    "birds fly high in the sky",
    "we like green tea",
]


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    torch = pytest.importorskip("torch")
    spm = pytest.importorskip("sentencepiece")
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("marian")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(SOURCES * 20), encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(folder / "sp"),
        vocab_size=25,
        model_type="unigram",
        bos_id=-1,
        eos_id=1,
        pad_id=-1,
        unk_id=0,
        minloglevel=2,
    )
    sp = spm.SentencePieceProcessor(model_file=str(folder / "sp.model"))
    vocab = {"<pad>": 0}
    for i in range(sp.get_piece_size()):
        vocab.setdefault(sp.id_to_piece(i), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = MarianTokenizer(
        str(folder / "sp.model"), str(folder / "sp.model"), str(folder / "vocab.json")
    )
    model_dir = folder / "model"
    tokenizer.save_pretrained(model_dir)
    config = MarianConfig(
        vocab_size=len(vocab),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=0,
        forced_eos_token_id=vocab["</s>"],
    )
    torch.manual_seed(0)
    MarianMTModel(config).save_pretrained(model_dir)
    return model_dir


class _Handler(BaseHTTPRequestHandler):
    requests: ClassVar[list] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.path.endswith("/chat/completions")
        _Handler.requests.append(body)
        text = body["messages"][-1]["content"]
        # a deterministic "translation": reversed words, upper case
        out = " ".join(reversed(text.split())).upper()
        payload = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": out},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def openai_server():
    _Handler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_compatible_server_translates_and_caches(openai_server, tmp_path):
    tr = OpenAITranslator("test-mt", openai_server, batch_size=2)
    out = translate(tr, SOURCES + SOURCES[:1], cache_dir=tmp_path, progress=False)
    assert out[0] == "MAT THE ON SAT CAT THE" and out[-1] == out[0]
    assert len(_Handler.requests) == 4  # the duplicate is sent once
    system = _Handler.requests[0]["messages"][0]["content"]
    assert "English" in system and "Japanese" in system
    assert translate(tr, SOURCES, cache_dir=tmp_path, progress=False) == out[:4]
    assert len(_Handler.requests) == 4  # all from the cache


def test_cache_resumes_after_an_interrupted_run(tmp_path):
    class Flaky(Translator):
        batch_size = 2
        calls = 0
        fail_after = 1
        signature = "flaky"

        def translate_batch(self, texts):
            Flaky.calls += 1
            if Flaky.calls > self.fail_after:
                raise RuntimeError("connection lost")
            return [t[::-1] for t in texts]

    with pytest.raises(RuntimeError):
        translate(Flaky(), SOURCES, cache_dir=tmp_path, progress=False)
    assert len(TranslationCache(tmp_path, "flaky").entries) == 2  # first batch kept
    # a crash mid-line leaves a broken last line: ignored on load
    cache_file = TranslationCache(tmp_path, "flaky").path
    with open(cache_file, "a") as handle:
        handle.write('{"src": "half')
    Flaky.fail_after = 10
    out = translate(Flaky(), SOURCES, cache_dir=tmp_path, progress=False)
    assert out == [s[::-1] for s in SOURCES]
    assert Flaky.calls == 3  # one failed batch earlier, one new batch now


def test_tiny_marian_and_openai_systems_make_mt_candidates(tiny_marian, openai_server, tmp_path):
    marian = HFTranslator(tiny_marian, batch_size=2, max_new_tokens=8, num_beams=1)
    out = marian.translate_batch(SOURCES[:2])
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    systems = [
        MTSystem("marian", marian, HFTranslator(tiny_marian, max_new_tokens=8, num_beams=1)),
        MTSystem(
            "llm",
            OpenAITranslator("test-mt", openai_server),
            OpenAITranslator("test-mt", openai_server, src_lang="Japanese", tgt_lang="English"),
        ),
    ]
    lm = NgramLM(order=3).fit(["the cat sat on the mat", "the dog sat on the mat"] * 3)
    ps = mt_candidates(
        SOURCES, systems, cache_dir=tmp_path / "cache", lm=lm, max_sources=3, progress=False
    )
    assert len(ps) == 3 and all(p.source == "mt" for p in ps)
    qes = [p.metadata["qe"] for p in ps]
    assert qes == sorted(qes, reverse=True)
    # the LM keeps the 3 most probable sources (sentence probability, the paper's default)
    order, _ = lm_order(SOURCES, lm)
    assert {p.metadata["source_en"] for p in ps} == {SOURCES[i] for i in order[:3]}
    assert "the cat sat on the mat" in {SOURCES[i] for i in order[:3]}
    llm_pair = next(p for p in ps if p.metadata["source_en"] == "the cat sat on the mat")
    assert llm_pair.text2 == "MAT THE ON SAT CAT THE"
    # reversing twice restores the words (upper-cased): BLEU 0 with case -> QE 0 here
    assert llm_pair.metadata["back_translations"][1] == "THE CAT SAT ON THE MAT"
    assert set(ps.metadata["mt"]["systems"]) == {"marian", "llm"}
    with pytest.raises(ParakitError, match="E505"):
        mt_candidates(SOURCES, systems[:1])


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ParakitError, match=r"E505.*cannot load MT model"):
        HFTranslator(tmp_path / "nope").translate_batch(["x"])


@pytest.mark.parametrize("score", ["sentence", "token"])
def test_translate_command_orders_sources_by_the_chosen_lm_score(openai_server, tmp_path, score):
    """`build translate --lm-score` (J2): the kept sources are the LM's top ones under it."""
    from parakit.cli.app import main
    from parakit.io import read

    sources = tmp_path / "sources.txt"
    sources.write_text("\n".join(SOURCES))
    lm_text = tmp_path / "lm.txt"
    lm_text.write_text("\n".join(["the cat sat on the mat", "the dog sat on the mat"] * 3))
    system = f"openai:{openai_server}#test-mt"
    code = main(
        ["build", "translate", str(sources), "-o", str(tmp_path / "mt.jsonl"),
         "--system", f"a={system},{system}", "--system", f"b={system},{system}",
         "--lm-train", str(lm_text), "--lm-score", score, "--max-sources", "2",
         "--cache-dir", str(tmp_path / "cache")]
    )  # fmt: skip
    assert code == 0
    lm = NgramLM(order=5).fit(lm_text.read_text().splitlines())
    order, _ = lm_order(SOURCES, lm, score=score)
    kept = {p.metadata["source_en"] for p in read(tmp_path / "mt.jsonl")}
    assert kept == {SOURCES[i] for i in order[:2]}

"""LLMGenerator against a local OpenAI-compatible test server started in a thread."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from parakit.models.llm import (
    FEW_SHOT_EXAMPLES,
    FEW_SHOT_INSTRUCTION,
    ZERO_SHOT_INSTRUCTION,
    LLMGenerator,
)

sys.path.insert(0, str(Path(__file__).parent))  # importlib import mode: make the helper findable
from fake_openai_server import FakeOpenAI

from parakit.errors import LLMError


@pytest.fixture()
def server():
    with FakeOpenAI() as srv:
        yield srv


def _gen(server, **kw) -> LLMGenerator:
    params = {
        "base_url": server.url,
        "model": "test-model",
        "api_key": "sk-test",
        "backoff": 0.01,
        "progress": False,
    }
    params.update(kw)
    return LLMGenerator(**params)


def test_prompts_are_the_papers_templates():
    zero = LLMGenerator("x", "m").prompt("I love it")
    assert zero == f"{ZERO_SHOT_INSTRUCTION}\n\nSentence: I love it\n\nParaphrase:"
    few = LLMGenerator("x", "m", shots=4).prompt("I love it")
    assert few.startswith(FEW_SHOT_INSTRUCTION + "\n\nSentence: Mike Bloomberg is sending")
    assert few.count("Sentence:") == 5 and few.count("Paraphrase:") == 5
    assert f"Paraphrase: {FEW_SHOT_EXAMPLES[3][1]}" in few
    assert few.endswith("Sentence: I love it\n\nParaphrase:")
    with pytest.raises(LLMError, match="E931"):
        LLMGenerator("x", "m", shots=5).prompt("a")


def test_chat_generation_sends_paper_settings(server):
    out = _gen(server).generate(["a cat sat", "the dog ran"])
    assert out == ["A CAT SAT", "THE DOG RAN"]
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert server.requests[0]["auth"] == "Bearer sk-test"
    assert (
        body["model"],
        body["temperature"],
        body["top_p"],
        body["max_tokens"],
        body["frequency_penalty"],
        body["presence_penalty"],
    ) == ("test-model", 1.0, 0.9, 100, 0.5, 0.5)
    assert body["messages"] == [
        {"role": "user", "content": LLMGenerator("x", "m").prompt("a cat sat")}
    ]


def test_completions_endpoint_and_key_from_environment(server, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-env")
    gen = _gen(server, endpoint="completions", api_key=None, api_key_env="MY_KEY", shots=4)
    assert gen.generate(["hello world"]) == ["HELLO WORLD"]
    assert server.requests[0]["path"] == "/v1/completions"
    assert server.requests[0]["auth"] == "Bearer sk-env"
    assert server.requests[0]["body"]["prompt"].startswith(FEW_SHOT_INSTRUCTION)


def test_retries_on_429_and_5xx_then_succeeds(server):
    server.failures = [429, 503, 500]
    assert _gen(server, max_retries=3).generate(["x y"]) == ["X Y"]
    assert len(server.requests) == 4


def test_gives_up_after_max_retries_and_client_errors_are_not_retried(server):
    server.failures = [500, 500, 500]
    with pytest.raises(LLMError, match="E935"):
        _gen(server, max_retries=1).generate(["x"])
    assert len(server.requests) == 2
    server.failures = [401]
    with pytest.raises(LLMError, match="E934"):
        _gen(server, max_retries=3).generate(["x"])
    assert len(server.requests) == 3


def test_cache_makes_runs_resumable(server, tmp_path):
    cache = tmp_path / "cache.jsonl"
    gen = _gen(server, cache_path=cache, max_retries=0)
    assert gen.generate(["one", "two"]) == ["ONE", "TWO"]
    assert len(server.requests) == 2
    # an interrupted run: the third request fails for good, the fourth sentence is never asked
    server.failures = [500]
    with pytest.raises(LLMError):
        gen.generate(["one", "two", "three", "four"])
    assert len(server.requests) == 3
    # a half-written last line (crash) is ignored
    with cache.open("a", encoding="utf-8") as handle:
        handle.write('{"key": "abc", "outp')
    assert gen.generate(["one", "two", "three", "four", "one"]) == [
        "ONE",
        "TWO",
        "THREE",
        "FOUR",
        "ONE",
    ]
    # only three and four were asked again; duplicates are asked once
    assert [
        r["body"]["messages"][0]["content"].rsplit("Sentence: ", 1)[1][:5]
        for r in server.requests[3:]
    ] == ["three", "four\n"]
    # a different setting is a different cache entry
    _gen(server, cache_path=cache, temperature=0.2).generate(["one"])
    assert len(server.requests) == 6


def test_rate_limit_spaces_requests(server):
    start = time.monotonic()
    _gen(server, requests_per_minute=600).generate(["a", "b", "c", "d"])  # one per 0.1 s
    # request starts are spaced by the limiter, so four requests need at least 0.3 s
    assert time.monotonic() - start >= 0.3
    assert len(server.requests) == 4


def test_concurrent_requests_keep_order(server):
    texts = [f"sentence {i}" for i in range(8)]
    assert _gen(server, concurrency=4).generate(texts) == [t.upper() for t in texts]

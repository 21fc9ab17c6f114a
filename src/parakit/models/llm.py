"""Prompted paraphrase generation through any OpenAI-compatible endpoint (M11, MultiPIT App. D).

Zero-shot and 4-shot prompts default to the paper's templates; the sampling settings default to
the paper's (temperature 1, top-p 0.9, max 100 tokens, frequency and presence penalty 0.5).
Requests are retried with exponential backoff (honouring ``Retry-After``), rate limited, and
every answer is appended to an on-disk cache, so an interrupted run resumes where it stopped and
a repeated run costs nothing.

Example:
    >>> gen = LLMGenerator(base_url="http://localhost:8000/v1", model="my-model",
    ...                    shots=4, cache_path="llm-cache.jsonl")          # doctest: +SKIP
    >>> gen.generate(["Turn off Bluetooth when you are not using it."])   # doctest: +SKIP
    >>> print(LLMGenerator(base_url="x", model="m").prompt("Hello there!"))
    Your task is to generate a diverse paraphrase for a given sentence.
    <BLANKLINE>
    Sentence: Hello there!
    <BLANKLINE>
    Paraphrase:
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from parakit.errors import Errors, LLMError

#: MultiPIT App. D.2, zero-shot.
ZERO_SHOT_INSTRUCTION = "Your task is to generate a diverse paraphrase for a given sentence."
#: MultiPIT App. D.2, few-shot.
FEW_SHOT_INSTRUCTION = (
    "You will be presented with examples of some input sentences and their "
    "paraphrases. Your task is to generate a diverse paraphrase for a given "
    "sentence."
)
#: The four in-context examples of MultiPIT App. D.2.
FEW_SHOT_EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        "Mike Bloomberg is sending $18 million from his defunct presidential campaign to the DNC .",
        "Mike Bloomberg is transferring $18M from his campaign to DNC , stretching campaign "
        "finance law .",
    ),
    (
        "Google Assistant on Android can read web pages to you",
        "Google Assist lets your Android devices read entire web pages aloud",
    ),
    (
        "Charlie Patino scored a goal on his debut !",
        "Charlie Patino’s debut and he capped it off with a goal .",
    ),
    (
        "khem birch is the difference maker for the raptors this game",
        "Khem Birch may be the MVP tonight for the Raptors .",
    ),
)
EXAMPLE_TEMPLATE = "Sentence: {sentence}\n\nParaphrase: {paraphrase}"
QUERY_TEMPLATE = "Sentence: {sentence}\n\nParaphrase:"


class _RateLimiter:
    """At most ``per_minute`` request starts per minute, spaced evenly (thread-safe)."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.next_time = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_time)
            self.next_time = start + self.interval
        if start > now:
            time.sleep(start - now)


class LLMGenerator:
    """Paraphrase by prompting a chat or completions endpoint that speaks the OpenAI API.

    Args:
        base_url: API root, e.g. ``https://api.openai.com/v1`` or a local server's ``/v1``.
        model: model name sent with each request.
        api_key: bearer token; None reads ``api_key_env``.
        api_key_env: environment variable holding the key (``OPENAI_API_KEY``).
        endpoint: ``chat`` (``/chat/completions``, the prompt as one user message) or
            ``completions`` (``/completions``, the prompt as is, like the paper's GPT-3).
        shots: 0 (zero-shot prompt) or the number of in-context examples (4 in the paper).
        examples: in-context (sentence, paraphrase) examples; the paper's four by default.
        instruction: the instruction line; the paper's zero-/few-shot instruction by default.
        temperature: sampling temperature (paper: 1).
        top_p: nucleus threshold (paper: 0.9).
        max_tokens: output limit (paper: 100).
        frequency_penalty: paper: 0.5.
        presence_penalty: paper: 0.5.
        stop: stop sequences.
        seed: sent to endpoints that support it; also seeds the backoff jitter.
        max_retries: attempts after the first on timeouts, connection errors, 429 and 5xx.
        backoff: first retry delay in seconds, doubled each time (with jitter).
        max_backoff: upper bound of one delay.
        requests_per_minute: rate limit (None: unlimited).
        timeout: seconds per request.
        cache_path: JSONL cache; answers already there are reused (resumability).
        concurrency: parallel requests (threads).
        extra_body: extra JSON fields for every request.
        progress: show a progress bar.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        endpoint: Literal["chat", "completions"] = "chat",
        shots: int = 0,
        examples: Sequence[tuple[str, str]] | None = None,
        instruction: str | None = None,
        temperature: float = 1.0,
        top_p: float = 0.9,
        max_tokens: int = 100,
        frequency_penalty: float = 0.5,
        presence_penalty: float = 0.5,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        requests_per_minute: float | None = None,
        timeout: float = 60.0,
        cache_path: str | Path | None = None,
        concurrency: int = 1,
        extra_body: dict[str, Any] | None = None,
        progress: bool = True,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.api_key_env = api_key_env
        self.endpoint = endpoint
        self.shots = shots
        self.examples = examples
        self.instruction = instruction
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.frequency_penalty = frequency_penalty
        self.presence_penalty = presence_penalty
        self.stop = stop
        self.seed = seed
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.requests_per_minute = requests_per_minute
        self.timeout = timeout
        self.cache_path = cache_path
        self.concurrency = concurrency
        self.extra_body = extra_body
        self.progress = progress

    # -- prompts ---------------------------------------------------------------------------------
    def prompt(self, sentence: str) -> str:
        """The full prompt for one sentence (App. D.2 layout: blank line between parts)."""
        if self.shots < 0:
            raise LLMError(Errors.E931_shots_must_got.format(shots=self.shots))
        examples = list(self.examples if self.examples is not None else FEW_SHOT_EXAMPLES)
        if self.shots > len(examples):
            raise LLMError(
                Errors.E931_shots_asked_but.format(shots=self.shots, n_examples=len(examples))
            )
        instruction = self.instruction or (
            FEW_SHOT_INSTRUCTION if self.shots else ZERO_SHOT_INSTRUCTION
        )
        parts = [instruction]
        parts += [
            EXAMPLE_TEMPLATE.format(sentence=s, paraphrase=p) for s, p in examples[: self.shots]
        ]
        parts.append(QUERY_TEMPLATE.format(sentence=sentence))
        return "\n\n".join(parts)

    def _payload(self, sentence: str) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "frequency_penalty": self.frequency_penalty,
            "presence_penalty": self.presence_penalty,
        }
        if self.stop:
            payload["stop"] = list(self.stop)
        if self.seed is not None:
            payload["seed"] = self.seed
        text = self.prompt(sentence)
        if self.endpoint == "chat":
            payload["messages"] = [{"role": "user", "content": text}]
        elif self.endpoint == "completions":
            payload["prompt"] = text
        else:
            raise LLMError(Errors.E932_unknown_endpoint_use.format(endpoint=self.endpoint))
        payload.update(self.extra_body or {})
        return payload

    @staticmethod
    def cache_key(payload: dict[str, Any]) -> str:
        """Hash of everything that determines an answer (model, prompt, settings)."""
        return hashlib.sha256(
            json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
        ).hexdigest()

    # -- cache -----------------------------------------------------------------------------------
    def _load_cache(self) -> dict[str, str]:
        cache: dict[str, str] = {}
        if self.cache_path is None or not Path(self.cache_path).exists():
            return cache
        with Path(self.cache_path).open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a crash; that request is simply redone
                if isinstance(row, dict) and "key" in row and "output" in row:
                    cache[row["key"]] = row["output"]
        return cache

    def _append_cache(self, handle: Any, key: str, sentence: str, output: str) -> None:
        # an append-only journal: one complete line per answer, flushed and fsynced
        handle.write(
            json.dumps({"key": key, "source": sentence, "output": output}, ensure_ascii=False)
            + "\n"
        )
        handle.flush()
        os.fsync(handle.fileno())

    # -- requests --------------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        key = self.api_key if self.api_key is not None else os.environ.get(self.api_key_env)
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    @staticmethod
    def _parse(data: Any) -> str:
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] if "message" in choice else choice["text"]
        except (KeyError, IndexError, TypeError) as err:
            raise LLMError(
                Errors.E933_unexpected_response_shape.format(data=str(data)[:200])
            ) from err
        text = (text or "").strip()
        # a completion model may go on with another "Sentence:" block; keep the first answer
        for marker in ("\nSentence:", "\n\nSentence:"):
            if marker in text:
                text = text.split(marker)[0]
        return text.strip().strip('"').strip()

    def _request(
        self, client: Any, payload: dict[str, Any], limiter: _RateLimiter, rng: random.Random
    ) -> str:
        import httpx

        url = self.base_url.rstrip("/") + (
            "/chat/completions" if self.endpoint == "chat" else "/completions"
        )
        last_error = ""
        for attempt in range(self.max_retries + 1):
            limiter.wait()
            retry_after: float | None = None
            try:
                response = client.post(url, json=payload, headers=self._headers())
            except (httpx.TimeoutException, httpx.TransportError) as err:
                last_error = f"{type(err).__name__}: {err}"
            else:
                if response.status_code == 200:
                    return self._parse(response.json())
                last_error = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code != 429 and response.status_code < 500:
                    raise LLMError(
                        Errors.E934_refused_request_check.format(url=url, last_error=last_error)
                    )
                header = response.headers.get("retry-after")
                if header:
                    try:
                        retry_after = float(header)
                    except ValueError:
                        retry_after = None
            if attempt == self.max_retries:
                break
            delay = min(self.max_backoff, self.backoff * 2**attempt)
            delay = delay * (0.5 + rng.random() / 2)  # jitter spreads concurrent retries
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.max_backoff))
            time.sleep(delay)
        raise LLMError(
            Errors.E935_failed_after_attempts.format(
                url=url, self_max_retries_1=self.max_retries + 1, last_error=last_error
            )
        )

    def generate(self, texts: Sequence[str]) -> list[str]:
        """Paraphrase each text; cached answers are reused, new ones cached as they arrive.

        Returns:
            One paraphrase per text, in order.

        Raises:
            LLMError: when a request fails for good; answers obtained before stay cached, so
                running again resumes.
        """
        import httpx
        from tqdm.auto import tqdm

        texts = list(texts)
        payloads = [self._payload(t) for t in texts]
        keys = [self.cache_key(p) for p in payloads]
        cache = self._load_cache()
        todo = [i for i, k in enumerate(keys) if k not in cache]
        # the same sentence twice is asked once
        unique: dict[str, int] = {}
        for i in todo:
            unique.setdefault(keys[i], i)
        limiter = _RateLimiter(self.requests_per_minute)
        rng = random.Random(self.seed)
        lock = threading.Lock()
        handle = None
        if self.cache_path is not None and unique:
            Path(self.cache_path).parent.mkdir(parents=True, exist_ok=True)
            handle = Path(self.cache_path).open("a", encoding="utf-8")  # noqa: SIM115
        bar = tqdm(total=len(unique), desc="prompting", disable=not self.progress)
        try:
            with httpx.Client(timeout=self.timeout) as client:

                def work(index: int) -> None:
                    output = self._request(client, payloads[index], limiter, rng)
                    with lock:
                        cache[keys[index]] = output
                        if handle is not None:
                            self._append_cache(handle, keys[index], texts[index], output)
                        bar.update(1)

                if self.concurrency <= 1:
                    for index in unique.values():
                        work(index)
                else:
                    from concurrent.futures import ThreadPoolExecutor

                    with ThreadPoolExecutor(self.concurrency) as pool:
                        for future in [pool.submit(work, i) for i in unique.values()]:
                            future.result()
        finally:
            bar.close()
            if handle is not None:
                handle.close()
        return [cache[k] for k in keys]

"""OpenAI-compatible server client: ``vllm serve`` or any compatible endpoint (DESIGN.md, Scale).

This is how a run scales past one machine: vLLM serving with tensor or pipeline parallelism
(and Ray replicas) behind one base URL. Each sample is one ``chat.completions`` request with
``n=1`` and the sample's own ``seed``, so the cache holds samples one by one; requests run on
a thread pool of ``concurrency`` workers. Transient failures (connection errors, timeouts,
408/409/429 and 5xx) are retried with exponential backoff and jitter, up to ``max_retries``.

A reply format to enforce is sent as ``response_format`` (a strict JSON schema; JSON formats
only: the OpenAI API has no choice or regex form) or, with ``structured_outputs="vllm"``, as
vLLM's own ``structured_outputs`` field (JSON, choice and regex).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cogrsi_lib.llm.backend import Backend, count_words
from cogrsi_lib.llm.reply_format import openai_response_format, vllm_structured_outputs
from cogrsi_lib.llm.types import Completion, Job

STRUCTURED_MODES = ("response_format", "vllm")
RETRY_STATUS = {408, 409, 429}
RETRY_NAMES = {"APIConnectionError", "APITimeoutError", "RateLimitError", "InternalServerError"}


def is_retriable(exc: BaseException) -> bool:
    """Transient server or network errors; client errors (400, 401, 404, ...) are not."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in RETRY_STATUS or status >= 500
    if type(exc).__name__ in RETRY_NAMES:
        return True
    return isinstance(exc, ConnectionError | TimeoutError)


class OpenAIBackend(Backend):
    """A chat-completions endpoint behind the :class:`Backend` interface.

    ``client``: an ``openai.OpenAI``-like object (built from ``base_url``/``api_key`` when
    omitted; the SDK's own retries are switched off so that ours are the only ones).
    ``extra_body`` is sent with every request (default: ``chat_template_kwargs`` with
    ``enable_thinking: False``, which vLLM serve understands). ``structured_outputs``:
    ``response_format`` or ``vllm`` (see the module docstring).
    """

    kind = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        timeout_s: float = 600.0,
        extra_body: Mapping[str, Any] | None = None,
        structured_outputs: str = "response_format",
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._model = model
        self.base_url = base_url
        self.concurrency = max(1, int(concurrency))
        self.max_retries = max(0, int(max_retries))
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.extra_body = dict(
            {"chat_template_kwargs": {"enable_thinking": False}}
            if extra_body is None
            else extra_body
        )
        if structured_outputs not in STRUCTURED_MODES:
            raise ValueError(
                f"structured_outputs must be one of {STRUCTURED_MODES}, not {structured_outputs!r}"
            )
        self.structured_outputs = structured_outputs
        self._sleep = sleep
        self.retries = 0  # retried attempts, over the backend's life
        if client is None:
            try:
                import openai
            except ImportError as e:
                raise ImportError(
                    "the openai backend needs the 'openai' extra: pip install -e '.[openai]'"
                ) from e
            key = api_key or os.environ.get(api_key_env) or "EMPTY"
            client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=timeout_s)
        self.client = client

    @property
    def model(self) -> str:
        return self._model

    def _request_kwargs(self, job: Job) -> dict[str, Any]:
        p = job.request.params
        kw: dict[str, Any] = {
            "model": self._model,
            "messages": job.request.messages_dicts(),
            "n": 1,
            "temperature": p.temperature,
            "top_p": p.top_p,
            "max_tokens": p.max_tokens,
            "seed": job.seed,
        }
        if p.stop:
            kw["stop"] = list(p.stop)
        extra = dict(self.extra_body)
        fmt = job.request.constraint
        if fmt is not None:
            if self.structured_outputs == "vllm":
                extra["structured_outputs"] = vllm_structured_outputs(fmt)
            else:
                kw["response_format"] = openai_response_format(fmt)
        if extra:
            kw["extra_body"] = extra
        return kw

    def _one(self, job: Job) -> Completion:
        kw = self._request_kwargs(job)
        attempt = 0
        while True:
            t0 = time.perf_counter()
            try:
                resp = self.client.chat.completions.create(**kw)
            except Exception as e:
                if attempt >= self.max_retries or not is_retriable(e):
                    raise
                delay = min(self.max_backoff_s, self.backoff_s * 2**attempt)
                self._sleep(delay * (0.5 + random.random() / 2))
                attempt += 1
                self.retries += 1
                continue
            latency = time.perf_counter() - t0
            choice = resp.choices[0]
            text = choice.message.content or ""
            usage = getattr(resp, "usage", None)
            if usage is not None:
                pt, ct = int(usage.prompt_tokens), int(usage.completion_tokens)
            else:  # a server without usage: count words, never leave costs unknown
                pt = sum(count_words(m["content"]) for m in kw["messages"])
                ct = count_words(text)
            return Completion(
                text=text,
                prompt_tokens=pt,
                completion_tokens=ct,
                finish_reason=str(choice.finish_reason or "stop"),
                index=job.index,
                latency_s=latency,
                model=str(getattr(resp, "model", "") or self._model),
            )

    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        if not jobs:
            return []
        if self.concurrency == 1 or len(jobs) == 1:
            return [self._one(j) for j in jobs]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs))) as pool:
            return list(pool.map(self._one, jobs))

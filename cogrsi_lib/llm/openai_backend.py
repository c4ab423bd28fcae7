"""OpenAI-compatible server client: ``vllm serve`` or any compatible endpoint (DESIGN.md, Scale).

This is how a run scales past one machine: one or more base URLs (several ``vllm serve``
replicas, each with its own tensor or data parallelism), with ``concurrency`` requests in
flight per endpoint; a request goes to the endpoint with the most free slots, so a faster
server takes more of the work. Each sample is one ``chat.completions`` request with ``n=1``
and the sample's own ``seed``, so the cache holds samples one by one. Transient failures
(connection errors, timeouts, 408/409/429 and 5xx) are retried with exponential backoff and
jitter, up to ``max_retries``.

Per-request failures never cost the batch: a request refused by the server (400, 413, 422),
or still failing after its retries, comes back as a failed completion with its reason
(:meth:`~cogrsi_lib.llm.types.Completion.failed`). Only errors that say the whole setup is
wrong (401, 403, 404: bad key, wrong model or URL) are raised, and so is an endpoint that
cannot be reached at all: before its first request each endpoint is asked for
``/v1/models``, and a refused connection, an unknown host, a timeout, or a listing without
the model raises :class:`EndpointUnavailable` naming the URL, so a dead server stops the run
at once instead of failing every request. Where the server is vLLM, a
prompt that may not fit is measured first with its ``/tokenize`` route and the model's
``max_model_len`` (from ``/v1/models``): a prompt with no room for a reply is not sent, and
``max_tokens`` is cut to the room left, as the offline engine does.

A reply format to enforce is sent as ``response_format`` (a strict JSON schema; JSON formats
only: the OpenAI API has no choice or regex form) or, with ``structured_outputs="vllm"``, as
vLLM's own ``structured_outputs`` field (JSON, choice and regex). ``extra_body`` is merged
over the default ``chat_template_kwargs: {enable_thinking: false}``, so thinking stays off
unless a setting turns it on.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt

from cogrsi_lib.llm.backend import (
    Backend,
    BackendSpec,
    ChatTemplateKwargs,
    context_failure,
    count_words,
    register_backend,
)
from cogrsi_lib.llm.flow import JobStream, ThreadStream
from cogrsi_lib.llm.reply_format import openai_response_format, vllm_structured_outputs
from cogrsi_lib.llm.types import Completion, Job, sha256_json
from cogrsi_lib.progress import phase, progress

STRUCTURED_MODES = ("response_format", "vllm")
RETRY_STATUS = {408, 409, 429}
RETRY_NAMES = {"APIConnectionError", "APITimeoutError", "RateLimitError", "InternalServerError"}
#: statuses that mean the setup is wrong for every request: raised, not recorded per item
SETUP_STATUS = {401, 403, 404}
DEFAULT_CONCURRENCY = 64
#: chat-template tokens a prompt may add to its messages (a bound, for the length pre-check)
TEMPLATE_SLACK = 256
#: prompt sizes an endpoint remembers (its /tokenize answers) before starting afresh
MAX_MEASURED = 4096
DEFAULT_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}


class EndpointUnavailable(RuntimeError):
    """An endpoint that cannot serve the run: unreachable, or not serving the model."""


def is_retriable(exc: BaseException) -> bool:
    """Transient server or network errors; client errors (400, 401, 404, ...) are not."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in RETRY_STATUS or status >= 500
    if type(exc).__name__ in RETRY_NAMES:
        return True
    return isinstance(exc, ConnectionError | TimeoutError)


def is_setup_error(exc: BaseException) -> bool:
    return getattr(exc, "status_code", None) in SETUP_STATUS


def merged_extra_body(extra_body: Mapping[str, Any] | None) -> dict[str, Any]:
    """``extra_body`` over the default that keeps thinking off (its chat template arguments
    merged key by key)."""
    out: dict[str, Any] = {k: dict(v) for k, v in DEFAULT_THINKING.items()}
    for k, v in dict(extra_body or {}).items():
        if k == "chat_template_kwargs" and isinstance(v, Mapping):
            out[k] = {**out[k], **dict(v)}
        else:
            out[k] = v
    return out


def failure_reason(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    head = f"http_{status}" if isinstance(status, int) else type(exc).__name__
    return f"{head}: {str(exc)[:300]}"


#: the environment variable naming a JSON-lines file for every stream's per-endpoint
#: throughput (:meth:`OpenAIBackend.report_throughput`)
THROUGHPUT_LOG = "COGRSI_THROUGHPUT_LOG"


class Endpoint:
    """One server: its client, its free slots, and (for vLLM) its context length."""

    def __init__(self, url: str | None, client: Any, concurrency: int, timeout_s: float):
        self.url = url
        self.client = client
        self.capacity = concurrency
        self.in_flight = 0
        self.sent = 0
        #: what the endpoint answered: requests (failed ones apart) and tokens, and the wall
        #: seconds during which it had a request in flight
        self.done = 0
        self.failed = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.busy_s = 0.0
        self._busy_since = 0.0
        self.timeout_s = timeout_s
        # a scripted stand-in (not the openai SDK) has no server to measure prompts on
        self._probe = url is not None and type(client).__module__.startswith("openai")
        self._limit: int | None = None
        self._sizes: dict[str, int | None] = {}  # prompt tokens by request body
        self._lock = threading.Lock()
        self._checked = url is None or not type(client).__module__.startswith("openai")
        self._models: Any = None  # the server's /models listing, once fetched
        self._fetched = False

    def _listing(self, timeout_s: float) -> Any:
        """The server's ``/models`` listing, fetched once (None when the route is missing or
        answers no JSON); network errors propagate."""
        with self._lock:
            if self._fetched:
                return self._models
        try:
            with urllib.request.urlopen(f"{(self.url or '').rstrip('/')}/models",
                                        timeout=timeout_s) as resp:
                listing = json.loads(resp.read())
        except (urllib.error.HTTPError, ValueError):
            listing = None  # it answers; a server without the route is not refused here
        with self._lock:
            self._models, self._fetched = listing, True
        return listing

    def check(self, model: str, timeout_s: float = 10.0) -> None:
        """Raise :class:`EndpointUnavailable` if the server cannot be reached or lists models
        without ``model``; a server without a ``/models`` route passes. Asked once."""
        with self._lock:
            if self._checked:
                return
        try:
            listing = self._listing(timeout_s)
        except OSError as e:
            why = getattr(e, "reason", e)
            text = ("connection refused" if isinstance(why, ConnectionRefusedError)
                    else "timed out" if isinstance(why, TimeoutError)
                    else f"unreachable ({why})")
            raise EndpointUnavailable(f"{text} at {self.url}") from None
        served = ([m.get("id") for m in listing.get("data", []) if isinstance(m, dict)]
                  if isinstance(listing, dict) and isinstance(listing.get("data"), list)
                  else None)
        if served is not None and model not in served:
            raise EndpointUnavailable(f"model {model!r} is not served at {self.url} "
                                      f"(it serves: {', '.join(map(str, served)) or 'none'})")
        with self._lock:
            self._checked = True

    @property
    def root(self) -> str:
        url = (self.url or "").rstrip("/")
        return url[:-3] if url.endswith("/v1") else url

    def _http(self, method: str, url: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=min(self.timeout_s, 60.0)) as resp:
            return json.loads(resp.read())

    def max_model_len(self, model: str) -> int | None:
        """The served model's context length, when the server says it (vLLM does)."""
        with self._lock:
            if not self._probe or self._limit is not None:
                return self._limit
        try:
            listing = self._listing(min(self.timeout_s, 60.0))
            found = [m.get("max_model_len") for m in listing.get("data", [])
                     if m.get("id") == model]
            limit = int(found[0]) if found and found[0] else None
        except (OSError, ValueError, AttributeError, TypeError):
            limit = None
        with self._lock:
            self._limit = limit
            self._probe = limit is not None
        return limit

    def count_tokens(self, model: str, messages: list[dict[str, str]],
                     chat_template_kwargs: Mapping[str, Any] | None) -> int | None:
        """The prompt's tokens after the chat template, from vLLM's ``/tokenize``; measured
        once per prompt (the samples of a request share it)."""
        body: dict[str, Any] = {"model": model, "messages": messages,
                                "add_generation_prompt": True}
        if chat_template_kwargs:
            body["chat_template_kwargs"] = dict(chat_template_kwargs)
        key = sha256_json(body)
        with self._lock:
            if key in self._sizes:
                return self._sizes[key]
        try:
            n: int | None = int(self._http("POST", f"{self.root}/tokenize", body)["count"])
        except (OSError, ValueError, KeyError, TypeError):
            n = None
        with self._lock:
            if len(self._sizes) >= MAX_MEASURED:
                self._sizes.clear()
            self._sizes[key] = n
        return n


class OpenAIBackend(Backend):
    """Chat-completions endpoints behind the :class:`Backend` interface.

    ``base_url``: one URL or a list of them (replicas serving the same model).
    ``concurrency``: requests in flight per endpoint. ``client``/``clients``: ``openai.OpenAI``
    -like objects, one per endpoint (built from the URLs when omitted; the SDK's own retries
    are off so that ours are the only ones). ``structured_outputs``: ``response_format`` or
    ``vllm`` (see the module docstring). The cache identity holds the model name, the sorted
    endpoint URLs, the merged ``extra_body`` and the structured-output mode.
    """

    kind = "openai"
    concurrent = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | Sequence[str] | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = DEFAULT_CONCURRENCY,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        timeout_s: float = 600.0,
        extra_body: Mapping[str, Any] | None = None,
        structured_outputs: str = "response_format",
        client: Any = None,
        clients: Sequence[Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._model = model
        urls = [base_url] if base_url is None or isinstance(base_url, str) else list(base_url)
        if not urls:
            raise ValueError("base_url: give at least one endpoint")
        self.base_urls = urls
        self.concurrency = max(1, int(concurrency))
        self.max_retries = max(0, int(max_retries))
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.extra_body = merged_extra_body(extra_body)
        if structured_outputs not in STRUCTURED_MODES:
            raise ValueError(
                f"structured_outputs must be one of {STRUCTURED_MODES}, not {structured_outputs!r}"
            )
        self.structured_outputs = structured_outputs
        self._sleep = sleep
        self.retries = 0  # retried attempts, over the backend's life
        if clients is None:
            clients = [client] if client is not None else [
                self._make_client(u, api_key, api_key_env, timeout_s) for u in urls]
        if len(clients) != len(urls):
            raise ValueError(f"{len(clients)} clients for {len(urls)} endpoints")
        self.endpoints = [Endpoint(u, c, self.concurrency, timeout_s)
                          for u, c in zip(urls, clients, strict=True)]
        self._free = threading.Condition()
        self._next = 0
        settings = {"endpoints": sorted(str(u) for u in urls), "extra_body": self.extra_body,
                    "structured_outputs": structured_outputs}
        self._identity = f"{self.kind}:{model}#{sha256_json(settings)[:16]}"

    @staticmethod
    def _make_client(url: str | None, api_key: str | None, api_key_env: str,
                     timeout_s: float) -> Any:
        try:
            import openai
        except ImportError as e:
            raise ImportError(
                "the openai backend needs the 'openai' extra: pip install -e '.[openai]'"
            ) from e
        key = api_key or os.environ.get(api_key_env) or "EMPTY"
        return openai.OpenAI(base_url=url, api_key=key, max_retries=0, timeout=timeout_s)

    @property
    def model(self) -> str:
        return self._model

    @property
    def identity(self) -> str:
        return self._identity

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

    # -- endpoints -------------------------------------------------------------------------
    def _acquire(self) -> Endpoint:
        with self._free:
            while True:
                free = [e for e in self.endpoints if e.in_flight < e.capacity]
                if free:
                    most = max(e.capacity - e.in_flight for e in free)
                    best = [e for e in free if e.capacity - e.in_flight == most]
                    ep = best[self._next % len(best)]
                    self._next += 1
                    if ep.in_flight == 0:
                        ep._busy_since = time.perf_counter()
                    ep.in_flight += 1
                    ep.sent += 1
                    return ep
                self._free.wait()

    def _release(self, ep: Endpoint, c: Completion | None) -> None:
        with self._free:
            ep.in_flight -= 1
            if ep.in_flight == 0:
                ep.busy_s += time.perf_counter() - ep._busy_since
            if c is not None:
                ep.done += 1
                ep.failed += not c.ok
                ep.prompt_tokens += c.prompt_tokens
                ep.completion_tokens += c.completion_tokens
            self._free.notify()

    def throughput(self) -> list[dict[str, Any]]:
        """Per endpoint, in the order given: requests answered (``failed`` among them), their
        tokens, the seconds it had work in flight, and completion tokens and requests per
        busy second."""
        with self._free:
            return [with_rates({"endpoint": str(e.url), "requests": e.done,
                                "failed": e.failed, "prompt_tokens": e.prompt_tokens,
                                "completion_tokens": e.completion_tokens,
                                "busy_s": round(e.busy_s, 3)})
                    for e in self.endpoints]

    def report_throughput(self, since: Sequence[dict[str, Any]] | None = None) -> None:
        """Log each endpoint's throughput (:meth:`throughput`, less the rows ``since``) and,
        when ``COGRSI_THROUGHPUT_LOG`` names a file, append it there as JSON lines (the
        rehearsal's budget reads them)."""
        rows = self.throughput()
        if since is not None:
            rows = [throughput_between(a, b) for a, b in zip(since, rows, strict=True)]
        rows = [r for r in rows if r["requests"]]
        for r in rows:
            phase("%s at %s: %d requests (%d failed), %d completion tokens in %.1f busy s "
                  "(%.1f tokens/s)", self._model, r["endpoint"], r["requests"], r["failed"],
                  r["completion_tokens"], r["busy_s"], r["completion_tokens_per_s"])
        path = os.environ.get(THROUGHPUT_LOG)
        if path and rows:
            with open(path, "a", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps({"model": self._model, **r}) + "\n")

    def _fit(self, ep: Endpoint, kw: dict[str, Any]) -> tuple[str, int]:
        """("", 0) when the prompt fits as sent; else a failure reason, or "" and a smaller
        ``max_tokens`` written into ``kw``."""
        limit = ep.max_model_len(self._model)
        if limit is None:
            return "", 0
        size = sum(len(m["content"].encode("utf-8")) for m in kw["messages"])
        if size + TEMPLATE_SLACK + kw["max_tokens"] <= limit:  # a token is at least a byte
            return "", 0
        n = ep.count_tokens(self._model, kw["messages"],
                            kw.get("extra_body", {}).get("chat_template_kwargs"))
        if n is None:
            return "", 0
        if n >= limit:
            return context_failure(n, limit), n
        kw["max_tokens"] = min(kw["max_tokens"], limit - n)
        return "", n

    def _one(self, job: Job) -> Completion:
        ep = self._acquire()
        c = None
        try:
            c = self._on(ep, job)
            return c
        finally:
            self._release(ep, c)

    def _on(self, ep: Endpoint, job: Job) -> Completion:
        kw = self._request_kwargs(job)
        reason, n = self._fit(ep, kw)
        if reason:
            return Completion.failed(job, reason, self._model, prompt_tokens=n)
        attempt = 0
        while True:
            t0 = time.perf_counter()
            try:
                resp = ep.client.chat.completions.create(**kw)
            except Exception as e:
                if is_setup_error(e):
                    raise
                if attempt >= self.max_retries or not is_retriable(e):
                    return Completion.failed(job, failure_reason(e), self._model)
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
                usage_reported=usage is not None,
            )

    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        if not jobs:
            return []
        for ep in self.endpoints:
            ep.check(self._model)
        width = min(len(jobs), sum(e.capacity for e in self.endpoints))
        with progress(desc=f"{self._model} replies", total=len(jobs), unit="reply") as bar:

            def one(job: Job) -> Completion:
                c = self._one(job)
                bar.update(1)
                return c

            if width == 1:
                return [one(j) for j in jobs]
            with ThreadPoolExecutor(max_workers=width) as pool:
                return list(pool.map(one, jobs))

    def _quiet(self, jobs: Sequence[Job]) -> list[Completion]:
        """:meth:`complete` without its progress bar or pool: a stream's worker's job."""
        for ep in self.endpoints:
            ep.check(self._model)
        return [self._one(j) for j in jobs]

    def stream(self) -> JobStream:
        """Every ready job sent at once, each endpoint kept at its ``concurrency`` in flight
        (the stage's own bar counts the items); its endpoints' throughput is reported when
        it closes (:meth:`report_throughput`)."""
        backend, start = self, self.throughput()

        class Reported(ThreadStream):
            def close(self) -> None:
                super().close()
                backend.report_throughput(since=start)

        return Reported(self._quiet, max_workers=sum(e.capacity for e in self.endpoints))


def throughput_between(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """An endpoint's :meth:`OpenAIBackend.throughput` row for what it did between two rows."""
    out: dict[str, Any] = {"endpoint": after["endpoint"]}
    for k in ("requests", "failed", "prompt_tokens", "completion_tokens"):
        out[k] = after[k] - before[k]
    out["busy_s"] = round(after["busy_s"] - before["busy_s"], 3)
    return with_rates(out)


def with_rates(row: dict[str, Any]) -> dict[str, Any]:
    """A throughput row with its completion tokens and requests per busy second added."""
    busy = row["busy_s"]
    row["completion_tokens_per_s"] = round(row["completion_tokens"] / busy, 1) if busy else 0.0
    row["requests_per_s"] = round(row["requests"] / busy, 2) if busy else 0.0
    return row


@register_backend("openai")
class OpenAISpec(BackendSpec):
    """``backend: openai``: OpenAI-compatible endpoints such as ``vllm serve``
    (:class:`OpenAIBackend`)."""

    backend: Literal["openai"] = "openai"
    model: str = Field(min_length=1)  # the served model's name
    #: one endpoint (e.g. http://localhost:8000/v1) or replicas serving the same model
    base_url: str | list[str] = Field(min_length=1)
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: PositiveInt = DEFAULT_CONCURRENCY  # requests in flight per endpoint
    max_retries: NonNegativeInt = 5
    timeout_s: PositiveFloat = 600.0
    #: merged into ``extra_body``'s chat template arguments (:data:`ChatTemplateKwargs`)
    chat_template_kwargs: ChatTemplateKwargs | None = None
    #: fields added to every request body as given: free-form, because each server (vLLM,
    #: SGLang, a hosted API) accepts sampling and decoding fields of its own (``top_k``, ...)
    extra_body: dict[str, Any] | None = None
    structured_outputs: Literal["response_format", "vllm"] = "response_format"

    def make(self, base_dir: str | os.PathLike[str] | None = None) -> OpenAIBackend:
        extra = dict(self.extra_body or {})
        if self.chat_template_kwargs is not None:
            extra["chat_template_kwargs"] = {**dict(extra.get("chat_template_kwargs") or {}),
                                             **self.chat_template_kwargs}
        urls = self.base_url
        return OpenAIBackend(self.model, base_url=list(urls) if isinstance(urls, list) else urls,
                             api_key_env=self.api_key_env, concurrency=self.concurrency,
                             max_retries=self.max_retries, timeout_s=self.timeout_s,
                             extra_body=extra, structured_outputs=self.structured_outputs)

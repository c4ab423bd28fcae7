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
        self.llm_engine = FakeEngine()

    def get_tokenizer(self) -> types.SimpleNamespace:
        """A tokenizer whose tokens are the conversation's words."""
        def apply_chat_template(conv, add_generation_prompt=True, tokenize=True, **kw):
            return list(range(sum(len(m["content"].split()) for m in conv)))
        return types.SimpleNamespace(apply_chat_template=apply_chat_template)

    def _add_chat_requests(self, messages, params, *, use_tqdm=False, chat_template_kwargs=None,
                           lora_request=None):
        """Requests into :class:`FakeEngine`; a conversation containing ``REFUSE`` is refused
        (``ValueError``) and none of the batch is added, as vLLM does."""
        if any("REFUSE" in m["content"] for conv in messages for m in conv):
            raise ValueError("refused by the fake engine")
        self.lora_requests.append(lora_request)
        self.chats.append((messages, chat_template_kwargs))
        self.calls.append(params)
        return [self.llm_engine.add(conv, sp) for conv, sp in zip(messages, params, strict=True)]

    def chat(self, conversations, sampling_params=None, use_tqdm=False, chat_template_kwargs=None,
             lora_request=None):
        self.lora_requests.append(lora_request)
        self.calls.append(sampling_params)
        self.chats.append((conversations, chat_template_kwargs))
        return [reply(conv, sp)
                for conv, sp in zip(conversations, sampling_params, strict=True)]


class FakeEngine:
    """vLLM's step API: a request finishes ``1 + (seed + prompt words) % 3`` steps after it
    is added;
    ``added[i]`` is how many steps had run when request ``i`` was added."""

    def __init__(self) -> None:
        self.running: dict[str, list] = {}
        self.steps = 0
        self.added: list[int] = []
        self.aborted: list[str] = []

    def add(self, conv, sp) -> str:
        """The engine's id of the request (its outputs carry the id before the suffix)."""
        rid = str(len(self.added))
        self.added.append(self.steps)
        words = sum(len(m["content"].split()) for m in conv)
        self.running[rid] = [conv, sp, 1 + ((sp.seed or 0) + words) % 3]
        return f"{rid}-0a1b2c3d"

    def step(self) -> list:
        self.steps += 1
        out = []
        for rid, entry in list(self.running.items()):
            entry[2] -= 1
            if entry[2] == 0:
                conv, sp, _ = self.running.pop(rid)
                o = reply(conv, sp)
                o.request_id, o.finished = rid, True
                out.append(o)
        return out

    def has_unfinished_requests(self) -> bool:
        return bool(self.running)

    def abort_request(self, ids, internal=False) -> None:
        assert internal, "the ids are the engine's own"
        for rid in ids:
            self.running.pop(rid.split("-")[0])
            self.aborted.append(rid)


def reply(conv, sp) -> types.SimpleNamespace:
    out = types.SimpleNamespace
    return out(prompt_token_ids=list(range(sum(len(m["content"].split()) for m in conv))),
               outputs=[out(text=f"Answer: seed{sp.seed}", token_ids=[1, 2, 3],
                            finish_reason="stop")])


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

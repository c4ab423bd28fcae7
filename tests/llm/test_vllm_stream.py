"""vLLM's engine as a stream (cogrsi_lib/llm/vllm_backend.py, EngineStream), through the fake
``vllm`` module's step API: requests join the running batch as flows make them ready, every
result is the batched call's, failures stay with their request."""

from __future__ import annotations

import types
import weakref

import pytest
from reader.helpers import STORY, narrative

from cogrsi_lib.baselines import make_system
from cogrsi_lib.llm import CachedBackend, Request, build_backend, vllm_backend
from cogrsi_lib.llm.flow import WaveStream, run_flows
from cogrsi_lib.reader import ReaderConfig
from cogrsi_lib.reader.system import run_systems


def items(n: int = 4):
    return [narrative(f"q{i}", context=STORY + "\n6 Aria sat down." * (i % 3))
            for i in range(n)]


def systems(backend):
    cfg = ReaderConfig(sample_max_tokens=32)
    return [make_system(n, backend, cfg, "expert") for n in ("cogrsi", "sc6", "perceptom")]


def comparable(records) -> list[dict]:
    return [{k: v for k, v in r.to_row().items() if k not in ("latency_s", "usage_json")}
            for r in records]


def test_the_engine_stream_gives_the_batched_calls_records(fake_vllm, monkeypatch) -> None:
    streamed = build_backend({"backend": "vllm", "model": "m"})
    got, _ = run_systems(systems(streamed), items())
    engine = streamed.llm.llm_engine
    # each item's samples joined the running engine as its perception came back: in phases
    # (no reply here parses, so nothing is arbitrated) there would be two moments, not three
    assert len(set(engine.added)) >= 3
    assert not engine.running and not engine.aborted

    monkeypatch.setattr(vllm_backend, "_ENGINES", weakref.WeakKeyDictionary())  # a new engine
    batched = build_backend({"backend": "vllm", "model": "m"})
    monkeypatch.setattr(type(batched), "stream", lambda self: WaveStream(self.complete))
    want, _ = run_systems(systems(batched), items())
    assert batched.llm.llm_engine.steps == 0  # every call went through LLM.chat
    assert batched.llm is not streamed.llm
    for g, w in zip(got, want, strict=True):
        assert comparable(g) == comparable(w)
    # every sample's latency is its share of the engine steps it ran in
    assert all(r.ledger.total().latency_s >= 0 for recs in got for r in recs)


def test_a_prompt_too_long_and_a_refused_request_fail_alone(fake_vllm) -> None:
    b = build_backend({"backend": "vllm", "model": "m"})
    b.llm.llm_engine.model_config = types.SimpleNamespace(max_model_len=40)
    reqs = [Request.of("short one", n=2, temperature=0.7, max_tokens=8),
            Request.of(" ".join(["long"] * 60), max_tokens=8),
            Request.of("please REFUSE this", max_tokens=8),
            Request.of("short two", max_tokens=8)]

    def flow(r: Request):
        [cs] = yield [r]
        return cs

    out = run_flows(b, [flow(r) for r in reqs])
    assert [c.ok for c in out[0]] == [True, True] and out[3][0].ok
    assert out[1][0].error.startswith("context_length") and out[1][0].prompt_tokens >= 40
    assert out[2][0].error.startswith("refused:")


def test_a_failed_flow_aborts_its_requests_and_frees_the_engine(fake_vllm, tmp_path) -> None:
    b = build_backend({"backend": "vllm", "model": "m"})

    def waits_long():
        yield [Request.of("slow", max_tokens=8, seed=1)]  # three steps
        return "never"

    def fails():
        yield [Request.of("fast", max_tokens=8, seed=2)]  # one step
        raise RuntimeError("a bug in a flow")

    with pytest.raises(RuntimeError, match="a bug in a flow"):
        run_flows(CachedBackend(b, tmp_path), [waits_long(), fails()])
    engine = b.llm.llm_engine
    assert engine.aborted and not engine.running
    # the engine is free again, and the aborted request was not stored: it runs anew
    assert b.generate([Request.of("after", max_tokens=8)])[0][0].ok
    again = run_flows(CachedBackend(b, tmp_path), [waits_long()])
    assert again == ["never"]

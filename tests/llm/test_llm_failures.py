"""Per-request failures, complete cache identities and the silent-failure checks, on stand-ins
for vLLM and the OpenAI client (the real engine and server: test_llm_vllm_real.py and
test_llm_vllm_serve.py)."""

from __future__ import annotations

import threading
import types

import pytest

from cogrsi_lib.llm import CachedBackend, Request, build_backend
from cogrsi_lib.llm.openai_backend import OpenAIBackend, merged_extra_body
from cogrsi_lib.llm.tally import open_tally
from cogrsi_lib.llm.types import Completion, Job

from .test_llm_backends import FakeChat, StatusError, client_with


# -- a vLLM stand-in with a tokenizer, a context length and a refusal ------------------------
class WordTokenizer:
    def apply_chat_template(self, messages, add_generation_prompt=True, tokenize=True, **kw):
        return {"input_ids": [0] * sum(len(m["content"].split()) for m in messages)}


class ContextLLM:
    """Refuses (ValueError, as vLLM's validation does) any conversation saying REFUSE."""

    def __init__(self, model: str, **kwargs):
        self.kwargs, self.calls = kwargs, []
        self.llm_engine = types.SimpleNamespace(
            model_config=types.SimpleNamespace(max_model_len=kwargs.get("max_model_len", 10)))

    def get_tokenizer(self):
        return WordTokenizer()

    def chat(self, conversations, sampling_params=None, use_tqdm=False, chat_template_kwargs=None):
        self.calls.append(len(conversations))
        if any("REFUSE" in m["content"] for c in conversations for m in c):
            raise ValueError("request refused by validation")
        out = types.SimpleNamespace
        return [out(prompt_token_ids=[1, 2], outputs=[out(text="box", token_ids=[1],
                                                          finish_reason="stop")])
                for _ in conversations]


@pytest.fixture
def context_vllm(fake_vllm):
    fake_vllm.LLM = ContextLLM
    return fake_vllm


def test_vllm_over_long_and_refused_prompts_fail_alone_and_the_rest_is_cached(
        context_vllm, tmp_path) -> None:
    b = build_backend({"backend": "vllm", "model": "m", "engine": {"max_model_len": 10},
                       "cache_dir": str(tmp_path)})
    reqs = [Request.of("one two"), Request.of(" ".join(["w"] * 10)), Request.of("REFUSE me"),
            Request.of("three")]
    out = [cs[0] for cs in b.generate(reqs)]
    assert [c.ok for c in out] == [True, False, False, True]
    assert out[1].error.startswith("context_length: the prompt has 10 tokens")
    assert out[1].prompt_tokens == 10 and out[2].error.startswith("refused:")
    assert [c.text for c in out] == ["box", "", "", "box"]
    # the long prompt never reached the engine; the refusal was isolated one by one
    assert b.inner.llm.calls == [3, 1, 1, 1]
    again = [cs[0] for cs in b.generate(reqs)]
    assert [c.from_cache for c in again] == [True, False, False, True]


# -- OpenAI-compatible: per-request failures --------------------------------------------------
def test_openai_one_bad_request_costs_only_itself_and_is_not_cached(tmp_path) -> None:
    chat = FakeChat(failures=[0, 400, 0])
    inner = OpenAIBackend("m", client=client_with(chat), concurrency=1, sleep=lambda s: None)
    b = CachedBackend(inner, tmp_path)
    out = b.generate_one(Request.of("q", n=3, temperature=0.7))
    assert [c.ok for c in out] == [True, False, True]
    assert out[1].error.startswith("http_400") and out[1].index == 1
    assert b.cache.stats.writes == 2
    again = b.generate_one(Request.of("q", n=3, temperature=0.7))
    assert [c.from_cache for c in again] == [True, False, True] and again[1].ok
    assert len(chat.kwargs) == 4  # only the failed sample went out again


def test_openai_timeouts_after_retries_are_recorded_not_raised() -> None:
    chat = FakeChat(failures=[504, 504, 504])
    b = OpenAIBackend("m", client=client_with(chat), max_retries=2, sleep=lambda s: None)
    (c,) = b.generate_one(Request.of("q"))
    assert c.finish_reason == "error" and "504" in c.error and b.retries == 2


# -- cache identities ------------------------------------------------------------------------
def vllm_identity(fake_vllm, model="m", **cfg) -> str:
    return build_backend({"backend": "vllm", "model": model, **cfg}).identity


def test_vllm_identity_holds_every_setting_that_changes_outputs(fake_vllm, tmp_path) -> None:
    base = vllm_identity(fake_vllm)
    changed = [
        vllm_identity(fake_vllm, engine={"dtype": "float16"}),
        vllm_identity(fake_vllm, engine={"quantization": "awq"}),
        vllm_identity(fake_vllm, engine={"max_model_len": 4096}),
        vllm_identity(fake_vllm, engine={"revision": "abc123"}),
        vllm_identity(fake_vllm, chat_template_kwargs={"enable_thinking": True}),
        vllm_identity(fake_vllm, model="other"),
    ]
    assert len({base, *changed}) == len(changed) + 1
    # resources and speed do not change outputs: the same cache serves them
    assert vllm_identity(fake_vllm, engine={"gpu_memory_utilization": 0.5,
                                            "tensor_parallel_size": 4}) == base
    # a local folder's weights are part of it: same name, other tensors, other key
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text("{}")
    _write_safetensors(tmp_path / "a" / "model.safetensors", b"\x00" * 64)
    _write_safetensors(tmp_path / "b" / "model.safetensors", b"\x01" * 64)
    ida = vllm_identity(fake_vllm, model=str(tmp_path / "a"))
    idb = vllm_identity(fake_vllm, model=str(tmp_path / "b"))
    assert ida != idb and ida.startswith("vllm:a#")


def _write_safetensors(path, data: bytes) -> None:
    import json
    import struct

    header = json.dumps({"w": {"dtype": "U8", "shape": [len(data)],
                               "data_offsets": [0, len(data)]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)


def openai_identity(**cfg) -> str:
    settings = {"backend": "openai", "model": "m", "base_url": "http://a:1/v1", **cfg}
    return build_backend(settings).identity


def test_openai_identity_holds_endpoints_extra_body_and_structured_mode() -> None:
    pytest.importorskip("openai")
    base = openai_identity()
    changed = [
        openai_identity(base_url="http://b:1/v1"),
        openai_identity(extra_body={"top_k": 5}),
        openai_identity(chat_template_kwargs={"enable_thinking": True}),
        openai_identity(structured_outputs="vllm"),
    ]
    assert len({base, *changed}) == len(changed) + 1
    # the order of replicas does not change outputs
    assert openai_identity(base_url=["http://a:1/v1", "http://b:1/v1"]) == openai_identity(
        base_url=["http://b:1/v1", "http://a:1/v1"])
    assert openai_identity(concurrency=3, timeout_s=5) == base


def test_enable_thinking_false_survives_a_users_extra_body() -> None:
    assert merged_extra_body({"top_k": 5}) == {
        "top_k": 5, "chat_template_kwargs": {"enable_thinking": False}}
    assert merged_extra_body({"chat_template_kwargs": {"custom": 1}}) == {
        "chat_template_kwargs": {"enable_thinking": False, "custom": 1}}
    on = merged_extra_body({"chat_template_kwargs": {"enable_thinking": True}})
    assert on["chat_template_kwargs"]["enable_thinking"] is True
    chat = FakeChat()
    OpenAIBackend("m", client=client_with(chat), extra_body={"top_k": 5}).generate_one(
        Request.of("q"))
    assert chat.kwargs[0]["extra_body"]["chat_template_kwargs"] == {"enable_thinking": False}


# -- silent-failure checks -------------------------------------------------------------------
def test_tally_counts_failures_identical_samples_thinking_and_unreported_usage() -> None:
    r = Request.of("q", n=3, temperature=0.7)
    greedy = Request.of("g", n=3, temperature=0.0)

    def comp(i, text, **kw):
        return Completion(text, 1, 1, index=i, **kw)

    with open_tally() as t:
        from cogrsi_lib.llm import tally

        tally.record(r, [comp(i, "same") for i in range(3)], "openai")
        tally.record(r, [comp(0, "a"), comp(1, "<think>hm</think>b", usage_reported=False),
                         Completion.failed(Job(r, 2), "http_400: too long")], "openai")
        tally.record(greedy, [comp(i, "same") for i in range(3)], "openai")
    (row,) = t.rows()
    assert row["calls"] == 9 and row["failed"] == 1 and row["first_error"] == "http_400: too long"
    assert row["sampled_requests"] == 2 and row["identical_sample_requests"] == 1
    assert row["thinking_replies"] == 1 and row["usage_unreported"] == 1
    assert set(t.frame().columns) == set(row)


# -- scale-out over endpoints (scripted clients; real servers in test_llm_vllm_serve.py) -----
def test_requests_spread_over_endpoints_within_each_ones_concurrency() -> None:
    fast, slow = FakeChat(delay=0.01), FakeChat(delay=0.05)
    b = OpenAIBackend("m", clients=[client_with(fast), client_with(slow)],
                      base_url=["http://fast/v1", "http://slow/v1"], concurrency=2)
    out = b.generate_one(Request.of("q", n=40, temperature=0.7))
    assert [c.index for c in out] == list(range(40)) and all(c.ok for c in out)
    assert fast.max_active <= 2 and slow.max_active <= 2
    assert len(fast.kwargs) + len(slow.kwargs) == 40
    assert len(fast.kwargs) > len(slow.kwargs) > 0  # the faster server takes more
    assert [e.sent for e in b.endpoints] == [len(fast.kwargs), len(slow.kwargs)]


def test_openai_default_concurrency_is_at_least_64_per_endpoint() -> None:
    """64 requests can only pass a 64-party barrier if all 64 are in flight at once."""
    barrier = threading.Barrier(64)

    class BarrierChat(FakeChat):
        def create(self, **kw):
            barrier.wait(timeout=30)
            return super().create(**kw)

    chat = BarrierChat()
    b = OpenAIBackend("m", client=client_with(chat), max_retries=0)
    assert b.concurrency >= 64
    out = b.generate_one(Request.of("q", n=64, temperature=0.7))
    assert all(c.ok for c in out) and chat.max_active <= 64


def test_openai_config_takes_a_list_of_endpoints() -> None:
    pytest.importorskip("openai")
    b = build_backend({"backend": "openai", "model": "m",
                       "base_url": ["http://a:1/v1", "http://b:2/v1"], "concurrency": 3})
    assert [e.url for e in b.endpoints] == ["http://a:1/v1", "http://b:2/v1"]
    assert all(e.capacity == 3 for e in b.endpoints)
    with pytest.raises(StatusError):  # a setup error is never swallowed
        OpenAIBackend("m", client=client_with(FakeChat(failures=[404]))).generate_one(
            Request.of("q"))


def _tally_with(failed: int, ok: int):
    from cogrsi_lib.llm import tally

    r = Request.of("q", n=1)
    with open_tally() as t:
        for _ in range(ok):
            tally.record(r, [Completion("x", 1, 1, index=0)], "openai")
        for i in range(failed):
            tally.record(r, [Completion.failed(Job(r, 0), f"APIConnectionError: refused {i}")],
                         "openai")
    return t


@pytest.mark.parametrize("failed,ok,share,fails", [
    (0, 10, 0.05, False), (1, 19, 0.05, False), (2, 18, 0.05, True), (5, 0, 1.0, True),
    (3, 7, 0.5, False), (0, 0, 0.0, False)])
def test_a_stage_fails_past_its_share_of_failed_requests(failed, ok, share, fails) -> None:
    from cogrsi_lib.llm.tally import TooManyFailedRequests

    t = _tally_with(failed, ok)
    if not fails:
        t.check_failures(share)
        return
    with pytest.raises(TooManyFailedRequests,
                       match=rf"^{failed} of {failed + ok} requests failed .*first: "
                             r"APIConnectionError: refused 0$"):
        t.check_failures(share)


def test_write_replies_writes_the_table_then_fails(tmp_path) -> None:
    from cogrsi_lib.llm.tally import TooManyFailedRequests
    from cogrsi_lib.reports import write_replies

    with pytest.raises(TooManyFailedRequests):
        write_replies(_tally_with(3, 1), tmp_path / "replies", 0.05)
    assert "refused" in (tmp_path / "replies.md").read_text()
    assert write_replies(_tally_with(0, 3), tmp_path / "ok", 0.05).height == 1

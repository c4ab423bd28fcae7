"""vLLM (through a fake ``vllm`` module), the OpenAI-compatible client, config and accounting."""

from __future__ import annotations

import http.server
import importlib.util
import json
import subprocess
import sys
import threading
import time
import types

import pytest

from cogrsi_lib.llm import CachedBackend, CallLedger, Request, ScriptedBackend, build_backend
from cogrsi_lib.llm.openai_backend import OpenAIBackend, is_retriable
from cogrsi_lib.llm.types import Job

# -- import hygiene --------------------------------------------------------------------------


def test_importing_the_package_loads_no_heavy_runtime() -> None:
    code = (
        "import sys, cogrsi_lib.llm, cogrsi_lib.reader, cogrsi_lib.baselines\n"
        "bad = [m for m in ('torch', 'transformers', 'vllm', 'openai') if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- vLLM through a fake module ----------------------------------------------------------------


def test_vllm_backend_is_one_batched_chat_call_with_per_sample_seeds(fake_vllm) -> None:
    b = build_backend(
        {"backend": "vllm", "model": "Qwen/Qwen3.5-9B", "engine": {"tensor_parallel_size": 2}}
    )
    assert b.llm.kwargs == {"enable_prefix_caching": True, "tensor_parallel_size": 2, "seed": 0,
                            "structured_outputs_config": {"backend": "xgrammar",
                                                          "disable_any_whitespace": True}}
    r1 = Request.of("one two three", n=3, temperature=0.7, max_tokens=20, stop=("\n\n",))
    r2 = Request.of("four", n=1)
    out = b.generate([r1, r2])
    assert len(b.llm.calls) == 1
    params = b.llm.calls[0]
    convs, ctk = b.llm.chats[0]
    assert len(convs) == 4 and ctk == {"enable_thinking": False}
    assert all(p.n == 1 for p in params)
    assert (
        params[0].stop == ["\n\n"] and params[0].max_tokens == 20 and params[0].temperature == 0.7
    )
    seeds = [p.seed for p in params]
    assert seeds == [Job(r1, 0).seed, Job(r1, 1).seed, Job(r1, 2).seed, Job(r2, 0).seed]
    assert len(set(seeds[:3])) == 3
    assert [c.index for c in out[0]] == [0, 1, 2]
    assert out[0][0].prompt_tokens == 3 and out[0][0].completion_tokens == 3
    assert out[1][0].text == f"Answer: seed{Job(r2, 0).seed}"


def test_vllm_backend_serves_a_lora_adapter_on_every_request(fake_vllm, tmp_path) -> None:
    import json

    ad = tmp_path / "reports" / "adapter"
    ad.mkdir(parents=True)
    (ad / "adapter_config.json").write_text(json.dumps({"r": 8}))
    (ad / "adapter_model.safetensors").write_bytes(b"weights")
    b = build_backend({"backend": "vllm", "model": "m", "adapter": "reports/adapter"},
                      base_dir=tmp_path)
    base = build_backend({"backend": "vllm", "model": "m"})
    assert b.llm.kwargs["enable_lora"] and b.llm.kwargs["max_lora_rank"] == 8
    assert b.model.startswith("m+lora:") and b.identity != base.identity
    b.generate([Request.of("one"), Request.of("two")])
    (req,) = b.llm.lora_requests
    assert req.lora_path == str(ad) and req.lora_name == b.model.split("+")[1]
    base.generate([Request.of("one")])
    assert base.llm.lora_requests == [None] and "enable_lora" not in base.llm.kwargs
    (ad / "adapter_config.json").write_text(json.dumps({"r": 12}))  # vLLM has no rank 12
    assert build_backend({"backend": "vllm", "model": "m", "adapter": str(ad)}
                         ).llm.kwargs["max_lora_rank"] == 16
    (ad / "adapter_config.json").write_text("{}")
    with pytest.raises(ValueError, match="rank"):
        build_backend({"backend": "vllm", "model": "m", "adapter": str(ad)})
    with pytest.raises(FileNotFoundError, match="not a LoRA adapter folder"):
        build_backend({"backend": "vllm", "model": "m", "adapter": str(tmp_path)})


def test_vllm_backend_without_vllm_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` fail
    with pytest.raises(ImportError, match=r"\.\[vllm\]"):
        build_backend({"backend": "vllm", "model": "m"})


# -- OpenAI-compatible client with a scripted client object ---------------------------------


class StatusError(Exception):
    def __init__(self, status: int):
        super().__init__(f"HTTP {status}")
        self.status_code = status


class FakeChat:
    """Stands in for ``client.chat.completions``: fails as told, tracks concurrency."""

    def __init__(self, failures: list[int] | None = None, delay: float = 0.0):
        self.failures = list(failures or [])
        self.delay = delay
        self.kwargs: list[dict] = []
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def create(self, **kw):
        with self.lock:
            self.kwargs.append(kw)
            fail = self.failures.pop(0) if self.failures else None
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(self.delay)
            if fail:
                raise StatusError(fail)
            msg = types.SimpleNamespace(content=f"Answer: {kw['seed'] % 7}")
            choice = types.SimpleNamespace(message=msg, finish_reason="stop")
            usage = types.SimpleNamespace(prompt_tokens=11, completion_tokens=4)
            return types.SimpleNamespace(choices=[choice], usage=usage, model=kw["model"])
        finally:
            with self.lock:
                self.active -= 1


def client_with(chat: FakeChat):
    return types.SimpleNamespace(chat=types.SimpleNamespace(completions=chat))


def test_openai_backend_retries_transient_errors_then_succeeds() -> None:
    chat = FakeChat(failures=[503, 429])
    sleeps: list[float] = []
    b = OpenAIBackend(
        "m", client=client_with(chat), max_retries=3, sleep=sleeps.append, concurrency=1
    )
    (c,) = b.generate_one(Request.of("hi", max_tokens=5))
    assert c.prompt_tokens == 11 and c.completion_tokens == 4
    assert len(chat.kwargs) == 3 and b.retries == 2
    assert len(sleeps) == 2 and sleeps[1] > sleeps[0] * 0.5


def test_openai_backend_gives_up_after_max_retries_and_never_retries_client_errors() -> None:
    chat = FakeChat(failures=[500] * 5)
    b = OpenAIBackend("m", client=client_with(chat), max_retries=2, sleep=lambda s: None)
    (c,) = b.generate_one(Request.of("hi"))
    assert not c.ok and c.error.startswith("http_500") and len(chat.kwargs) == 3
    chat = FakeChat(failures=[400])
    b = OpenAIBackend("m", client=client_with(chat), max_retries=5, sleep=lambda s: None)
    (c,) = b.generate_one(Request.of("hi"))
    assert c.finish_reason == "error" and c.error.startswith("http_400") and c.text == ""
    assert len(chat.kwargs) == 1
    # a wrong key, model or URL fails every request alike: raised, not recorded per item
    b = OpenAIBackend("m", client=client_with(FakeChat(failures=[401])), sleep=lambda s: None)
    with pytest.raises(StatusError):
        b.generate_one(Request.of("hi"))


def test_openai_backend_respects_the_concurrency_limit_and_sends_per_sample_seeds() -> None:
    chat = FakeChat(delay=0.05)
    b = OpenAIBackend("served", client=client_with(chat), concurrency=3)
    r = Request.of("hi", n=9, temperature=0.7, stop=("END",))
    out = b.generate_one(r)
    assert chat.max_active == 3
    assert sorted(kw["seed"] for kw in chat.kwargs) == sorted(Job(r, i).seed for i in range(9))
    assert all(kw["n"] == 1 and kw["stop"] == ["END"] for kw in chat.kwargs)
    assert chat.kwargs[0]["extra_body"] == {"chat_template_kwargs": {"enable_thinking": False}}
    assert [c.index for c in out] == list(range(9))
    assert [c.text for c in out] == [f"Answer: {Job(r, i).seed % 7}" for i in range(9)]


def test_retriable_classification() -> None:
    assert is_retriable(StatusError(502)) and is_retriable(StatusError(429))
    assert not is_retriable(StatusError(401)) and not is_retriable(ValueError("x"))
    assert is_retriable(ConnectionResetError())


# -- the real openai package against a local compatible server ------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    fail_first = 0
    seen: list[dict] = []

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        if type(self).fail_first > 0:
            type(self).fail_first -= 1
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "busy"}}')
            return
        reply = {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Answer: B"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 21, "completion_tokens": 3, "total_tokens": 24},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.skipif(
    importlib.util.find_spec("openai") is None, reason="the 'openai' extra is not installed"
)
def test_real_openai_client_against_a_local_server(tmp_path) -> None:
    _Handler.fail_first, _Handler.seen = 1, []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        b = build_backend(
            {
                "backend": "openai",
                "model": "served-model",
                "base_url": url,
                "cache_dir": str(tmp_path),
                "max_retries": 2,
            }
        )
        b.inner.backoff_s = 0.01
        out = b.generate_one(Request.of("question?", n=2, temperature=0.7, max_tokens=8))
        assert [c.text for c in out] == ["Answer: B", "Answer: B"]
        assert out[0].prompt_tokens == 21 and out[0].completion_tokens == 3
        assert len(_Handler.seen) == 3  # one 503, retried, then the second sample
        assert _Handler.seen[-1]["chat_template_kwargs"] == {"enable_thinking": False}
        assert {s["seed"] for s in _Handler.seen[1:]} == {
            Job(Request.of("question?", n=2, temperature=0.7, max_tokens=8), i).seed
            for i in range(2)
        }
        again = b.generate_one(Request.of("question?", n=2, temperature=0.7, max_tokens=8))
        assert all(c.from_cache for c in again) and len(_Handler.seen) == 3
    finally:
        server.shutdown()


# -- config ----------------------------------------------------------------------------------


def test_config_builds_and_wraps_in_the_cache(tmp_path) -> None:
    b = build_backend(
        {"backend": "fake", "reply": "Answer: A", "cache_dir": "c"}, base_dir=tmp_path
    )
    assert isinstance(b, CachedBackend) and isinstance(b.inner, ScriptedBackend)
    assert b.cache.root == tmp_path / "c"
    assert b.generate_one(Request.of("x"))[0].text == "Answer: A"
    assert not isinstance(build_backend({"backend": "fake"}), CachedBackend)


@pytest.mark.parametrize(
    "cfg,match",
    [
        ({"backend": "gpt"}, "'llm': unknown backend"),
        ({"backend": "fake", "temprature": 0.7}, "unknown key 'llm.temprature'"),
        ({"backend": "openai", "model": "m"}, "'llm.base_url': Field required"),
        ({"backend": "embedded", "base_url": "http://x/v1"}, "unknown key 'llm.base_url'"),
    ],
)
def test_config_rejects_bad_settings(cfg, match) -> None:
    with pytest.raises(ValueError, match=match):
        build_backend(cfg)


def test_load_llm_params(tmp_path) -> None:
    from cogrsi_lib.llm import load_llm_params

    p = tmp_path / "params.yaml"
    p.write_text("llm:\n  backend: fake\n  model: x\n  base_url: null\nother: 1\n")
    assert load_llm_params(p) == {"backend": "fake", "model": "x", "base_url": None}


# -- accounting ------------------------------------------------------------------------------


def test_ledger_counts_every_sample_and_cached_ones_apart(tmp_path) -> None:
    b = CachedBackend(ScriptedBackend("a b c"), tmp_path)
    ledger = CallLedger()
    ledger.add("sample", b.generate_one(Request.of("one two", n=3)))
    ledger.add("sample", b.generate_one(Request.of("one two", n=3)))
    ledger.add("arbitration", b.generate_one(Request.of("x")))
    t = ledger.total()
    assert (t.calls, t.cached_calls) == (7, 3)
    assert (t.prompt_tokens, t.completion_tokens) == (6 * 2 + 1, 7 * 3)
    d = ledger.to_dict()
    assert d["by_role"]["sample"]["calls"] == 6 and d["by_role"]["arbitration"]["calls"] == 1

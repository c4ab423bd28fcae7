"""``backend: openai`` as a stream (cogrsi_lib/llm/openai_backend.py): each endpoint kept at
its number of requests in flight, the work spread over the endpoints, and each endpoint's
throughput reported."""

from __future__ import annotations

import json

from cogrsi_lib.llm import Request
from cogrsi_lib.llm.flow import run_flows
from cogrsi_lib.llm.openai_backend import THROUGHPUT_LOG, OpenAIBackend

from .test_llm_backends import FakeChat, client_with

URLS = ["http://replica-a/v1", "http://replica-b/v1"]


def two_step(i: int):
    [first] = yield [Request.of(f"q{i}", n=2, temperature=0.7, max_tokens=8)]
    [second] = yield [Request.of(f"q{i}, then", max_tokens=8)]
    return first + second


def test_flows_keep_every_endpoint_at_its_limit_and_each_one_is_measured(
        tmp_path, monkeypatch) -> None:
    log = tmp_path / "throughput.jsonl"
    monkeypatch.setenv(THROUGHPUT_LOG, str(log))
    chats = [FakeChat(delay=0.05), FakeChat(delay=0.05)]
    b = OpenAIBackend("m", base_url=URLS, clients=[client_with(c) for c in chats],
                      concurrency=3)
    b.generate([Request.of("before the stream", max_tokens=4)])
    out = run_flows(b, [two_step(i) for i in range(8)])
    assert [len(cs) for cs in out] == [3] * 8 and all(c.ok for cs in out for c in cs)
    # 16 first-step samples are ready at once: both endpoints fill up to their limit
    assert [c.max_active for c in chats] == [3, 3]
    rows = b.throughput()
    assert [r["endpoint"] for r in rows] == URLS
    assert [r["requests"] for r in rows] == [len(c.kwargs) for c in chats]
    assert sum(r["requests"] for r in rows) == 25
    # the stream's own figures, as the rehearsal's budget reads them: the request sent
    # before the stream is not in them
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["endpoint"] for r in logged] == URLS and {r["model"] for r in logged} == {"m"}
    assert sum(r["requests"] for r in logged) == 24
    for r in rows:
        assert r["completion_tokens"] == 4 * r["requests"]
        assert r["prompt_tokens"] == 11 * r["requests"]
        assert r["busy_s"] > 0 and r["completion_tokens_per_s"] > 0
        assert r["failed"] == 0


def test_a_failed_request_is_counted_on_its_endpoint() -> None:
    chat = FakeChat(failures=[400])
    b = OpenAIBackend("m", base_url=URLS[:1], clients=[client_with(chat)], concurrency=1)
    out = b.generate([Request.of("a", max_tokens=4), Request.of("b", max_tokens=4)])
    assert [c[0].ok for c in out] == [False, True]
    (row,) = b.throughput()
    assert row["requests"] == 2 and row["failed"] == 1 and row["completion_tokens"] == 4

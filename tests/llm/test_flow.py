"""One stream for a stage's model work (cogrsi_lib/llm/flow.py): flows advance as their
requests come back, results do not depend on what else shares the stream."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest
from reader.helpers import PERCEPTION_OK, STORY, as_reply, kind_of, narrative

from cogrsi_lib.baselines import make_system
from cogrsi_lib.llm import CachedBackend, ScriptedBackend
from cogrsi_lib.llm.cache import cache_key
from cogrsi_lib.llm.fake import prompt_text
from cogrsi_lib.llm.flow import run_flows
from cogrsi_lib.llm.types import Job, Request
from cogrsi_lib.reader import ReaderConfig
from cogrsi_lib.reader.system import run_systems

SYSTEMS = ("cogrsi", "sc6", "perceptom_sc6", "simtom", "zero_shot")


def varied(job: Job) -> str:
    """A reply that depends on the whole request and the sample: mixing two requests'
    replies up, or a sample's seed, changes the records."""
    h = int(hashlib.sha256(f"{prompt_text(job)}|{job.seed}".encode()).hexdigest(), 16)
    kind = kind_of(job)
    if kind == "perception":
        broken = "waited 2 " in prompt_text(job) or "waited 5 " in prompt_text(job)
        return "1: Aria\nbroken" if broken else as_reply(job, f"{PERCEPTION_OK}\n6: Aria")
    if kind == "arbitration":
        return as_reply(job, f"because\nAnswer: {1 + h % 2}")
    if kind == "perspective":
        return "Aria moved the grapefruit."
    return as_reply(job, f"step {h % 7}\nAnswer: {'AB'[h % 2] if h % 9 else 'C'}")


def items(n: int = 6):
    stories = ["Where will Aiden look for the grapefruit?",
               "Where is the grapefruit really?",
               "Where does Aria think Aiden will look?"]
    return [narrative(f"q{i}", question=stories[i % 3], story_id=f"s{i // 3}",
                      context=STORY + f"\n6 Aria waited {i} minutes.") for i in range(n)]


def systems(backend, names=SYSTEMS):
    return [make_system(n, backend, ReaderConfig(sample_max_tokens=64), "expert")
            for n in names]


def rows(records) -> list[dict]:
    return [r.to_row() for r in records]


def sent(backend: ScriptedBackend) -> list[str]:
    """The cache keys of every sample the backend produced (seeds and sample index in)."""
    return sorted(cache_key("k", j) for j in backend.jobs)


def without_cache(row: dict) -> dict:
    """A record row with what says "replayed" (and so differs on a replay) taken out."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in ("from_cache", "cached_calls")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    out = {}
    for k, v in row.items():
        if k == "cached_calls":
            continue
        out[k] = strip(json.loads(v)) if k.endswith("_json") else v
    return out


def test_one_stream_over_every_system_gives_each_item_alone_s_records() -> None:
    together = ScriptedBackend(varied)
    recs, _ = run_systems(systems(together), items())
    alone = ScriptedBackend(varied)
    for system, got in zip(systems(alone), recs, strict=True):
        assert rows(got) == rows([system.answer(it) for it in items()])
    # the same requests, whatever shared the stream
    assert sent(together) == sent(alone)
    # and the varied script did exercise arbitration and a malformed perception
    cogrsi = recs[0]
    assert any(r.arbitration.ran for r in cogrsi)
    assert any(r.perception.status == "malformed" for r in cogrsi)


def test_every_ready_request_of_every_system_goes_out_together() -> None:
    backend = ScriptedBackend(varied)
    run_systems(systems(backend), items())
    # perception (cogrsi, perceptom) and perspective (simtom) beside the one-call systems'
    # answers; then the samples; then arbitration: three waves, not one per phase per system
    assert len(backend.batches) == 3
    assert backend.batches[0] == 6 * (1 + 6 + 1 + 1 + 1)


def test_replayed_from_the_cache_the_records_are_the_fresh_run_s(tmp_path) -> None:
    inner = ScriptedBackend(varied)
    fresh, _ = run_systems(systems(CachedBackend(inner, tmp_path)), items())
    n = inner.calls
    again, _ = run_systems(systems(CachedBackend(inner, tmp_path)), items())
    assert inner.calls == n  # nothing asked twice
    for a, b in zip(fresh, again, strict=True):
        assert all(r["cached_calls"] == r["calls"] for r in rows(b))
        assert [without_cache(r) for r in rows(a)] == [without_cache(r) for r in rows(b)]


def test_a_request_two_flows_share_is_generated_once_in_a_stream(tmp_path) -> None:
    inner = ScriptedBackend(varied)
    cached = CachedBackend(inner, tmp_path)
    # cogrsi and perceptom ask the very same perception request for every item
    recs, _ = run_systems(systems(cached, ("cogrsi", "perceptom")), items(3))
    perceptions = [j for j in inner.jobs if kind_of(j) == "perception"]
    assert len(perceptions) == 3
    first = [r.perception for r in recs[0]]
    second = [r.perception for r in recs[1]]
    assert [p.text for p in first] == [p.text for p in second]
    assert [p.from_cache for p in first] == [False] * 3
    assert [p.from_cache for p in second] == [True] * 3


def test_flows_on_a_concurrent_backend_do_not_wait_for_each_other() -> None:
    """Item 0's perception is held; item 1 goes through all its calls meanwhile."""
    hold = threading.Event()
    seen: list[str] = []

    def respond(job: Job) -> str:
        if kind_of(job) == "perception" and "q0" in job.request.messages[-1].content:
            assert hold.wait(10), "item 1 never finished while item 0 waited"
        seen.append(kind_of(job))
        return varied(job)

    backend = ScriptedBackend(respond, concurrent=True)
    reader = systems(backend, ("cogrsi",))[0]
    its = [narrative("q0", question="Where is q0's grapefruit?"), narrative("q1")]
    done: list[int] = []

    def on_done(i: int) -> None:
        done.append(i)
        hold.set()

    recs = run_flows(backend, [reader.flow(it) for it in its], on_done)
    assert done[0] == 1 and sorted(done) == [0, 1]
    assert [r.item_id for r in recs] == ["q0", "q1"]


def test_a_failing_request_and_a_failing_flow_are_raised() -> None:
    def broken(job: Job) -> str:
        raise RuntimeError("engine down")

    reader = systems(ScriptedBackend(broken), ("cogrsi",))[0]
    with pytest.raises(RuntimeError, match="engine down"):
        reader.answer_batch(items(2))

    def bad_flow():
        yield [Request.of("hi", max_tokens=4)]
        raise ValueError("flow bug")

    with pytest.raises(ValueError, match="flow bug"):
        run_flows(ScriptedBackend("x"), [bad_flow()])


def test_results_come_back_in_the_flows_order_with_empty_steps_skipped() -> None:
    def flow(k: int):
        out: list[str] = []
        for step in range(k):
            [cs] = yield [Request.of(f"{k}-{step}", max_tokens=8, n=1)]
            out.append(cs[0].text)
            assert (yield []) == []  # a step with nothing to ask
        return out

    backend = ScriptedBackend(lambda j: f"re {j.request.messages[-1].content}")
    got = run_flows(backend, [flow(k) for k in (3, 0, 1)])
    assert got == [["re 3-0", "re 3-1", "re 3-2"], [], ["re 1-0"]]
    assert backend.batches == [2, 1, 1]

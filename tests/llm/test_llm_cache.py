"""Completion cache: content keys, atomic files, replay, and what the records say."""

from __future__ import annotations

import json
import os
import threading

import pytest

from cogrsi_lib.llm import CachedBackend, CompletionCache, Request, ScriptedBackend, cache_key
from cogrsi_lib.llm.types import Job, job_seed


def counter_backend() -> ScriptedBackend:
    return ScriptedBackend(lambda job: f"reply {job.index} to {job.request.messages[-1].content}")


def _key(identity: str = "fake:m", prompt="hello", index: int = 0, **kw) -> str:
    params = {"n": 3, "temperature": 0.7, "max_tokens": 10, "seed": 1, **kw}
    return cache_key(identity, Job(Request.of(prompt, **params), index))


def test_key_depends_on_every_field_but_n() -> None:
    k = _key()
    assert k == _key(n=9)
    variants = [
        _key(identity="fake:other"),
        _key(index=1),
        _key(prompt="hello!"),
        _key(temperature=0.5),
        _key(max_tokens=11),
        _key(seed=2),
        _key(stop=("x",)),
        _key(prompt=[{"role": "system", "content": "hello"}]),
    ]
    assert len({k, *variants}) == len(variants) + 1


def test_job_seeds_differ_by_index_and_prompt_but_not_n() -> None:
    a = Request.of("p", n=2, seed=5)
    assert job_seed(a, 0) != job_seed(a, 1)
    assert job_seed(a, 0) != job_seed(Request.of("q", n=2, seed=5), 0)
    assert job_seed(a, 1) == job_seed(Request.of("p", n=7, seed=5), 1)


def test_cached_backend_replays_and_only_generates_misses(tmp_path) -> None:
    inner = counter_backend()
    b = CachedBackend(inner, tmp_path / "c")
    first = b.generate_one(Request.of("q", n=4, temperature=0.7))
    assert [c.from_cache for c in first] == [False] * 4
    assert inner.calls == 4
    # n=6 of the same prompt: indices 0..3 replayed, 4..5 generated
    second = b.generate_one(Request.of("q", n=6, temperature=0.7))
    assert [c.from_cache for c in second] == [True] * 4 + [False] * 2
    assert [c.text for c in second[:4]] == [c.text for c in first]
    assert inner.calls == 6
    assert all(c.latency_s == 0.0 for c in second[:4])
    assert all(c.cache_key for c in second)
    assert [c.index for c in second] == list(range(6))
    # token counts survive the round trip
    assert [c.prompt_tokens for c in second[:4]] == [c.prompt_tokens for c in first]
    assert len(b.cache) == 6


def test_cache_survives_a_new_process_view(tmp_path) -> None:
    CachedBackend(counter_backend(), tmp_path).generate_one(Request.of("q", n=2))
    fresh_inner = ScriptedBackend("never called")
    again = CachedBackend(fresh_inner, tmp_path).generate_one(Request.of("q", n=2))
    assert fresh_inner.calls == 0
    assert [c.text for c in again] == ["reply 0 to q", "reply 1 to q"]


def test_duplicate_jobs_in_one_batch_are_generated_once(tmp_path) -> None:
    inner = counter_backend()
    b = CachedBackend(inner, tmp_path)
    r = Request.of("same", n=2)
    out = b.generate([r, r])
    assert inner.calls == 2
    assert [c.text for c in out[0]] == [c.text for c in out[1]]
    assert [c.from_cache for c in out[1]] == [True, True]


def test_writes_are_atomic_and_leave_no_temp_files(tmp_path) -> None:
    b = CachedBackend(counter_backend(), tmp_path)
    threads = [
        threading.Thread(target=b.generate_one, args=(Request.of(f"q{i % 3}", n=3),))
        for i in range(12)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(p.suffix == ".json" for p in files), files
    assert len(files) == 9
    for p in files:
        data = json.loads(p.read_text())
        assert data["key"] == p.stem
        assert data["request"]["sample_index"] in (0, 1, 2)


def test_failed_write_leaves_nothing_behind(tmp_path, monkeypatch) -> None:
    cache = CompletionCache(tmp_path)
    b = CachedBackend(counter_backend(), cache)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        b.generate_one(Request.of("q"))
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_corrupt_entry_is_a_counted_miss_and_is_rewritten(tmp_path) -> None:
    inner = counter_backend()
    b = CachedBackend(inner, tmp_path)
    (c,) = b.generate_one(Request.of("q"))
    path = b.cache.path(c.cache_key)
    path.write_text("{not json")
    (again,) = b.generate_one(Request.of("q"))
    assert not again.from_cache
    assert b.cache.stats.corrupt == 1
    assert inner.calls == 2
    assert json.loads(path.read_text())["key"] == c.cache_key

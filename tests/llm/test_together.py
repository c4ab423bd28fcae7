"""Independent model work side by side (cogrsi_lib/llm/together.py)."""

from __future__ import annotations

import threading

import pytest

from cogrsi_lib.llm import CachedBackend, ScriptedBackend
from cogrsi_lib.llm.together import run_together, serves_concurrently


def test_results_in_the_tasks_order_and_together_only_when_asked():
    barrier = threading.Barrier(3, timeout=10)

    def task(k: int):
        def run():
            barrier.wait()  # all three must be running at once, or this times out
            return k, threading.current_thread().name
        return run

    out = run_together([task(k) for k in range(3)], together=True)
    assert [k for k, _ in out] == [0, 1, 2]
    assert "MainThread" not in {name for _, name in out}
    serial = run_together([lambda k=k: (k, threading.current_thread().name)
                           for k in range(3)], together=False)
    assert serial == [(0, "MainThread"), (1, "MainThread"), (2, "MainThread")]


def test_the_first_failed_task_s_error_once_every_task_ended():
    ended = []

    def ok():
        ended.append("ok")
        return 1

    def bad(msg: str):
        def run():
            ended.append(msg)
            raise ValueError(msg)
        return run

    with pytest.raises(ValueError, match="first"):
        run_together([ok, bad("first"), bad("second"), ok], together=True)
    assert sorted(ended) == ["first", "ok", "ok", "second"]


def test_which_backends_serve_concurrently(tmp_path):
    assert not serves_concurrently(ScriptedBackend("x"))
    side = ScriptedBackend("x", concurrent=True)
    assert serves_concurrently(side) and serves_concurrently(CachedBackend(side, tmp_path))
    assert not serves_concurrently(side, ScriptedBackend("y"))
    assert not serves_concurrently()


def test_a_server_serves_concurrently_an_in_process_model_does_not():
    from cogrsi_lib.llm.embedded import EmbeddedBackend
    from cogrsi_lib.llm.openai_backend import OpenAIBackend
    from cogrsi_lib.llm.vllm_backend import VLLMBackend

    assert OpenAIBackend.concurrent
    assert not EmbeddedBackend.concurrent and not VLLMBackend.concurrent


def test_a_sample_another_thread_is_generating_is_waited_for_not_asked_again(tmp_path):
    from cogrsi_lib.llm import Request
    from cogrsi_lib.llm.types import expand

    asked, release = threading.Event(), threading.Event()
    calls = []

    def respond(job):
        calls.append(job)
        asked.set()
        assert release.wait(10)
        return "reply"

    cached = CachedBackend(ScriptedBackend(respond, concurrent=True), tmp_path)
    jobs = expand([Request.of("Where is the ball?")])
    first = threading.Thread(target=lambda: results.append(cached.complete(jobs)))
    results: list = []
    first.start()
    assert asked.wait(10)  # the first thread is generating the sample
    second = threading.Thread(target=lambda: results.append(cached.complete(jobs + jobs)))
    second.start()
    second.join(0.2)
    assert second.is_alive()  # it waits for the first thread's sample ...
    release.set()
    first.join(10)
    second.join(10)
    assert len(calls) == 1  # ... which was generated once
    (one,), (two, three) = sorted(results, key=len)
    assert one.text == two.text == three.text == "reply"
    assert not one.from_cache and two.from_cache and three.from_cache
    assert cached.complete(jobs)[0].from_cache and len(calls) == 1


def test_a_failed_generation_reaches_the_threads_waiting_for_it(tmp_path):
    from cogrsi_lib.llm import Request
    from cogrsi_lib.llm.types import expand

    asked, release = threading.Event(), threading.Event()

    def respond(job):
        asked.set()
        assert release.wait(10)
        raise RuntimeError("server went away")

    cached = CachedBackend(ScriptedBackend(respond, concurrent=True), tmp_path)
    jobs = expand([Request.of("Where is the ball?")])
    errors: list = []

    def call():
        try:
            cached.complete(jobs)
        except RuntimeError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=call)]
    threads[0].start()
    assert asked.wait(10)
    threads.append(threading.Thread(target=call))
    threads[1].start()
    release.set()
    for t in threads:
        t.join(10)
    assert errors == ["server went away"] * 2
    assert not cached._pending  # nothing left waiting: the next call asks again

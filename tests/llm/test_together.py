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

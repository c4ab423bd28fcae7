"""Independent pieces of a stage's model work, side by side when the backend serves
concurrent requests.

A server (``backend: openai``, e.g. ``vllm serve``) batches whatever is in flight, so a
stage's independent pieces (the loops' arms and seeds, the scorecard's variants) are sent
together: its continuous batching then sees all of them at once instead of one phase of one
piece at a time. An in-process model (embedded, vLLM's engine) answers one batch at a time,
so there they run one after another, exactly as before. Either way each piece sends the
same requests and the results come back in the pieces' order, so a stage's tables do not
depend on which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

__all__ = ["run_together", "serves_concurrently"]


def serves_concurrently(*backends: object) -> bool:
    """Every given backend takes concurrent requests (``Backend.concurrent``)."""
    return bool(backends) and all(getattr(b, "concurrent", False) for b in backends)


def run_together(tasks: Sequence[Callable[[], T]], together: bool) -> list[T]:
    """Each task's result, in the tasks' order: all started at once when ``together``, else
    one after another. A task's exception is raised once every started task has ended (the
    first failed task's, in the tasks' order)."""
    if not together or len(tasks) < 2:
        return [t() for t in tasks]
    with ThreadPoolExecutor(max_workers=len(tasks), thread_name_prefix="together") as pool:
        futures = [pool.submit(t) for t in tasks]
        return [f.result() for f in futures]

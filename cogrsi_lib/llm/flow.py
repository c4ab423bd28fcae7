"""A stage's model work as one stream: each item's calls as a flow, every flow's ready
requests in flight together (CogRSI Appendix G.7's cost is almost all model calls).

A *flow* is one item's chain of dependent calls, written as a generator: it yields the
requests it needs next (perception; then the samples; then arbitration) and receives their
completions, per request, as :meth:`Backend.generate` would return them; its return value is
the item's result. :func:`run_flows` runs many flows (all items of all systems that share a
backend) on one :class:`JobStream`: a flow's next requests go out as soon as the ones it
waits for come back, so the engine always sees the whole stage's ready work instead of one
phase of one system at a time.

Every flow sends exactly the requests (seeds, cache keys) a phase-by-phase run sends, in the
same order per item, so its results are the same; only which requests share an engine step
changes. The backend decides how a stream runs (:meth:`Backend.stream`):

- :class:`WaveStream` (the default for an in-process model): every request ready at a moment
  goes out in one ``complete`` batch, then the flows advance;
- :class:`ThreadStream` (a backend that serves concurrent requests, e.g. ``backend: openai``):
  each flow's requests are sent as soon as they are ready, on worker threads;
- vLLM's engine streams requests into its own continuous batch
  (:class:`cogrsi_lib.llm.vllm_backend.EngineStream`), and the completion cache answers hits
  at once and streams only the misses (:class:`cogrsi_lib.llm.cache.CachedStream`).
"""

from __future__ import annotations

import abc
import threading
from collections import deque
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from cogrsi_lib.llm.types import Completion, Job, Request, expand

if TYPE_CHECKING:
    from cogrsi_lib.llm.backend import Backend

T = TypeVar("T")

#: one item's dependent calls: yields the requests it needs now, receives their completions
#: (per request, in sample-index order), returns the item's result
Flow = Generator[Sequence[Request], list[list[Completion]], T]

__all__ = ["Flow", "JobStream", "ThreadStream", "WaveStream", "run_flows"]


class JobStream(abc.ABC):
    """Jobs in, a future per job out; :meth:`drive` moves the work on."""

    @abc.abstractmethod
    def submit(self, jobs: Sequence[Job]) -> list[Future[Completion]]:
        """Start these jobs; one future per job, in order."""

    @abc.abstractmethod
    def drive(self) -> bool:
        """Advance this stream's own work in the calling thread until some of it is done;
        False when there was none to advance (the work, if any, runs elsewhere)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Drop what was never finished (a flow failed)."""


def resolve(futures: Sequence[Future[Completion]], done: Sequence[Completion]) -> None:
    """Set each future to its completion."""
    for f, c in zip(futures, done, strict=True):
        f.set_result(c)


def fail(futures: Sequence[Future[Completion]], exc: BaseException) -> None:
    for f in futures:
        if not f.done():
            f.set_exception(exc)


class WaveStream(JobStream):
    """All jobs queued when the scheduler has nothing else to do go out in one batch."""

    def __init__(self, complete: Callable[[Sequence[Job]], list[Completion]]) -> None:
        self._complete = complete
        self._queue: list[tuple[Job, Future[Completion]]] = []

    def submit(self, jobs: Sequence[Job]) -> list[Future[Completion]]:
        futures: list[Future[Completion]] = [Future() for _ in jobs]
        self._queue.extend(zip(jobs, futures, strict=True))
        return futures

    def drive(self) -> bool:
        if not self._queue:
            return False
        batch, self._queue = self._queue, []
        futures = [f for _, f in batch]
        try:
            done = self._complete([j for j, _ in batch])
            if len(done) != len(batch):
                raise RuntimeError(f"complete returned {len(done)} completions for "
                                   f"{len(batch)} jobs")
        except BaseException as e:
            fail(futures, e)
            raise
        resolve(futures, done)
        return True

    def close(self) -> None:
        self._queue.clear()


class ThreadStream(JobStream):
    """Each job is sent at once on a worker thread of its own (a backend that takes
    concurrent requests limits how many are in flight per endpoint itself)."""

    def __init__(self, complete: Callable[[Sequence[Job]], list[Completion]],
                 max_workers: int = 64) -> None:
        self._complete = complete
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="flow")

    def submit(self, jobs: Sequence[Job]) -> list[Future[Completion]]:
        futures: list[Future[Completion]] = [Future() for _ in jobs]

        def run(job: Job, future: Future[Completion]) -> None:
            try:
                resolve([future], self._complete([job]))
            except BaseException as e:  # noqa: BLE001 - handed to the waiting flow
                fail([future], e)

        for job, future in zip(jobs, futures, strict=True):
            self._pool.submit(run, job, future)
        return futures

    def drive(self) -> bool:
        return False

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class _Pending:
    """A flow's outstanding requests and their jobs' futures."""

    __slots__ = ("futures", "left", "requests")

    def __init__(self, requests: Sequence[Request], futures: list[Future[Completion]]) -> None:
        self.requests = requests
        self.futures = futures
        self.left = len(futures)


def run_flows(backend: Backend, flows: Sequence[Flow[T]],
              on_done: Callable[[int], None] | None = None) -> list[T]:
    """Each flow's result, in the flows' order, with every flow's ready requests in flight
    together on ``backend.stream()``. ``on_done(i)`` is called as flow ``i`` finishes (e.g.
    a progress bar). A flow's exception, or a failed request's, is raised."""
    results: list[Any] = [None] * len(flows)
    pending: dict[int, _Pending] = {}
    ready: deque[int] = deque()
    cond = threading.Condition()
    live = len(flows)
    stream = backend.stream()

    def advance(i: int, value: list[list[Completion]] | None) -> None:
        nonlocal live
        while True:
            try:
                requests = flows[i].send(value)  # type: ignore[arg-type]
            except StopIteration as stop:
                results[i] = stop.value
                live -= 1
                if on_done is not None:
                    on_done(i)
                return
            if requests:
                break
            value = []
        jobs = expand(requests)
        if not jobs:
            value = [[] for _ in requests]
            return advance(i, value)
        futures = stream.submit(jobs)
        p = pending[i] = _Pending(requests, futures)

        def landed(_: Future[Completion]) -> None:
            with cond:
                p.left -= 1
                if p.left == 0:
                    ready.append(i)
                    cond.notify()

        for f in futures:
            f.add_done_callback(landed)

    try:
        for i in range(len(flows)):
            advance(i, None)
        while live:
            with cond:
                batch = list(ready)
                ready.clear()
            for i in batch:
                p = pending.pop(i)
                advance(i, backend.finish(p.requests, [f.result() for f in p.futures]))
            if batch or not live:
                continue
            if not stream.drive():
                with cond:
                    cond.wait_for(lambda: bool(ready))
    finally:
        stream.close()
        for f in flows:
            f.close()
    return results

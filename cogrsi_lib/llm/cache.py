"""Content-addressed completion cache (DESIGN.md ``llm/``; reproducible reruns and DVC stages).

The key of one sample is the sha256 of the canonical JSON of
``{backend identity, messages, sampling fields, sample index}`` plus, when the backend is asked
to enforce it, the reply format's constraint. Entries are JSON files
``<dir>/<key[:2]>/<key>.json`` written atomically (temporary file in the same folder, then
``os.replace``), so concurrent writers and interrupted runs never leave a torn entry. A file
that cannot be read back is treated as a miss and rewritten (and counted in ``stats``).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.flow import JobStream
from cogrsi_lib.llm.types import Completion, Job, sha256_json

CACHE_FORMAT = 1


def cache_key(identity: str, job: Job) -> str:
    """The content address of one sample."""
    return sha256_json(key_payload(identity, job))


def key_payload(identity: str, job: Job) -> dict[str, Any]:
    """What one sample's key hashes. An enforced reply format is part of it; a free-text
    request (or one generated with ``structured=False``) keys as it always has."""
    payload: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "model": identity,
        "messages": job.request.messages_dicts(),
        "sampling": job.request.params.key_fields(),
        "sample_index": job.index,
    }
    constraint = job.request.constraint
    if constraint is not None:
        payload["constraint"] = constraint.constraint()
    return payload


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    writes: int = 0


class CompletionCache:
    """A folder of content-addressed completions."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.stats = CacheStats()
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, *, count: bool = True) -> Completion | None:
        """The stored completion of ``key``, or None (a miss); ``count``: in ``stats``."""
        p = self.path(key)
        try:
            raw = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            if count:
                with self._lock:
                    self.stats.misses += 1
            return None
        try:
            data = json.loads(raw)
            if data.get("key") != key:
                raise ValueError("key mismatch")
            c = data["completion"]
            out = Completion(
                text=str(c["text"]),
                prompt_tokens=int(c["prompt_tokens"]),
                completion_tokens=int(c["completion_tokens"]),
                finish_reason=str(c.get("finish_reason", "stop")),
                index=int(data["request"]["sample_index"]),
                latency_s=0.0,
                from_cache=True,
                model=str(c.get("model", "")),
                cache_key=key,
            )
        except (ValueError, KeyError, TypeError):
            if count:
                with self._lock:
                    self.stats.corrupt += 1
                    self.stats.misses += 1
            return None
        if count:
            with self._lock:
                self.stats.hits += 1
        return out

    def put(self, key: str, payload: dict[str, Any], completion: Completion) -> None:
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "key": key,
            "request": payload,
            "completion": {
                "text": completion.text,
                "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens,
                "finish_reason": completion.finish_reason,
                "model": completion.model,
                "latency_s": completion.latency_s,
            },
        }
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}.", suffix=".tmp", dir=p.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh, ensure_ascii=False, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, p)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        with self._lock:
            self.stats.writes += 1

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json"))


def replayed(c: Completion) -> Completion:
    """A sample generated for another request, as this one receives it."""
    return replace(c, from_cache=c.ok, latency_s=0.0)


class CachedBackend(Backend):
    """Wrap a backend with a :class:`CompletionCache`: hits are replayed, misses generated.

    Replayed completions carry ``from_cache=True`` and ``latency_s=0``; fresh ones are stored
    before they are returned, one by one, so a request that failed on its own (returned, never
    stored: the next run tries it again) costs nothing to the rest of its batch. Every
    completion carries its ``cache_key``. Threads may share the wrapper
    (:mod:`cogrsi_lib.llm.together`): a sample another thread is generating is waited for and
    replayed, not asked again, so each is generated once, as in a serial run.
    """

    def __init__(self, inner: Backend, cache: CompletionCache | str | os.PathLike[str]) -> None:
        self.inner = inner
        self.cache = cache if isinstance(cache, CompletionCache) else CompletionCache(cache)
        self.kind = inner.kind
        self._pending: dict[str, Future[Completion]] = {}
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def concurrent(self) -> bool:  # type: ignore[override]
        return self.inner.concurrent

    def _claim(self, keys: Sequence[str]) -> tuple[list[Completion | None], list[int],
                                                   dict[int, Future[Completion]]]:
        """Per key its stored completion (or None); the positions this caller generates
        (each now pending under its key); and the positions that wait for a sample pending
        elsewhere (another thread's, or an earlier position's of the same batch)."""
        out: list[Completion | None] = [self.cache.get(k) for k in keys]
        todo: list[int] = []
        waiting: dict[int, Future[Completion]] = {}
        with self._lock:
            for pos, (k, c) in enumerate(zip(keys, out, strict=True)):
                if c is not None:
                    continue
                if k in self._pending:
                    waiting[pos] = self._pending[k]
                elif (hit := self.cache.get(k, count=False)) is not None:  # stored meanwhile
                    out[pos] = hit
                else:
                    todo.append(pos)
                    self._pending[k] = Future()
        return out, todo, waiting

    def _store(self, key: str, job: Job, c: Completion) -> Completion:
        """A fresh completion stored (when it succeeded) and handed to whoever waits."""
        c = replace(c, cache_key=key, from_cache=False)
        if c.ok:
            self.cache.put(key, key_payload(self.identity, job), c)
        with self._lock:
            self._pending.pop(key).set_result(c)
        return c

    def _abandon(self, keys: Sequence[str], exc: BaseException) -> None:
        with self._lock:
            for k in keys:
                self._pending.pop(k).set_exception(exc)

    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        ident = self.identity
        keys = [cache_key(ident, j) for j in jobs]
        out, todo, waiting = self._claim(keys)
        if todo:
            try:
                fresh = self.inner.complete([jobs[p] for p in todo])
            except BaseException as e:
                self._abandon([keys[p] for p in todo], e)
                raise
            for p, c in zip(todo, fresh, strict=True):
                out[p] = self._store(keys[p], jobs[p], c)
        for pos, f in waiting.items():
            out[pos] = replayed(f.result())
        return [c for c in out if c is not None]

    def stream(self) -> JobStream:
        """Hits answered at once; misses streamed on the wrapped backend's own stream."""
        return CachedStream(self, self.inner.stream())

    def close(self) -> None:
        self.inner.close()


class CachedStream(JobStream):
    """:class:`CachedBackend`'s stream: stored samples come back at once, samples pending
    elsewhere when they land, and the rest go to the wrapped backend's stream, each stored
    as it finishes."""

    def __init__(self, cached: CachedBackend, inner: JobStream) -> None:
        self.cached = cached
        self.inner = inner

    def submit(self, jobs: Sequence[Job]) -> list[Future[Completion]]:
        cached = self.cached
        ident = cached.identity
        keys = [cache_key(ident, j) for j in jobs]
        out, todo, waiting = cached._claim(keys)
        futures: list[Future[Completion]] = [Future() for _ in jobs]
        own = {pos: cached._pending[keys[pos]] for pos in todo}
        try:
            sent = self.inner.submit([jobs[p] for p in todo]) if todo else []
        except BaseException as e:
            cached._abandon([keys[p] for p in todo], e)
            raise
        for p, f in zip(todo, sent, strict=True):
            f.add_done_callback(self._landed(keys[p], jobs[p]))
        for pos, c in enumerate(out):
            if c is not None:
                futures[pos].set_result(c)
        for pos, f in own.items():
            f.add_done_callback(_forward(futures[pos], own=True))
        for pos, f in waiting.items():
            f.add_done_callback(_forward(futures[pos], own=False))
        return futures

    def _landed(self, key: str, job: Job):  # noqa: ANN202 - a Future callback
        def landed(f: Future[Completion]) -> None:
            exc = f.exception()
            if exc is not None:
                self.cached._abandon([key], exc)
            else:
                self.cached._store(key, job, f.result())
        return landed

    def drive(self) -> bool:
        return self.inner.drive()

    def close(self) -> None:
        self.inner.close()


def _forward(target: Future[Completion], own: bool):  # noqa: ANN202 - a Future callback
    """Copy a pending sample's outcome into ``target`` (replayed unless it is ``own``)."""
    def forward(f: Future[Completion]) -> None:
        exc = f.exception()
        if exc is not None:
            target.set_exception(exc)
        else:
            c = f.result()
            target.set_result(c if own else replayed(c))
    return forward

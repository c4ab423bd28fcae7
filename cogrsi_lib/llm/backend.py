"""The one ``Backend`` interface (DESIGN.md, ``llm/``; CogRSI Appendix G.1), and the typed
settings every backend kind is built from.

Every backend turns a batch of jobs (request, sample index) into completions. ``generate``
takes requests with ``n`` samples each and returns, per request, its ``n`` completions in
index order. Subclasses implement ``complete``; they may batch the jobs however they like
(the vLLM engine runs them all in one ``generate`` call, the server client runs them
concurrently, the embedded model batches the samples of one prompt).

Each backend module declares, beside its backend, a :class:`BackendSpec` subclass registered
under its kind with :func:`register_backend`: the settings a ``params.yaml`` entry gives for
that kind, typed, and ``make`` that builds the backend from them. :mod:`cogrsi_lib.llm.spec`
gathers the registered kinds into the one ``ModelSpec`` every stage names its models with.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from cogrsi_lib.llm import tally
from cogrsi_lib.llm.flow import JobStream, ThreadStream, WaveStream
from cogrsi_lib.llm.types import Completion, Job, Request, expand


class Backend(abc.ABC):
    """Chat messages in; ``n`` samples with text and token counts out."""

    #: short backend kind ("embedded", "vllm", "openai", "fake"); part of every cache key
    kind: str = "backend"
    #: ``complete`` may be called from several threads at once and serves them together (a
    #: server); an in-process model answers one batch at a time (:mod:`cogrsi_lib.llm.together`)
    concurrent: bool = False

    @property
    @abc.abstractmethod
    def model(self) -> str:
        """The model's name as the cache and the records know it."""

    @property
    def identity(self) -> str:
        """What the completion cache keys on besides the prompt: ``kind:model``."""
        return f"{self.kind}:{self.model}"

    @abc.abstractmethod
    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        """One completion per job, in the jobs' order, each with ``index == job.index``."""

    def generate(self, requests: Sequence[Request]) -> list[list[Completion]]:
        """For each request, its ``n`` completions in sample-index order (:meth:`finish`)."""
        jobs = expand(requests)
        return self.finish(requests, self.complete(jobs) if jobs else [])

    def finish(self, requests: Sequence[Request], done: Sequence[Completion]
               ) -> list[list[Completion]]:
        """The completions of ``requests``' jobs (:func:`expand`'s order) split per request;
        each is marked ``structured`` when the request's reply format was enforced, and
        reported to the open reply tallies (:mod:`cogrsi_lib.llm.tally`)."""
        n_jobs = sum(r.params.n for r in requests)
        if len(done) != n_jobs:
            raise RuntimeError(
                f"{type(self).__name__}.complete returned {len(done)} completions "
                f"for {n_jobs} jobs"
            )
        out: list[list[Completion]] = []
        pos = 0
        for r in requests:
            cs = list(done[pos : pos + r.params.n])
            if r.constraint is not None:
                cs = [replace(c, structured=True) for c in cs]
            tally.record(r, cs, self.kind)
            out.append(cs)
            pos += r.params.n
        return out

    def stream(self) -> JobStream:
        """A stream for :func:`~cogrsi_lib.llm.flow.run_flows`: concurrent requests on
        worker threads for a backend that serves them (:attr:`concurrent`), else every ready
        job in one :meth:`complete` batch at a time."""
        if self.concurrent:
            return ThreadStream(self.complete)
        return WaveStream(self.complete)

    def generate_one(self, request: Request) -> list[Completion]:
        """The ``n`` completions of a single request."""
        return self.generate([request])[0]

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release engine resources (optional)."""


def context_failure(prompt_tokens: int, max_model_len: int) -> str:
    """The failure reason of a prompt that leaves no room for a reply ("" when it fits)."""
    if prompt_tokens < max_model_len:
        return ""
    return (f"context_length: the prompt has {prompt_tokens} tokens and the model's context "
            f"is {max_model_len}")


def count_words(text: str) -> int:
    """A tokenizer-free token count (whitespace words); used where no tokenizer exists."""
    return len(text.split())


#: a chat template's own arguments (e.g. ``{enable_thinking: false}``), passed verbatim to
#: the template: free-form, because each model's template reads arguments of its own
ChatTemplateKwargs = dict[str, Any]

#: a stage's scripted stand-ins by variant (``{backend: scripted, variant: alt}``): each
#: builds the stand-in from the stage's own data, which only the stage has
StandIns = Mapping[str, Callable[[], Backend]]


class BackendSpec(BaseModel):
    """The typed settings of one backend kind: unknown keys refused, read-only.

    ``backend`` names the kind (each subclass fixes it); ``cache_dir``, when set, wraps the
    backend in the content-addressed completion cache. A relative ``cache_dir`` (and a
    relative ``adapter``) is taken from ``base_dir``, e.g. the repository root of a stage.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str
    cache_dir: str | None = None

    def make(self, base_dir: str | os.PathLike[str] | None = None) -> Backend:
        """The backend these settings describe (without the cache)."""
        raise NotImplementedError(f"backend {self.backend!r} has no make()")

    def build(self, base_dir: str | os.PathLike[str] | None = None,
              stand_in: StandIns | None = None) -> Backend:
        """:meth:`make`, wrapped in the completion cache when ``cache_dir`` is set.
        ``stand_in`` serves the ``scripted`` kind only (its stage's stand-ins)."""
        from cogrsi_lib.llm.cache import CachedBackend

        backend = self.make(base_dir)
        if self.cache_dir:
            backend = CachedBackend(backend, under(self.cache_dir, base_dir))
        return backend


#: every registered backend kind and its settings class, in registration order
BACKEND_SPECS: dict[str, type[BackendSpec]] = {}

S = TypeVar("S", bound=type[BackendSpec])


def register_backend(kind: str) -> Callable[[S], S]:
    """Class decorator: ``cls`` holds the settings of backend ``kind`` (its ``backend``
    field defaults to ``kind``); :mod:`cogrsi_lib.llm.spec` then accepts the kind."""

    def register(cls: S) -> S:
        field = cls.model_fields.get("backend")
        if field is None or field.default != kind:
            raise TypeError(f"{cls.__name__}.backend must default to {kind!r}")
        known = BACKEND_SPECS.get(kind)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise TypeError(f"backend {kind!r} is already {known.__name__}")
        BACKEND_SPECS[kind] = cls
        return cls

    return register


def under(path: str | os.PathLike[str], base_dir: str | os.PathLike[str] | None) -> str:
    """``path``, taken from ``base_dir`` when it is relative and a ``base_dir`` is given."""
    path = os.fspath(path)
    if base_dir is not None and not os.path.isabs(path):
        return os.path.join(os.fspath(base_dir), path)
    return path

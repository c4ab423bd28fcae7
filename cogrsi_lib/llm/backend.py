"""The one ``Backend`` interface (DESIGN.md, ``llm/``; CogRSI Appendix G.1).

Every backend turns a batch of jobs (request, sample index) into completions. ``generate``
takes requests with ``n`` samples each and returns, per request, its ``n`` completions in
index order. Subclasses implement ``complete``; they may batch the jobs however they like
(the vLLM engine runs them all in one ``generate`` call, the server client runs them
concurrently, the embedded model batches the samples of one prompt).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import replace

from cogrsi_lib.llm import tally
from cogrsi_lib.llm.types import Completion, Job, Request, expand


class Backend(abc.ABC):
    """Chat messages in; ``n`` samples with text and token counts out."""

    #: short backend kind ("embedded", "vllm", "openai", "fake"); part of every cache key
    kind: str = "backend"

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
        """For each request, its ``n`` completions in sample-index order; each is marked
        ``structured`` when the request's reply format was enforced, and reported to the
        open reply tallies (:mod:`cogrsi_lib.llm.tally`)."""
        jobs = expand(requests)
        done = self.complete(jobs) if jobs else []
        if len(done) != len(jobs):
            raise RuntimeError(
                f"{type(self).__name__}.complete returned {len(done)} completions "
                f"for {len(jobs)} jobs"
            )
        out: list[list[Completion]] = []
        pos = 0
        for r in requests:
            cs = done[pos : pos + r.params.n]
            if r.constraint is not None:
                cs = [replace(c, structured=True) for c in cs]
            tally.record(r, cs, self.kind)
            out.append(cs)
            pos += r.params.n
        return out

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

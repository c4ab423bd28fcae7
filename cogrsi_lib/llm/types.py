"""Value types shared by every backend: requests in, completions out (CogRSI §5.1, Appendix G.1).

A *request* is one chat prompt with sampling settings and a number of samples ``n``. Backends
work on *jobs*: one (request, sample index) pair each, so that the completion cache can hold
and replay single samples (sample ``i`` of a prompt is always the same cache entry) and a
backend only generates what the cache lacks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from cogrsi_lib.llm.reply_format import ReplyFormat

Role = Literal["system", "user", "assistant"]
#: ``finish_reason`` of a request that failed on its own (see :meth:`Completion.failed`)
FAILED = "error"


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


def as_messages(messages: Sequence[Message | Mapping[str, str]] | str) -> tuple[Message, ...]:
    """Normalise a prompt (a string, dicts or :class:`Message`) to a tuple of messages."""
    if isinstance(messages, str):
        return (Message("user", messages),)
    out: list[Message] = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m)
        else:
            role = m["role"]
            if role not in ("system", "user", "assistant"):
                raise ValueError(f"unknown chat role {role!r}")
            out.append(Message(role, m["content"]))  # type: ignore[arg-type]
    if not out:
        raise ValueError("a request needs at least one message")
    return tuple(out)


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings of a request. ``n`` is the number of samples; ``seed`` the base seed.

    Sample ``i`` of a request is seeded by :func:`job_seed` from the base seed, the prompt and
    ``i``, so the samples of one prompt are distinct and each is reproducible on its own.
    """

    n: int = 1
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("n must be >= 1")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if self.temperature < 0:
            raise ValueError("temperature must be >= 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        object.__setattr__(self, "stop", tuple(self.stop))

    def key_fields(self) -> dict[str, Any]:
        """The fields that determine one sample (``n`` is not one of them)."""
        return {
            "temperature": float(self.temperature),
            "top_p": float(self.top_p),
            "max_tokens": int(self.max_tokens),
            "stop": list(self.stop),
            "seed": int(self.seed),
        }


@dataclass(frozen=True)
class Request:
    """A chat prompt plus its sampling settings and the declared form of its reply.

    ``reply`` is the prompt family's :class:`~cogrsi_lib.llm.reply_format.ReplyFormat`
    (``None`` for free text); ``structured`` asks the backend to enforce it while decoding.
    With ``structured=False`` the model generates freely and the same format still parses
    the reply, so the two protocols stay comparable.
    """

    messages: tuple[Message, ...]
    params: SamplingParams = field(default_factory=SamplingParams)
    reply: ReplyFormat | None = None
    structured: bool = True

    @classmethod
    def of(
        cls,
        messages: Sequence[Message | Mapping[str, str]] | str,
        *,
        reply: ReplyFormat | None = None,
        structured: bool = True,
        **params: Any,
    ) -> Request:
        """Build a request from messages and keyword sampling settings."""
        return cls(as_messages(messages), SamplingParams(**params), reply, structured)

    @property
    def constraint(self) -> ReplyFormat | None:
        """The format the backend must enforce: ``reply`` when ``structured``, else None."""
        return self.reply if self.structured else None

    @property
    def family(self) -> str:
        """The prompt family's name (``free`` for a request without a declared format)."""
        return self.reply.family if self.reply is not None else "free"

    def messages_dicts(self) -> list[dict[str, str]]:
        return [m.to_dict() for m in self.messages]

    def prompt_digest(self) -> str:
        """sha256 of the canonical JSON of the messages."""
        return sha256_json(self.messages_dicts())


@dataclass(frozen=True)
class Job:
    """One sample to produce: sample ``index`` of ``request``."""

    request: Request
    index: int

    @property
    def seed(self) -> int:
        return job_seed(self.request, self.index)


@dataclass(frozen=True)
class Completion:
    """One sampled reply with its accounting.

    ``latency_s`` is the wall time attributable to this sample: the request's own time for a
    server, or the batch's wall time shared evenly over its samples for an offline engine;
    0 for a cache hit. ``from_cache`` says the text was replayed from the completion cache;
    ``structured`` that the backend enforced the request's reply format while decoding.

    A request that failed on its own (prompt too long for the context, an HTTP error after
    retries, a timeout) is a completion too: empty text, ``finish_reason == "error"`` and the
    reason in ``error``, so it is recorded on its item and the rest of its batch goes on
    (:meth:`failed`). ``usage_reported`` is False where the server gave no token usage and the
    counts are word counts.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str = "stop"
    index: int = 0
    latency_s: float = 0.0
    from_cache: bool = False
    model: str = ""
    cache_key: str = ""
    structured: bool = False
    error: str = ""
    usage_reported: bool = True

    @classmethod
    def failed(cls, job: Job, reason: str, model: str = "", prompt_tokens: int = 0) -> Completion:
        """The completion of a job that could not be generated, with its reason."""
        return cls(text="", prompt_tokens=prompt_tokens, completion_tokens=0,
                   finish_reason=FAILED, index=job.index, model=model, error=reason)

    @property
    def ok(self) -> bool:
        """Whether the backend produced a reply (not a per-request failure)."""
        return self.finish_reason != FAILED

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "finish_reason": self.finish_reason,
            "index": self.index,
            "latency_s": self.latency_s,
            "from_cache": self.from_cache,
            "model": self.model,
            "cache_key": self.cache_key,
            "structured": self.structured,
            "error": self.error,
            "usage_reported": self.usage_reported,
        }


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the byte form that content keys hash."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_json(obj: Any) -> str:
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def job_seed(request: Request, index: int) -> int:
    """Per-sample seed: a hash of (base seed, prompt, sample index), in [0, 2**31)."""
    h = sha256_json(
        {"seed": request.params.seed, "prompt": request.prompt_digest(), "index": index}
    )
    return int(h[:8], 16) & 0x7FFFFFFF


def expand(requests: Sequence[Request]) -> list[Job]:
    """All jobs of the requests, request by request, sample index ascending."""
    return [Job(r, i) for r in requests for i in range(r.params.n)]

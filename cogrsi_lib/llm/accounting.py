"""Per-question call and token accounting (CogRSI §5.1 and G.7: calls per question, token ratio).

Each sample counts as one call, with its full prompt counted each time, whether the backend
shares the prompt's prefix or not: this is the paper's convention (SC with k=6 makes 6.0
calls). Calls replayed from the completion cache still count (they are part of the method's
cost) and are also counted apart as ``cached_calls``; ``latency_s`` only adds real time.
``structured_calls`` counts the samples whose reply format the backend enforced.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cogrsi_lib.llm.types import Completion


@dataclass
class RoleUsage:
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    structured_calls: int = 0

    def add(self, c: Completion) -> None:
        self.calls += 1
        self.cached_calls += int(c.from_cache)
        self.prompt_tokens += c.prompt_tokens
        self.completion_tokens += c.completion_tokens
        self.latency_s += c.latency_s
        self.structured_calls += int(c.structured)

    def merge(self, other: RoleUsage) -> None:
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.latency_s += other.latency_s
        self.structured_calls += other.structured_calls

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "latency_s": round(self.latency_s, 6),
            "structured_calls": self.structured_calls,
        }


@dataclass
class CallLedger:
    """Usage of one question, by role (``perception``, ``sample``, ``arbitration``, ...)."""

    roles: dict[str, RoleUsage] = field(default_factory=dict)

    def add(self, role: str, completions: Iterable[Completion]) -> None:
        u = self.roles.setdefault(role, RoleUsage())
        for c in completions:
            u.add(c)

    def total(self) -> RoleUsage:
        t = RoleUsage()
        for u in self.roles.values():
            t.merge(u)
        return t

    def to_dict(self) -> dict[str, Any]:
        d = self.total().to_dict()
        d["by_role"] = {r: u.to_dict() for r, u in sorted(self.roles.items())}
        return d

"""Per-family reply statistics: calls, parse rate, share at the token cap, reply length.

Every :meth:`Backend.generate <cogrsi_lib.llm.backend.Backend.generate>` reports its requests
and completions, and its backend kind, to the tallies that are open (:func:`open_tally`), so a
stage sees every call of every backend it builds without threading a counter through the
library. A reply counts as parsed when its request's declared
:class:`~cogrsi_lib.llm.reply_format.ReplyFormat` accepts it: the same check the family's own
parser starts with. Requests without a declared format are tallied under ``free`` with no parse
rate. Beside the parse rate, each family row carries the checks that catch silent failures:
requests that failed on their own (``failed``, with the first reason), replies cut at the token
cap, multi-sample requests at temperature > 0 whose samples are all identical (a server that
ignores ``temperature``), replies with thinking text (``<think>``: thinking should be off), and
replies whose token usage the server did not report (counted in words). A stage's tally
(:func:`start_tally`) leaves out scripted stand-ins (kind ``fake``),
whose replies are fixed in advance, some malformed on purpose: it counts model calls only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cogrsi_lib.llm.types import Completion, Request

#: the columns of :meth:`ReplyTally.rows`, in order
COLUMNS = ("family", "kind", "calls", "structured_calls", "cached_calls", "parsed", "parse_rate",
           "capped", "cap_rate", "mean_reply_tokens", "failed", "sampled_requests",
           "identical_sample_requests", "thinking_replies", "usage_unreported", "first_error")
#: text that shows a reply carries the model's thinking
THINKING_MARKS = ("<think>", "</think>")


@dataclass
class FamilyCounts:
    kind: str = "free"
    calls: int = 0
    structured_calls: int = 0
    cached_calls: int = 0
    parsed: int = 0
    capped: int = 0
    completion_tokens: int = 0
    failed: int = 0
    sampled_requests: int = 0
    identical_sample_requests: int = 0
    thinking_replies: int = 0
    usage_unreported: int = 0
    first_error: str = ""

    def row(self, family: str) -> dict[str, Any]:
        n = self.calls
        free = self.kind == "free"
        return {
            "family": family,
            "kind": self.kind,
            "calls": n,
            "structured_calls": self.structured_calls,
            "cached_calls": self.cached_calls,
            "parsed": None if free else self.parsed,
            "parse_rate": None if free or not n else self.parsed / n,
            "capped": self.capped,
            "cap_rate": self.capped / n if n else None,
            "mean_reply_tokens": self.completion_tokens / n if n else None,
            "failed": self.failed,
            "sampled_requests": self.sampled_requests,
            "identical_sample_requests": self.identical_sample_requests,
            "thinking_replies": self.thinking_replies,
            "usage_unreported": self.usage_unreported,
            "first_error": self.first_error,
        }


class TooManyFailedRequests(RuntimeError):
    """More of a stage's requests failed than its ``max_failed_share`` allows."""


class ReplyTally:
    """Counts by prompt family (thread-safe)."""

    def __init__(self, skip_kinds: Sequence[str] = ()) -> None:
        self.families: dict[str, FamilyCounts] = {}
        self.skip_kinds = frozenset(skip_kinds)
        self._lock = threading.Lock()

    def record(self, request: Request, completions: Sequence[Completion],
               kind: str = "") -> None:
        if kind in self.skip_kinds:
            return
        fmt = request.reply
        oks = [fmt.ok(c.text) for c in completions] if fmt is not None else []
        with self._lock:
            f = self.families.setdefault(request.family, FamilyCounts(fmt.kind if fmt else "free"))
            for c in completions:
                f.calls += 1
                f.structured_calls += int(c.structured)
                f.cached_calls += int(c.from_cache)
                f.capped += int(c.finish_reason == "length")
                f.completion_tokens += c.completion_tokens
                f.thinking_replies += int(any(m in c.text for m in THINKING_MARKS))
                f.usage_unreported += int(not c.usage_reported)
                if c.error:
                    f.failed += 1
                    f.first_error = f.first_error or c.error
            replies = [c.text for c in completions if not c.error]
            if request.params.temperature > 0 and len(replies) >= 2:
                f.sampled_requests += 1
                f.identical_sample_requests += int(len(set(replies)) == 1)
            f.parsed += sum(oks)

    def rows(self) -> list[dict[str, Any]]:
        """One row per family, by name (see :data:`COLUMNS`)."""
        with self._lock:
            return [f.row(name) for name, f in sorted(self.families.items())]

    def check_failures(self, max_share: float) -> None:
        """Raise :class:`TooManyFailedRequests` when every request failed, or more than
        ``max_share`` of them; the message gives the counts and the first reason."""
        with self._lock:
            calls = sum(f.calls for f in self.families.values())
            failed = sum(f.failed for f in self.families.values())
            first = next((f.first_error for f in self.families.values() if f.first_error), "")
        if calls and (failed == calls or failed / calls > max_share):
            raise TooManyFailedRequests(
                f"{failed} of {calls} requests failed ({failed / calls:.1%}, more than "
                f"max_failed_share {max_share:.1%}); first: {first}")

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{family: row}`` for a stage's ``summary.json``."""
        return {r["family"]: {k: v for k, v in r.items() if k != "family"} for r in self.rows()}

    def frame(self) -> Any:
        import polars as pl

        schema = {"family": pl.Utf8, "kind": pl.Utf8, "calls": pl.Int64,
                  "structured_calls": pl.Int64, "cached_calls": pl.Int64, "parsed": pl.Int64,
                  "parse_rate": pl.Float64, "capped": pl.Int64, "cap_rate": pl.Float64,
                  "mean_reply_tokens": pl.Float64, "failed": pl.Int64,
                  "sampled_requests": pl.Int64, "identical_sample_requests": pl.Int64,
                  "thinking_replies": pl.Int64, "usage_unreported": pl.Int64,
                  "first_error": pl.Utf8}
        return pl.DataFrame(self.rows(), schema=schema)


_OPEN: list[ReplyTally] = []
_OPEN_LOCK = threading.Lock()


def record(request: Request, completions: Sequence[Completion], kind: str = "") -> None:
    """Report one request's completions (from a backend of ``kind``) to every open tally."""
    with _OPEN_LOCK:
        tallies = list(_OPEN)
    for t in tallies:
        t.record(request, completions, kind)


@contextlib.contextmanager
def open_tally(skip_kinds: Sequence[str] = ()) -> Iterator[ReplyTally]:
    """A tally that sees every generation until the block ends (but from ``skip_kinds``)."""
    t = ReplyTally(skip_kinds)
    with _OPEN_LOCK:
        _OPEN.append(t)
    try:
        yield t
    finally:
        with _OPEN_LOCK:
            _OPEN.remove(t)


#: backend kinds a stage's tally leaves out: scripted stand-ins, not models
SCRIPTED_KINDS = ("fake",)


def start_tally(skip_kinds: Sequence[str] = SCRIPTED_KINDS) -> ReplyTally:
    """A tally of model calls that stays open for the rest of the process (a stage
    notebook's)."""
    t = ReplyTally(skip_kinds)
    with _OPEN_LOCK:
        _OPEN.append(t)
    return t

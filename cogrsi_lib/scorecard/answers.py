"""Frozen items as reader items, strict JSON replies, and records as replies (plan §4, §8.6).

Every suite hands its items to a :class:`cogrsi_lib.reader.System` as
:class:`~cogrsi_lib.reader.ReaderItem` objects (Suite A's by
:func:`cogrsi_lib.reader.items.from_nested_item`), so the bare model, the baselines and the
intervention variants (§10-11) answer the same frozen items.  ``meta["chain"]`` carries the
belief chain a question asks about (the oracle's ``[X1, ..., Xk]``), which the perspective
prompt and the epistemic store need; items without one are not belief questions.

The required reply of Suite A is one JSON object ``{"answer": ..., "confidence": ...}``
(plan §4; :mod:`cogrsi_lib.nested.reply`).  For questions with a numeric answer (guessing
games, Suite C) the answer is a JSON number.  Parsing is strict: a reply that breaks the
format is recorded as unparsed, never mapped to an option.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl
from pydantic import Field

from cogrsi_lib.llm.families import prompt_family
from cogrsi_lib.llm.parsing import normalise_free_text
from cogrsi_lib.llm.reply_format import ReplyFormat, reply_model
from cogrsi_lib.llm.types import Completion, Request
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.nested.reply import (
    ANSWER_FORMAT,
    CONFIDENCE,
    Reply,
    read_reply,
    reply_format,
)
from cogrsi_lib.nested.score import NestedScore, score
from cogrsi_lib.reader.items import ReaderItem, answer_key, from_nested_item
from cogrsi_lib.reader.records import ItemRecord, PerceptionRecord, SampleRecord, new_record
from cogrsi_lib.reader.system import System, run_system

NUMBER_FORMAT = (
    'Reply with one JSON object and nothing else: {"answer": <a number>, '
    '"confidence": <probability from 0 to 1 that your answer is correct>}.'
)
ABSTAINED = "abstained"


def item_chain(item: ReaderItem) -> tuple[str, ...] | None:
    """The belief chain an item asks about (``meta["chain"]``), or None for other questions."""
    chain = item.meta.get("chain") if item.meta else None
    return tuple(chain) if chain is not None else None


# their example requests: cogrsi_lib/scorecard/direct.py
BARE_FAMILY = prompt_family("scorecard.bare", "json")
NUMBER_FAMILY = prompt_family("scorecard.number", "json")
#: the range of a numeric answer (the games' answers lie well inside it)
NUMBER_RANGE = (-1e6, 1e6)


def number_format() -> ReplyFormat:
    """``{"answer": <a number>, "confidence": <0..1, optional>}`` (Suite C's numeric
    questions), no fences, as Suite A's."""
    lo, hi = NUMBER_RANGE
    model = reply_model("NumberAnswer", answer=(float, Field(ge=lo, le=hi)),
                        confidence=CONFIDENCE)
    return ReplyFormat.json(NUMBER_FAMILY, model, fences=False)


def item_format(item: ReaderItem) -> ReplyFormat:
    """The bare prompt's reply for an item: an option of its own, or a number."""
    if item.options:
        return reply_format(item.options, BARE_FAMILY)
    return number_format()


def parse_number_reply(text: object) -> Reply:
    """Strict parse of ``{"answer": <number>, "confidence": <0..1>}`` (confidence optional)."""
    return read_reply(number_format(), text)


def parse_json_answer(text: object, item: ReaderItem) -> Reply:
    """The item's strict reply: an option for multiple choice, a number otherwise."""
    return read_reply(item_format(item), text)


def answer_format(item: ReaderItem) -> str:
    """The reply instruction for an item (Suite A's for options, a number otherwise)."""
    return ANSWER_FORMAT if item.options else NUMBER_FORMAT


def answer_label(item: ReaderItem, answer: str) -> str:
    """The vote key of a parsed answer: the option's label, or normalised free text."""
    if item.options:
        return answer_key(answer, item.options, item.labels)
    return normalise_free_text(answer)


def json_record(
    system: str, item: ReaderItem, completion: Completion, reply: Reply,
    role: str = "answer", view: str = "plain", request: Request | None = None,
) -> ItemRecord:
    """One record from one strictly parsed reply to ``request``; the stated confidence goes
    to ``extra``."""
    rec = new_record(system, item)
    rec.perception = PerceptionRecord("none")
    rec.ledger.add(role, [completion])
    label = answer_label(item, reply.answer) if reply.parsed and reply.answer else None
    rec.samples = [SampleRecord.of(view, completion, label, "ok" if label else "unparsed",
                                   reply.error or "", request)]
    rec.answer = label
    rec.answer_text = item.option_text(label)
    rec.status = "ok" if label is not None else "unparsed"
    rec.extra["confidence"] = reply.confidence if label is not None else None
    if reply.error:
        rec.extra["error"] = reply.error
    return rec


def record_confidence(rec: ItemRecord) -> float | None:
    """The confidence a record states; else the leader's vote share over several samples.

    A single-sample system that states no confidence has none (left out of Brier scores).
    """
    stated = rec.extra.get("confidence")
    if stated is not None:
        return float(stated)
    if rec.answer is None or len(rec.samples) < 2:
        return None
    return sum(s.answer == rec.answer for s in rec.samples) / len(rec.samples)


def as_reply(rec: ItemRecord) -> str:
    """A record as a Suite A reply; an unparsed or abstained record gives a non-JSON marker,
    which the strict scorer counts as unparsed (never as an option)."""
    if rec.status != "ok" or rec.answer_text is None:
        return f"<{rec.status}>"
    out: dict[str, Any] = {"answer": rec.answer_text}
    conf = record_confidence(rec)
    if conf is not None:
        out["confidence"] = conf
    return json.dumps(out)


@dataclass(frozen=True)
class NestedRun:
    """A system's Suite A records and their strict score (plan §8)."""

    system: str
    records: tuple[ItemRecord, ...]
    score: NestedScore

    @property
    def abstention_rate(self) -> float:
        """Share of items the system declined to answer (plan §4: if abstention is permitted)."""
        return sum(r.status == ABSTAINED for r in self.records) / max(len(self.records), 1)


def run_nested(
    system: System, items: Sequence[NestedItem], baselines: pl.DataFrame | None = None,
    batch_size: int = 64,
) -> NestedRun:
    """Answer Suite A items with ``system`` and score the replies strictly."""
    records = run_system(system, [from_nested_item(it) for it in items], batch_size)
    replies = {r.item_id: as_reply(r) for r in records}
    return NestedRun(system.name, tuple(records), score(items, replies, baselines=baselines))


def cost_per_100(records: Sequence[ItemRecord]) -> dict[str, float]:
    """Calls, tokens and latency per 100 tasks (plan §8.7), from the records' call ledgers."""
    n = len(records)
    if not n:
        return {"tasks": 0, "calls": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0,
                "total_tokens": 0.0, "latency_s": 0.0}
    tot = [r.ledger.total() for r in records]
    per = 100.0 / n
    return {
        "tasks": n,
        "calls": per * sum(u.calls for u in tot),
        "prompt_tokens": per * sum(u.prompt_tokens for u in tot),
        "completion_tokens": per * sum(u.completion_tokens for u in tot),
        "total_tokens": per * sum(u.total_tokens for u in tot),
        "latency_s": per * sum(u.latency_s for u in tot),
    }

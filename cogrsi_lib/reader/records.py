"""Per-question records (DESIGN.md: question id, answer, gold, samples, calls, tokens, latency).

Every system (the reader and each baseline) writes one :class:`ItemRecord` per question;
tables are computed from these records, never typed in. ``to_row`` flattens a record into
the stages' shared record columns (:mod:`cogrsi_lib.records_schema`: the core, ``stage``,
``run`` and ``source`` aside, which the stage knows) and the reader's own,
:data:`ITEM_COLUMNS`: scalar columns plus JSON columns for the nested parts. Each sample
keeps the chat messages it was asked with, which go to the ``prompt`` column once per view
rather than into ``samples_json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.types import Completion, Request
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.records_schema import RecordSchema, calls_json, messages_of


@dataclass(frozen=True)
class SampleRecord:
    """One answering sample: which view it read, its raw reply and parsed answer."""

    view: str
    index: int
    text: str
    answer: str | None
    status: str
    reason: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    from_cache: bool
    structured: bool = False
    model: str = ""  # the backend's model name (a trained adapter is named in it)
    prompt: tuple[tuple[str, str], ...] = ()  # (role, content) of the request's messages

    @classmethod
    def of(
        cls, view: str, c: Completion, answer: str | None, status: str, reason: str,
        request: Request | None = None,
    ) -> SampleRecord:
        """The record of one sample of ``request``; a request that failed on its own is
        ``failed``, with the backend's reason."""
        if c.error:
            answer, status, reason = None, "failed", c.error
        return cls(
            view=view,
            index=c.index,
            text=c.text,
            answer=answer,
            status=status,
            reason=reason,
            prompt_tokens=c.prompt_tokens,
            completion_tokens=c.completion_tokens,
            finish_reason=c.finish_reason,
            from_cache=c.from_cache,
            structured=c.structured,
            model=c.model,
            prompt=tuple((m.role, m.content) for m in request.messages) if request else (),
        )

    def to_dict(self) -> dict[str, Any]:
        """The sample as ``samples_json`` holds it (its prompt is in the ``prompt`` column)."""
        d = asdict(self)
        d.pop("prompt")
        return d


@dataclass(frozen=True)
class PerceptionRecord:
    """The perception call's outcome: ``ok``, ``malformed`` (fell back to plain) or ``none``."""

    status: str
    reason: str = ""
    witnesses: tuple[tuple[str, ...], ...] | None = None
    text: str = ""
    from_cache: bool = False


@dataclass(frozen=True)
class ArbitrationRecord:
    ran: bool
    reason: str
    candidates: tuple[str, str] | None = None
    choice: str | None = None
    status: str = ""  # "ok" | "unparsed" when it ran
    text: str = ""
    from_cache: bool = False


@dataclass
class ItemRecord:
    """What one system did on one question."""

    system: str
    item_id: str
    story_id: str
    kind: str
    answer: str | None
    status: str  # "ok" | "unparsed"
    gold: str | None
    principle: str = "none"
    answer_text: str | None = None
    samples: list[SampleRecord] = field(default_factory=list)
    vote: dict[str, Any] = field(default_factory=dict)
    perception: PerceptionRecord | None = None
    arbitration: ArbitrationRecord | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    ledger: CallLedger = field(default_factory=CallLedger)
    n_options: int | None = None  # the item's option count (None: free text)

    @property
    def correct(self) -> bool | None:
        if self.gold is None:
            return None
        return self.answer is not None and self.answer == self.gold

    @property
    def unparsed_samples(self) -> int:
        return sum(s.status != "ok" for s in self.samples)

    def prompts_and_replies(self) -> tuple[dict[str, list[Any]], dict[str, list[str]]]:
        """The answering samples' prompts and replies by view (``prompt``/``reply``); a view
        asked with a second, different prompt is listed again as ``<view>#2``, ..."""
        prompts: dict[str, list[Any]] = {}
        replies: dict[str, list[str]] = {}
        seen: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
        for s in self.samples:
            key = seen.get((s.view, s.prompt))
            if key is None:
                n = sum(1 for v, _ in seen if v == s.view)
                key = s.view if n == 0 else f"{s.view}#{n + 1}"
                seen[(s.view, s.prompt)] = key
                if s.prompt:
                    prompts[key] = messages_of(s.prompt)
            replies.setdefault(key, []).append(s.text)
        return prompts, replies

    def to_row(self) -> dict[str, Any]:
        """The record's columns: the shared core (but ``stage``, ``run`` and ``source``) and
        :data:`ITEM_COLUMNS`."""
        usage = self.ledger.total()
        arb = self.arbitration
        per = self.perception
        models = sorted({s.model for s in self.samples if s.model})
        prompts, replies = self.prompts_and_replies()
        return {
            "system": self.system,
            "model": ", ".join(models) or None,
            "item_id": self.item_id,
            "story_id": self.story_id,
            "prompt": calls_json(prompts),
            "reply": calls_json(replies),
            "parse_status": self.status,
            "answer": self.answer,
            "gold": self.gold,
            "correct": self.correct,
            "n_options": self.n_options,
            "calls": usage.calls,
            "cached_calls": usage.cached_calls,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "kind": self.kind,
            "principle": self.principle,
            "answer_text": self.answer_text,
            "n_samples": len(self.samples),
            "unparsed_samples": self.unparsed_samples,
            "perception_status": per.status if per else "none",
            "arbitration_ran": bool(arb and arb.ran),
            "arbitration_reason": arb.reason if arb else "",
            "arbitration_choice": arb.choice if arb else None,
            "arbitration_status": arb.status if arb else "",
            "structured_calls": usage.structured_calls,
            "total_tokens": usage.total_tokens,
            "latency_s": usage.latency_s,
            "samples_json": json.dumps([s.to_dict() for s in self.samples], ensure_ascii=False),
            "vote_json": json.dumps(self.vote, ensure_ascii=False),
            "perception_json": json.dumps(asdict(per) if per else None, ensure_ascii=False),
            "arbitration_json": json.dumps(asdict(arb) if arb else None, ensure_ascii=False),
            "usage_json": json.dumps(self.ledger.to_dict(), ensure_ascii=False),
            "extra_json": json.dumps(self.extra, ensure_ascii=False, default=str),
        }


def new_record(system: str, item: ReaderItem, principle: str = "none") -> ItemRecord:
    return ItemRecord(
        system=system,
        item_id=item.item_id,
        story_id=item.story,
        kind=item.kind,
        answer=None,
        status="unparsed",
        gold=item.gold_key(),
        principle=principle,
        n_options=len(item.options) if item.options else None,
    )


#: the reader's own record columns, beside the core (:mod:`cogrsi_lib.records_schema`)
ITEM_COLUMNS: dict[str, Any] = {
    "kind": pl.Utf8, "principle": pl.Utf8, "answer_text": pl.Utf8, "n_samples": pl.Int64,
    "unparsed_samples": pl.Int64, "perception_status": pl.Utf8, "arbitration_ran": pl.Boolean,
    "arbitration_reason": pl.Utf8, "arbitration_choice": pl.Utf8, "arbitration_status": pl.Utf8,
    "structured_calls": pl.Int64, "total_tokens": pl.Int64, "latency_s": pl.Float64,
    "samples_json": pl.Utf8, "vote_json": pl.Utf8, "perception_json": pl.Utf8,
    "arbitration_json": pl.Utf8, "usage_json": pl.Utf8, "extra_json": pl.Utf8,
}  # fmt: skip
#: reader records tabulated outside a stage (``stage`` null)
ITEM_RECORDS = RecordSchema(None, ITEM_COLUMNS)


def records_to_frame(records: Sequence[ItemRecord], schema: RecordSchema = ITEM_RECORDS,
                     **columns: Any) -> pl.DataFrame:
    """One row per record in ``schema`` (whose extension holds :data:`ITEM_COLUMNS`), with
    ``columns`` (e.g. ``run=0``, ``source="pairs"``) set on every row."""
    return schema.frame({**r.to_row(), **columns} for r in records)


def write_records(records: Sequence[ItemRecord], path: str) -> None:
    """Write records as parquet."""
    records_to_frame(records).write_parquet(path)

"""Per-question records (DESIGN.md: question id, answer, gold, samples, calls, tokens, latency).

Every system (the reader and each baseline) writes one :class:`ItemRecord` per question;
tables are computed from these records, never typed in. ``to_row`` flattens a record for
parquet: scalar columns plus JSON columns for the nested parts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.types import Completion
from cogrsi_lib.reader.items import ReaderItem


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

    @classmethod
    def of(
        cls, view: str, c: Completion, answer: str | None, status: str, reason: str
    ) -> SampleRecord:
        """The record of one sample; a request that failed on its own is ``failed``, with
        the backend's reason."""
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
        )


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

    def to_row(self) -> dict[str, Any]:
        usage = self.ledger.total()
        arb = self.arbitration
        per = self.perception
        models = sorted({s.model for s in self.samples if s.model})
        return {
            "system": self.system,
            "model": ", ".join(models) or None,
            "item_id": self.item_id,
            "story_id": self.story_id,
            "kind": self.kind,
            "principle": self.principle,
            "answer": self.answer,
            "answer_text": self.answer_text,
            "status": self.status,
            "gold": self.gold,
            "correct": self.correct,
            "n_options": self.n_options,
            "n_samples": len(self.samples),
            "unparsed_samples": self.unparsed_samples,
            "perception_status": per.status if per else "none",
            "arbitration_ran": bool(arb and arb.ran),
            "arbitration_reason": arb.reason if arb else "",
            "arbitration_choice": arb.choice if arb else None,
            "arbitration_status": arb.status if arb else "",
            "calls": usage.calls,
            "cached_calls": usage.cached_calls,
            "structured_calls": usage.structured_calls,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            "latency_s": usage.latency_s,
            "samples_json": json.dumps([asdict(s) for s in self.samples], ensure_ascii=False),
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


def row_schema() -> dict[str, Any]:
    """The column types of :meth:`ItemRecord.to_row`, declared so that a column keeps its type
    when every value of a run is null (e.g. no arbitration ran)."""
    import polars as pl

    text, count = pl.Utf8, pl.Int64
    types: dict[str, Any] = dict.fromkeys(
        ("system", "model", "item_id", "story_id", "kind", "principle", "answer", "answer_text",
         "status", "gold", "perception_status", "arbitration_reason", "arbitration_choice",
         "arbitration_status", "samples_json", "vote_json", "perception_json",
         "arbitration_json", "usage_json", "extra_json"), text)
    types.update(dict.fromkeys(
        ("n_options", "n_samples", "unparsed_samples", "calls", "cached_calls",
         "structured_calls", "prompt_tokens", "completion_tokens", "total_tokens"), count))
    types.update(correct=pl.Boolean, arbitration_ran=pl.Boolean, latency_s=pl.Float64)
    return types


def records_to_frame(records: Sequence[ItemRecord]) -> Any:
    """A polars DataFrame with one row per record, in :func:`row_schema`'s types."""
    import polars as pl

    schema = row_schema()
    rows = [r.to_row() for r in records]
    if rows and set(rows[0]) != set(schema):
        raise AssertionError(f"row_schema() is not ItemRecord.to_row()'s columns: "
                             f"{sorted(set(rows[0]) ^ set(schema))}")
    order = list(rows[0]) if rows else list(schema)
    return pl.DataFrame(rows, schema={c: schema[c] for c in order}, orient="row")


def write_records(records: Sequence[ItemRecord], path: str) -> None:
    """Write records as parquet."""
    records_to_frame(records).write_parquet(path)

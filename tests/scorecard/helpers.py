"""Shared fixtures for the scorecard tests: small frozen item sets and test-double systems."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from cogrsi_lib.llm.types import Completion
from cogrsi_lib.nested import NestedConfig, NestedItem, generate
from cogrsi_lib.nested.reply import Reply
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.scorecard.answers import json_record


@lru_cache(maxsize=8)
def nested_items(seed: int = 5, n_per_cell: int = 6) -> tuple[NestedItem, ...]:
    """A small Suite A item set (generation is deterministic, so it is cached)."""
    return generate(NestedConfig(n_per_cell=n_per_cell, seed=seed)).items


def completion(text: str = "") -> Completion:
    return Completion(text=text, prompt_tokens=10, completion_tokens=2)


class TableSystem:
    """A test-double System: ``answer(item) -> option text or None`` (and a confidence)."""

    def __init__(self, answer: Callable[[ReaderItem], str | None], name: str = "table",
                 confidence: float | None = 0.8,
                 on_batch: Callable[[Sequence[ReaderItem]], None] | None = None) -> None:
        self.answer = answer
        self.name = name
        self.confidence = confidence
        self.on_batch = on_batch
        self.seen: list[ReaderItem] = []

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        if self.on_batch is not None:
            self.on_batch(items)
        self.seen.extend(items)
        out = []
        for it in items:
            a = self.answer(it)
            reply = Reply(answer=a, confidence=self.confidence) if a else Reply(error="none")
            out.append(json_record(self.name, it, completion(), reply))
        return out

"""SAGE's distillation (zing-social-mind-report §5.5.1): the Selector-Generator-Reflector-Curator
loop on development items only.

Each round the Selector (:mod:`cogrsi_lib.harness.selector`) picks at most ``k`` entries per
item, the caller's ``answer_fn`` answers with them, one Reflector call
(:mod:`cogrsi_lib.harness.reflector`) per reflected item labels the shown entries and may
propose a strategy, and the Curator (:mod:`cogrsi_lib.harness.curator`) adds, revises or
merges it and prunes over budget. Everything it did is in its :class:`DistilLog`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from cogrsi_lib.embedding import Embedder
from cogrsi_lib.harness.curator import DEFAULT_MERGE_THRESHOLD, curate
from cogrsi_lib.harness.experience_store import Entry, ExperienceStore
from cogrsi_lib.harness.reflector import (
    Rejected,
    parse_reflection,
    reflector_format,
    reflector_messages,
)
from cogrsi_lib.harness.selector import DEFAULT_EXACT_THRESHOLD, Selector, coverage
from cogrsi_lib.harness.taxonomy import annotate
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.types import Completion, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.text import story_names

AnswerFn = Callable[[Sequence[ReaderItem], list[list[Entry]]], list[ItemRecord]]


def annotated_dimension(item: ReaderItem) -> str | None:
    """A development item's dimension from its own labels (None without an annotation)."""
    ann = annotate(item)
    return ann.dimension if ann else None


@dataclass(frozen=True)
class ReflectionLog:
    """One Reflector call and what came of it."""

    round: int
    item_id: str
    correct: bool
    shown: tuple[str, ...]
    text: str
    status: str  # "ok" | "rejected"
    reason: str = ""
    detail: str = ""
    action: str = ""
    entry_id: str | None = None
    similarity: float | None = None
    applied: dict[str, str] = field(default_factory=dict)
    stale: tuple[str, ...] = ()
    pruned: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoundLog:
    round: int
    n_items: int
    n_correct: int
    coverage: dict[str, float]
    n_reflected: int
    n_rejected: int
    store_size: int


@dataclass
class DistilLog:
    """Everything :func:`distil` did: per round, per Reflector call, and the calls' usage."""

    rounds: list[RoundLog] = field(default_factory=list)
    reflections: list[ReflectionLog] = field(default_factory=list)
    ledger: CallLedger = field(default_factory=CallLedger)

    def rejections(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.reflections:
            if r.status == "rejected":
                out[r.reason] = out.get(r.reason, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "rounds": [asdict(r) for r in self.rounds],
            "reflections": [asdict(r) for r in self.reflections],
            "usage": self.ledger.to_dict(),
        }


def _check_dev(dev_items: Sequence[ReaderItem], test_ids: Iterable[str]) -> None:
    ids = [it.item_id for it in dev_items]
    dup = sorted(i for i, n in Counter(ids).items() if n > 1)
    if dup:
        raise ValueError(f"duplicate development item ids: {dup}")
    leak = sorted(set(ids) & set(test_ids))
    if leak:
        raise ValueError(f"development items overlap the test set: {leak[:10]}")
    no_gold = [it.item_id for it in dev_items if it.gold is None]
    if no_gold:
        raise ValueError(f"development items without a gold answer: {no_gold[:10]}")


def distil(
    store: ExperienceStore,
    dev_items: Sequence[ReaderItem],
    answer_fn: AnswerFn,
    backend: Backend,
    embedder: Embedder,
    *,
    rounds: int = 1,
    k: int = 2,
    test_ids: Iterable[str] = frozenset(),
    exact_threshold: float = DEFAULT_EXACT_THRESHOLD,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    reflect_correct: bool = True,
    dimension_of: Callable[[ReaderItem], str | None] = annotated_dimension,
    temperature: float = 0.0,
    max_tokens: int = 400,
    seed: int = 0,
    structured: bool = True,
) -> tuple[ExperienceStore, DistilLog]:
    """Distil strategies from development items (§5.5.1); the input store is not changed.

    Each round: the Selector (exact recall, then the item's own dimension's bucket) picks at
    most ``k`` entries per item; ``answer_fn`` answers every item with its entries; the
    Reflector is called once for each wrong item and, with ``reflect_correct``, each right
    item that was given entries; the Curator applies the accepted replies in item order.
    Raises ``ValueError`` when a development item id is in ``test_ids``.
    """
    _check_dev(dev_items, test_ids)
    if rounds < 0:
        raise ValueError("rounds must be >= 0")
    store, log = store.copy(), DistilLog()
    items = list(dev_items)
    params = SamplingParams(n=1, temperature=temperature, max_tokens=max_tokens, seed=seed)
    for rnd in range(1, rounds + 1):
        selector = Selector(store, embedder, k, exact_threshold, mode="cascade")
        acts = selector.select_batch(items, [dimension_of(it) for it in items])
        guidance = [list(a.entries) for a in acts]
        records = answer_fn(items, guidance)
        if len(records) != len(items) or any(
            r.item_id != it.item_id for r, it in zip(records, items, strict=False)
        ):
            raise ValueError("answer_fn must return one record per item, in the items' order")
        todo = [
            i
            for i, r in enumerate(records)
            if r.correct is not True or (reflect_correct and guidance[i])
        ]
        reqs = []
        for i in todo:
            fmt = reflector_format([e.entry_id for e in guidance[i]], max_tokens)
            reqs.append(Request(reflector_messages(items[i], records[i], guidance[i], fmt),
                                params, fmt, structured))
        outs = backend.generate(reqs) if reqs else []
        rejected = 0
        for i, req, cs in zip(todo, reqs, outs, strict=True):
            rejected += _reflect(store, log, rnd, items[i], records[i], guidance[i], req, cs,
                                 embedder, merge_threshold)
        cov = coverage(acts).shares if acts else {}
        log.rounds.append(
            RoundLog(
                rnd,
                len(items),
                sum(r.correct is True for r in records),
                cov,
                len(todo),
                rejected,
                len(store),
            )
        )
    return store, log


def _reflect(store: ExperienceStore, log: DistilLog, rnd: int, item: ReaderItem,
             record: ItemRecord, shown_entries: Sequence[Entry], request: Request,
             completions: Sequence[Completion], embedder: Embedder,
             merge_threshold: float) -> bool:
    """One Reflector reply: parsed strictly (the gold option's text and the story's names
    refused), then curated into ``store`` in place; logged either way. True if rejected."""
    log.ledger.add("reflector", completions)
    c = completions[0]
    shown = tuple(e.entry_id for e in shown_entries)
    names = sorted(story_names([item], [record]))
    base = dict(
        round=rnd, item_id=item.item_id, correct=record.correct is True, shown=shown, text=c.text
    )
    try:
        refl = parse_reflection(c.text, shown, item.option_text(item.gold_key()), names,
                                request.reply)
    except Rejected as err:
        log.reflections.append(
            ReflectionLog(**base, status="rejected", reason=err.reason, detail=err.detail)
        )
        return True
    cur = curate(
        store, refl, item.item_id, embedder, merge_threshold=merge_threshold, round_=rnd
    )
    log.reflections.append(
        ReflectionLog(
            **base,
            status="ok",
            action=cur.action,
            entry_id=cur.entry_id,
            similarity=cur.similarity,
            applied=cur.applied,
            stale=cur.stale,
            pruned=cur.pruned,
        )
    )
    return False

"""Replay shared counterexamples to the reader, with and without the rule (CogRSI §5.4, J105).

Each shared counterexample is rendered as a story (:func:`cogrsi_lib.oracle.render.render`)
with its question, as a multiple-choice :class:`~cogrsi_lib.reader.ReaderItem` whose gold
comes from the oracle.  The reader answers it once with no principle and once with the rule
as its principle; so do random control questions from the same sample.  The paper: the rule
turns a right answer wrong on 8.6% of 1,139 counterexamples and on 2.8% of 176 controls.
The reader is reached through :data:`Answerer` ("answer these items under this principle"),
so any system can stand in; :func:`reader_answerer` wraps a reader or baseline.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from cogrsi_lib.audit.audit import RuleAudit
from cogrsi_lib.audit.snapshot import AuditSample
from cogrsi_lib.oracle.render import render
from cogrsi_lib.oracle.sampler import PROPERTIES
from cogrsi_lib.reader.items import ReaderItem

#: items, principle text ("" = none) -> one answer key (option label) or None per item
Answerer = Callable[[Sequence[ReaderItem], str], list[str | None]]

REPLAY_SCHEMA = {
    "rule_id": pl.Utf8, "condition": pl.Utf8, "question_id": pl.Int64, "world_id": pl.Int64,
    "gold": pl.Utf8, "without_rule": pl.Utf8, "with_rule": pl.Utf8, "right_without": pl.Boolean,
    "right_with": pl.Boolean, "turned_wrong": pl.Boolean, "turned_right": pl.Boolean,
}  # fmt: skip


def question_item(sample: AuditSample, question_id: int) -> ReaderItem | None:
    """The question as a reader item: the rendered story, the options and the oracle's gold.

    ``None`` for a property question with fewer than two possible values.
    """
    row = sample.questions.row(question_id, named=True)
    world = sample.worlds[row["world_id"]]
    if row["kind"] == "location":
        options = tuple(world.containers)
    else:
        known = PROPERTIES.get(row["property"], (True, ()))[1]
        seen = [str(v) for p, v in world.properties if p == row["property"]]
        seen += [str(e.value) for e in world.events
                 if e.type == "change" and e.property == row["property"]]
        options = tuple(dict.fromkeys([*known, *seen]))
    if len(options) < 2:
        return None
    return ReaderItem(
        item_id=f"audit-q{question_id}", context=render(world).text, question=row["question"],
        options=options, gold=row["gold"], story_id=f"audit-w{row['world_id']}",
        meta={"question_id": question_id, "world_id": row["world_id"]},
    )


def reader_answerer(system: Any) -> Answerer:
    """An :data:`Answerer` from a reader (``with_principle`` + ``answer_batch``)."""

    def answer(items: Sequence[ReaderItem], principle: str) -> list[str | None]:
        reader = system.with_principle(principle or None)
        return [r.answer for r in reader.answer_batch(list(items))]

    return answer


def choose_items(audits: Sequence[RuleAudit], sample: AuditSample, max_per_rule: int,
                 n_controls: int, seed: int = 0) -> list[tuple[RuleAudit, str, ReaderItem]]:
    """Per invalid rule: up to ``max_per_rule`` counterexamples (seeded draw) and
    ``n_controls`` random questions that are not its counterexamples."""
    rng = random.Random(seed)
    n = sample.n_questions
    out = []
    for a in audits:
        if a.verdict.verdict != "invalid":
            continue
        cx = [int(i) for i in a.counterexamples]
        picked = rng.sample(cx, min(max_per_rule, len(cx)))
        banned = set(cx)
        controls: list[int] = []
        pool = [i for i in rng.sample(range(n), min(n, 50 * max(1, n_controls)))
                if i not in banned]
        for qid in pool:
            if len(controls) >= n_controls:
                break
            controls.append(qid)
        for condition, ids in (("counterexample", picked), ("control", controls)):
            for qid in ids:
                item = question_item(sample, qid)
                if item is not None:
                    out.append((a, condition, item))
    return out


def replay_counterexamples(audits: Sequence[RuleAudit], sample: AuditSample, answerer: Answerer,
           max_per_rule: int = 20, n_controls: int = 10, seed: int = 0) -> pl.DataFrame:
    """One row per replayed item: answers without and with the rule, and whether it flipped."""
    chosen = choose_items(audits, sample, max_per_rule, n_controls, seed)
    if not chosen:
        return pl.DataFrame(schema=REPLAY_SCHEMA)
    items = [it for _, _, it in chosen]
    without = answerer(items, "")
    with_rule: list[str | None] = [None] * len(items)
    by_rule: dict[str, list[int]] = {}
    for k, (a, _, _) in enumerate(chosen):
        by_rule.setdefault(a.text, []).append(k)
    for text, ks in by_rule.items():
        for k, ans in zip(ks, answerer([items[k] for k in ks], text), strict=True):
            with_rule[k] = ans
    rows = []
    for k, (a, condition, it) in enumerate(chosen):
        gold = it.gold_key()
        rw, rr = without[k] == gold, with_rule[k] == gold
        rows.append({
            "rule_id": a.rule_id, "condition": condition, "question_id": it.meta["question_id"],
            "world_id": it.meta["world_id"], "gold": gold, "without_rule": without[k],
            "with_rule": with_rule[k], "right_without": rw, "right_with": rr,
            "turned_wrong": rw and not rr, "turned_right": rr and not rw,
        })  # fmt: skip
    return pl.DataFrame(rows, schema=REPLAY_SCHEMA)


def replay_summary(records: pl.DataFrame) -> pl.DataFrame:
    """By condition: items, wrong without the rule, wrong with it, and right-to-wrong flips."""
    return (
        records.group_by("condition", maintain_order=True)
        .agg(
            pl.len().alias("items"),
            (1 - pl.col("right_without").mean()).alias("wrong_without_rule"),
            (1 - pl.col("right_with").mean()).alias("wrong_with_rule"),
            pl.col("turned_wrong").mean().alias("turned_wrong"),
            pl.col("turned_right").mean().alias("turned_right"),
        )
        .sort("condition", descending=True)
    )

"""Gold perceivers in place of the perception call (CogRSI Appendix G.6, Table 27).

An item may carry its gold perceivers in ``meta["gold_perceivers"]``: for each line of the
story, the characters who perceived it. A system whose config reads ``perceivers: gold``
takes them instead of calling the model (:func:`gold_perception`); nothing else changes.
Two sources carry them:

- :func:`perceiver_items`: the oracle's own. Each narrative pair version's world is asked
  every first- and second-order location belief of its cast, and its story is rendered
  again with the oracle's per-line perceivers (:mod:`cogrsi_lib.oracle.render`), checked
  against the stored story. The questions are balanced over order and false versus true
  belief, the four columns of Table 27.
- Percept-ToMi (:mod:`cogrsi_lib.bench.percept`), whose items carry the release's
  per-sentence perceivers (``extra["perceivers"]``): :func:`percept_items`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import zip_longest
from typing import Any

import polars as pl

from cogrsi_lib.oracle.answer import answer_all
from cogrsi_lib.oracle.render import render, render_question
from cogrsi_lib.oracle.state import chains
from cogrsi_lib.oracle.world import Question, World
from cogrsi_lib.pairs.lexicon import lexicon
from cogrsi_lib.reader.items import ReaderItem, from_bench_item
from cogrsi_lib.reader.perception import Perception

GOLD_KEY = "gold_perceivers"
#: the source name of the oracle's gold-perceiver items
SOURCE = "oracle_perceivers"
#: Table 27's question columns: (order, false belief) -> label
CELLS = {(1, True): "FB1", (1, False): "TB1", (2, True): "FB2", (2, False): "TB2"}


class GoldPerceiversError(ValueError):
    """An item asked to be read with gold perceivers has none, or none that fit its lines."""


def gold_perception(item: ReaderItem) -> Perception:
    """The item's gold perceivers as a perception; raises :class:`GoldPerceiversError` when
    it has none or their count differs from its lines'."""
    raw = item.meta.get(GOLD_KEY)
    if raw is None:
        raise GoldPerceiversError(f"item {item.item_id} has no gold perceivers "
                                  f"(meta[{GOLD_KEY!r}]); only oracle and Percept-ToMi items do")
    lines = item.lines()
    if len(raw) != len(lines):
        raise GoldPerceiversError(f"item {item.item_id}: {len(raw)} gold perceiver lists for "
                                  f"{len(lines)} lines")
    return Perception(tuple(tuple(str(n) for n in who) for who in raw))


def percept_items(items: Iterable[Any]) -> list[ReaderItem]:
    """Percept-ToMi's items (:func:`cogrsi_lib.bench.percept.load_tomi`) as reader items with
    the release's per-sentence perceivers as gold; their question types name Table 27's
    column (:func:`table_cell`)."""
    out = []
    for item in items:
        if "perceivers" not in item.extra or table_cell(item.question_type) is None:
            raise GoldPerceiversError(f"item {item.id} is not a Percept-ToMi item "
                                      "(no perceivers or question type)")
        out.append(from_bench_item(item).with_meta(
            source=str(item.benchmark),
            **{GOLD_KEY: [sorted(map(str, who)) for who in item.extra["perceivers"]]}))
    return out


def _questions(world: World) -> list[tuple[Question, str, bool]]:
    """Every first- and second-order location belief of the world's cast, with its gold
    and whether the belief is false."""
    asked = [Question("location", chain) for chain in chains(world.agents, 2)]
    reality, *answers = answer_all(world, (Question("location"), *asked))
    return [(q, str(a.value), a.value != reality.value)
            for q, a in zip(asked, answers, strict=True)]


def _version_items(row: dict) -> list[ReaderItem]:
    world = World.from_json(row["world_json"])
    templates = lexicon(row["split"]).narrative
    story = render(world, templates)
    if story.text != row["story"]:
        raise GoldPerceiversError(f"pair {row['pair_id']}/{row['side']}: the world renders a "
                                  "different story from the stored one")
    perceivers = [sorted(line.perceivers) for line in story.lines]
    items = []
    for k, (q, gold, false_belief) in enumerate(_questions(world)):
        items.append(ReaderItem(
            item_id=f"{row['pair_id']}/{row['side']}/q{k}",
            context=row["story"],
            question=render_question(world, q, templates),
            options=tuple(row["options"]),
            gold=gold,
            story_id=f"{row['pair_id']}/{row['side']}",
            meta={"source": SOURCE, "pair_id": row["pair_id"], "side": row["side"],
                  GOLD_KEY: perceivers, "question_type": CELLS[(q.depth, false_belief)],
                  "question_json": json.dumps(q.to_dict(), sort_keys=True)},
        ))
    return items


def perceiver_items(records: pl.DataFrame, n: int) -> list[ReaderItem]:
    """``n`` oracle questions with gold perceivers from the narrative versions of
    ``records`` (pair records), taken in turn from Table 27's four cells (FB1, TB1, FB2,
    TB2) in the records' order, so a small setting fills every cell it can."""
    narrative = records.filter(pl.col("form") == "narrative")
    if n > 0 and not narrative.height:
        raise GoldPerceiversError(f"{n} questions with gold perceivers asked for, but the pair "
                                  "records hold no narrative version to ask them about")
    cells: dict[str, list[ReaderItem]] = {label: [] for label in CELLS.values()}
    for row in narrative.iter_rows(named=True):
        for item in _version_items(row):
            cells[item.meta["question_type"]].append(item)
    turns = zip_longest(*cells.values())
    picked = [item for turn in turns for item in turn if item is not None]
    return picked[:max(0, n)]


def table_cell(question_type: str | None) -> str | None:
    """Table 27's column of a record's question type: an oracle item's (the column itself)
    or Percept-ToMi's (``first_order_1_tom``: a first-order false belief; ``..._no_tom``: a
    true one); None for any other."""
    if question_type in CELLS.values():
        return question_type
    q = str(question_type or "")
    if not q.endswith("_tom") or not q.startswith(("first_order", "second_order")):
        return None
    return CELLS[(2 if q.startswith("second") else 1, not q.endswith("no_tom"))]


def gold_items(records: pl.DataFrame, n_questions: int, percept_tomi: int = 0
               ) -> list[ReaderItem]:
    """Table 27's questions: ``n_questions`` of the oracle's (:func:`perceiver_items`) and
    the first ``percept_tomi`` of Percept-ToMi, whose absence is an error naming where its
    files were looked for."""
    from cogrsi_lib import bench

    percept = percept_items(bench.load("percept-tomi")[:percept_tomi]) if percept_tomi else []
    return perceiver_items(records, n_questions) + percept

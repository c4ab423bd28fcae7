"""Suite B, applied recursive reasoning (plan §4 Suite B, §3 H5, §8.4, §19 Experiment 4).

Each applied item pairs two questions about one oracle state: the belief question of a
Suite A item ("Where does Anne think that Bob thinks the marble is?") and a behaviour
question with a stated goal ("Bob wants the marble. Where does Anne expect Bob to search
for it first?").  The behaviour gold comes from the oracle plus the goal, by the rule
:data:`SEARCH_RULE`: the searcher looks first where, in the asking chain's model, the
searcher believes the object is, which is the oracle's answer for the same chain.  So a
behaviour answer is right exactly when the belief is *used*.

The score reports the plan's four cells (belief right/wrong x behaviour right/wrong) and
the applied-ToM conversion P(behaviour right | belief right), overall, on false-belief
items and by depth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from cogrsi_lib.nested.facts import ADVERSARIAL, TRUE_BELIEF
from cogrsi_lib.nested.heuristics import oracle_answer
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.oracle.state import Chain
from cogrsi_lib.oracle.world import World
from cogrsi_lib.reader.items import ReaderItem, from_nested_item
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.system import System, run_system

SEARCH_RULE = "an agent who wants the object searches first where they believe it is"
SEEK = "seek"
CELLS: dict[tuple[bool, bool], str] = {
    (True, True): "functional recursive reasoning",
    (True, False): "knowing-doing gap",
    (False, True): "likely shortcut or guess",
    (False, False): "no evidence",
}


def behaviour_question(world: World, chain: Chain) -> str:
    """The goal and the behaviour question for ``chain``: its last agent is the searcher."""
    obj = world.object
    *outer, actor = chain
    goal = f"{actor} wants the {obj}."
    if not outer:
        return f"{goal} Where will {actor} search for it first?"
    lead, middle = outer[0], outer[1:]
    frame = f"Where does {lead} " + "".join(f"think that {m} " for m in middle[:1])
    frame += "".join(f"thinks that {m} " for m in middle[1:])
    verb = "expects" if middle else "expect"
    return f"{goal} {frame}{verb} {actor} to search for it first?"


def behaviour_gold(world: World, chain: Chain, goal: str = SEEK) -> str:
    """Where the searcher looks first, by :data:`SEARCH_RULE`, as the oracle has it."""
    if goal != SEEK:
        raise ValueError(f"unknown goal {goal!r}")
    return oracle_answer(world, tuple(chain))


@dataclass(frozen=True)
class AppliedItem:
    """A Suite A belief item and the behaviour question on the same state."""

    belief: NestedItem
    behaviour_question: str
    behaviour_gold: str
    goal: str = SEEK

    @property
    def id(self) -> str:
        return self.belief.id

    @property
    def depth(self) -> int:
        return self.belief.depth

    def behaviour_item(self) -> ReaderItem:
        """The behaviour question as a reader item (same story, same options)."""
        b = self.belief
        return ReaderItem(
            item_id=f"{b.id}-behaviour", context=b.story, question=self.behaviour_question,
            options=b.options, gold=self.behaviour_gold, story_id=f"world-{b.world_index}",
            meta={"suite": "applied", "depth": b.depth, "partition": b.partition,
                  "chain": list(b.chain), "object": b.world.object, "goal": self.goal},
        )


def applied_items(items: Iterable[NestedItem], depths: Sequence[int] = (1, 2, 3)
                  ) -> list[AppliedItem]:
    """One applied item per adversarial or true-belief Suite A item of the given depths."""
    out = []
    for it in items:
        if it.depth in depths and it.partition in (ADVERSARIAL, TRUE_BELIEF):
            out.append(AppliedItem(it, behaviour_question(it.world, it.chain),
                                   behaviour_gold(it.world, it.chain)))
    return out


@dataclass(frozen=True)
class AppliedScore:
    """Per-item cells, the cell table and the conversion rates (plan §8.4)."""

    records: pl.DataFrame
    cells: pl.DataFrame
    belief_accuracy: float | None
    behaviour_accuracy: float | None
    conversion: float | None
    conversion_false_belief: float | None

    def summary(self) -> dict[str, float | None]:
        return {"belief_accuracy": self.belief_accuracy,
                "behaviour_accuracy": self.behaviour_accuracy,
                "conversion": self.conversion,
                "conversion_false_belief": self.conversion_false_belief,
                "n": float(self.records.height)}


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def conversion(belief: Sequence[bool], behaviour: Sequence[bool]) -> float | None:
    """P(behaviour right | belief right); None when no belief answer is right."""
    right = [h for b, h in zip(belief, behaviour, strict=True) if b]
    return _share(sum(right), len(right))


def score_applied(
    items: Sequence[AppliedItem], belief_records: Mapping[str, ItemRecord],
    behaviour_records: Mapping[str, ItemRecord],
) -> AppliedScore:
    """Score one system's records, keyed by reader item id (belief: the Suite A id)."""
    rows = []
    for it in items:
        b = belief_records[it.id]
        h = behaviour_records[f"{it.id}-behaviour"]
        bc, hc = bool(b.correct), bool(h.correct)
        rows.append({"id": it.id, "world": f"world-{it.belief.world_index}", "depth": it.depth,
                     "partition": it.belief.partition, "false_belief": it.belief.false_belief,
                     "belief_correct": bc, "behaviour_correct": hc, "cell": CELLS[(bc, hc)]})
    schema = {"id": pl.Utf8, "world": pl.Utf8, "depth": pl.Int64, "partition": pl.Utf8,
              "false_belief": pl.Boolean, "belief_correct": pl.Boolean,
              "behaviour_correct": pl.Boolean, "cell": pl.Utf8}
    rec = pl.DataFrame(rows, schema=schema)
    fb = rec.filter(pl.col("false_belief"))
    return AppliedScore(
        records=rec, cells=cell_table(rec),
        belief_accuracy=_share(int(rec["belief_correct"].sum()), rec.height),
        behaviour_accuracy=_share(int(rec["behaviour_correct"].sum()), rec.height),
        conversion=conversion(rec["belief_correct"].to_list(), rec["behaviour_correct"].to_list()),
        conversion_false_belief=conversion(fb["belief_correct"].to_list(),
                                           fb["behaviour_correct"].to_list()),
    )


def cell_table(rec: pl.DataFrame) -> pl.DataFrame:
    """The four cells with counts and shares, for all items and by depth; with conversion."""
    rows = []
    groups: list[tuple[str, pl.DataFrame]] = [("all", rec)]
    groups += [(f"R{d}", rec.filter(pl.col("depth") == d))
               for d in sorted(set(rec["depth"].to_list()))]
    for name, part in groups:
        n = part.height
        row: dict[str, object] = {"subset": name, "n": n}
        for (bc, hc), label in CELLS.items():
            k = part.filter((pl.col("belief_correct") == bc)
                            & (pl.col("behaviour_correct") == hc)).height
            row[label] = k
        row["conversion"] = conversion(part["belief_correct"].to_list(),
                                       part["behaviour_correct"].to_list())
        rows.append(row)
    schema = {"subset": pl.Utf8, "n": pl.Int64} | {c: pl.Int64 for c in CELLS.values()}
    return pl.DataFrame(rows, schema=schema | {"conversion": pl.Float64})


@dataclass(frozen=True)
class AppliedRun:
    system: str
    belief_records: tuple[ItemRecord, ...]
    behaviour_records: tuple[ItemRecord, ...]
    score: AppliedScore


def run_applied(
    system: System, items: Sequence[AppliedItem],
    belief_records: Sequence[ItemRecord] | None = None, batch_size: int = 64,
) -> AppliedRun:
    """Ask the behaviour questions (and the belief ones, unless Suite A's records are given)."""
    if belief_records is None:
        belief_records = run_system(system, [from_nested_item(it.belief) for it in items],
                                    batch_size)
    by_id = {r.item_id: r for r in belief_records}
    missing = [it.id for it in items if it.id not in by_id]
    if missing:
        raise ValueError(f"no belief record for {len(missing)} item(s), e.g. {missing[:3]}")
    behaviour = run_system(system, [it.behaviour_item() for it in items], batch_size)
    score = score_applied(items, by_id, {r.item_id: r for r in behaviour})
    kept = tuple(by_id[it.id] for it in items)
    return AppliedRun(system.name, kept, tuple(behaviour), score)

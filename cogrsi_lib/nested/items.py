"""Nested-belief items R0-R4, rejection-sampled into balanced cells (plan §4 Suite A, §5.6).

Cells: R0 reality questions, and for each depth R1..R4 an adversarial partition (false
belief that also differs from every shallower prefix, see :mod:`.facts`) and a
true-belief partition, ``n_per_cell`` items each.  Worlds come from the oracle's
sampler, one after another from one seed, until every cell is full.  Per depth, a world
gives one adversarial item and one true-belief item of the same chain shape together,
so the two partitions share their stories.

Shortcut caps (plan §1.4): in an adversarial cell at most ``max_shortcut_share`` of the
items (default: chance, 1 / n_containers) may be answered correctly by each capped
heuristic.  Without the cap, deep chains that never jointly saw a move make "where the
object started" right on about 70% of adversarial R3/R4 items.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cogrsi_lib.nested.facts import (
    ADVERSARIAL,
    PARTITIONS,
    REALITY,
    TRUE_BELIEF,
    ChainFacts,
    world_facts,
)
from cogrsi_lib.nested.heuristics import HEURISTICS, is_shortcut
from cogrsi_lib.nested.strata import phenomena
from cogrsi_lib.oracle.render import render, render_question
from cogrsi_lib.oracle.sampler import DEFAULT_WEIGHTS, SamplerConfig, sample_world
from cogrsi_lib.oracle.state import Chain
from cogrsi_lib.oracle.world import Question, World

# Leaves and whispers make the divergent histories that deep adversarial items need;
# property changes are irrelevant to location questions, so they are rarer here.
NESTED_WEIGHTS: dict[str, float] = DEFAULT_WEIGHTS | {
    "leave": 3.0, "enter": 2.5, "whisper": 2.5, "sleep": 0.5, "change": 0.5,
}
CAPPED_HEURISTICS = ("last_mentioned", "most_recent_message", "initial_location")


class CellsNotFilled(RuntimeError):
    """Rejection sampling ran out of worlds before every cell was full."""


@dataclass(frozen=True)
class NestedConfig:
    """Knobs of the item generator; the first six are ``params.yaml: nested``."""

    n_per_cell: int = 10
    n_agents: int = 4
    n_containers: int = 4
    min_events: int = 8
    max_events: int = 16
    seed: int = 0
    max_depth: int = 4
    max_worlds: int = 100_000
    weights: tuple[tuple[str, float], ...] = tuple(NESTED_WEIGHTS.items())
    p_open_container: float = 0.2
    capped: tuple[str, ...] = CAPPED_HEURISTICS
    max_shortcut_share: float | None = None
    #: the oracle's policies (SEMANTICS.md), recorded with every item
    testimony: str = "latest"
    opening: str = "common_ground"

    def __post_init__(self) -> None:
        if self.n_per_cell < 1:
            raise ValueError("n_per_cell must be at least 1")
        if self.max_depth < 1:
            raise ValueError("max_depth must be at least 1")
        if self.max_worlds < 1:
            raise ValueError("max_worlds must be at least 1")
        unknown = [h for h in self.capped if h not in HEURISTICS]
        if unknown:
            raise ValueError(f"unknown heuristic(s) to cap: {unknown}")
        if self.max_shortcut_share is not None and not 0 <= self.max_shortcut_share <= 1:
            raise ValueError("max_shortcut_share must lie in [0, 1]")

    def sampler(self) -> SamplerConfig:
        """The oracle sampler's config: exactly ``n_agents`` agents per world."""
        return SamplerConfig(
            min_agents=self.n_agents, max_agents=self.n_agents,
            n_containers=self.n_containers, min_events=self.min_events,
            max_events=self.max_events, p_open_container=self.p_open_container,
            weights=self.weights, testimony=self.testimony, opening=self.opening,
        )

    def cells(self) -> list[tuple[int, str]]:
        """Every (depth, partition) cell: R0 reality, then adversarial and true-belief R1..Rk."""
        out = [(0, REALITY)]
        for k in range(1, self.max_depth + 1):
            out += [(k, ADVERSARIAL), (k, TRUE_BELIEF)]
        return out

    def shortcut_quota(self) -> int:
        """How many items of an adversarial cell one capped heuristic may answer correctly."""
        share = self.max_shortcut_share
        share = 1 / self.n_containers if share is None else share
        return math.floor(share * self.n_per_cell + 1e-9)


@dataclass(frozen=True)
class NestedItem:
    """One benchmark item: story, question, options and the gold with its access facts."""

    id: str
    world_index: int
    world: World
    chain: Chain
    partition: str
    gold: str
    reality: str
    prefix_answers: tuple[str, ...]
    false_belief: bool
    differs_from_prefixes: bool
    source: int
    via: str
    story: str
    question: str
    options: tuple[str, ...]
    strata: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def depth(self) -> int:
        return len(self.chain)

    def to_json(self) -> dict[str, Any]:
        """The item's JSON record (items.jsonl): what a model sees, the gold and the world."""
        return {
            "id": self.id, "world_index": self.world_index, "depth": self.depth,
            "partition": self.partition, "chain": list(self.chain), "story": self.story,
            "question": self.question, "options": list(self.options), "gold": self.gold,
            "reality": self.reality,
            "prefix_answers": list(self.prefix_answers), "false_belief": self.false_belief,
            "differs_from_prefixes": self.differs_from_prefixes, "source_event": self.source,
            "via": self.via, "lie_condition": self.strata.get("lie_condition"),
            "testimony": self.world.testimony, "opening": self.world.opening,
            "strata": dict(self.strata), "world": self.world.to_dict(),
        }


def make_item(facts: ChainFacts, world_index: int) -> NestedItem:
    """Render one selected chain of a world into an item."""
    partition = facts.partition
    if partition is None:
        raise ValueError(f"chain {list(facts.chain)} is neither adversarial nor true-belief")
    world = facts.world
    tag = {REALITY: "r", ADVERSARIAL: "adv", TRUE_BELIEF: "tb"}[partition]
    return NestedItem(
        id=f"w{world_index:06d}-R{facts.depth}-{tag}",
        world_index=world_index,
        world=world,
        chain=facts.chain,
        partition=partition,
        gold=str(facts.answer),
        reality=facts.reality,
        prefix_answers=facts.prefix_answers,
        false_belief=facts.false_belief,
        differs_from_prefixes=facts.differs_from_prefixes,
        source=facts.source,
        via=facts.via,
        story=render(world).text,
        question=render_question(world, Question("location", facts.chain)),
        options=tuple(world.containers),
        strata=phenomena(world, facts),
    )


@dataclass(frozen=True)
class Generation:
    """The items of one generator run and how many worlds it took."""

    config: NestedConfig
    items: tuple[NestedItem, ...]
    worlds_sampled: int
    worlds_used: int
    filled_after: dict[tuple[int, str], int]

    def cell_counts(self) -> dict[tuple[int, str], int]:
        counts = dict.fromkeys(self.config.cells(), 0)
        for it in self.items:
            counts[(it.depth, it.partition)] += 1
        return counts


def shortcut_hits(facts: ChainFacts, capped: Sequence[str]) -> tuple[str, ...]:
    """The capped heuristics that answer ``facts`` correctly where they are shortcuts."""
    return tuple(h for h in capped
                 if is_shortcut(h, facts.depth) and HEURISTICS[h](facts) == facts.answer)


def chain_shape(chain: Chain) -> tuple[int, ...]:
    """Which positions hold the same agent: (Anne, Bob, Anne) and (Bob, Dev, Bob) -> (0, 1, 0)."""
    first: dict[str, int] = {}
    return tuple(first.setdefault(a, len(first)) for a in chain)


def generate(cfg: NestedConfig) -> Generation:
    """Rejection-sample worlds until each cell holds ``cfg.n_per_cell`` items.

    World ``i`` is the ``i``-th of ``sampler.sample_worlds(n, cfg.seed, cfg.sampler())``.
    A world gives at most one R0 item and, per depth k, at most one matched pair: an
    adversarial chain (uniform among those that keep every capped shortcut within its
    quota and have a partner) and a true-belief chain of the same shape (uniform among
    them).  Pairs from one story with one chain shape leave neither the story nor the
    chain's pattern of repeated agents as a cue to the partition.  The same config gives
    the same items.  Raises :class:`CellsNotFilled` after ``cfg.max_worlds`` worlds.
    """
    worlds = random.Random(cfg.seed)
    pick = random.Random(f"nested-pick-{cfg.seed}")
    scfg = cfg.sampler()
    quota = cfg.shortcut_quota()
    need = dict.fromkeys(cfg.cells(), cfg.n_per_cell)
    hits = {k: dict.fromkeys(cfg.capped, 0) for k in range(1, cfg.max_depth + 1)}
    filled_after: dict[tuple[int, str], int] = {}
    picked: list[NestedItem] = []
    used = 0

    def take(facts: ChainFacts, index: int) -> None:
        cell = (facts.depth, facts.partition or "")
        picked.append(make_item(facts, index))
        need[cell] -= 1
        if need[cell] == 0:
            filled_after[cell] = index + 1

    for index in range(cfg.max_worlds):
        world = sample_world(worlds, scfg)
        by_cell: dict[tuple[int, str], list[ChainFacts]] = {}
        for facts in world_facts(world, cfg.max_depth):
            cell = (facts.depth, facts.partition or "")
            if need.get(cell, 0) > 0:
                by_cell.setdefault(cell, []).append(facts)
        before = len(picked)
        if (0, REALITY) in by_cell:
            take(by_cell[(0, REALITY)][0], index)
        for k in range(1, cfg.max_depth + 1):
            partners: dict[tuple[int, ...], list[ChainFacts]] = {}
            for f in by_cell.get((k, TRUE_BELIEF), []):
                partners.setdefault(chain_shape(f.chain), []).append(f)
            options = [f for f in by_cell.get((k, ADVERSARIAL), [])
                       if chain_shape(f.chain) in partners
                       and all(hits[k][h] < quota for h in shortcut_hits(f, cfg.capped))]
            if not options:
                continue
            chosen = pick.choice(options)
            for h in shortcut_hits(chosen, cfg.capped):
                hits[k][h] += 1
            take(chosen, index)
            take(pick.choice(partners[chain_shape(chosen.chain)]), index)
        used += len(picked) > before
        if not any(need.values()):
            return Generation(cfg, _ordered(picked), index + 1, used, filled_after)
    short = {f"R{k} {p}": n for (k, p), n in need.items() if n}
    raise CellsNotFilled(
        f"after {cfg.max_worlds} worlds some cells are still short (items missing: {short}); "
        "raise max_worlds or max_shortcut_share, add agents or events, or weight leave and "
        "whisper higher"
    )


def _ordered(items: Sequence[NestedItem]) -> tuple[NestedItem, ...]:
    rank = {p: i for i, p in enumerate(PARTITIONS)}
    return tuple(sorted(items, key=lambda it: (it.depth, rank[it.partition], it.world_index)))

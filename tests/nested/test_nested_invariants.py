"""Depth invariants of generated items (plan §5.6, §5.7) over seeds, checked with the
oracle's public ``answer_all`` rather than the generator's own bookkeeping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.nested import (
    ADVERSARIAL,
    REALITY,
    TRUE_BELIEF,
    CellsNotFilled,
    NestedConfig,
    baseline_table,
    generate,
    oracle_replies,
    score,
)
from cogrsi_lib.nested.facts import world_facts
from cogrsi_lib.nested.items import NestedItem, chain_shape
from cogrsi_lib.oracle import Question, answer_all

from .helpers import fast, small_generation

seeds = st.integers(min_value=0, max_value=10**6)


def _answers(it: NestedItem) -> list[str]:
    """Reality, then the oracle's answer of every prefix chain[:1] .. chain[:k]."""
    qs = tuple(Question("location", it.chain[:j]) for j in range(it.depth + 1))
    return [str(a.value) for a in answer_all(it.world, qs)]


@fast(12)
@given(seeds)
def test_adversarial_items_differ_from_reality_and_every_prefix(seed: int) -> None:
    for it in small_generation(seed).items:
        answers = _answers(it)
        gold, reality, prefixes = answers[-1], answers[0], answers[1:-1]
        assert it.gold == gold and it.reality == reality
        assert it.prefix_answers == tuple(prefixes)
        if it.partition == ADVERSARIAL:
            assert gold != reality
            assert all(gold != p for p in prefixes), (it.id, answers)
            assert it.false_belief and it.differs_from_prefixes
        elif it.partition == TRUE_BELIEF:
            assert gold == reality and not it.false_belief
        else:
            assert it.partition == REALITY and it.depth == 0 and gold == reality


@fast(12)
@given(seeds)
def test_cells_are_full_balanced_and_one_item_per_world_and_cell(seed: int) -> None:
    gen = small_generation(seed)
    assert set(gen.cell_counts().values()) == {3}
    cells = [(it.world_index, it.depth, it.partition) for it in gen.items]
    assert len(cells) == len(set(cells))
    assert len({it.id for it in gen.items}) == len(gen.items)
    assert gen.worlds_used <= gen.worlds_sampled == max(gen.filled_after.values())
    for it in gen.items:
        assert it.options == it.world.containers and it.gold in it.options
        assert len(it.world.agents) == 4 and len(it.world.containers) == 4
        assert 8 <= len(it.world.events) <= 16


@fast(12)
@given(seeds)
def test_partitions_come_in_matched_pairs(seed: int) -> None:
    """Per depth, each adversarial item has a true-belief partner from the same world with
    the same chain shape (so neither the story nor repeated agents cue the partition)."""
    by_key: dict = {}
    for it in small_generation(seed).items:
        if it.depth:
            by_key.setdefault((it.world_index, it.depth), {})[it.partition] = it
    for pair in by_key.values():
        assert set(pair) == {ADVERSARIAL, TRUE_BELIEF}
        assert chain_shape(pair[ADVERSARIAL].chain) == chain_shape(pair[TRUE_BELIEF].chain)
        assert pair[ADVERSARIAL].story == pair[TRUE_BELIEF].story


def test_chain_shape() -> None:
    assert chain_shape(("Anne", "Bob", "Anne", "Dev")) == (0, 1, 0, 2)
    assert chain_shape(("Bob", "Dev", "Bob", "Carla")) == (0, 1, 0, 2)
    assert chain_shape(()) == ()


@fast(12)
@given(seeds)
def test_the_oracle_scores_100_percent(seed: int) -> None:
    items = small_generation(seed).items
    s = score(items, oracle_replies(items))
    assert s.accuracy == 1.0 and s.leakage_rate == 0.0 and s.n_unparsed == 0
    assert s.by_depth["accuracy"].to_list() == [1.0] * 5
    assert s.depth_auc == 1.0 and s.degradation_slope == 0.0 and s.brier == 0.0


@fast(12)
@given(seeds)
def test_heuristic_accuracy_forced_by_the_definitions(seed: int) -> None:
    """On the adversarial partition reality and prefix are 0 at every depth, first-order is
    0 from R2 on (and is the answer itself at R1); capped heuristics stay within quota;
    reality is right on every true-belief item."""
    gen = small_generation(seed)
    table = baseline_table(gen.items)
    adv = {(r["heuristic"], r["depth"]): r for r in
           table.filter(table["subset"] == ADVERSARIAL).iter_rows(named=True)}
    quota = gen.config.shortcut_quota()
    for k in range(1, 5):
        assert adv[("reality", k)]["accuracy"] == 0.0
        assert adv[("prefix", k)]["accuracy"] == 0.0
        assert adv[("first_order", k)]["accuracy"] == (1.0 if k == 1 else 0.0)
        for name in gen.config.capped:
            assert adv[(name, k)]["correct"] <= quota
    for it in gen.items:
        if it.partition == TRUE_BELIEF:
            assert it.gold == it.reality


@fast(8)
@given(seeds)
def test_generation_is_deterministic_by_seed(seed: int) -> None:
    cfg = NestedConfig(n_per_cell=2, seed=seed)
    first, again = generate(cfg), generate(cfg)
    assert [it.to_json() for it in first.items] == [it.to_json() for it in again.items]
    assert first.worlds_sampled == again.worlds_sampled


def test_different_seeds_give_different_items() -> None:
    a = generate(NestedConfig(n_per_cell=2, seed=1)).items
    b = generate(NestedConfig(n_per_cell=2, seed=2)).items
    assert [it.story for it in a] != [it.story for it in b]


def test_selection_facts_are_kept_apart() -> None:
    """A false belief that echoes a prefix is neither adversarial nor true-belief."""
    seen = set()
    for it in small_generation(7).items:
        for f in world_facts(it.world):
            seen.add((f.false_belief, f.differs_from_prefixes, f.partition))
    assert (True, False, None) in seen
    assert all(p == ADVERSARIAL for fb, dp, p in seen if fb and dp and p != REALITY)
    assert all(p in (TRUE_BELIEF, REALITY) for fb, _, p in seen if not fb)


def test_unfillable_cells_raise_a_clear_error() -> None:
    with pytest.raises(CellsNotFilled, match=r"after 5 worlds .*R4 adversarial"):
        generate(NestedConfig(n_per_cell=50, seed=0, max_worlds=5))


def test_quota_is_chance_by_default() -> None:
    assert NestedConfig(n_per_cell=200, n_containers=4).shortcut_quota() == 50
    assert NestedConfig(n_per_cell=10, n_containers=3).shortcut_quota() == 3
    assert NestedConfig(n_per_cell=10, max_shortcut_share=0.0).shortcut_quota() == 0
    with pytest.raises(ValueError, match="unknown heuristic"):
        NestedConfig(capped=("nope",))

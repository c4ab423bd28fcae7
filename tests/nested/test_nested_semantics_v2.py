"""The nested benchmark under oracle semantics v2: whispers at every depth, lie conditions
scored separately, and no forced-choice item without a belief."""

from __future__ import annotations

import json
from dataclasses import replace

from cogrsi_lib.nested import generate, lie_condition_table, score, whisper_table
from cogrsi_lib.nested.facts import ADVERSARIAL, world_facts
from cogrsi_lib.nested.items import NestedConfig
from cogrsi_lib.oracle.lies import LIE_CONDITIONS

from .helpers import world

CFG = NestedConfig(n_per_cell=30, seed=5)


def test_no_adversarial_item_has_a_taken_whisper_over_its_agents_after_its_source() -> None:
    """v1's incoherent items (a later whisper between exactly the chain's agents left the
    chain stale) cannot be generated any more."""
    items = generate(CFG).items
    table = whisper_table(items)
    v2 = table.filter(table["semantics"] == "v2")
    assert v2["later_whisper_taken"].to_list() == [0, 0]
    assert v2["n"].to_list() == [30, 30]
    v1 = table.filter(table["semantics"] != "v2")
    assert v1["later_whisper_taken"].to_list() == [27, 0]  # the recorded v1 measurement


def test_lie_conditions_are_labelled_and_scored_separately() -> None:
    items = generate(CFG).items
    labels = {it.strata["lie_condition"] for it in items}
    assert labels <= set(LIE_CONDITIONS) and len(labels) >= 3
    replies = [json.dumps({"answer": it.gold if it.strata["lie_condition"] == "no_lie"
                           else it.reality, "confidence": 0.5}) for it in items]
    by = score(items, replies).by_lie_condition
    rows = {r["lie_condition"]: r for r in by.iter_rows(named=True)}
    assert rows["no_lie"]["accuracy"] == 1.0
    for cond in labels - {"no_lie"}:  # answering reality is right only on true beliefs
        fb = [it for it in items if it.strata["lie_condition"] == cond and it.false_belief]
        assert rows[cond]["n_false_belief"] == len(fb)
        if fb:
            assert rows[cond]["false_belief_accuracy"] == 0.0
    assert by["n"].sum() == len(items)
    assert lie_condition_table(score(items, replies).records).equals(by)


def test_no_item_asks_a_chain_without_a_belief() -> None:
    """opening unknown: Carla, out at the start, holds no belief until she sees something,
    so no chain through her is adversarial or true-belief."""
    w = replace(world("Anne move box", "Carla enter", present=["Anne", "Sally", "Bob"]),
                opening="unknown")
    facts = {f.chain: f for f in world_facts(w, 2)}
    assert facts[("Carla",)].answer is None and facts[("Carla",)].partition is None
    assert facts[("Anne", "Carla")].partition is None
    assert facts[("Anne",)].partition is not None
    items = generate(replace(CFG, n_per_cell=5, opening="unknown")).items
    assert all(it.world.opening == "unknown" for it in items)
    assert all(it.gold in it.options for it in items)
    assert any(it.partition == ADVERSARIAL for it in items)

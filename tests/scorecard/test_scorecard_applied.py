"""Suite B: behaviour questions on the same oracle state, four cells, conversion."""

from __future__ import annotations

import pytest

from cogrsi_lib.nested.facts import ADVERSARIAL, TRUE_BELIEF
from cogrsi_lib.nested.heuristics import oracle_answer
from cogrsi_lib.oracle.world import World
from cogrsi_lib.reader.items import from_nested_item
from cogrsi_lib.scorecard.applied import (
    CELLS,
    applied_items,
    behaviour_gold,
    behaviour_question,
    conversion,
    run_applied,
)
from cogrsi_lib.scorecard.direct import DirectSystem
from cogrsi_lib.scorecard.scripted import ScriptedModel, Skill, ToMCase

from .helpers import TableSystem, nested_items

WORLD = World.from_dict({
    "agents": ["Anne", "Bob", "Carla"], "containers": ["basket", "box", "drawer"],
    "object": "marble", "initial": {"location": "basket"},
    "events": [{"type": "leave", "agent": "Bob"},
               {"type": "move", "agent": "Anne", "to": "box"}],
})


def test_behaviour_questions_name_the_goal_and_the_chain() -> None:
    assert behaviour_question(WORLD, ("Bob",)) == (
        "Bob wants the marble. Where will Bob search for it first?")
    assert behaviour_question(WORLD, ("Anne", "Bob")) == (
        "Bob wants the marble. Where does Anne expect Bob to search for it first?")
    assert behaviour_question(WORLD, ("Carla", "Anne", "Bob")) == (
        "Bob wants the marble. Where does Carla think that Anne expects Bob to search for it "
        "first?")
    assert behaviour_question(WORLD, ("Carla", "Anne", "Carla", "Bob")).startswith(
        "Bob wants the marble. Where does Carla think that Anne thinks that Carla expects Bob")


def test_behaviour_gold_follows_the_searchers_belief() -> None:
    # Bob left before the move: he searches the basket, although the marble is in the box
    assert behaviour_gold(WORLD, ("Bob",)) == "basket"
    assert oracle_answer(WORLD, ()) == "box"
    # Anne saw Bob leave, so she expects him at the basket too
    assert behaviour_gold(WORLD, ("Anne", "Bob")) == "basket"
    assert behaviour_gold(WORLD, ("Anne",)) == "box"
    with pytest.raises(ValueError):
        behaviour_gold(WORLD, ("Bob",), goal="hide")


def test_applied_items_pair_every_r1_to_r3_item() -> None:
    items = nested_items()
    ap = applied_items(items)
    want = [it for it in items if it.depth in (1, 2, 3)
            and it.partition in (ADVERSARIAL, TRUE_BELIEF)]
    assert [a.id for a in ap] == [it.id for it in want]
    for a in ap:
        assert a.behaviour_gold == a.belief.gold  # same state, same chain
        b = a.behaviour_item()
        assert b.context == a.belief.story and b.options == a.belief.options
        assert b.meta["chain"] == list(a.belief.chain) and b.gold_key() is not None


def test_four_cells_and_conversion_from_known_answers() -> None:
    items = nested_items()
    ap = applied_items(items, depths=(1, 2))
    gold = {a.id: a.belief.gold for a in ap}
    wrong = {a.id: next(o for o in a.belief.options if o != a.belief.gold) for a in ap}
    ids = [a.id for a in ap]
    belief_right = set(ids[: len(ids) // 2])
    behaviour_right = set(ids[::3])

    def answer(item):
        base = item.item_id.removesuffix("-behaviour")
        right = base in (behaviour_right if item.item_id.endswith("-behaviour")
                         else belief_right)
        return gold[base] if right else wrong[base]

    run = run_applied(TableSystem(answer), ap)
    s = run.score
    for (bc, hc), label in CELLS.items():
        n = sum((i in belief_right) == bc and (i in behaviour_right) == hc for i in ids)
        assert s.cells.filter(s.cells["subset"] == "all")[label][0] == n
    both = len(belief_right & behaviour_right)
    assert s.conversion == pytest.approx(both / len(belief_right))
    assert s.belief_accuracy == pytest.approx(len(belief_right) / len(ids))
    assert s.behaviour_accuracy == pytest.approx(len(behaviour_right) / len(ids))
    assert set(s.cells["subset"]) == {"all", "R1", "R2"}


def test_conversion_is_undefined_without_a_right_belief() -> None:
    assert conversion([False, False], [True, False]) is None
    assert conversion([True, True, False], [True, False, True]) == 0.5


def test_knowing_doing_gap_of_the_scripted_model() -> None:
    items = nested_items()
    ap = applied_items(items)
    skill = Skill(depth_limit=4, gap_period=2)
    model = ScriptedModel(skills={"bare": skill}).add_nested(items).add_applied(ap)
    run = run_applied(DirectSystem(model.backend()), ap)
    rec = {r["id"]: r for r in run.score.records.iter_rows(named=True)}
    for a in ap:
        belief, _ = skill.answer(ToMCase(a.id, a.belief.world, a.belief.chain))
        action, _ = skill.answer(ToMCase(a.id, a.belief.world, a.belief.chain, True))
        assert rec[a.id]["belief_correct"] == (belief == a.belief.gold)
        assert rec[a.id]["behaviour_correct"] == (action == a.behaviour_gold)
    # the gap only bites where the belief is false: those items fall in the gap cell
    gap = run.score.records.filter(run.score.records["cell"] == "knowing-doing gap")
    assert gap.height > 0 and gap["false_belief"].all()
    assert run.score.conversion < 1


def test_run_applied_reuses_suite_a_records_and_refuses_missing_ones() -> None:
    items = nested_items()
    ap = applied_items(items, depths=(1,))
    system = TableSystem(lambda it: it.options[0])
    belief = system.answer_batch([from_nested_item(a.belief) for a in ap])
    asked = len(system.seen)
    run = run_applied(system, ap, belief)
    assert len(system.seen) == asked + len(ap)  # only the behaviour questions were asked
    assert len(run.behaviour_records) == len(ap)
    with pytest.raises(ValueError, match="no belief record"):
        run_applied(system, ap, belief[:-1])

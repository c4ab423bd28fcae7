"""Plan §5.7 depth invariant: changing an event that only the deepest level of a chain still
holds can alter R_k while leaving reality and every shallower answer invariant."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.nested import deepest_edit, deepest_edits, edit_table
from cogrsi_lib.oracle import Question, World, answer_all

from .helpers import CLASSIC, fast, small_generation, world


def _answers(w: World, chain: tuple[str, ...]) -> list[str]:
    qs = tuple(Question("location", tuple(chain[:j])) for j in range(len(chain) + 1))
    return [str(a.value) for a in answer_all(w, qs)]


def test_third_order_belief_from_a_move_only_carla_missed_the_update_of() -> None:
    w = world(*CLASSIC)
    chain = ("Anne", "Sally", "Carla")
    assert _answers(w, chain) == ["drawer", "drawer", "drawer", "box"]
    edit = deepest_edit(w, chain)
    assert (edit.event, edit.kind, edit.before, edit.after) == (0, "redirect_move", "box", "tray")
    assert _answers(edit.world, chain) == ["drawer", "drawer", "drawer", "tray"]
    # the edited move is what Carla last saw; the others have seen the drawer move since
    assert edit.world.events[0].to == "tray" and edit.world.events[2] == w.events[2]


def test_second_order_belief_from_a_private_lie() -> None:
    w = world("Anne move box", "Anne whisper Sally tray")
    chain = ("Anne", "Sally")
    assert _answers(w, chain) == ["box", "box", "tray"]
    edits = {e.after: e for e in deepest_edits(w, chain)}
    assert set(edits) == {"basket", "box", "drawer"}  # "box" turns it into a true belief
    for after, e in edits.items():
        assert e.kind == "relocate_whisper" and e.event == 1
        assert _answers(e.world, chain) == ["box", "box", after]


def test_fourth_order_belief_from_the_opening() -> None:
    chain = ("Anne", "Sally", "Bob", "Carla")
    w = world("Anne move box", "Bob move drawer")
    assert _answers(w, chain) == ["drawer"] * 5  # everyone saw both moves: no divergence
    # Carla never sees a move, so Anne->Sally->Bob->Carla still holds the opening location.
    w = world("Carla leave", "Anne move box", "Bob move drawer")
    assert _answers(w, chain) == ["drawer", "drawer", "drawer", "drawer", "basket"]
    edit = deepest_edit(w, chain)
    assert edit.kind == "relocate_opening" and edit.event == -1
    assert _answers(edit.world, chain)[:-1] == ["drawer"] * 4
    assert _answers(edit.world, chain)[-1] == edit.after == edit.world.location != "basket"


def test_first_order_belief_from_a_peek_only_the_peeker_knows() -> None:
    w = world("Sally leave", "Anne move box", "Sally enter", "Sally peek", "Sally leave",
              "Anne move drawer")
    assert _answers(w, ("Sally",)) == ["drawer", "box"]
    edit = deepest_edit(w, ("Sally",))
    assert (edit.kind, edit.event, edit.after) == ("drop_peek", 3, "basket")
    assert _answers(edit.world, ("Sally",)) == ["drawer", "basket"]


def test_no_edit_when_every_level_shares_the_source() -> None:
    w = world("Anne move box")
    assert deepest_edit(w, ("Anne", "Sally")) is None  # R2 = R1 = reality: nothing deeper


@fast(10)
@given(st.integers(0, 10**6))
def test_every_edit_changes_only_the_deepest_answer(seed: int) -> None:
    """Soundness on generated items; a whisper-sourced adversarial item always has one."""
    for it in small_generation(seed).items:
        if it.partition != "adversarial":
            continue
        before = _answers(it.world, it.chain)
        found = list(deepest_edits(it.world, it.chain))
        if it.via == "whisper":
            assert any(e.kind == "relocate_whisper" and e.event == it.source for e in found)
        for e in found[:3]:
            after = _answers(e.world, it.chain)
            assert after[:-1] == before[:-1] and after[-1] != before[-1] == e.before
            assert after[-1] == e.after


def test_edit_table_counts() -> None:
    items = small_generation(2).items
    table = edit_table(items)
    assert table["depth"].to_list() == [1, 2, 3, 4]
    assert table["adversarial"].to_list() == [3] * 4
    kinds = ["relocate_whisper", "redirect_move", "drop_peek", "relocate_opening"]
    assert (table.select(kinds).sum_horizontal() == table["with_edit"]).all()

"""Every variant yields pairs of its kind, with oracle gold and its meaning (CogRSI App. C)."""

from __future__ import annotations

import pytest

from cogrsi_lib.oracle import Event, Question, World, answer_all
from cogrsi_lib.pairs import (
    DIALOGUE_VARIANTS,
    NARRATIVE_VARIANTS,
    VARIANTS,
    PairGenerationError,
    Variant,
    access_facts,
    generate_form,
    make_pair,
)
from cogrsi_lib.pairs.generate import sample_cast
from cogrsi_lib.pairs.lexicon import GATE
from cogrsi_lib.pairs.variants import AWAY, LIED, LOOK, Condition

# The golden meaning of each variant, typed in by hand: which container each version's
# gold answer is (old: where the object started, new: where it was moved, other: the lie),
# and the one access fact that tells the versions apart.
GOLDEN = {
    ("narrative", "watch/leave"): ("new", "old", "at_move"),
    ("narrative", "watch/asleep"): ("new", "old", "at_move"),
    ("narrative", "told/leave"): ("new", "old", "told"),
    ("narrative", "look/leave"): ("new", "old", "looked"),
    ("narrative", "told/lied"): ("new", "other", "told"),
    ("narrative", "look/lied"): ("new", "other", "looked"),
    ("narrative", "leave/asleep"): ("old", "old", "at_move"),
    ("narrative", "watch/told"): ("new", "new", "at_move"),
    ("dialogue", "hear/away"): ("new", "old", "at_move"),
    ("dialogue", "hear/muted"): ("new", "old", "at_move"),
    ("dialogue", "relayed/away"): ("new", "old", "told"),
    ("dialogue", "relayed/misled"): ("new", "other", "told"),
    ("dialogue", "away/muted"): ("old", "old", "at_move"),
    ("dialogue", "hear/relayed"): ("new", "new", "at_move"),
}
# Where the target was during the move in each condition.
AT_MOVE = {"watch": "awake", "hear": "awake", "leave": "absent", "away": "absent",
           "asleep": "asleep", "muted": "asleep", "told": "absent", "relayed": "absent",
           "lied": "absent", "misled": "absent", "look": "absent"}

ALL_VARIANTS = [v for form in VARIANTS.values() for v in form]
PER_VARIANT = 5


def _by_variant(form: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for p in generate_form("gate", 7, form, PER_VARIANT * len(VARIANTS[form])):
        out.setdefault(p.variant.name, []).append(p)
    return out


@pytest.fixture(scope="module", params=["narrative", "dialogue"])
def pairs_by_variant(request):
    return request.param, _by_variant(request.param)


def test_the_variants_of_app_c():
    assert [v.name for v in NARRATIVE_VARIANTS] == [
        "watch/leave", "watch/asleep", "told/leave", "look/leave", "told/lied", "look/lied",
        "leave/asleep", "watch/told"]
    assert [v.kind for v in NARRATIVE_VARIANTS] == ["flip"] * 6 + ["same"] * 2
    assert [v.name for v in DIALOGUE_VARIANTS] == [
        "hear/away", "hear/muted", "relayed/away", "relayed/misled", "away/muted",
        "hear/relayed"]
    assert [v.kind for v in DIALOGUE_VARIANTS] == ["flip"] * 4 + ["same"] * 2
    assert set(GOLDEN) == {(v.form, v.name) for v in ALL_VARIANTS}


def test_every_variant_yields_pairs_of_its_kind_with_oracle_gold(pairs_by_variant):
    form, by_variant = pairs_by_variant
    assert set(by_variant) == {v.name for v in VARIANTS[form]}
    for name, pairs in by_variant.items():
        assert len(pairs) == PER_VARIANT
        for p in pairs:
            golds = []
            for v in p.versions:
                (fresh,) = answer_all(World.from_json(v.world.to_json()), (v.question,))
                assert fresh == v.gold
                assert v.question == Question("location", (p.cast.target,))
                golds.append(fresh.value)
            assert (golds[0] != golds[1]) == (p.kind == "flip"), name


def test_golden_meaning_of_each_variant(pairs_by_variant):
    form, by_variant = pairs_by_variant
    for name, pairs in by_variant.items():
        want_a, want_b, varied = GOLDEN[(form, name)]
        for p in pairs:
            places = p.cast.places
            assert p.a.gold.value == places[want_a], (name, p.a.story)
            assert p.b.gold.value == places[want_b], (name, p.b.story)
            assert p.varied == varied
            assert p.a.facts.differing(p.b.facts) == (varied,)
            for v in p.versions:
                assert v.gold.reality == places["new"]
                assert v.facts.at_move == AT_MOVE[v.condition.name]
                assert v.facts.saw_move == (v.facts.at_move == "awake")


def test_look_and_lie_semantics():
    by_variant = _by_variant("narrative")
    for p in by_variant["look/lied"]:
        assert p.a.facts.looked and p.a.facts.told == p.cast.other
        assert p.a.gold.via == "peek" and p.b.gold.via == "whisper"
    for p in by_variant["told/lied"]:
        assert (p.a.facts.told, p.b.facts.told) == (p.cast.new, p.cast.other)
    for p in by_variant["look/leave"]:
        peek_lines = [ln for ln in p.a.story.splitlines() if "looked inside" in ln]
        assert peek_lines and p.cast.new in peek_lines[0]  # the target checks the new container


def test_asleep_in_the_room_does_not_see():
    """CogRSI §5.4: in the room but asleep does not see the move."""
    w = World(agents=("Mia", "Owen"), containers=("jar", "bin", "crate"), object="spoon",
              location="jar", present=frozenset({"Mia", "Owen"}),
              events=(Event("sleep", "Mia"), Event("move", "Owen", to="bin"),
                      Event("wake", "Mia")))
    facts = access_facts(w, "Mia")
    assert (facts.at_move, facts.saw_move, facts.told, facts.looked) == (
        "asleep", False, None, False)
    (a,) = answer_all(w, (Question("location", ("Mia",)),))
    assert a.value == "jar"


def test_dialogue_teller_is_a_third_chat_member(pairs_by_variant):
    form, by_variant = pairs_by_variant
    for pairs in by_variant.values():
        for p in pairs:
            c = p.cast
            if form == "dialogue":
                assert len(c.agents) == 3 and c.agents[0] == c.mover
                assert c.teller not in (c.target, c.mover)
            else:
                assert len(c.agents) == 2 and c.teller == c.mover


def test_a_misdeclared_kind_raises():
    import random

    wrong = Variant("narrative", Condition("watch", NARRATIVE_VARIANTS[0].a.script),
                    Condition("leave", AWAY), "same")
    cast = sample_cast(random.Random(0), GATE, "narrative")
    with pytest.raises(PairGenerationError, match="declared same"):
        make_pair(wrong, cast, "gate", "x")


def test_versions_differing_in_two_access_facts_raise():
    import random

    two_facts = Variant("narrative", Condition("look", LOOK), Condition("lied", LIED), "flip")
    cast = sample_cast(random.Random(0), GATE, "narrative")
    with pytest.raises(PairGenerationError, match="exactly one access fact"):
        make_pair(two_facts, cast, "gate", "x")

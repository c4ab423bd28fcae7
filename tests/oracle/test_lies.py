"""Lie conditions (plan §5.4): which whispers are lies, the condition a world is told under,
how the story tells it, and how the sampler assigns it."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.oracle.answer import answer_all
from cogrsi_lib.oracle.lies import (
    KNOWN_LIAR,
    LIE_CONDITIONS,
    MIXED,
    NO_LIE,
    REVEALED,
    UNLABELLED,
    liars,
    lie_condition,
    lies,
)
from cogrsi_lib.oracle.render import CHAT, NARRATIVE, render
from cogrsi_lib.oracle.sampler import SamplerConfig, known_liar_world, sample_world, world_table
from cogrsi_lib.oracle.world import Question, World

from . import reference as ref
from .helpers import fast, make_world
from .strategies import direct_worlds, prefix, sampler_configs

# Anne saw the move to the box; she tells Sally "drawer" (a lie), then Sally tells Anne
# "drawer" (what Sally now believes: not a lie, though false).
STORY = ["Anne move box", "Anne whisper Sally drawer", "Sally whisper Anne drawer"]
THREE = ("Anne", "Sally", "Bob")


def test_a_lie_is_a_claim_against_the_speakers_own_belief() -> None:
    w = make_world(STORY)
    assert lies(w) == [1]
    assert lie_condition(w) == UNLABELLED
    assert lie_condition(make_world(["Anne move box", "Anne whisper Sally box"])) == NO_LIE


def test_known_liar_changes_beliefs_and_revealed_changes_only_the_text() -> None:
    w = make_world(STORY)
    # Sally does not take Anne's word, so her "drawer" to Anne is a lie of her own: under the
    # known-liar condition both are known liars (see the mixed-world tests below)
    known = known_liar_world(w)
    assert known.known_liars == {"Anne", "Sally"}
    revealed = replace(w, reveal_lies=True)
    assert (lie_condition(known), lie_condition(revealed)) == (KNOWN_LIAR, REVEALED)
    q = (Question("location", ("Sally",)), Question("location", ("Anne",)))
    assert [a.value for a in answer_all(w, q)] == ["drawer", "drawer"]
    assert [a.value for a in answer_all(known, q)] == ["box", "box"]  # nobody takes their word
    assert [a.value for a in answer_all(revealed, q)] == ["drawer", "drawer"]  # not the reader
    for templates in (NARRATIVE, CHAT):
        text = render(revealed, templates).text
        lines = text.splitlines()
        assert "lying" in lines[-2] and "lying" not in lines[-1]  # only the lie is marked
        assert "lies" in render(known, templates).text
        assert "lying" not in render(w, templates).text


def test_the_sampler_assigns_every_lie_condition_and_records_it() -> None:
    rng = random.Random(3)
    worlds = [sample_world(rng, SamplerConfig()) for _ in range(300)]
    seen = {lie_condition(w) for w in worlds}
    assert seen == {NO_LIE, UNLABELLED, KNOWN_LIAR, REVEALED}
    table = world_table(worlds)
    assert table["lie_condition"].to_list() == [lie_condition(w) for w in worlds]
    assert set(table["testimony"]) == {"latest"} and set(table["opening"]) == {"common_ground"}
    for w in worlds:  # the known liars are the agents who lie (see the mixed-world tests)
        if w.known_liars:
            plain = replace(w, known_liars=frozenset())
            assert liars(plain) <= w.known_liars
            assert liars(w) <= w.known_liars
            assert w.known_liars <= {e.actor for e in w.events if e.type == "whisper"}


def test_zero_probabilities_sample_no_watched_event_and_no_condition() -> None:
    cfg = SamplerConfig(p_hidden_observer=0.0, p_missed=0.0, lie_conditions=())
    rng = random.Random(5)
    for _ in range(200):
        w = sample_world(rng, cfg)
        assert not any(e.hidden_observers or e.missed_by for e in w.events)
        assert not w.known_liars and not w.reveal_lies


def test_policies_round_trip_through_json() -> None:
    w = replace(make_world(STORY), testimony="fresher_access", opening="unknown",
                known_liars=frozenset({"Sally"}), reveal_lies=True)
    back = World.from_json(w.to_json())
    assert back == w and back.to_json() == w.to_json()



# ---------------------------------------------------------------- a speaker with no belief --

def _unknown_opening(events: list[str]) -> World:
    """Anne is in the room at the start, Sally is not (``opening: unknown``): Sally has no
    belief about the marble until she sees it."""
    return replace(make_world(events, present=("Anne",)), opening="unknown")


def test_a_true_claim_without_a_belief_is_no_lie() -> None:
    """Sally enters with no belief (the basket is closed) and tells Anne "basket", which is
    true: no lie.  Telling "box" instead is false, and a lie."""
    w = _unknown_opening(["Sally enter", "Sally whisper Anne basket"])
    assert answer_all(w, (Question("location", ("Sally",)),))[0].value is None
    assert lies(w) == []
    assert lie_condition(w) == NO_LIE
    false = _unknown_opening(["Sally enter", "Sally whisper Anne box"])
    assert lies(false) == [1]
    assert lie_condition(false) == UNLABELLED


def test_a_claim_against_a_held_belief_is_a_lie_even_when_true() -> None:
    """Sally, out for the move, believes basket; telling Anne "box" (the truth) says what she
    does not believe: a lie.  With no belief a claim is judged against the truth instead."""
    w = make_world(["Sally leave", "Anne move box", "Sally enter", "Sally whisper Anne box"])
    assert lies(w) == [3]


def _ref_lies(world: World) -> list[int]:
    """The whispers that are lies, read off the reference: the claim differs from the
    speaker's belief just before it, or from where the object is when the speaker has none."""
    out = []
    for i, e in enumerate(world.events):
        if e.type != "whisper":
            continue
        held = ref.ref_answer(prefix(world, i), Question("location", (e.actor,))).value
        if e.location != (ref.situation(world, i).location if held is None else held):
            out.append(i)
    return out


def _condition(world: World) -> str:
    """The lie condition as SEMANTICS.md defines it, from the reference's lies."""
    told = _ref_lies(world)
    if not told:
        return NO_LIE
    if world.reveal_lies:
        return REVEALED
    by_known = [world.events[i].actor in world.known_liars for i in told]
    if all(by_known):
        return KNOWN_LIAR
    return UNLABELLED if not any(by_known) else MIXED


@fast(150)
@given(direct_worlds(max_agents=4, max_events=10))
def test_lies_and_their_condition_follow_their_definition(world: World) -> None:
    """Any world (either opening, either testimony, a known liar or not): the oracle's lies
    and lie condition are those defined from the reference's beliefs."""
    assert lies(world) == _ref_lies(world)
    assert lie_condition(world) == _condition(world)


# ---------------------------------------------------------------- mixed worlds ----------

# Sally misses the move to the box; Anne tells her "drawer" (a lie); Sally passes "drawer" on
# to Bob, who saw the move.  Sally believed Anne, so her relay is no lie.
RELAY = ["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally drawer",
         "Sally whisper Bob drawer"]


def test_the_relay_of_an_ignored_lie_is_a_lie_and_the_world_is_mixed() -> None:
    """If only Anne is a known liar, Sally does not take "drawer" and still believes basket, so
    passing "drawer" on is her own lie, and nothing marks it: the world is mixed."""
    plain = make_world(RELAY, agents=THREE)
    assert lies(plain) == [3] and lie_condition(plain) == UNLABELLED
    known = replace(plain, known_liars=frozenset({"Anne"}))
    assert lies(known) == [3, 4]
    assert lie_condition(known) == MIXED
    q = (Question("location", ("Sally",)), Question("location", ("Bob",)))
    assert [a.value for a in answer_all(known, q)] == ["basket", "drawer"]


def test_the_sampler_makes_the_relay_speaker_a_known_liar_too() -> None:
    """Told under the known-liar condition, both Anne and Sally are known liars: every lie is
    told by a known liar, and Bob does not take Sally's word either."""
    told = known_liar_world(make_world(RELAY, agents=THREE))
    assert told.known_liars == {"Anne", "Sally"}
    assert lies(told) == [3, 4]
    assert lie_condition(told) == KNOWN_LIAR
    q = (Question("location", ("Sally",)), Question("location", ("Bob",)))
    assert [a.value for a in answer_all(told, q)] == ["basket", "box"]


def test_a_known_liar_who_tells_no_lie_does_not_label_anothers_lie() -> None:
    """Everyone knows Bob lies, but the only lie is Anne's: it is unlabelled."""
    w = replace(make_world(STORY[:2], agents=THREE), known_liars=frozenset({"Bob"}))
    assert lies(w) == [1]
    assert lie_condition(w) == UNLABELLED
    assert lie_condition(replace(w, known_liars=frozenset({"Anne", "Bob"}))) == KNOWN_LIAR
    assert lie_condition(replace(w, reveal_lies=True)) == REVEALED


@st.composite
def _sampled_with_lies(draw: st.DrawFn) -> World:
    """A sampled world, under any testimony and opening policy, whose lie conditions are drawn
    with weight on each (several agents and whispers, so relays happen)."""
    cfg = replace(draw(sampler_configs()),
                  testimony=draw(st.sampled_from(["latest", "fresher_access"])),
                  opening=draw(st.sampled_from(["common_ground", "unknown"])),
                  weights=(("move", 2.0), ("leave", 1.0), ("enter", 1.0), ("whisper", 3.0),
                           ("peek", 0.5)))
    return sample_world(random.Random(draw(st.integers(0, 2**32 - 1))), cfg)


@fast(150)
@given(_sampled_with_lies())
def test_sampled_worlds_carry_the_label_their_lies_define_and_never_mixed(world: World) -> None:
    """Over sampled worlds the recorded label matches its definition; no world is mixed, a world
    with known liars is a known-liar world whose every lie a known liar tells, and a revealed
    world has no known liar."""
    label = lie_condition(world)
    assert label == _condition(world)
    assert label in LIE_CONDITIONS and label != MIXED
    if world.known_liars:
        assert label == KNOWN_LIAR and not world.reveal_lies
        assert liars(world) <= world.known_liars
    if world.reveal_lies:
        assert label == REVEALED


def test_known_liar_worlds_with_relays_are_sampled_and_labelled() -> None:
    """In a seeded population some known-liar worlds need a relay speaker as a known liar
    (without it they would be mixed), and each is labelled known_liar."""
    rng = random.Random(0)
    cfg = SamplerConfig(min_agents=2, max_agents=3)
    extended = 0
    for _ in range(1500):
        w = sample_world(rng, cfg)
        if not w.known_liars:
            continue
        first = liars(replace(w, known_liars=frozenset()))
        assert lie_condition(w) == KNOWN_LIAR
        if w.known_liars != first:
            extended += 1
            assert lie_condition(replace(w, known_liars=first)) != KNOWN_LIAR
    assert extended > 0

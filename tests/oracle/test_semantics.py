"""One named test per rule of ``cogrsi_lib/oracle/SEMANTICS.md``, each on a tiny world.

Expected values are written from the rule text; where useful the reference
(:mod:`reference`) is asked too, so each rule is checked against both readings.
"""

from __future__ import annotations

import pytest

from cogrsi_lib.oracle.answer import Answer, answer_all
from cogrsi_lib.oracle.state import replay
from cogrsi_lib.oracle.world import OracleInputError, Question, World

from . import reference as ref
from .helpers import make_world
from .strategies import all_questions

ANNE_SALLY = ("Anne", "Sally")
THREE = ("Anne", "Sally", "Bob")


def ask(world: World, chain: tuple[str, ...] | list[str] = (), prop: str | None = None) -> Answer:
    """The oracle's answer for one chain (location, or ``prop``); checked against the reference."""
    q = Question("property" if prop else "location", tuple(chain), prop)
    (a,) = answer_all(world, (q,))
    r = ref.ref_answer(world, q)
    assert (a.value, a.reality) == (r.value, r.reality)
    return a


def perceivers(world: World) -> list[frozenset[str]]:
    """The oracle's perceivers of each event, in order."""
    state = replay(world, max_depth=1)
    who: list[set[str]] = [set() for _ in world.events]
    for agent, log in state.observation_log.items():
        for i, what in log:
            if what != "view":
                who[i].add(agent)
    return [frozenset(w) for w in who]


def refused(world_or_events, match: str, index: int | None = None, **kw) -> OracleInputError:
    """Assert the oracle refuses the world (event index ``index``), message matching ``match``."""
    with pytest.raises(OracleInputError, match=match) as info:
        w = world_or_events if isinstance(world_or_events, World) else make_world(
            world_or_events, **kw)
        answer_all(w, (Question("location", ()),))
    if index is not None:
        assert info.value.event_index == index
        assert str(info.value).startswith(f"event {index}: ")
    return info.value


# ---------------------------------------------------------------- world ------------------

def test_object_is_in_exactly_one_container() -> None:
    """The marble is in the basket; after a move it is in the box and nowhere else."""
    w = make_world(["Anne move box"])
    assert ask(w).value == "box"
    assert ask(make_world([])).value == "basket"
    with pytest.raises(OracleInputError, match="not a container"):
        make_world([], location="attic")


def test_opening_state_is_common_ground_at_every_depth() -> None:
    """With no events every chain up to depth 4 believes the opening location and values."""
    w = make_world([], agents=THREE, properties={"color": "red"})
    for q, a in zip(qs := all_questions(w, 4), answer_all(w, tuple(qs)), strict=True):
        assert a.value == ("basket" if q.kind == "location" else "red")
        assert (a.source, a.via) == ((-1, "reality") if not q.chain else (-1, "initial"))


def test_absent_agent_cannot_be_asleep() -> None:
    """ "asleep": ["Anne"] needs Anne in "present"."""
    with pytest.raises(OracleInputError, match="asleep agent must be present"):
        make_world([], present=("Sally",), asleep=("Anne",))


def test_open_container_must_be_a_container() -> None:
    """open_containers names containers only."""
    with pytest.raises(OracleInputError, match="not a container"):
        make_world([], open_containers=("attic",))


def test_property_keeps_its_visibility() -> None:
    """Visibility consistency error: a property changed as visible cannot later be hidden."""
    refused(["Anne change color blue visible", "Anne change color green hidden"],
            "keeps its visibility", 1, properties={"color": "red"})
    refused(["Anne change temp hot hidden", "Anne change temp cold visible"],
            "keeps its visibility", 1, properties={"temp": "warm"})
    # the same visibility again is fine
    w = make_world(["Anne change color blue visible", "Anne change color green visible"],
                   properties={"color": "red"})
    assert ask(w, prop="color").value == "green"


# ---------------------------------------------------------------- perception -------------

def test_leave_perceived_by_present_awake_agents_actor_included() -> None:
    """Sally left: Anne (awake, in) and Sally see it; Bob (asleep) does not."""
    w = make_world(["Bob sleep", "Sally leave"], agents=THREE)
    assert perceivers(w)[1] == {"Anne", "Sally"}


def test_enter_perceived_by_present_awake_agents_and_the_actor() -> None:
    """Sally entered: the absent actor perceives her own entry."""
    w = make_world(["Sally enter"], agents=THREE, present=("Anne", "Bob"), asleep=("Bob",))
    assert perceivers(w)[0] == {"Anne", "Sally"}


def test_sleep_and_wake_perceived_by_present_awake_agents_and_the_actor() -> None:
    """Anne fell asleep / woke up: Sally and Anne perceive both; absent Bob neither."""
    w = make_world(["Anne sleep", "Anne wake"], agents=THREE, present=ANNE_SALLY)
    assert perceivers(w) == [{"Anne", "Sally"}, {"Anne", "Sally"}]


def test_move_perceived_by_present_awake_agents_actor_included() -> None:
    """Anne moved the marble: Anne and Sally (in, awake) perceive it; absent Bob does not."""
    w = make_world(["Anne move box"], agents=THREE, present=ANNE_SALLY)
    assert perceivers(w) == [{"Anne", "Sally"}]


def test_whisper_perceived_by_speaker_and_listener_only() -> None:
    """Anne whispered to Sally: Bob, awake in the room, perceives nothing."""
    w = make_world(["Anne whisper Sally box"], agents=THREE)
    assert perceivers(w) == [{"Anne", "Sally"}]


def test_peek_perceived_by_the_peeker_only() -> None:
    """Sally looked into the box: only Sally perceives it (peek privacy)."""
    w = make_world(["Sally peek"], agents=THREE)
    assert perceivers(w) == [{"Sally"}]


def test_change_perceived_by_present_awake_agents_actor_included() -> None:
    """Anne painted the marble blue: Sally sees it, asleep Bob does not."""
    w = make_world(["Bob sleep", "Anne change color blue visible"], agents=THREE,
                   properties={"color": "red"})
    assert perceivers(w)[1] == {"Anne", "Sally"}


def test_asleep_agent_in_room_does_not_learn_of_move() -> None:
    """CogRSI §5.4: Anne is asleep in the room when Bob moves the marble; she still thinks
    it is in the basket, at first and second order."""
    w = make_world(["Anne sleep", "Bob move box", "Anne wake"], agents=("Anne", "Bob"))
    assert ask(w).value == "box"
    assert ask(w, ["Bob"]).value == "box"
    assert ask(w, ["Anne"]).value == "basket"
    assert ask(w, ["Anne"]).false_belief
    assert ask(w, ["Bob", "Anne"]).value == "basket"
    assert ask(w, ["Anne", "Bob"]).value == "basket"


def test_being_in_the_room_is_not_seeing() -> None:
    """An agent asleep at the start is present but perceives nothing, not even a change."""
    w = make_world(["Sally move box", "Sally change color blue visible"], asleep=("Anne",),
                   properties={"color": "red"})
    assert ask(w, ["Anne"]).value == "basket"
    assert ask(w, ["Anne"], "color").value == "red"


# ---------------------------------------------------------------- legality ---------------

def test_leave_requires_present_awake_actor() -> None:
    refused(["Sally leave", "Sally leave"], "absent", 1)
    refused(["Sally sleep", "Sally leave"], "asleep", 1)


def test_enter_requires_absent_actor() -> None:
    refused(["Sally enter"], "already in the room", 0)


def test_sleep_requires_present_awake_actor() -> None:
    refused(["Sally sleep", "Sally sleep"], "asleep", 1)
    refused(["Sally leave", "Sally sleep"], "absent", 1)


def test_wake_requires_asleep_actor() -> None:
    refused(["Sally wake"], "not asleep", 0)
    refused(["Sally leave", "Sally wake"], "not asleep", 1)


def test_move_requires_present_awake_actor() -> None:
    refused(["Sally leave", "Sally move box"], "absent", 1)
    refused(["Sally sleep", "Sally move box"], "asleep", 1)


def test_move_to_where_the_object_is_refused() -> None:
    """Every move changes reality (plan §5.5), even for a mover with a false belief."""
    refused(["Sally move basket"], "already is", 0)
    # Sally falsely believes basket; she still cannot "move" it to the box where it is
    refused(["Sally leave", "Anne move box", "Sally enter", "Sally move box"], "already is", 3)


def test_move_to_unknown_container_refused() -> None:
    refused(["Sally move attic"], "unknown container", 0)


def test_whisper_to_oneself_refused() -> None:
    refused(["Anne whisper Anne box"], "themself", 0)


def test_whisper_to_nothing_reached_listener_refused() -> None:
    refused(["Sally leave", "Anne whisper Sally box"], "absent", 1)
    refused(["Sally sleep", "Anne whisper Sally box"], "asleep", 1)


def test_whisper_by_nothing_reached_speaker_refused() -> None:
    refused(["Anne leave", "Anne whisper Sally box"], "absent", 1)
    refused(["Anne sleep", "Anne whisper Sally box"], "asleep", 1)


def test_whisper_of_unknown_container_refused() -> None:
    refused(["Anne whisper Sally attic"], "unknown container", 0)


def test_peek_requires_present_awake_actor() -> None:
    refused(["Sally leave", "Sally peek"], "absent", 1)
    refused(["Sally sleep", "Sally peek"], "asleep", 1)


def test_change_to_current_value_refused() -> None:
    refused(["Anne change color red visible"], "already", 0, properties={"color": "red"})


def test_change_of_unknown_property_refused() -> None:
    refused(["Anne change size big visible"], "unknown property", 0, properties={"color": "red"})


def test_unknown_agent_acting_refused() -> None:
    refused(["Zed move box"], "unknown agent", 0)
    refused(["Anne whisper Zed box"], "unknown agent", 0)


def test_malformed_json_refused() -> None:
    with pytest.raises(OracleInputError, match="malformed JSON"):
        World.from_json('{"agents": ["Anne"],')


# ---------------------------------------------------------------- beliefs ----------------

def test_chain_reads_outside_in() -> None:
    """[Anne, Sally] is where Anne thinks Sally thinks; [Sally, Anne] the converse."""
    w = make_world(["Anne whisper Sally box", "Sally leave", "Anne move drawer"])
    # Anne knows she told Sally "box" and saw Sally leave before the move
    assert ask(w, ["Anne", "Sally"]).value == "box"
    # Sally thinks Anne thinks box (the whisper); she missed the move
    assert ask(w, ["Sally", "Anne"]).value == "box"
    assert ask(w, ["Anne"]).value == "drawer"
    assert ask(w, ["Sally"]).value == "box"


def test_chain_with_agent_twice_in_a_row_refused() -> None:
    """["Anne", "Anne"] is an input error, named by question index."""
    w = make_world([])
    with pytest.raises(OracleInputError, match="twice in a row") as info:
        answer_all(w, (Question("location", ("Anne",)), Question("location", ("Anne", "Anne"))))
    assert str(info.value).startswith("question 1: ")
    with pytest.raises(OracleInputError, match="twice in a row"):
        answer_all(w, (Question("location", ("Sally", "Anne", "Anne")),))


def test_chain_with_repeated_non_adjacent_agent_allowed() -> None:
    """[A, B, A] is allowed: Anne thinks Sally thinks Anne thinks."""
    w = make_world(["Sally leave", "Anne move box", "Sally enter"])
    # Sally missed the move, so Anne thinks Sally thinks Anne still thinks basket
    assert ask(w, ["Anne", "Sally", "Anne"]).value == "basket"
    assert ask(w, ["Anne", "Sally"]).value == "basket"
    assert ask(w, ["Anne"]).value == "box"


def test_chain_with_unknown_agent_refused() -> None:
    with pytest.raises(OracleInputError, match="unknown agent"):
        answer_all(make_world([]), (Question("location", ("Zed",)),))


def test_move_sets_every_chain_whose_agents_all_perceived_it() -> None:
    """Anne and Sally watch the move: every chain over {Anne, Sally} becomes box, to depth 4."""
    w = make_world(["Anne move box"])
    for chain in (["Anne"], ["Sally"], ["Anne", "Sally"], ["Sally", "Anne"],
                  ["Anne", "Sally", "Anne"], ["Sally", "Anne", "Sally", "Anne"]):
        a = ask(w, chain)
        assert (a.value, a.source, a.via) == ("box", 0, "move")


def test_chain_with_one_agent_who_missed_the_event_keeps_its_old_value() -> None:
    """Sally was out: Anne thinks Sally still thinks basket; Bob-Anne-Sally too."""
    w = make_world(["Sally leave", "Anne move box"], agents=THREE)
    assert ask(w, ["Anne", "Sally"]).value == "basket"
    assert ask(w, ["Bob", "Anne", "Sally"]).value == "basket"
    assert ask(w, ["Bob", "Anne"]).value == "box"


def test_peek_sets_only_the_peekers_own_belief() -> None:
    """Sally peeks: Sally thinks box; Anne thinks Sally thinks basket; Sally thinks Anne box."""
    w = make_world(["Sally leave", "Anne move box", "Sally enter", "Sally peek"])
    a = ask(w, ["Sally"])
    assert (a.value, a.source, a.via) == ("box", 3, "peek")
    assert ask(w, ["Anne", "Sally"]).value == "basket"
    assert ask(w, ["Sally", "Anne"]).value == "basket"  # Sally did not see Anne see the move


def test_peek_sees_the_true_location_despite_a_lie() -> None:
    """A peek after a lie overrides the lie for the peeker only."""
    w = make_world(["Anne whisper Sally drawer", "Sally peek"])
    assert ask(w, ["Sally"]).value == "basket"
    assert ask(w, ["Anne", "Sally"]).value == "drawer"


def test_whisper_truth_sets_listener_and_both_second_order_chains() -> None:
    """Anne saw the move, Sally did not; Anne tells the truth."""
    w = make_world(["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally box"],
                   agents=THREE)
    for chain in (["Sally"], ["Anne", "Sally"], ["Sally", "Anne"]):
        a = ask(w, chain)
        assert (a.value, a.source, a.via) == ("box", 3, "whisper")
    assert not ask(w, ["Sally"]).false_belief


def test_whisper_lie_sets_the_same_chains_to_the_false_value() -> None:
    """Anne lies "basket": Sally thinks basket; Anne thinks Sally thinks basket; Sally thinks
    Anne thinks basket; Anne herself still thinks box."""
    w = make_world(["Anne move box", "Anne whisper Sally basket"])
    assert ask(w, ["Sally"]).value == "basket"
    assert ask(w, ["Sally"]).false_belief
    assert ask(w, ["Anne", "Sally"]).value == "basket"
    assert ask(w, ["Sally", "Anne"]).value == "basket"
    assert ask(w, ["Anne"]).value == "box"


def test_whisper_reaches_every_chain_over_its_parties_and_no_bystander() -> None:
    """Anne lies "drawer" to Sally: every chain over {Anne, Sally} but [Anne] says drawer, at
    every depth; Anne herself and Bob's chains keep box."""
    w = make_world(["Anne move box", "Anne whisper Sally drawer"], agents=THREE)
    assert ask(w, ["Anne"]).value == "box"
    for chain in (["Sally"], ["Anne", "Sally"], ["Sally", "Anne"], ["Anne", "Sally", "Anne"],
                  ["Sally", "Anne", "Sally"], ["Anne", "Sally", "Anne", "Sally"]):
        a = ask(w, chain)
        assert (a.value, a.source, a.via) == ("drawer", 1, "whisper"), chain
    assert ask(w, ["Bob", "Sally"]).value == "box"
    assert ask(w, ["Bob"]).value == "box"
    assert ask(w, ["Sally", "Bob"]).value == "box"
    assert ask(w, ["Anne", "Bob", "Sally"]).value == "box"


def test_truthful_whisper_is_coherent_at_depth_three() -> None:
    """After Anne truthfully tells Bob "box", Bob thinks Anne thinks Bob thinks box too."""
    w = make_world(["Bob leave", "Anne move box", "Bob enter", "Anne whisper Bob box"],
                   agents=("Anne", "Bob"))
    assert ask(w, ["Bob", "Anne"]).value == "box"
    assert ask(w, ["Bob", "Anne", "Bob"]).value == "box"
    assert ask(w, ["Anne", "Bob", "Anne", "Bob"]).value == "box"


def test_whisper_is_overridden_by_a_later_watched_move() -> None:
    """The latest writer wins: a move both see after a lie resets all their chains."""
    w = make_world(["Anne whisper Sally drawer", "Sally move box"])
    for chain in (["Sally"], ["Anne", "Sally"], ["Sally", "Anne"]):
        assert ask(w, chain).value == "box"


def test_entering_with_the_object_in_view_joins_its_common_ground() -> None:
    """Bob enters while the ring lies on the open tray: he sees where it is and that it is
    blue; Anne, who watches him enter, thinks Bob thinks so too."""
    w = make_world(["Bob leave", "Anne move tray", "Anne change color blue visible",
                    "Bob enter"], agents=("Anne", "Bob"), containers=("basket", "tray"),
                   properties={"color": "red"}, open_containers=("tray",))
    a = ask(w, ["Bob"], "color")
    assert (a.value, a.source, a.via) == ("blue", 3, "view")
    assert (ask(w, ["Bob"]).value, ask(w, ["Bob"]).via) == ("tray", "view")
    assert ask(w, ["Anne", "Bob"], "color").value == "blue"
    assert ask(w, ["Bob", "Anne"], "color").value == "blue"
    assert ask(w, ["Anne", "Bob", "Anne"]).value == "tray"


def test_an_absent_agent_is_not_in_the_common_ground_of_a_view() -> None:
    """Carla is out when Bob enters and sees the ring: Bob's model of Carla keeps the past."""
    w = make_world(["Bob leave", "Carla leave", "Anne move tray", "Bob enter"],
                   agents=("Anne", "Bob", "Carla"), containers=("basket", "tray"),
                   open_containers=("tray",))
    assert ask(w, ["Bob"]).value == "tray"
    assert ask(w, ["Bob", "Carla"]).value == "basket"
    assert ask(w, ["Carla"]).value == "basket"


def test_witnessing_a_move_shows_visible_properties() -> None:
    """Sally was out when the ring was painted green; she sees Anne carry it to the box."""
    w = make_world(["Sally leave", "Anne change color green visible", "Sally enter",
                    "Anne move box"], properties={"color": "red", "temp": "cold"})
    a = ask(w, ["Sally"], "color")
    assert (a.value, a.source, a.via) == ("green", 3, "move")
    assert ask(w, ["Anne", "Sally"], "color").value == "green"


def test_a_move_shows_no_hidden_property() -> None:
    w = make_world(["Sally leave", "Anne change temp hot hidden", "Sally enter",
                    "Anne move box"], properties={"temp": "cold"})
    assert ask(w, ["Sally"], "temp").value == "cold"


def test_a_peek_shows_visible_properties_to_the_peeker_only() -> None:
    w = make_world(["Sally leave", "Anne change color green visible", "Sally enter",
                    "Sally peek"], properties={"color": "red"})
    a = ask(w, ["Sally"], "color")
    assert (a.value, a.via) == ("green", "peek")
    assert ask(w, ["Anne", "Sally"], "color").value == "red"


def test_a_missed_move_into_view_is_seen_anyway() -> None:
    """Sally missed the move onto the open tray, but the tray is in plain view."""
    w = World.from_dict({
        "agents": ["Anne", "Sally"], "containers": ["basket", "tray"], "object": "ring",
        "open_containers": ["tray"], "initial": {"location": "basket"},
        "events": [{"type": "move", "agent": "Anne", "to": "tray", "missed_by": ["Sally"]}]})
    a = ask(w, ["Sally"])
    assert (a.value, a.via) == ("tray", "view")
    assert ask(w, ["Anne", "Sally"]).via == "move"


def _ring_world(events: list[dict]) -> World:
    """A ring in the closed basket; the tray is open; colour visible, temperature hidden."""
    return World.from_dict({
        "agents": ["Anne", "Sally", "Bob"], "containers": ["basket", "tray"], "object": "ring",
        "open_containers": ["tray"], "hidden_properties": ["temp"],
        "initial": {"location": "basket", "properties": {"color": "red", "temp": "cold"}},
        "events": events})


def _held(a: Answer) -> tuple:
    return a.value, a.source, a.via


def test_a_missed_move_into_view_sets_the_location_and_visible_properties() -> None:
    """Sally was out for the paint job (blue, e1) and the heating (hot, e2); back in, she
    misses the move onto the open tray (e4).  Her chains, which co-presence did not set, are
    set to what the ring shows: the tray and blue (via view, source e4); not its temperature."""
    w = _ring_world([
        {"type": "leave", "agent": "Sally"},
        {"type": "change", "agent": "Anne", "property": "color", "value": "blue",
         "visible": True},
        {"type": "change", "agent": "Anne", "property": "temp", "value": "hot",
         "visible": False},
        {"type": "enter", "agent": "Sally"},
        {"type": "move", "agent": "Anne", "to": "tray", "missed_by": ["Sally"]}])
    for chain in (["Sally"], ["Sally", "Anne"], ["Sally", "Bob", "Anne"]):
        assert _held(ask(w, chain)) == ("tray", 4, "view")
        assert _held(ask(w, chain, "color")) == ("blue", 4, "view")
    assert _held(ask(w, ["Sally"], "temp")) == ("cold", -1, "initial")
    assert _held(ask(w, ["Sally", "Anne"], "temp")) == ("cold", -1, "initial")
    assert _held(ask(w, ["Anne", "Sally"])) == ("tray", 4, "move")  # co-presence
    assert _held(ask(w, ["Bob", "Sally"], "color")) == ("blue", 4, "move")
    assert _held(ask(w, ["Anne"], "temp")) == ("hot", 2, "change")


def test_a_visible_change_in_view_sets_only_the_changed_property() -> None:
    """Both watch the ring go onto the open tray (e0); Sally looks away while Anne paints it
    blue (e1) and heats it (e2).  Her chains get the new colour by view (source e1); their
    location keeps its source, the move e0; the hidden heating sets nothing by view."""
    w = _ring_world([
        {"type": "move", "agent": "Anne", "to": "tray"},
        {"type": "change", "agent": "Anne", "property": "color", "value": "blue",
         "visible": True, "missed_by": ["Sally"]},
        {"type": "change", "agent": "Anne", "property": "temp", "value": "hot",
         "visible": False, "missed_by": ["Sally"]}])
    for chain in (["Sally"], ["Sally", "Anne"], ["Sally", "Bob"]):
        assert _held(ask(w, chain, "color")) == ("blue", 1, "view")
        assert _held(ask(w, chain)) == ("tray", 0, "move")
        assert _held(ask(w, chain, "temp")) == ("cold", -1, "initial")
    assert _held(ask(w, ["Anne", "Sally"], "color")) == ("blue", 1, "change")
    assert _held(ask(w, ["Anne", "Sally"], "temp")) == ("hot", 2, "change")
    assert _held(ask(w, ["Bob", "Sally"])) == ("tray", 0, "move")


def test_late_view_on_wake() -> None:
    """Waking while the object is in view shows its visible properties."""
    w = make_world(["Bob sleep", "Anne change color blue visible", "Bob wake"],
                   agents=("Anne", "Bob"), properties={"color": "red"},
                   open_containers=("basket",))
    assert ask(w, ["Bob"], "color").value == "blue"


def test_no_late_view_of_hidden_property() -> None:
    """Bob enters while the marble is in view, but temperature is hidden: he learns nothing."""
    w = make_world(["Bob leave", "Anne change temp hot hidden", "Bob enter"],
                   agents=("Anne", "Bob"), properties={"temp": "cold"},
                   open_containers=("basket",))
    a = ask(w, ["Bob"], "temp")
    assert (a.value, a.source, a.via) == ("cold", -1, "initial")


def test_no_late_view_when_the_container_is_closed() -> None:
    """The object in a closed container is not in view: no late view."""
    w = make_world(["Bob leave", "Anne change color blue visible", "Bob enter"],
                   agents=("Anne", "Bob"), properties={"color": "red"},
                   open_containers=("box",))
    assert ask(w, ["Bob"], "color").value == "red"


def test_a_property_declared_hidden_is_never_seen() -> None:
    """`hidden_properties` fixes visibility before any change: no view shows it."""
    w = World.from_dict({
        "agents": ["Anne", "Bob"], "containers": ["basket", "tray"], "object": "ring",
        "open_containers": ["tray"], "hidden_properties": ["temp"],
        "initial": {"location": "tray", "present": ["Anne"], "properties": {"temp": "cold"}},
        "opening": "unknown", "events": [{"type": "enter", "agent": "Bob"}]})
    assert ask(w, ["Bob"]).value == "tray"
    assert ask(w, ["Bob"], "temp").value is None
    refused(World.from_dict({**w.to_dict(), "events": [
        {"type": "change", "agent": "Anne", "property": "temp", "value": "hot",
         "visible": True}]}), "keeps its visibility", 0)


def test_presence_events_never_change_a_belief_about_the_object() -> None:
    """Sally left and came back, Anne slept and woke: nobody's belief changes."""
    w = make_world(["Sally leave", "Sally enter", "Anne sleep", "Anne wake"],
                   properties={"color": "red"})
    for chain in (["Anne"], ["Sally"], ["Anne", "Sally"], ["Sally", "Anne"]):
        assert ask(w, chain).source == -1
        assert ask(w, chain, "color").source == -1


def test_nothing_is_inferred() -> None:
    """Sally never infers a move from Anne's leaving and returning, nor doubts a lie."""
    w = make_world(["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally drawer"])
    assert ask(w, ["Sally"]).value == "drawer"
    w = make_world(["Anne leave", "Anne enter"])  # Anne might have moved it elsewhere: no
    assert ask(w, ["Sally"]).value == "basket"


def test_change_sets_chains_whose_agents_all_perceived_it() -> None:
    """Hidden changes are still perceived by those present and awake (the actor did it)."""
    w = make_world(["Sally leave", "Anne change temp hot hidden"], properties={"temp": "cold"})
    assert ask(w, ["Anne"], "temp").value == "hot"
    assert ask(w, ["Sally"], "temp").value == "cold"
    assert ask(w, ["Anne", "Sally"], "temp").value == "cold"


# ---------------------------------------------------------------- answers ----------------

def test_answer_carries_value_reality_source_and_via() -> None:
    w = make_world(["Sally leave", "Anne move box", "Anne move drawer"])
    a = ask(w, ["Sally"])
    assert a.to_dict() == {"value": "basket", "reality": "drawer", "source": -1,
                           "via": "initial", "false_belief": True}
    r = ask(w)
    assert (r.value, r.reality, r.source, r.via) == ("drawer", "drawer", 2, "reality")
    assert not r.false_belief
    b = ask(w, ["Anne"])
    assert (b.source, b.via, b.false_belief) == (2, "move", False)


def test_reality_of_a_property_names_its_last_change() -> None:
    w = make_world(["Anne change color blue visible", "Anne move box"],
                   properties={"color": "red", "size": "big"})
    assert (ask(w, (), "color").value, ask(w, (), "color").source) == ("blue", 0)
    assert ask(w, (), "size").source == -1


def test_question_about_unknown_property_refused() -> None:
    with pytest.raises(OracleInputError, match="unknown property"):
        answer_all(make_world([]), (Question("property", ("Anne",), "size"),))


def test_change_from_integer_one_to_true_is_a_real_change() -> None:
    """Minimal failing world: property n = 1, Anne sets it to true."""
    w = World.from_dict({"agents": ["Anne"], "containers": ["basket", "box"], "object": "marble",
                         "initial": {"location": "basket", "properties": {"n": 1}},
                         "events": [{"type": "change", "agent": "Anne", "property": "n",
                                     "value": True, "visible": True}]})
    (a,) = answer_all(w, (Question("property", (), "n"),))
    assert a.value is True


# ---------------------------------------------------------------- perception -------------

def _world(events: list[dict], **extra) -> World:
    return World.from_dict({"agents": ["Anne", "Sally", "Bob"],
                            "containers": ["basket", "box", "drawer"], "object": "marble",
                            "initial": {"location": "basket"}, "events": events, **extra})


def test_a_hidden_observer_updates_only_their_own_beliefs() -> None:
    """Bob watches the move secretly from outside: Bob knows, and knows Anne knows; nobody's
    model of Bob changes."""
    w = _world([{"type": "leave", "agent": "Bob"},
                {"type": "move", "agent": "Anne", "to": "box", "hidden_observers": ["Bob"]}])
    assert ask(w, ["Bob"]).value == "box"
    assert ask(w, ["Bob", "Anne"]).value == "box"
    assert ask(w, ["Bob", "Anne", "Sally"]).value == "box"
    assert ask(w, ["Anne", "Bob"]).value == "basket"
    assert ask(w, ["Bob", "Anne", "Bob"]).value == "basket"  # Anne's model of Bob is unchanged


def test_unnoticed_inattention_keeps_the_agent_but_updates_others_model_of_them() -> None:
    w = _world([{"type": "move", "agent": "Anne", "to": "box", "missed_by": ["Sally"]}])
    assert ask(w, ["Sally"]).value == "basket"
    assert ask(w, ["Sally", "Anne"]).value == "basket"
    assert ask(w, ["Anne", "Sally"]).value == "box"
    assert ask(w, ["Bob", "Sally"]).value == "box"
    assert ask(w, ["Anne", "Bob", "Sally"]).value == "box"


def test_perception_fields_are_checked() -> None:
    refused(_world([{"type": "move", "agent": "Anne", "to": "box",
                     "hidden_observers": ["Bob"]}]), "watches from outside", 0)
    refused(_world([{"type": "move", "agent": "Anne", "to": "box", "missed_by": ["Anne"]}]),
            "cannot miss it", 0)
    with pytest.raises(OracleInputError, match="unknown field"):
        _world([{"type": "peek", "agent": "Anne", "missed_by": ["Sally"]}])


# ---------------------------------------------------------------- testimony --------------

def test_testimony_latest_takes_the_latest_word_even_against_sight() -> None:
    w = _world([{"type": "move", "agent": "Anne", "to": "box"},
                {"type": "whisper", "speaker": "Anne", "listener": "Bob", "location": "basket"}])
    assert ask(w, ["Bob"]).value == "basket"
    assert ask(w, ["Anne", "Bob"]).value == "basket"


def test_testimony_fresher_access_needs_a_later_sighting() -> None:
    """Anne moves the marble in front of Bob, then whispers "basket": both saw it at the move,
    so Bob keeps box and Anne knows he does.  Bob, back from outside, believes Anne: she saw it
    after he left."""
    w = _world([{"type": "move", "agent": "Anne", "to": "box"},
                {"type": "whisper", "speaker": "Anne", "listener": "Bob", "location": "basket"}],
               testimony="fresher_access")
    assert ask(w, ["Bob"]).value == "box"
    assert ask(w, ["Anne", "Bob"]).value == "box"
    w = _world([{"type": "leave", "agent": "Bob"}, {"type": "move", "agent": "Anne", "to": "box"},
                {"type": "enter", "agent": "Bob"},
                {"type": "whisper", "speaker": "Anne", "listener": "Bob", "location": "drawer"}],
               testimony="fresher_access")
    assert ask(w, ["Bob"]).value == "drawer"
    assert ask(w, ["Bob", "Anne", "Bob"]).value == "drawer"


def _tray_world(events: list[dict], agents: tuple[str, ...] = ANNE_SALLY,
                present: tuple[str, ...] | None = None) -> World:
    """The marble starts on the open tray, in view; the box, basket and drawer are closed."""
    return World.from_dict({"agents": list(agents),
                            "containers": ["basket", "box", "drawer", "tray"],
                            "open_containers": ["tray"], "object": "marble",
                            "initial": {"location": "tray",
                                        "present": list(agents if present is None else present)},
                            "events": events, "testimony": "fresher_access"})


MOVE_OFF_TRAY_MISSED = {"type": "move", "agent": "Anne", "to": "box", "missed_by": ["Sally"]}


def test_sightings_within_one_event_put_the_mover_after_who_missed_the_move() -> None:
    """The marble lies on the open tray; Anne moves it into the closed box while Sally looks
    away.  Sally last saw it as the move began (e0, first moment), Anne by the move itself (e0,
    second moment): Anne's whisper is fresher, so Sally takes it, and every chain over the
    two but [Anne] follows."""
    w = _tray_world([MOVE_OFF_TRAY_MISSED, {"type": "whisper", "speaker": "Anne",
                                            "listener": "Sally", "location": "basket"}])
    state = replay(w, max_depth=1)
    assert state.last_seen == {"Sally": (0, 0), "Anne": (0, 1)}
    assert state.taken_whispers == [1]
    a = ask(w, ["Sally"])
    assert (a.value, a.source, a.via) == ("basket", 1, "whisper")
    assert ask(w, ["Sally", "Anne"]).value == "basket"
    assert ask(w, ["Anne", "Sally"]).value == "basket"
    assert ask(w, ["Sally", "Anne", "Sally"]).value == "basket"
    assert (ask(w, ["Anne"]).value, ask(w, ["Anne"]).via) == ("box", "move")


def test_who_missed_the_move_is_not_believed_by_the_mover() -> None:
    """The other way round: Sally's sighting (as the move began) is older than Anne's, so
    Anne does not take Sally's "tray", and no chain changes."""
    w = _tray_world([MOVE_OFF_TRAY_MISSED, {"type": "whisper", "speaker": "Sally",
                                            "listener": "Anne", "location": "tray"}])
    assert replay(w, max_depth=1).taken_whispers == []
    assert ask(w, ["Anne"]).value == "box"
    assert ask(w, ["Anne", "Sally"]).value == "box"  # the move, e0 (Anne took Sally to see it)
    assert ask(w, ["Sally", "Anne"]).value == "tray"  # the opening: Sally saw nothing since


def test_witnesses_of_one_move_off_the_tray_are_equally_fresh() -> None:
    """Both watch the move off the tray: both last saw the marble by the move itself, a tie,
    so Anne's claim is not taken."""
    w = _tray_world([{"type": "move", "agent": "Anne", "to": "box"},
                     {"type": "whisper", "speaker": "Anne", "listener": "Sally",
                      "location": "basket"}])
    assert replay(w, max_depth=1).last_seen == {"Anne": (0, 1), "Sally": (0, 1)}
    assert ask(w, ["Sally"]).value == "box"
    assert ask(w, ["Anne", "Sally"]).value == "box"


def test_a_secret_observer_of_the_move_is_fresher_than_who_missed_it() -> None:
    """Bob leaves (e0) and secretly watches Anne move the marble off the tray (e1), which Sally
    misses; Bob returns (e2).  Bob saw it by the move itself, Sally only as it began: Sally
    takes Bob's "basket" (e3), Bob does not take Sally's "tray" (e4)."""
    w = _tray_world([{"type": "leave", "agent": "Bob"},
                     {**MOVE_OFF_TRAY_MISSED, "hidden_observers": ["Bob"]},
                     {"type": "enter", "agent": "Bob"},
                     {"type": "whisper", "speaker": "Bob", "listener": "Sally",
                      "location": "basket"},
                     {"type": "whisper", "speaker": "Sally", "listener": "Bob",
                      "location": "tray"}], agents=THREE)
    state = replay(w, max_depth=1)
    assert state.last_seen == {"Anne": (1, 1), "Bob": (1, 1), "Sally": (1, 0)}
    assert state.taken_whispers == [3]
    assert (ask(w, ["Sally"]).value, ask(w, ["Sally"]).source) == ("basket", 3)
    assert (ask(w, ["Bob"]).value, ask(w, ["Bob"]).source) == ("box", 1)
    assert ask(w, ["Bob", "Sally"]).value == "basket"
    assert ask(w, ["Sally", "Bob"]).value == "basket"
    assert ask(w, ["Anne", "Sally"]).value == "box"
    assert ask(w, ["Anne", "Bob"]).value == "tray"  # nobody knows Bob watched


def test_who_leaves_the_marble_in_view_saw_it_before_who_stays() -> None:
    """Sally leaves while the marble lies on the open tray: she last saw it as her leaving
    began, Anne as it ended; the opening comes before both."""
    w = _tray_world([{"type": "leave", "agent": "Sally"}], agents=THREE,
                    present=("Anne", "Sally"))
    assert replay(w, max_depth=1).last_seen == {"Anne": (0, 2), "Sally": (0, 0), "Bob": (-1, 2)}
    assert ref.last_sighting(w, "Bob", 1) < ref.last_sighting(w, "Sally", 1) < \
        ref.last_sighting(w, "Anne", 1)


def test_a_claim_never_beats_plain_sight() -> None:
    w = World.from_dict({
        "agents": ["Anne", "Sally"], "containers": ["basket", "tray"], "object": "ring",
        "open_containers": ["tray"], "initial": {"location": "tray"},
        "events": [{"type": "whisper", "speaker": "Anne", "listener": "Sally",
                    "location": "basket"}]})
    assert ask(w, ["Sally"]).value == "tray"


def test_nobody_takes_a_known_liars_word() -> None:
    w = _world([{"type": "leave", "agent": "Sally"}, {"type": "move", "agent": "Anne", "to": "box"},
                {"type": "enter", "agent": "Sally"},
                {"type": "whisper", "speaker": "Anne", "listener": "Sally", "location": "box"}],
               known_liars=["Anne"])
    assert ask(w, ["Sally"]).value == "basket"
    assert ask(w, ["Anne", "Sally"]).value == "basket"


# ---------------------------------------------------------------- opening ----------------

def test_opening_unknown_gives_no_belief_to_the_absent() -> None:
    """Carla arrives after the start: she and every chain through her have no belief until
    she sees something; the absent-free chains start at the truth."""
    w = World.from_dict({
        "agents": ["Anne", "Carla"], "containers": ["basket", "box"], "object": "marble",
        "initial": {"location": "basket", "present": ["Anne"]}, "opening": "unknown",
        "events": [{"type": "enter", "agent": "Carla"}]})
    a = ask(w, ["Carla"])
    assert (a.value, a.via, a.false_belief, a.known) == (None, "unknown", False, False)
    assert ask(w, ["Anne", "Carla"]).value is None
    assert ask(w, ["Anne"]).value == "basket"
    w2 = World.from_dict({**w.to_dict(), "events": [
        {"type": "enter", "agent": "Carla"}, {"type": "move", "agent": "Anne", "to": "box"}]})
    assert ask(w2, ["Anne", "Carla"]).value == "box"


def test_opening_common_ground_includes_the_absent() -> None:
    w = World.from_dict({"agents": ["Anne", "Carla"], "containers": ["basket", "box"],
                         "object": "marble", "initial": {"location": "basket", "present": ["Anne"]},
                         "events": []})
    assert ask(w, ["Carla"]).value == "basket"


def test_unknown_policies_are_refused() -> None:
    for extra in ({"testimony": "loudest"}, {"opening": "vague"}, {"known_liars": ["Zed"]}):
        with pytest.raises(OracleInputError):
            _world([], **extra)

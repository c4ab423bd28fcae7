"""The executor on the gold actions reproduces the access oracle at every step (PDDL-Mind §5.1:
the two formal models agree where they overlap)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.oracle.sampler import SamplerConfig, legal_events, sample_world
from cogrsi_lib.oracle.state import OracleState
from cogrsi_lib.oracle.world import Event, Value, World
from cogrsi_lib.pddl.domain import CompiledDomain, domain_text
from cogrsi_lib.pddl.executor import execute
from cogrsi_lib.pddl.oracle_map import OracleMapError, cross_check, gold_pddl, value_name
from cogrsi_lib.pddl.parse import parse_domain_text


@st.composite
def sampler_configs(draw: st.DrawFn) -> SamplerConfig:
    lo = draw(st.integers(1, 5))
    n_min = draw(st.integers(0, 10))
    return SamplerConfig(
        min_agents=lo,
        max_agents=draw(st.integers(lo, 5)),
        n_containers=draw(st.integers(2, 4)),
        min_events=n_min,
        max_events=draw(st.integers(n_min, 24)),
        p_open_container=draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])),
        p_property=draw(st.sampled_from([0.0, 1.0])),
        p_truthful_whisper=draw(st.sampled_from([0.0, 0.5, 1.0])),
        p_hidden_observer=0.0, p_missed=0.0,  # outside the overlap: no PDDL action says them
    )


@st.composite
def sampled_worlds(draw: st.DrawFn) -> World:
    return sample_world(random.Random(draw(st.integers(0, 2**32 - 1))), draw(sampler_configs()))


# Properties the sampler never draws: numbers, booleans, several at once, asleep openings.
EXTRA: dict[str, tuple[bool, tuple[Value, ...]]] = {
    "color": (True, ("red", "blue", "green")),
    "size": (True, (1, 2, 3)),
    "wet": (False, (True, False)),
}


@st.composite
def direct_worlds(draw: st.DrawFn) -> World:
    """Worlds grown event by event, outside the sampler's biases."""
    agents = tuple(draw(st.lists(st.sampled_from(["Anne", "Sally", "Bob", "Carla"]),
                                 min_size=1, max_size=4, unique=True)))
    containers = tuple(draw(st.lists(st.sampled_from(["basket", "box", "tray", "drawer"]),
                                     min_size=2, max_size=4, unique=True)))
    present = frozenset(draw(st.sets(st.sampled_from(agents))))
    asleep = frozenset(draw(st.sets(st.sampled_from(sorted(present)))) if present else set())
    props = tuple((p, draw(st.sampled_from(vals)))
                  for p, (_, vals) in EXTRA.items() if draw(st.booleans()))
    base = World(agents=agents, containers=containers, object="marble",
                 location=draw(st.sampled_from(containers)), present=present, asleep=asleep,
                 properties=props,
                 open_containers=frozenset(draw(st.sets(st.sampled_from(containers)))),
                 hidden_properties=frozenset(p for p, _ in props if not EXTRA[p][0]))
    state = OracleState.initial(base, max_depth=1)
    events: list[Event] = []
    for i in range(draw(st.integers(0, 16))):
        options = [e for e in legal_events(state) if e.type != "change"]
        awake = sorted(state.present - state.asleep)
        for p, current in state.properties.items():
            visible, vals = EXTRA[p]
            options += [Event("change", a, property=p, value=v, visible=visible)
                        for a in awake for v in vals if value_name(v) != value_name(current)]
        if not options:
            break
        e = draw(st.sampled_from(options))
        state.apply(e, i)
        events.append(e)
    return replace(base, events=tuple(events))


@settings(max_examples=150, deadline=None)
@given(sampled_worlds())
def test_gold_actions_reproduce_the_oracle_on_sampled_worlds(world: World) -> None:
    assert cross_check(world) == []


@settings(max_examples=150, deadline=None)
@given(direct_worlds())
def test_gold_actions_reproduce_the_oracle_on_directly_grown_worlds(world: World) -> None:
    assert cross_check(world) == []


def test_every_gold_action_is_verified_and_moves_are_grab_then_drop_in_view() -> None:
    world = World(agents=("Anne", "Sally"), containers=("basket", "box"), object="marble",
                  location="basket", present=frozenset({"Anne", "Sally"}), events=(
                      Event("move", "Anne", to="box"), Event("leave", "Sally"),
                      Event("enter", "Sally")))
    gold = gold_pddl(world)
    assert [str(a) for a in gold.actions] == [
        "(open anne basket room)", "(grab anne marble basket room)", "(close anne basket room)",
        "(open anne box room)", "(drop anne marble box room)", "(close anne box room)",
        "(move sally room outside)", "(move sally outside room)"]
    assert gold.event_of_action == (0, 0, 0, 0, 0, 0, 1, 2)
    trace = execute(gold.task(), gold.actions)
    assert trace.rejected == () and len(trace.steps) == 8
    # a container open in the world is neither opened nor closed around the move
    ajar = gold_pddl(replace(world, open_containers=frozenset({"box"})))
    assert [a.name for a in ajar.actions[:4]] == ["open", "grab", "close", "drop"]


def _mutated(old: str, new: str) -> CompiledDomain:
    text = domain_text()
    assert old in text
    got = parse_domain_text(text.replace(old, new))
    assert isinstance(got, CompiledDomain), got
    return got


ASLEEP_WATCHER = World(
    agents=("Anne", "Bob"), containers=("basket", "box"), object="marble", location="basket",
    present=frozenset({"Anne", "Bob"}), asleep=frozenset({"Anne"}),
    events=(Event("move", "Bob", to="box"),))


def test_the_cross_check_catches_a_domain_in_which_the_asleep_see() -> None:
    assert cross_check(ASLEEP_WATCHER) == []
    # drop's perceivers without the awake condition: "being in the room is seeing"
    careless = _mutated(
        "(when (and (seen ?x ?o ?d) (at ?x ?l) (not (asleep ?x)))\n"
        "              (not (seen ?x ?o ?d))))\n"
        "      (forall (?x - agent)\n"
        "        (when (and (at ?x ?l) (not (asleep ?x)))\n"
        "              (seen ?x ?o ?c)))",
        "(when (and (seen ?x ?o ?d) (at ?x ?l))\n"
        "              (not (seen ?x ?o ?d))))\n"
        "      (forall (?x - agent)\n"
        "        (when (at ?x ?l)\n"
        "              (seen ?x ?o ?c)))")
    found = cross_check(ASLEEP_WATCHER, careless)
    assert [(m.event, m.what, m.oracle, m.pddl) for m in found] == [
        (0, "seen:Anne", ["basket"], ["box"])]


def test_the_cross_check_catches_a_public_whisper() -> None:
    world = World(agents=("Anne", "Bob", "Carla"), containers=("basket", "box"),
                  object="marble", location="basket",
                  present=frozenset({"Anne", "Bob", "Carla"}),
                  events=(Event("whisper", "Anne", listener="Bob", location="box"),))
    assert cross_check(world) == []
    loud = _mutated("(when (and (at ?x ?l) (not (asleep ?x)) (not (private ?u)))\n"
                    "              (heard ?x ?u)))))\n\n  ; --- extension",
                    "(when (and (at ?x ?l) (not (asleep ?x)))\n"
                    "              (heard ?x ?u)))))\n\n  ; --- extension")
    found = cross_check(world, loud)
    assert [(m.event, m.what, m.oracle, m.pddl) for m in found] == [
        (0, "heard:Carla", [], [0])]


def test_the_cross_check_has_power_on_sampled_worlds() -> None:
    # a wake that leaves the agent asleep: the check must notice it on some sampled world
    sleepy = _mutated("(:action wake\n    :parameters (?a - agent ?l - loc)\n"
                      "    :precondition (and (at ?a ?l) (asleep ?a))\n"
                      "    :effect (and (not (asleep ?a))",
                      "(:action wake\n    :parameters (?a - agent ?l - loc)\n"
                      "    :precondition (and (at ?a ?l) (asleep ?a))\n"
                      "    :effect (and (asleep ?a)")
    cfg = SamplerConfig(max_events=16, p_hidden_observer=0.0, p_missed=0.0)
    worlds = [sample_world(random.Random(s), cfg) for s in range(120)]
    assert all(cross_check(w) == [] for w in worlds)
    assert any(cross_check(w, sleepy) for w in worlds)


def test_value_names_follow_json_equality() -> None:
    assert value_name(1) == value_name(1.0) == "n_1"
    assert value_name(True) == "v_true" != value_name(1)
    assert value_name("Light Blue") == "light_blue"
    assert value_name(-2.5) == "n_minus2_5"


def test_names_that_clash_in_pddl_are_refused() -> None:
    world = World(agents=("Box",), containers=("box", "basket"), object="marble",
                  location="box", present=frozenset({"Box"}))
    with pytest.raises(OracleMapError, match="clash"):
        gold_pddl(world)

"""Property tests of the access oracle: every invariant of recursive-reasoning plan §5.7.

Worlds come from two sources: the sampler (hypothesis-drawn seeds and configurations,
up to 5 agents) and :func:`strategies.direct_worlds`, which grows worlds event by event
from the reference's legal moves, so the sampler's biases cannot hide bugs.  The key
cross-check compares the oracle with the independent latest-writer reference
(:mod:`reference`) on every question up to depth 4.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.oracle.answer import Answer, answer_all
from cogrsi_lib.oracle.render import CHAT, NARRATIVE, render
from cogrsi_lib.oracle.sampler import SamplerConfig, question_records, sample_world
from cogrsi_lib.oracle.state import replay, trace
from cogrsi_lib.oracle.world import Event, OracleInputError, Question, World

from . import reference as ref
from .helpers import assert_agrees, fast, known_view_divergence
from .strategies import PROPERTY_VALUES, all_questions, direct_worlds, prefix, sampled_worlds

VISIBLE_EVENTS = ("leave", "enter", "sleep", "wake", "move", "change")


def answers(world: World, questions: list[Question]) -> dict[Question, Answer]:
    """The oracle's answers to ``questions``, keyed by question."""
    return dict(zip(questions, answer_all(world, tuple(questions)), strict=True))


def beliefs(world: World, questions: list[Question]) -> dict[Question, tuple]:
    """The oracle's beliefs (value, source, via; reality left out), keyed by question."""
    return {q: (a.value, a.source, a.via) for q, a in answers(world, questions).items()}


def before_after(world: World, i: int, qs: list[Question]) -> tuple[dict, dict]:
    """Oracle beliefs (value, source, via) just before and just after event ``i``."""
    return beliefs(prefix(world, i), qs), beliefs(prefix(world, i + 1), qs)


def location_qs(world: World, depth: int) -> list[Question]:
    return [q for q in all_questions(world, depth) if q.kind == "location" and q.chain]


def belief_qs(world: World, depth: int) -> list[Question]:
    return [q for q in all_questions(world, depth) if q.chain]


# ---------------------------------------------------------------- cross-check -----------

@fast(120)
@given(sampled_worlds(), st.integers(1, 4))
def test_reference_agrees_with_oracle_on_sampled_worlds(world: World, depth: int) -> None:
    """Sampler worlds (1-5 agents, up to 14 events): every question up to ``depth`` agrees."""
    qs = all_questions(world, depth)
    for q, a in zip(qs, answer_all(world, tuple(qs)), strict=True):
        assert_agrees(world, q, a)


@fast(200)
@given(direct_worlds())
def test_reference_agrees_with_oracle_on_direct_worlds(world: World) -> None:
    """Directly built worlds (asleep at start, several properties, any visibility): depth 4."""
    qs = all_questions(world, 4)
    for q, a in zip(qs, answer_all(world, tuple(qs)), strict=True):
        assert_agrees(world, q, a)


def test_reference_agrees_on_a_fixed_population() -> None:
    """A fixed, seeded population of larger worlds (4-5 agents, depth 4), not shrunk away."""
    cfg = SamplerConfig(min_agents=4, max_agents=5, n_containers=4, min_events=8,
                        max_events=16, p_open_container=0.5)
    rng = random.Random(20240)
    for _ in range(60):
        world = sample_world(rng, cfg)
        qs = all_questions(world, 4)
        for q, a in zip(qs, answer_all(world, tuple(qs)), strict=True):
            assert_agrees(world, q, a)


@fast(150)
@given(direct_worlds(max_events=10))
def test_reference_agrees_after_every_prefix(world: World) -> None:
    """Agreement holds after every prefix of the story, not only at its end."""
    for n in range(len(world.events) + 1):
        w = prefix(world, n)
        qs = all_questions(w, 2)
        for q, a in zip(qs, answer_all(w, tuple(qs)), strict=True):
            assert_agrees(w, q, a)


@fast(80)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_sampler_question_records_agree_with_reference(world: World) -> None:
    """The parquet-ready records (answer, reality, false_belief, source, via, and
    chain_saw_last_change) agree with the reference, question for question."""
    for row in question_records(world, 0, max_depth=3):
        q = Question(row["kind"], tuple(row["chain"]), row["property"])
        r = ref.ref_answer(world, q)
        assert (row["answer"], row["reality"]) == (str(r.value), str(r.reality))
        assert row["false_belief"] == (not ref.same_value(r.value, r.reality))
        assert row["depth"] == len(q.chain)
        _truth, last = ref.reality(world, q)
        saw = last < 0 or set(q.chain) <= ref.perceivers(world, last)
        assert row["chain_saw_last_change"] == saw, (q, row)
        oracle = Answer(r.value, r.reality, row["source_event"], row["via"])
        if (row["source_event"], row["via"]) != (r.source, r.via):
            assert known_view_divergence(world, q, r, oracle), (q, row, r)


# ---------------------------------------------------------------- world invariants ------

@fast(150)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_object_is_in_exactly_one_container_after_every_event(world: World) -> None:
    """One location, always a container, and the one the reference recomputes."""
    for i, _who, state in trace(world, max_depth=1):
        assert state.location in world.containers
        assert [c for c in world.containers if c == state.location] == [state.location]
        assert state.location == ref.situation(world, i + 1).location


@fast(150)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_every_move_changes_reality(world: World) -> None:
    """Each move leaves the object somewhere else; no other event moves it."""
    before = world.location
    for i, _who, state in trace(world, max_depth=1):
        if world.events[i].type == "move":
            assert state.location != before
            assert state.location == world.events[i].to
        else:
            assert state.location == before
        before = state.location


@fast(150)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_absent_and_asleep_agents_do_not_perceive_visible_events(world: World) -> None:
    """Visible events reach exactly the present, awake agents and the actor."""
    for i, who, state in trace(world, max_depth=1):
        e = world.events[i]
        s = ref.situation(world, i)
        if e.type in VISIBLE_EVENTS:
            assert who == (s.present - s.asleep) | {e.actor}
            for agent in set(world.agents) - who:
                assert agent not in s.present or agent in s.asleep
                assert all(idx != i for idx, _ in state.observation_log[agent])


@fast(150)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_private_events_perceived_only_by_their_parties(world: World) -> None:
    """A whisper reaches only speaker and listener; a peek only the peeker."""
    for i, who, _state in trace(world, max_depth=1):
        e = world.events[i]
        if e.type == "whisper":
            assert who == {e.actor, e.listener}
        elif e.type == "peek":
            assert who == {e.actor}


# ---------------------------------------------------------------- epistemic invariants --

@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_unobserved_move_keeps_and_observed_move_sets_first_order_belief(world: World) -> None:
    """Agents who miss a move keep their belief; agents who perceive it believe the destination."""
    qs = location_qs(world, 1)
    for i, e in enumerate(world.events):
        if e.type != "move":
            continue
        who = ref.perceivers(world, i)
        pre, post = before_after(world, i, qs)
        for q in qs:
            if q.chain[0] in who:
                assert post[q] == (e.to, i, "move")
            else:
                assert post[q] == pre[q]


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_chain_updates_need_every_member_to_perceive(world: World) -> None:
    """Moves and changes set exactly the chains all of whose agents perceived them (depth 3)."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type not in ("move", "change"):
            continue
        who = ref.perceivers(world, i)
        pre, post = before_after(world, i, qs)
        for q in qs:
            written = set(q.chain) <= who and (
                (e.type == "move" and q.kind == "location")
                or (e.type == "change" and q.property == e.property)
            )
            if written:
                assert post[q][0] == (e.to if e.type == "move" else e.value)
            else:
                assert post[q] == pre[q], (i, q)


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_a_hidden_observation_does_not_update_others_model_of_the_observer(world: World) -> None:
    """If B perceives an event that A does not (B's peek, or A absent), A's model of B is kept."""
    qs = location_qs(world, 2)
    for i, e in enumerate(world.events):
        if e.type not in ("move", "peek"):
            continue
        who = ref.perceivers(world, i)
        pre, post = before_after(world, i, qs)
        for q in qs:
            if len(q.chain) == 2 and q.chain[1] in who and q.chain[0] not in who:
                assert post[q] == pre[q]
            if e.type == "move" and len(q.chain) == 2 and set(q.chain) <= who:
                assert post[q][0] == e.to  # A saw B see it: A updates its model of B


@fast(120)
@given(direct_worlds(max_agents=5, max_events=10))
def test_unrelated_agents_do_not_learn_whisper_content(world: World) -> None:
    """A whisper S -> L sets exactly [L], [S, L], [L, S]; every other chain is unchanged."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type != "whisper":
            continue
        written = {(e.listener,), (e.actor, e.listener), (e.listener, e.actor)}
        pre, post = before_after(world, i, qs)
        for q in qs:
            if q.kind == "location" and q.chain in written:
                assert post[q][0] == e.location and post[q][2] == "whisper"
            else:
                assert post[q] == pre[q], (i, q)


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_peek_writes_only_the_peekers_own_belief(world: World) -> None:
    """A peek sets [X] to the true location and leaves every other chain unchanged."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type != "peek":
            continue
        pre, post = before_after(world, i, qs)
        where = ref.situation(world, i).location
        for q in qs:
            if q.kind == "location" and q.chain == (e.actor,):
                assert post[q][0] == where and post[q][2] == "peek"
            else:
                assert post[q] == pre[q]


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_presence_events_change_no_belief_except_a_late_view(world: World) -> None:
    """Leave/enter/sleep/wake never change a location belief; enter/wake may only set
    the actor's own visible-property beliefs (late view), and only when the object is in view."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type not in ("leave", "enter", "sleep", "wake"):
            continue
        pre, post = before_after(world, i, qs)
        in_view = ref.situation(world, i).location in world.open_containers
        for q in qs:
            if post[q] == pre[q]:
                continue
            assert q.kind == "property" and q.chain == (e.actor,)
            assert e.type in ("enter", "wake") and in_view and post[q][2] == "view"


# ---------------------------------------------------------------- depth invariants ------

@fast(100)
@given(direct_worlds(max_agents=5, max_events=12, types=("move", "change")))
def test_common_knowledge_stories_have_no_false_belief_at_any_depth(world: World) -> None:
    """With only moves and changes among whoever is in the room from the start, nothing
    differs: every chain of present awake agents equals reality, to depth 4."""
    awake = set(world.present - world.asleep)
    for q, a in answers(world, all_questions(world, 4)).items():
        if set(q.chain) <= awake:
            assert ref.same_value(a.value, a.reality), q


@fast(100)
@given(direct_worlds(max_agents=4, max_events=12,
                     types=("move", "change", "leave", "enter", "sleep", "wake")))
def test_without_private_events_a_chain_depends_only_on_its_members(world: World) -> None:
    """Without whispers and peeks, chains over one agent set agree: [A,B] = [B,A] = [A,B,A]."""
    by_members: dict[tuple[str, str | None, frozenset[str]], object] = {}
    for q, a in answers(world, belief_qs(world, 4)).items():
        key = (q.kind, q.property, frozenset(q.chain))
        assert by_members.setdefault(key, a.value) == a.value, q


@fast(120)
@given(direct_worlds(max_agents=5, max_events=10), st.data())
def test_counterfactual_last_move_alters_exactly_the_chains_that_perceived_it(
    world: World, data: st.DataObject
) -> None:
    """Appending a move to d or to d' changes exactly the chains over its perceivers, at every
    depth; every chain with one agent who missed it is invariant."""
    s = ref.situation(world, len(world.events))
    awake = sorted(s.present - s.asleep)
    targets = [c for c in world.containers if c != s.location]
    if not awake or len(targets) < 2:
        return
    actor = data.draw(st.sampled_from(awake))
    d1, d2 = data.draw(st.permutations(targets))[:2]
    w1 = replace(world, events=world.events + (Event("move", actor, to=d1),))
    w2 = replace(world, events=world.events + (Event("move", actor, to=d2),))
    who = ref.perceivers(w1, len(world.events))
    qs = location_qs(world, 4)
    a1, a2 = answers(w1, qs), answers(w2, qs)
    for q in qs:
        if set(q.chain) <= who:
            assert (a1[q].value, a2[q].value) == (d1, d2)
        else:
            assert a1[q].value == a2[q].value


@fast(120)
@given(direct_worlds(max_agents=5, max_events=10), st.data())
def test_counterfactual_whisper_content_alters_exactly_three_chains(
    world: World, data: st.DataObject
) -> None:
    """Whispering v or v' differs in [L], [S, L], [L, S] only, at every depth up to 4."""
    s = ref.situation(world, len(world.events))
    awake = sorted(s.present - s.asleep)
    if len(awake) < 2:
        return
    speaker, listener = data.draw(st.permutations(awake))[:2]
    v1, v2 = data.draw(st.permutations(list(world.containers)))[:2]
    ws = [replace(world, events=world.events + (Event("whisper", speaker, listener=listener,
                                                          location=v),)) for v in (v1, v2)]
    qs = location_qs(world, 4)
    a1, a2 = answers(ws[0], qs), answers(ws[1], qs)
    for q in qs:
        if q.chain in {(listener,), (speaker, listener), (listener, speaker)}:
            assert (a1[q].value, a2[q].value) == (v1, v2)
        else:
            assert a1[q] == a2[q]


@fast(120)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_every_answer_comes_from_an_event_the_whole_chain_perceived(world: World) -> None:
    """The source event of a belief was perceived by every chain member (observation log),
    and private sources write only the chains SEMANTICS.md allows."""
    state = replay(world, max_depth=3)
    for q, a in answers(world, belief_qs(world, 3)).items():
        if a.source < 0:
            assert a.via == "initial"
            continue
        e = world.events[a.source]
        logged = {x for x in world.agents if any(i == a.source for i, _ in
                                                  state.observation_log[x])}
        assert set(q.chain) <= logged
        if a.via == "whisper":
            assert q.chain in {(e.listener,), (e.actor, e.listener), (e.listener, e.actor)}
        elif a.via in ("peek", "view"):
            assert q.chain == (e.actor,)
        else:
            assert a.via == {"move": "move", "change": "change"}[e.type]


def test_adversarial_items_exist_at_every_depth() -> None:
    """Plan §5.6/5.7: for k = 1..4 the oracle yields R(k) answers that differ from reality and
    from every shallower prefix answer, in a seeded population of 4-5 agent worlds."""
    cfg = SamplerConfig(min_agents=4, max_agents=5, n_containers=4, min_events=10,
                        max_events=16)
    rng = random.Random(7)
    found: set[int] = set()
    for _ in range(200):
        world = sample_world(rng, cfg)
        got = answers(world, all_questions(world, 4))
        for q, a in got.items():
            if q.kind != "location" or not q.chain:
                continue
            shallower = [got[Question("location", q.chain[:j])].value for j in range(len(q.chain))]
            if all(a.value != v for v in shallower):
                found.add(len(q.chain))
        if found == {1, 2, 3, 4}:
            break
    assert found == {1, 2, 3, 4}


# ---------------------------------------------------------------- serialization ---------

@fast(200)
@given(st.one_of(sampled_worlds(), direct_worlds()), st.integers(0, 4))
def test_world_json_round_trip(world: World, depth: int) -> None:
    """World -> JSON -> World gives the same world, the same questions and the same answers;
    the JSON form is canonical."""
    world = replace(world, questions=tuple(all_questions(world, min(depth, 2))))
    back = World.from_json(world.to_json())
    assert back == world
    assert back.questions == world.questions
    assert back.to_json() == world.to_json()
    assert dict(back.properties) == dict(world.properties)
    assert answer_all(back) == answer_all(world)
    json.loads(world.to_json())  # plain JSON


@fast(100)
@given(sampled_worlds())
def test_sampled_world_round_trips_exactly(world: World) -> None:
    """Sampled worlds (one property) round-trip to an equal World, field for field."""
    assert World.from_json(world.to_json()) == world


def test_round_trip_keeps_property_order() -> None:
    """Minimal failing world: two properties not in alphabetical order."""
    world = World(agents=("Anne",), containers=("basket", "box"), object="marble",
                  location="basket", present=frozenset({"Anne"}),
                  properties=(("temperature", "hot"), ("color", "red")))
    assert World.from_json(world.to_json()) == world


@fast(150)
@given(st.one_of(sampled_worlds(), direct_worlds()), st.sampled_from([NARRATIVE, CHAT]))
def test_story_is_derived_from_the_structure(world: World, templates) -> None:
    """One line per event, in order, each with the oracle's (and the reference's) perceivers;
    the opening lines are exactly the opening facts; lines name their actors."""
    story = render(world, templates)
    event_lines = [line for line in story.lines if line.event is not None]
    opening = [line for line in story.lines if line.event is None]
    assert [line.event for line in event_lines] == list(range(len(world.events)))
    assert story.lines[: len(opening)] == tuple(opening)  # opening first
    assert len(opening) == (len(world.present) + len(world.asleep) + 1
                            + len(world.open_containers) + len(world.properties))
    for line, (i, who, _state) in zip(event_lines, trace(world, max_depth=1), strict=True):
        e = world.events[i]
        assert line.perceivers == who == ref.perceivers(world, i)
        assert e.actor in line.text
        if e.type == "whisper":
            assert e.listener in line.text and e.location in line.text
        if e.type == "move":
            assert e.to in line.text
        if e.type == "change":
            assert str(e.value) in line.text
    if templates.numbered:
        assert [line.text.split(" ", 1)[0] for line in story.lines] == [
            str(n) for n in range(1, len(story.lines) + 1)]
    assert story.text.count("\n") == len(story.lines) - 1


# ---------------------------------------------------------------- illegal events --------

def _illegal_options(world: World, at: int) -> list[Event]:
    """Illegal events for the situation just before index ``at`` (from the reference)."""
    s = ref.situation(world, at)
    awake = [a for a in world.agents if a in s.present and a not in s.asleep]
    absent = [a for a in world.agents if a not in s.present]
    asleep = sorted(s.asleep)
    not_asleep = [a for a in world.agents if a not in s.asleep]
    out = [Event("leave", "Zed"), Event("move", "Zed", to=world.containers[0])]
    out += [Event("enter", a) for a in s.present]
    out += [Event("wake", a) for a in not_asleep]
    for a in absent + asleep:
        out += [Event("leave", a), Event("sleep", a), Event("peek", a),
                Event("move", a, to=next(c for c in world.containers if c != s.location))]
    for a in awake:
        out += [Event("move", a, to=s.location), Event("move", a, to="attic"),
                Event("whisper", a, listener=a, location=s.location),
                Event("whisper", a, listener="Zed", location=s.location),
                Event("change", a, property="weight", value=3, visible=True)]
        out += [Event("whisper", a, listener=b, location=world.containers[0])
                for b in absent + asleep]
        others = [b for b in awake if b != a]
        if others:
            out.append(Event("whisper", a, listener=others[0], location="attic"))
        for prop, value in s.values.items():
            out.append(Event("change", a, property=prop, value=value, visible=True))
            earlier = [e for e in world.events[:at] if e.type == "change" and e.property == prop]
            if earlier:
                other = next(v for v in PROPERTY_VALUES[prop] if not ref.same_value(v, value))
                out.append(Event("change", a, property=prop, value=other,
                                 visible=not earlier[0].visible))
    return out


@fast(250)
@given(direct_worlds(max_events=10), st.data())
def test_illegal_event_is_rejected_with_its_index(world: World, data: st.DataObject) -> None:
    """Insert an illegal event at a random position: the oracle refuses with that index."""
    at = data.draw(st.integers(0, len(world.events)))
    bad = data.draw(st.sampled_from(_illegal_options(world, at)))
    broken = replace(world, events=world.events[:at] + (bad,) + world.events[at:])
    assert ref.first_illegal(broken) == at  # the test's own premise
    with pytest.raises(OracleInputError) as info:
        answer_all(broken, (Question("location", ()),))
    assert info.value.event_index == at
    assert str(info.value).startswith(f"event {at}: ")
    with pytest.raises(OracleInputError) as info:  # the JSON route names the same index
        answer_all(World.from_json(broken.to_json()), (Question("location", ()),))
    assert info.value.event_index == at


@fast(100)
@given(direct_worlds(max_events=8), st.data())
def test_malformed_event_is_rejected_with_its_index(world: World, data: st.DataObject) -> None:
    """A malformed event object in the JSON is refused at parse time, naming its index."""
    raw = json.loads(world.to_json())
    at = data.draw(st.integers(0, len(raw["events"])))
    bad = data.draw(st.sampled_from([
        {"type": "teleport", "agent": world.agents[0]},
        {"type": "move", "agent": world.agents[0]},
        {"type": "peek", "agent": world.agents[0], "to": "box"},
        {"type": "leave", "agent": 3},
        {"type": "change", "agent": world.agents[0], "property": "p", "value": [1],
         "visible": True},
        {"type": "change", "agent": world.agents[0], "property": "p", "value": 1,
         "visible": "yes"},
        "move",
    ]))
    raw["events"].insert(at, bad)
    with pytest.raises(OracleInputError) as info:
        World.from_dict(raw)
    assert info.value.event_index == at

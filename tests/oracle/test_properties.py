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
from .helpers import assert_agrees, fast
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


@fast(100)
@given(st.one_of(sampled_worlds(), direct_worlds()), st.data())
def test_tracking_some_chains_gives_the_beliefs_of_tracking_every_chain(world: World,
                                                                        data) -> None:
    """A replay of the chains asked (their plan, whose groups of perceivers are remembered
    across worlds) sets each chain as the replay of every chain to depth 3 does, after
    every event."""
    full = list(trace(world, 3))
    every = sorted(full[-1][2].location_beliefs) if full else []
    asked = data.draw(st.lists(st.sampled_from(every), unique=True)) if every else []
    for (i, who, mine), (_, their_who, theirs) in zip(trace(world, only=asked), trace(world, 3),
                                                      strict=True):
        assert who == their_who, i
        for chain in mine.location_beliefs:
            assert mine.location_beliefs[chain] == theirs.location_beliefs[chain], (i, chain)
            assert mine.property_beliefs[chain] == theirs.property_beliefs[chain], (i, chain)


@fast(80)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_sampler_question_records_agree_with_reference(world: World) -> None:
    """The parquet-ready records (answer, reality, false_belief, source, via, and
    chain_saw_last_change) agree with the reference, question for question."""
    for row in question_records(world, 0, max_depth=3):
        q = Question(row["kind"], tuple(row["chain"]), row["property"])
        r = ref.ref_answer(world, q)
        held = None if r.value is None else str(r.value)
        assert (row["answer"], row["reality"]) == (held, str(r.reality))
        assert row["false_belief"] == (r.value is not None
                                       and not ref.same_value(r.value, r.reality))
        assert row["depth"] == len(q.chain)
        _truth, last = ref.reality(world, q)
        saw = last < 0 or set(q.chain) <= ref.perceivers(world, last)
        assert row["chain_saw_last_change"] == saw, (q, row)
        assert (row["source_event"], row["via"]) == (r.source, r.via), (q, row, r)


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
    """Visible events reach the present, awake agents and the actor, minus who missed them
    unnoticed, plus secret observers from outside (who are the only absent perceivers)."""
    for i, who, state in trace(world, max_depth=1):
        e = world.events[i]
        s = ref.situation(world, i)
        if e.type in VISIBLE_EVENTS:
            assert who == ((s.awake | {e.actor}) - set(e.missed_by)) | set(e.hidden_observers)
            for agent in set(world.agents) - who:
                assert agent not in s.awake or agent in e.missed_by
                assert all(idx != i or what == "view"
                           for idx, what in state.observation_log[agent])
            for agent in who - s.awake - {e.actor}:
                assert agent in e.hidden_observers and agent not in s.present


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
    """Agents who miss a move keep their belief unless the object lands in their view;
    agents who perceive it believe the destination."""
    qs = location_qs(world, 1)
    for i, e in enumerate(world.events):
        if e.type != "move":
            continue
        who = ref.perceivers(world, i)
        pre, post = before_after(world, i, qs)
        for q in qs:
            if q.chain[0] in who:
                assert post[q] == (e.to, i, "move")
            elif _common_view(world, i, q.chain):
                assert post[q] == (e.to, i, "view")
            else:
                assert post[q] == pre[q]


def _shown(world: World, i: int, q: Question) -> object | None:
    """What seeing the object right after event ``i`` shows for ``q`` (None: nothing)."""
    after = ref.situation(world, i + 1)
    if q.kind == "location":
        return after.location
    return after.values[q.property] if ref.visibility(world, q.property) else None  # type: ignore[arg-type]


def _common_view(world: World, i: int, chain: tuple[str, ...]) -> bool:
    """The object lies in view after event ``i`` and every agent of ``chain`` sees it."""
    after = ref.situation(world, i + 1)
    return after.location in world.open_containers and set(chain) <= after.awake


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_co_presence_decides_the_chains_a_move_or_change_sets(world: World) -> None:
    """A move (location and visible properties) or change (its property) sets exactly the
    chains whose first agent perceived it and whose other agents everyone takes to have
    perceived it; the rest keep their value unless the object lies in common view."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type not in ("move", "change"):
            continue
        actual, public = ref.perceivers(world, i), ref.public_perceivers(world, i)
        pre, post = before_after(world, i, qs)
        for q in qs:
            co_present = q.chain[0] in actual and set(q.chain[1:]) <= public
            if e.type == "move":
                value, via = _shown(world, i, q), "move"
            elif q.kind == "property" and q.property == e.property:
                value, via = e.value, "change"
            else:
                value = None
            if value is None:
                assert post[q] == pre[q], (i, q)
            elif co_present:
                assert post[q] == (value, i, via), (i, q)
            elif _common_view(world, i, q.chain) and (e.type == "move" or e.visible):
                assert post[q] == (value, i, "view"), (i, q)
            else:
                assert post[q] == pre[q], (i, q)


@fast(150)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_the_object_in_view_is_common_ground_after_every_event(world: World) -> None:
    """Whenever the object lies in an open container, every chain of the present awake agents
    holds its true location and visible properties (what a move into view, or a visible change
    there, sets the chains of who missed it to; SEMANTICS.md, "Seeing the object")."""
    for i, _who, state in trace(world, max_depth=3):
        s = ref.situation(world, i + 1)
        if s.location not in world.open_containers:
            continue
        for chain in state.location_beliefs:
            if not set(chain) <= s.awake:
                continue
            assert state.belief(chain, "location").value == s.location, (i, chain)
            for prop, value in s.values.items():
                if ref.visibility(world, prop):
                    got = state.belief(chain, "property", prop).value
                    assert ref.same_value(got, value), (i, chain, prop)  # type: ignore[arg-type]


def _rank(times: dict[str, object]) -> dict[str, int | None]:
    """Each agent's rank among the distinct sighting times (None: never saw the object)."""
    order = sorted({t for t in times.values() if t is not None})  # type: ignore[type-var]
    return {a: None if t is None else order.index(t) for a, t in times.items()}


@fast(150)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_sighting_order_agrees_with_the_reference_before_every_event(world: World) -> None:
    """Who saw the object later than whom, before each event and at the end, is the same in
    the oracle's state and in the reference's clock of moments (three per event)."""
    states = [replay(prefix(world, 0), max_depth=1)]
    states += [replay(prefix(world, i + 1), max_depth=1) for i in range(len(world.events))]
    for i, state in enumerate(states):
        ours = _rank(dict(state.last_seen))
        theirs = _rank({a: ref.last_sighting(world, a, i) for a in world.agents})
        assert ours == theirs, (i, state.last_seen)


@fast(120)
@given(direct_worlds(max_agents=4, max_events=8), st.data())
def test_a_witness_is_believed_by_who_missed_the_move_off_view(
    world: World, data: st.DataObject
) -> None:
    """``fresher_access``: append a move into a closed container that a present onlooker misses
    unnoticed, then a whisper to that onlooker from someone who saw the move (the mover or a
    secret observer): the onlooker takes it, and so does every chain over the two but the
    speaker's own, at every depth up to 3."""
    world = replace(world, testimony="fresher_access", known_liars=frozenset())
    s = ref.situation(world, len(world.events))
    awake = sorted(s.awake)
    closed = [c for c in world.containers if c != s.location and c not in world.open_containers]
    if len(awake) < 2 or not closed:
        return
    mover, onlooker = data.draw(st.permutations(awake))[:2]
    absent = sorted(set(world.agents) - s.present)
    hidden = tuple(data.draw(st.lists(st.sampled_from(absent), max_size=1))) if absent else ()
    speaker = data.draw(st.sampled_from([mover, *hidden]))
    move = Event("move", mover, to=data.draw(st.sampled_from(closed)),
                 hidden_observers=hidden, missed_by=(onlooker,))
    events = (move,) + ((Event("enter", speaker),) if speaker in hidden else ())
    said = data.draw(st.sampled_from(world.containers))
    w = replace(world, events=world.events + events
                + (Event("whisper", speaker, listener=onlooker, location=said),))
    told = len(w.events) - 1
    assert ref.believed(w, told)
    assert told in replay(w, max_depth=1).taken_whispers
    pair = (speaker, onlooker)
    qs = [Question("location", c) for c in ((onlooker,), pair, pair[::-1], (onlooker, *pair),
                                            (*pair, speaker))]
    for q, a in answers(w, qs).items():
        assert (a.value, a.source, a.via) == (said, told, "whisper"), q


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_a_hidden_observation_does_not_update_others_model_of_the_observer(world: World) -> None:
    """If B perceives an event that A does not take B to perceive (B's peek, B absent or a
    secret observer), A's model of B is kept; if A sees B see a move, A's model of B updates.
    Someone who missed a move unnoticed keeps their belief, while others' model of them
    updates."""
    qs = location_qs(world, 2)
    for i, e in enumerate(world.events):
        if e.type not in ("move", "peek"):
            continue
        actual, public = ref.perceivers(world, i), ref.public_perceivers(world, i)
        pre, post = before_after(world, i, qs)
        in_view = _common_view(world, i, ())
        for q in qs:
            a, b = q.chain[0], q.chain[-1]
            if len(q.chain) == 2 and b in actual and b not in public and not in_view:
                assert post[q] == pre[q]
            if e.type == "move" and len(q.chain) == 2 and a in actual and b in public:
                assert post[q][0] == e.to  # A saw B see it: A updates its model of B
            if e.type == "move" and len(q.chain) == 1 and a in e.missed_by and not in_view:
                assert post[q] == pre[q]


@fast(120)
@given(direct_worlds(max_agents=5, max_events=10))
def test_unrelated_agents_do_not_learn_whisper_content(world: World) -> None:
    """A believed whisper S -> L sets every chain over {S, L} but [S]; nothing else changes,
    and a whisper not believed changes nothing at all."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type != "whisper":
            continue
        taken = ref.believed(world, i)
        pre, post = before_after(world, i, qs)
        for q in qs:
            told = set(q.chain) <= {e.actor, e.listener} and q.chain != (e.actor,)
            if taken and q.kind == "location" and told:
                assert post[q] == (e.location, i, "whisper")
            else:
                assert post[q] == pre[q], (i, q)


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_peek_writes_only_the_peekers_own_belief(world: World) -> None:
    """A peek sets [X]'s location and visible properties to the truth; nothing else changes."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type != "peek":
            continue
        pre, post = before_after(world, i, qs)
        for q in qs:
            shown = _shown(world, i, q)
            if q.chain == (e.actor,) and shown is not None:
                assert post[q] == (shown, i, "peek")
            else:
                assert post[q] == pre[q]


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10))
def test_presence_events_change_no_belief_except_joining_a_view(world: World) -> None:
    """Leave/enter/sleep/wake change a belief only when the actor enters or wakes with the
    object in view: then the chains of present awake agents that contain the actor see it."""
    qs = belief_qs(world, 3)
    for i, e in enumerate(world.events):
        if e.type not in ("leave", "enter", "sleep", "wake"):
            continue
        pre, post = before_after(world, i, qs)
        for q in qs:
            shown = _shown(world, i, q)
            joins = (e.type in ("enter", "wake") and e.actor in q.chain
                     and _common_view(world, i, q.chain) and shown is not None)
            assert post[q] == ((shown, i, "view") if joins else pre[q]), (i, q)


@fast(100)
@given(direct_worlds(max_agents=4, max_events=12))
def test_agents_who_perceived_every_event_together_agree_on_alternating_chains(
    world: World,
) -> None:
    """Two agents who perceived every event together (both in every event's public and
    actual perceivers, never hidden from each other) hold one belief on every chain over them:
    [A] = [A, B] = [A, B, A] = ... = [B, A] (opening common ground, no known liars)."""
    world = replace(world, opening="common_ground", known_liars=frozenset())
    both = [set(p) for p in _together(world)]
    if not both:
        return
    a, b = sorted(both[0])[:2]
    qs = [Question("location", tuple(([a, b] * 3)[s: s + k]))
          for s in (0, 1) for k in range(1, 5)]
    got = {a_.value for a_ in answer_all(world, tuple(qs))}
    assert len(got) == 1, (a, b, got)


def _together(world: World) -> list[frozenset[str]]:
    """Pairs of agents who perceived (publicly and actually) every event, peeks excepted."""
    out = []
    for pair in ({x, y} for x in world.agents for y in world.agents if x < y):
        ok = all(pair <= (ref.perceivers(world, i) & ref.public_perceivers(world, i))
                 for i, e in enumerate(world.events) if e.type != "peek")
        ok = ok and not any(e.type == "peek" for e in world.events)
        ok = ok and all(  # a lie between them splits [S] from [S, L]: S knows better
            e.location == ref.ref_answer(prefix(world, i), Question("location", (e.actor,))).value
            for i, e in enumerate(world.events) if e.type == "whisper")
        if ok:
            out.append(frozenset(pair))
    return out


@fast(120)
@given(direct_worlds(max_agents=4, max_events=10), st.data())
def test_a_secret_observer_changes_no_ones_model_of_them(
    world: World, data: st.DataObject
) -> None:
    """Adding a secret observer to a move changes only chains that start with them
    (testimony ``latest``: under ``fresher_access`` their sighting can decide a later whisper)."""
    world = replace(world, testimony="latest")
    moves = [i for i, e in enumerate(world.events) if e.type == "move"
             and set(world.agents) - ref.situation(world, i).present - set(e.hidden_observers)]
    if not moves:
        return
    i = data.draw(st.sampled_from(moves))
    e = world.events[i]
    absent = sorted(set(world.agents) - ref.situation(world, i).present
                    - set(e.hidden_observers))
    h = data.draw(st.sampled_from(absent))
    watched = replace(e, hidden_observers=(*e.hidden_observers, h))
    w2 = replace(world, events=world.events[:i] + (watched,) + world.events[i + 1:])
    qs = belief_qs(world, 3)
    before, after = answers(world, qs), answers(w2, qs)
    for q in qs:
        if q.chain[0] != h:
            assert before[q] == after[q], q


# ---------------------------------------------------------------- depth invariants ------

def _plain(world: World) -> World:
    """The world with every secret observer and unnoticed miss taken out."""
    return replace(world, events=tuple(replace(e, hidden_observers=(), missed_by=())
                                       for e in world.events))


@fast(100)
@given(direct_worlds(max_agents=5, max_events=12, types=("move", "change")))
def test_common_knowledge_stories_have_no_false_belief_at_any_depth(world: World) -> None:
    """With only moves and changes among whoever is in the room from the start, nothing
    differs: every chain of present awake agents equals reality, to depth 4 (nobody misses
    an event unnoticed)."""
    world = _plain(world)
    awake = set(world.present - world.asleep)
    for q, a in answers(world, all_questions(world, 4)).items():
        if set(q.chain) <= awake:
            assert ref.same_value(a.value, a.reality), q


@fast(100)
@given(direct_worlds(max_agents=4, max_events=12,
                     types=("move", "change", "leave", "enter", "sleep", "wake")))
def test_without_private_events_a_chain_depends_only_on_its_members(world: World) -> None:
    """Without whispers, peeks, secret observers or unnoticed misses, chains over one agent
    set agree: [A,B] = [B,A] = [A,B,A]."""
    world = _plain(world)
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
def test_counterfactual_whisper_content_alters_exactly_the_chains_over_its_parties(
    world: World, data: st.DataObject
) -> None:
    """Whispering v or v' differs in every chain over {S, L} but [S], at every depth up to 4,
    when the listener takes the word; in no chain when they do not."""
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
    taken = ref.believed(ws[0], len(world.events))
    for q in qs:
        if taken and set(q.chain) <= {speaker, listener} and q.chain != (speaker,):
            assert (a1[q].value, a2[q].value) == (v1, v2)
        else:
            assert a1[q] == a2[q]


@fast(120)
@given(st.one_of(sampled_worlds(), direct_worlds()))
def test_every_answer_comes_from_an_access_the_chain_had(world: World) -> None:
    """The source of a belief is an event its chain had access to: its first agent
    perceived it (observation log) and the rest were taken to (co-presence); a whisper
    between the chain's agents; a peek by the chain's one agent; or a common view of the
    object by all of them.  Without a source, the opening (or no belief)."""
    state = replay(world, max_depth=3)
    for q, a in answers(world, belief_qs(world, 3)).items():
        if a.source < 0:
            assert a.via in ("initial", "unknown")
            assert (a.value is None) == (a.via == "unknown")
            continue
        e = world.events[a.source]
        logged = {x for x in world.agents if any(i == a.source for i, _ in
                                                  state.observation_log[x])}
        assert q.chain[0] in logged
        if a.via == "whisper":
            assert set(q.chain) <= {e.actor, e.listener} and q.chain != (e.actor,)
        elif a.via == "peek":
            assert q.chain == (e.actor,)
        elif a.via == "view":
            assert set(q.chain) <= logged and _common_view(world, a.source, q.chain)
        else:
            assert a.via == e.type in ("move", "change")
            assert set(q.chain[1:]) <= ref.public_perceivers(world, a.source)


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
                            + len(world.open_containers) + len(world.properties)
                            + len(world.known_liars))
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
        for agent in (*e.hidden_observers, *e.missed_by):
            assert agent in line.text  # told in words, not only in the perceiver labels
    for liar in world.known_liars:
        assert any(liar in line.text and "lies" in line.text for line in opening)
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
            if earlier or prop in world.hidden_properties:
                other = next(v for v in PROPERTY_VALUES[prop] if not ref.same_value(v, value))
                out.append(Event("change", a, property=prop, value=other,
                                 visible=ref.visibility(world, prop) is False))
        elsewhere = next(c for c in world.containers if c != s.location)
        out += [Event("move", a, to=elsewhere, hidden_observers=(b,)) for b in s.present]
        out += [Event("move", a, to=elsewhere, missed_by=(b,))
                for b in [a, *absent, *asleep]]
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

"""The symbolic executor: preconditions, effects, rejections, the state trace (PDDL-Mind §3)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from pddl_helpers import acts, holds, kitchen

from cogrsi_lib.pddl.domain import CompiledDomain, predefined_domain
from cogrsi_lib.pddl.executor import execute, initial_state
from cogrsi_lib.pddl.formula import solutions
from cogrsi_lib.pddl.parse import parse_domain_text, parse_problem_text
from cogrsi_lib.pddl.problem import Task


def test_a_valid_action_changes_the_state_and_the_trace_records_it() -> None:
    tr = execute(kitchen(), acts("move anne kitchen outside"))
    assert [str(a) for a in tr.verified] == ["(move anne kitchen outside)"]
    assert tr.rejected == ()
    assert len(tr.states) == 2 and tr.states[0] == kitchen().init
    step = tr.steps[0]
    assert step.added == {("at", "anne", "outside")}
    assert step.deleted == {("at", "anne", "kitchen")}
    assert holds(tr.final, "(at anne outside)") and not holds(tr.final, "(at anne kitchen)")


def test_rejected_actions_keep_the_state_and_say_why() -> None:
    tr = execute(kitchen(), acts(
        "grab bob marble basket kitchen",      # bob is asleep
        "dance anne",                           # not an action of the domain
        "move anne kitchen",                    # wrong arity
        "move anne kitchen garden",             # not an object
        "move anne kitchen basket",             # basket is not a location
        "drop anne marble box kitchen",         # anne holds nothing
        "move anne kitchen kitchen",            # (not (= ?from ?to))
        "sleep anne kitchen",                   # fine
    ))
    reasons = [r.reason for r in tr.rejected]
    assert reasons == [
        "precondition (not (asleep bob)) is false",
        "unknown action dance",
        "move takes 3 arguments (move ?a - agent ?from - loc ?to - loc), got 2",
        "unknown object garden",
        "?to must be loc, basket is obj",
        "precondition (holding anne marble) is false",
        "precondition (not (= kitchen kitchen)) is false",
    ]
    assert [r.index for r in tr.rejected] == [0, 1, 2, 3, 4, 5, 6]
    assert [s.index for s in tr.steps] == [7]
    assert tr.steps[0].state == kitchen().init | {("asleep", "anne")}
    assert tr.n_candidates == 8


def test_who_sees_a_drop_present_and_awake_only() -> None:
    tr = execute(kitchen(), acts(
        "move anne kitchen outside",
        "open sally basket kitchen",
        "grab sally marble basket kitchen",
        "open sally box kitchen",
        "drop sally marble box kitchen",
    ))
    assert tr.rejected == ()
    s = tr.final
    assert holds(s, "(in marble box)") and not holds(s, "(holding sally marble)")
    assert holds(s, "(seen sally marble box)") and not holds(s, "(seen sally marble basket)")
    assert holds(s, "(seen bob marble basket)")   # asleep in the room
    assert holds(s, "(seen anne marble basket)")  # outside


def test_a_fact_deleted_and_added_by_one_action_stays_true() -> None:
    # Anne is out while Sally takes the marble, back before she puts it back: the drop deletes
    # and adds Anne's sight of it in the basket, which stays true
    tr = execute(kitchen(), acts("move anne kitchen outside", "open sally basket kitchen",
                                 "grab sally marble basket kitchen", "move anne outside kitchen",
                                 "drop sally marble basket kitchen"))
    assert tr.rejected == ()
    drop = tr.steps[-1]
    assert holds(drop.state, "(seen anne marble basket)")
    assert ("seen", "anne", "marble", "basket") not in drop.added | drop.deleted
    assert drop.added == {("in", "marble", "basket"), ("seen", "sally", "marble", "basket")}


def test_conditions_are_read_in_the_state_before_the_action() -> None:
    text = ("(define (domain t) (:requirements :typing :conditional-effects) (:types a) "
            "(:predicates (p ?x - a) (q ?x - a)) (:action flip :parameters (?x - a) "
            ":precondition (and) :effect (and (not (p ?x)) (when (p ?x) (q ?x)))))")
    dom = parse_domain_text(text)
    assert isinstance(dom, CompiledDomain)
    task = parse_problem_text("(define (problem t) (:domain t) (:objects k - a) "
                              "(:init (p k)) (:goal (and)))", dom)
    assert isinstance(task, Task)
    tr = execute(task, acts("flip k", "flip k"))
    assert tr.steps[0].state == {("q", "k")}          # (p k) held before the first flip
    assert tr.steps[1].added == frozenset() and tr.steps[1].deleted == frozenset()


def test_late_view_and_change_are_perceived_as_the_oracle_says() -> None:
    tr = execute(kitchen(), acts(
        "move anne kitchen outside",
        "open sally basket kitchen",
        "grab sally marble basket kitchen",
        "drop sally marble tray kitchen",        # into the open tray
        "change sally marble color red blue kitchen",
        "wake bob kitchen",                      # wakes next to the open tray
        "move anne outside kitchen",             # walks back in
    ))
    assert tr.rejected == ()
    after_change, after_wake, after_enter = tr.states[5], tr.states[6], tr.states[7]
    assert holds(after_change, "(noticed sally marble color blue)")
    assert holds(after_change, "(noticed bob marble color red)")      # asleep
    assert holds(after_change, "(noticed anne marble color red)")     # outside
    assert holds(after_wake, "(noticed bob marble color blue)")
    assert not holds(after_wake, "(noticed bob marble color red)")
    assert holds(after_enter, "(noticed anne marble color blue)")
    # joining the view of the open tray shows where the marble is too (semantics v2)
    assert holds(after_enter, "(seen anne marble tray)")
    assert holds(after_wake, "(seen bob marble tray)")
    assert not holds(after_wake, "(seen bob marble basket)")


def test_grab_and_drop_need_the_container_open() -> None:
    tr = execute(kitchen(), acts("grab sally marble basket kitchen",   # the basket is closed
                                 "open sally basket kitchen",
                                 "grab sally marble basket kitchen",
                                 "drop sally marble box kitchen",      # the box is closed
                                 "drop sally marble tray kitchen"))    # the tray is open
    assert [r.index for r in tr.rejected] == [0, 3]
    assert all(r.reason.startswith("precondition (opened") for r in tr.rejected)
    assert holds(tr.final, "(in marble tray)")


def test_a_watched_grab_updates_the_watchers_sight() -> None:
    """Sally watches Anne take the marble out and leave with it: she no longer sees it in the
    basket; Bob, asleep, and anyone outside keep their old sight."""
    tr = execute(kitchen(), acts("open anne basket kitchen", "grab anne marble basket kitchen",
                                 "move anne kitchen outside"))
    assert tr.rejected == ()
    s = tr.final
    assert not holds(s, "(seen sally marble basket)")
    assert not holds(s, "(seen anne marble basket)")
    assert holds(s, "(seen bob marble basket)")
    assert holds(s, "(holding anne marble)")


def test_tell_is_private_for_a_whisper_and_public_otherwise() -> None:
    tr = execute(kitchen(), acts("wake bob kitchen", "tell anne sally u2 kitchen",
                                 "tell anne sally u1 kitchen", "tell anne bob u1 outside"))
    after_private, after_public = tr.states[2], tr.states[3]
    assert {f for f in after_private if f[0] == "heard"} == {
        ("heard", "anne", "u2"), ("heard", "sally", "u2")}
    assert holds(after_public, "(heard bob u1)")
    assert tr.rejected[0].reason == "precondition (at anne outside) is false"


def test_peek_is_seen_by_the_peeker_alone() -> None:
    tr = execute(kitchen(), acts("move anne kitchen outside",
                                 "open sally basket kitchen",
                                 "grab sally marble basket kitchen",
                                 "close sally basket kitchen",
                                 "open sally box kitchen",
                                 "drop sally marble box kitchen",
                                 "close sally box kitchen",
                                 "move anne outside kitchen",
                                 "peek anne box kitchen"))
    assert tr.rejected == ()
    peek = tr.steps[-1]
    assert peek.added == {("seen", "anne", "marble", "box")}
    assert peek.deleted == {("seen", "anne", "marble", "basket")}


def test_change_needs_the_object_in_reach() -> None:
    tr = execute(kitchen(), acts("open anne basket kitchen",
                                 "grab anne marble basket kitchen",
                                 "move anne kitchen outside",
                                 "change sally marble color red blue kitchen",
                                 "change anne marble color red blue outside"))
    assert len(tr.rejected) == 1
    assert tr.rejected[0].reason.startswith(
        "precondition (or (holding sally marble) (exists (?c - obj) (and (in marble ?c) "
        "(at ?c kitchen)))) is false")
    assert holds(tr.final, "(has marble color blue)")


def test_execution_is_deterministic() -> None:
    seq = acts("grab sally marble basket kitchen", "drop sally marble box kitchen",
               "peek anne box kitchen", "wake bob kitchen", "tell bob anne u1 kitchen")
    assert execute(kitchen(), seq) == execute(kitchen(), seq)


# -- the join that finds the bindings of a conditional effect --------------------------------

def _random_state(rng: random.Random, task: Task, domain: CompiledDomain) -> dict:
    """A random state of facts over the kitchen's objects (type-correct arguments)."""
    state: dict[str, set[tuple[str, ...]]] = {}
    for pred, sig in domain.predicates.items():
        pools = [sorted(task.universe.of(t)) for t in sig]
        for _ in range(rng.randint(0, 6)):
            state.setdefault(pred, set()).add(tuple(rng.choice(p) for p in pools))
    return state


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_join_finds_exactly_the_bindings_of_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    domain, task = predefined_domain(), kitchen()
    state = _random_state(rng, task, domain)
    for schema in domain.actions.values():
        binding = {v: rng.choice(sorted(task.universe.of(t))) for v, t in schema.params}
        for clause in schema.clauses:
            joined = [tuple(sorted(b.items()))
                      for b in solutions(clause.typed, clause.cond, binding, state,
                                         task.universe)]
            brute = [tuple(sorted(b.items()))
                     for b in task.universe.assignments(clause.typed, dict(binding))
                     if clause.cond is None or clause.cond.holds(state, b, task.universe)]
            assert sorted(joined) == sorted(brute), (schema.name, clause)
            assert len(set(joined)) == len(joined)


def test_initial_state_is_the_tasks_init() -> None:
    state = initial_state(kitchen())
    assert frozenset((p, *a) for p, args in state.items() for a in args) == kitchen().init


def test_a_quantifier_too_large_to_ground_rejects_the_action(monkeypatch) -> None:
    import cogrsi_lib.pddl.formula as formula

    text = ("(define (domain t) (:requirements :typing :conditional-effects) (:types a) "
            "(:predicates (p ?x - a) (q ?x ?y ?z - a)) (:action all :parameters (?x - a) "
            ":precondition (p ?x) :effect (forall (?u ?v ?w - a) (q ?u ?v ?w))))")
    dom = parse_domain_text(text)
    assert isinstance(dom, CompiledDomain)
    task = parse_problem_text("(define (problem t) (:domain t) (:objects k l m - a) "
                              "(:init (p k)) (:goal (and)))", dom)
    assert isinstance(task, Task)
    assert len(execute(task, acts("all k")).final) == 1 + 27
    monkeypatch.setattr(formula, "MAX_ASSIGNMENTS", 26)
    tr = execute(task, acts("all k", "all l"))  # variables in name order, whatever the hash seed
    assert tr.rejected[0].reason == ("effects cannot be grounded: 27 bindings of ?u ?v ?w "
                                     "(limit 26)")
    assert tr.rejected[1].reason == "precondition (p l) is false"
    assert tr.final == task.init

"""Gold answers with the access facts behind them (CogRSI §4.3)."""

from __future__ import annotations

from dataclasses import asdict

from cogrsi_lib.oracle.records import record
from cogrsi_lib.oracle.state import INITIAL, OracleState, chain_plan, chain_problem, replay
from cogrsi_lib.oracle.world import OracleInputError, Question, Value, World, same_value


@record
class Answer:
    """The oracle's answer to one question and why.

    ``source`` is the index of the event that fixed the belief (-1: the opening state),
    ``via`` how it was fixed: initial, move, peek, whisper, change or view.  ``value`` is
    None when the chain has no belief at all (``opening: unknown``).
    """

    value: Value | None
    reality: Value
    source: int
    via: str

    @property
    def known(self) -> bool:
        """The chain holds a belief (with ``opening: unknown`` it may not)."""
        return self.value is not None

    @property
    def false_belief(self) -> bool:
        """A belief that differs from reality (no belief is not a false belief)."""
        return self.known and not same_value(self.value, self.reality)  # type: ignore[arg-type]

    def to_dict(self) -> dict:
        return asdict(self) | {"false_belief": self.false_belief}


def check_question(world: World, question: Question, index: int = 0) -> None:
    """Raise :class:`OracleInputError` if ``question`` cannot be asked of ``world``."""
    problem = chain_problem(question.chain, world.agents_set)
    if (problem is None and question.kind == "property"
            and question.property not in world.initial_properties):
        problem = f"unknown property {question.property!r}"
    if problem:
        raise OracleInputError(problem, where=f"question {index}")


def answer(state: OracleState, question: Question) -> Answer:
    """Answer ``question`` from an already replayed ``state``."""
    reality = (state.location if question.kind == "location"
               else state.properties[question.property])  # type: ignore[index]
    if not question.chain:
        last = _last_change(state, question)
        return Answer(reality, reality, last, "reality")
    belief = state.belief(question.chain, question.kind, question.property)
    return Answer(belief.value, reality, belief.source, belief.via)


def _last_change(state: OracleState, question: Question) -> int:
    for i in range(state.applied - 1, -1, -1):
        e = state.world.events[i]
        if question.kind == "location" and e.type == "move":
            return i
        if question.kind == "property" and e.type == "change" and e.property == question.property:
            return i
    return INITIAL


def answer_all(world: World, questions: tuple[Question, ...] | None = None) -> list[Answer]:
    """Replay ``world`` once and answer each question (the world's own if none given)."""
    questions = world.questions if questions is None else questions
    chains, other_kinds = [], False
    for q in questions:
        if q.chain:
            chains.append(q.chain)
        if q.kind != "location":
            other_kinds = True
    asked = tuple(chains)
    plan = chain_plan(asked)
    if other_kinds or not plan.well_formed or not plan.agents <= world.agents_set:
        for i, q in enumerate(questions):
            check_question(world, q, i)  # raises at the first one that cannot be asked
    state = replay(world, only=asked, checked=True)
    # chains share belief objects: each (belief, property) is answered once
    by_location: dict[int, Answer] = {}
    by_property: dict[tuple[int, str | None], Answer] = {}
    out = []
    location, beliefs = state.location, state.location_beliefs
    for q in questions:
        chain = q.chain
        if chain and q.kind == "location":
            belief = beliefs[chain]
            found = by_location.get(id(belief))
            if found is None:
                found = by_location[id(belief)] = Answer(belief.value, location,
                                                         belief.source, belief.via)
        elif chain:
            belief = state.property_beliefs[chain][q.property]  # type: ignore[index]
            key = (id(belief), q.property)
            found = by_property.get(key)
            if found is None:
                found = by_property[key] = Answer(
                    belief.value, state.properties[q.property], belief.source, belief.via)  # type: ignore[index]
        else:
            found = answer(state, q)
        out.append(found)
    return out

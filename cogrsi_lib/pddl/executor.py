"""Deterministic symbolic execution of candidate actions (PDDL-Mind §3 "Verified state
tracking", §5.3).

For each candidate action a_i: if the current state s_{i-1} satisfies its preconditions, its
effects give s_i; otherwise the action is rejected, with the reason, and the state is kept.
An action is also rejected when its name is not in the domain, its arity is wrong, an
argument is not a declared object of the right type, or (in a model-written domain) a
quantifier ranges over more bindings than :data:`~cogrsi_lib.pddl.formula.MAX_ASSIGNMENTS`.
Effects follow PDDL: every conditional effect is evaluated in s_{i-1}, then all deletes are
applied, then all adds (an atom that is both deleted and added is true afterwards). No LLM
is involved and nothing is random.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cogrsi_lib.pddl.formula import GroundingTooLarge, solutions
from cogrsi_lib.pddl.parse import GroundAction
from cogrsi_lib.pddl.problem import Fact, Task, fact_text


@dataclass(frozen=True)
class Step:
    """A verified action: its index among the candidates, what it changed, the state after."""

    index: int
    action: GroundAction
    added: frozenset[Fact]
    deleted: frozenset[Fact]
    state: frozenset[Fact]


@dataclass(frozen=True)
class Rejection:
    """A candidate action that was not applied, and why (e.g. the false precondition)."""

    index: int
    action: GroundAction
    reason: str


@dataclass(frozen=True)
class Trace:
    """The verified action list, the rejected actions and the state trace s_0 .. s_t."""

    initial: frozenset[Fact]
    steps: tuple[Step, ...]
    rejected: tuple[Rejection, ...]

    @property
    def verified(self) -> tuple[GroundAction, ...]:
        return tuple(s.action for s in self.steps)

    @property
    def final(self) -> frozenset[Fact]:
        return self.steps[-1].state if self.steps else self.initial

    @property
    def states(self) -> tuple[frozenset[Fact], ...]:
        """s_0 and the state after each verified action."""
        return (self.initial, *(s.state for s in self.steps))

    @property
    def n_candidates(self) -> int:
        return len(self.steps) + len(self.rejected)


class Executor:
    """Runs actions of one task's domain from its initial state."""

    def __init__(self, task: Task):
        self.task = task

    def execute(self, actions: Sequence[GroundAction]) -> Trace:
        state = initial_state(self.task)
        flat = set(self.task.init)
        steps: list[Step] = []
        rejected: list[Rejection] = []
        for i, action in enumerate(actions):
            outcome = self.apply(state, action)
            if isinstance(outcome, str):
                rejected.append(Rejection(i, action, outcome))
                continue
            added, deleted = outcome
            flat -= deleted
            flat |= added
            steps.append(Step(i, action, added, deleted, frozenset(flat)))
        return Trace(self.task.init, tuple(steps), tuple(rejected))

    def check(self, state: dict[str, set[tuple[str, ...]]], action: GroundAction
              ) -> tuple[dict[str, str], str | None]:
        """The parameter binding and the reason ``action`` cannot apply (None if it can)."""
        domain, task = self.task.domain, self.task
        schema = domain.actions.get(action.name)
        if schema is None:
            return {}, f"unknown action {action.name}"
        if len(action.args) != len(schema.params):
            return {}, (f"{action.name} takes {len(schema.params)} arguments "
                        f"{schema.signature()}, got {len(action.args)}")
        binding: dict[str, str] = {}
        for (var, types), arg in zip(schema.params, action.args, strict=True):
            if arg not in task.objects:
                return {}, f"unknown object {arg}"
            if not domain.fits(task.objects[arg], types):
                return {}, f"{var} must be {'|'.join(types)}, {arg} is {task.type_of(arg)}"
            binding[var] = arg
        for part in schema.conjuncts:
            try:
                ok = part.holds(state, binding, task.universe)
            except GroundingTooLarge as exc:
                return binding, f"precondition {part.render(binding)} cannot be checked: {exc}"
            if not ok:
                return binding, f"precondition {part.render(binding)} is false"
        return binding, None

    def apply(self, state: dict[str, set[tuple[str, ...]]], action: GroundAction
              ) -> tuple[frozenset[Fact], frozenset[Fact]] | str:
        """Apply ``action`` in place; returns (added, deleted) or the reason it was rejected."""
        binding, why = self.check(state, action)
        if why is not None:
            return why
        schema = self.task.domain.actions[action.name]
        universe = self.task.universe
        adds: set[Fact] = set()
        dels: set[Fact] = set()
        try:
            for clause in schema.clauses:
                for b in solutions(clause.typed, clause.cond, binding, state, universe):
                    for atom in clause.dels:
                        dels.add((atom.pred, *atom.ground_args(b)))
                    for atom in clause.adds:
                        adds.add((atom.pred, *atom.ground_args(b)))
        except GroundingTooLarge as exc:
            return f"effects cannot be grounded: {exc}"
        deleted = {f for f in dels if f[1:] in state.get(f[0], ()) and f not in adds}
        added = {f for f in adds if f[1:] not in state.get(f[0], ())}
        for pred, *args in deleted:
            state[pred].discard(tuple(args))
        for pred, *args in added:
            state.setdefault(pred, set()).add(tuple(args))
        return frozenset(added), frozenset(deleted)


def initial_state(task: Task) -> dict[str, set[tuple[str, ...]]]:
    """The task's s0 as the executor's working state (predicate -> argument tuples)."""
    state: dict[str, set[tuple[str, ...]]] = {}
    for pred, *args in task.init:
        state.setdefault(pred, set()).add(tuple(args))
    return state


def execute(task: Task, actions: Sequence[GroundAction]) -> Trace:
    """Verified execution of ``actions`` from ``task``'s initial state."""
    return Executor(task).execute(actions)


def state_text(state: frozenset[Fact]) -> str:
    """A state as sorted PDDL facts, one per line."""
    return "\n".join(fact_text(f) for f in sorted(state))

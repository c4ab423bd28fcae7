"""Compiled PDDL formulas: truth in a state and the bindings that satisfy a condition.

The symbolic half of verified state tracking (PDDL-Mind §3 "Verified state tracking"): the
executor asks whether a ground precondition holds and, for each ``forall``/``when`` effect,
which bindings of its variables satisfy the condition in the state before the action.
Terms are strings: a variable starts with ``?``, anything else is an object name. A state is
a mapping ``predicate -> set of argument tuples``.

Bindings of a conjunctive condition are found by joining its positive atoms against the
state's facts (the variables they bind need no enumeration); variables that no positive atom
binds are enumerated over the objects of their type. Both give the same bindings; the join
is what keeps a 50-action trace in the low milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import product

State = Mapping[str, "set[tuple[str, ...]] | frozenset[tuple[str, ...]]"]
Binding = dict[str, str]
Typed = tuple[tuple[str, tuple[str, ...]], ...]  # ((variable, its types), ...)
_EMPTY: frozenset[tuple[str, ...]] = frozenset()
MAX_ASSIGNMENTS = 200_000  # a quantifier over more bindings than this is refused


class GroundingTooLarge(ValueError):
    """A quantifier whose free variables have too many bindings to enumerate."""


def ground(term: str, binding: Mapping[str, str]) -> str:
    return binding.get(term, term) if term.startswith("?") else term


class Formula:
    """A compiled precondition or condition."""

    __slots__ = ()

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        raise NotImplementedError

    def render(self, b: Mapping[str, str] | None = None) -> str:
        """PDDL text, with the variables of ``b`` replaced by their objects."""
        raise NotImplementedError

    def variables(self) -> set[str]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.render()


class Atom(Formula):
    __slots__ = ("pred", "terms")

    def __init__(self, pred: str, terms: Sequence[str]):
        self.pred = pred
        self.terms = tuple(terms)

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        args = tuple([b[t] if t[0] == "?" else t for t in self.terms])
        return args in state.get(self.pred, _EMPTY)

    def ground_args(self, b: Mapping[str, str]) -> tuple[str, ...]:
        return tuple([b[t] if t[0] == "?" else t for t in self.terms])

    def render(self, b: Mapping[str, str] | None = None) -> str:
        b = b or {}
        return "(" + " ".join([self.pred, *(ground(t, b) for t in self.terms)]) + ")"

    def variables(self) -> set[str]:
        return {t for t in self.terms if t.startswith("?")}


class Equal(Formula):
    __slots__ = ("left", "right")

    def __init__(self, left: str, right: str):
        self.left, self.right = left, right

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        return ground(self.left, b) == ground(self.right, b)

    def render(self, b: Mapping[str, str] | None = None) -> str:
        b = b or {}
        return f"(= {ground(self.left, b)} {ground(self.right, b)})"

    def variables(self) -> set[str]:
        return {t for t in (self.left, self.right) if t.startswith("?")}


class Not(Formula):
    __slots__ = ("body",)

    def __init__(self, body: Formula):
        self.body = body

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        return not self.body.holds(state, b, universe)

    def render(self, b: Mapping[str, str] | None = None) -> str:
        return f"(not {self.body.render(b)})"

    def variables(self) -> set[str]:
        return self.body.variables()


class And(Formula):
    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[Formula]):
        self.parts = tuple(parts)

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        return all(p.holds(state, b, universe) for p in self.parts)

    def render(self, b: Mapping[str, str] | None = None) -> str:
        return "(and" + "".join(" " + p.render(b) for p in self.parts) + ")"

    def variables(self) -> set[str]:
        return set().union(*(p.variables() for p in self.parts)) if self.parts else set()


class Or(Formula):
    __slots__ = ("parts",)

    def __init__(self, parts: Sequence[Formula]):
        self.parts = tuple(parts)

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        return any(p.holds(state, b, universe) for p in self.parts)

    def render(self, b: Mapping[str, str] | None = None) -> str:
        return "(or" + "".join(" " + p.render(b) for p in self.parts) + ")"

    def variables(self) -> set[str]:
        return set().union(*(p.variables() for p in self.parts)) if self.parts else set()


class Imply(Formula):
    __slots__ = ("left", "right")

    def __init__(self, left: Formula, right: Formula):
        self.left, self.right = left, right

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        return not self.left.holds(state, b, universe) or self.right.holds(state, b, universe)

    def render(self, b: Mapping[str, str] | None = None) -> str:
        return f"(imply {self.left.render(b)} {self.right.render(b)})"

    def variables(self) -> set[str]:
        return self.left.variables() | self.right.variables()


class Quantified(Formula):
    """``exists`` or ``forall`` over typed variables."""

    __slots__ = ("kind", "typed", "body")

    def __init__(self, kind: str, typed: Typed, body: Formula):
        if kind not in ("exists", "forall"):
            raise ValueError(f"unknown quantifier {kind!r}")
        self.kind, self.typed, self.body = kind, typed, body

    def holds(self, state: State, b: Binding, universe: Universe) -> bool:
        if self.kind == "exists":
            found = solutions(self.typed, self.body, b, state, universe)
            return next(iter(found), None) is not None
        for full in universe.assignments(self.typed, b):
            if not self.body.holds(state, full, universe):
                return False
        return True

    def render(self, b: Mapping[str, str] | None = None) -> str:
        names = " ".join(f"{v} - {_type_text(t)}" for v, t in self.typed)
        return f"({self.kind} ({names}) {self.body.render(b)})"

    def variables(self) -> set[str]:
        return self.body.variables() - {v for v, _ in self.typed}


def _type_text(types: tuple[str, ...]) -> str:
    return types[0] if len(types) == 1 else "(either " + " ".join(types) + ")"


class Universe:
    """The objects of a task by type (a type's objects include those of its subtypes)."""

    def __init__(self, by_type: Mapping[str, frozenset[str]]):
        self.by_type = dict(by_type)
        self._either: dict[tuple[str, ...], frozenset[str]] = {}

    def of(self, types: tuple[str, ...]) -> frozenset[str]:
        """Objects of any of ``types``."""
        if len(types) == 1:
            return self.by_type.get(types[0], frozenset())
        got = self._either.get(types)
        if got is None:
            got = frozenset().union(*(self.by_type.get(t, frozenset()) for t in types))
            self._either[types] = got
        return got

    def assignments(self, typed: Typed, b: Binding) -> Iterator[Binding]:
        """``b`` extended by every assignment of the typed variables it leaves unbound."""
        free = [(v, t) for v, t in typed if v not in b]
        if not free:
            yield b
            return
        pools = [sorted(self.of(t)) for _, t in free]
        size = 1
        for pool in pools:
            size *= len(pool)
        if size > MAX_ASSIGNMENTS:
            names = " ".join(v for v, _ in free)
            raise GroundingTooLarge(f"{size} bindings of {names} (limit {MAX_ASSIGNMENTS})")
        for combo in product(*pools):
            out = dict(b)
            for (v, _), obj in zip(free, combo, strict=True):
                out[v] = obj
            yield out


def solutions(
    typed: Typed, cond: Formula | None, b: Binding, state: State, universe: Universe
) -> Iterator[Binding]:
    """Every extension of ``b`` to the variables ``typed`` under which ``cond`` holds."""
    if cond is None:
        yield from universe.assignments(typed, b)
        return
    parts = cond.parts if isinstance(cond, And) else (cond,)
    atoms = [p for p in parts if isinstance(p, Atom)]
    rest = [p for p in parts if not isinstance(p, Atom)]
    types = dict(typed)

    def join(i: int, cur: Binding) -> Iterator[Binding]:
        if i == len(atoms):
            for full in universe.assignments(typed, cur):
                if all(p.holds(state, full, universe) for p in rest):
                    yield full
            return
        atom = atoms[i]
        for args in state.get(atom.pred, _EMPTY):
            if len(args) != len(atom.terms):
                continue
            nxt = cur
            ok = True
            for term, obj in zip(atom.terms, args, strict=True):
                if term[0] != "?":
                    if term != obj:
                        ok = False
                        break
                    continue
                bound = nxt.get(term)
                if bound is not None:
                    if bound != obj:
                        ok = False
                        break
                    continue
                if term not in types or obj not in universe.of(types[term]):
                    ok = False
                    break
                if nxt is cur:
                    nxt = dict(cur)
                nxt[term] = obj
            if ok:
                yield from join(i + 1, nxt)

    yield from join(0, b)

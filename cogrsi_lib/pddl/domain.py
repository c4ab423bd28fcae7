"""Domains: the predefined PDDL-Mind domain shipped with the package, and the compiler that
turns any parsed domain (``pddl`` package syntax objects) into what the executor runs.

PDDL-Mind §3 "Predefined domain file": a small, inspectable domain holds the transition
rules fixed; the no-domain ablation (§3 "Diagnostic variants") compiles a model-written
domain with the same compiler. Names are compared case-insensitively, as PDDL says: every
name is lower-cased here.

Supported: ``:typing`` (with ``either``), ``:negative-preconditions``, ``:equality``,
``:disjunctive-preconditions`` (``or``, ``imply``), quantified preconditions, and
``:conditional-effects`` (``forall``, ``when``). Numeric fluents, ``oneof`` and derived
predicates are refused with a :class:`DomainError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from pddl.core import Domain
from pddl.logic import base as lb
from pddl.logic import effects as le
from pddl.logic import predicates as lp
from pddl.logic.terms import Constant, Variable

from cogrsi_lib.pddl.formula import (
    And,
    Atom,
    Equal,
    Formula,
    Imply,
    Not,
    Or,
    Quantified,
    Typed,
)

DOMAIN_FILE = "domain.pddl"
ROOT_TYPE = "object"


class DomainError(ValueError):
    """A parsed domain uses a construct the executor does not run, or is inconsistent."""


@dataclass(frozen=True)
class Clause:
    """One effect clause: for every binding of ``typed`` under which ``cond`` holds (in the
    state before the action), delete ``dels`` and add ``adds``."""

    typed: Typed
    cond: Formula | None
    adds: tuple[Atom, ...]
    dels: tuple[Atom, ...]


@dataclass(frozen=True)
class ActionSchema:
    """An action: typed parameters, a precondition (None: always applicable), effect clauses."""

    name: str
    params: Typed
    pre: Formula | None
    clauses: tuple[Clause, ...]

    @property
    def conjuncts(self) -> tuple[Formula, ...]:
        """Top-level conjuncts of the precondition, checked in order."""
        if self.pre is None:
            return ()
        return self.pre.parts if isinstance(self.pre, And) else (self.pre,)

    def signature(self) -> str:
        return "(" + " ".join([self.name, *(f"{v} - {'|'.join(t)}" for v, t in self.params)]) + ")"


@dataclass(frozen=True)
class CompiledDomain:
    """A domain ready to execute: types, constants, predicate signatures, action schemas."""

    name: str
    parents: dict[str, str]  # type -> parent type
    constants: dict[str, frozenset[str]]  # constant -> its types
    predicates: dict[str, tuple[tuple[str, ...], ...]]  # predicate -> types of each argument
    actions: dict[str, ActionSchema]
    text: str = field(default="", repr=False, compare=False)
    _fits: dict[tuple[frozenset[str], tuple[str, ...]], bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def ancestors(self, t: str) -> list[str]:
        """``t`` and every type above it, up to ``object``."""
        out, seen = [t], {t}
        while out[-1] in self.parents and self.parents[out[-1]] not in seen:
            out.append(self.parents[out[-1]])
            seen.add(out[-1])
        if ROOT_TYPE not in seen:
            out.append(ROOT_TYPE)
        return out

    def is_type(self, t: str) -> bool:
        return t == ROOT_TYPE or t in self.parents

    def fits(self, obj_types: frozenset[str], wanted: tuple[str, ...]) -> bool:
        """Whether an object of ``obj_types`` may fill a slot of one of the ``wanted`` types."""
        key = (obj_types, wanted)
        got = self._fits.get(key)
        if got is None:
            got = any(w in self.ancestors(t) for t in obj_types for w in wanted)
            self._fits[key] = got
        return got


def _lname(x: Any) -> str:
    return str(getattr(x, "name", x)).lower()


def _term(t: Any) -> str:
    if isinstance(t, Variable):
        return "?" + _lname(t)
    if isinstance(t, Constant):
        return _lname(t)
    raise DomainError(f"unsupported term {t!r}")


def _types(tags: Any) -> tuple[str, ...]:
    names = tuple(sorted(_lname(t) for t in (tags or ())))
    return names or (ROOT_TYPE,)


def _typed(variables: Any) -> Typed:
    return tuple(("?" + _lname(v), _types(v.type_tags)) for v in variables)


def _quantified(variables: Any) -> Typed:
    """A quantifier's variables, in name order (the ``pddl`` package keeps them in a set)."""
    return tuple(sorted(_typed(variables)))


def compile_formula(f: Any) -> Formula:
    """A ``pddl`` precondition or condition as a :class:`Formula`."""
    if isinstance(f, lp.Predicate):
        return Atom(_lname(f), [_term(t) for t in f.terms])
    if isinstance(f, lp.EqualTo):
        return Equal(_term(f.left), _term(f.right))
    if isinstance(f, lb.Not):
        return Not(compile_formula(f.argument))
    if isinstance(f, lb.And):
        return And([compile_formula(p) for p in f.operands])
    if isinstance(f, lb.Or):
        return Or([compile_formula(p) for p in f.operands])
    if isinstance(f, lb.Imply):
        ops = list(f.operands)
        if len(ops) != 2:
            raise DomainError("imply takes two formulas")
        return Imply(compile_formula(ops[0]), compile_formula(ops[1]))
    if isinstance(f, lb.ExistsCondition):
        return Quantified("exists", _quantified(f.variables), compile_formula(f.condition))
    if isinstance(f, lb.ForallCondition):
        return Quantified("forall", _quantified(f.variables), compile_formula(f.condition))
    raise DomainError(f"unsupported condition {f}")


def _literals(e: Any) -> tuple[list[Atom], list[Atom]]:
    adds: list[Atom] = []
    dels: list[Atom] = []
    parts = list(e.operands) if isinstance(e, lb.And) else [e]
    for p in parts:
        if isinstance(p, lp.Predicate):
            adds.append(Atom(_lname(p), [_term(t) for t in p.terms]))
        elif isinstance(p, lb.Not) and isinstance(p.argument, lp.Predicate):
            dels.append(Atom(_lname(p.argument), [_term(t) for t in p.argument.terms]))
        else:
            raise DomainError(f"unsupported effect {p}")
    return adds, dels


def compile_effect(e: Any, typed: Typed = ()) -> list[Clause]:
    """A ``pddl`` effect as clauses (nested ``forall`` variables accumulate)."""
    if e is None:
        return []
    if isinstance(e, lb.And):
        return [c for part in e.operands for c in compile_effect(part, typed)]
    if isinstance(e, le.Forall):
        return compile_effect(e.effect, typed + _quantified(e.variables))
    if isinstance(e, le.When):
        adds, dels = _literals(e.effect)
        return [Clause(typed, compile_formula(e.condition), tuple(adds), tuple(dels))]
    if isinstance(e, lp.Predicate | lb.Not):
        adds, dels = _literals(e)
        return [Clause(typed, None, tuple(adds), tuple(dels))]
    raise DomainError(f"unsupported effect {e}")


def compile_domain(domain: Domain, text: str = "") -> CompiledDomain:
    """Compile a parsed domain; raises :class:`DomainError` on what the executor cannot run."""
    if getattr(domain, "derived_predicates", None):
        raise DomainError("derived predicates are not supported")
    if getattr(domain, "functions", None):
        raise DomainError("numeric fluents are not supported")
    parents = {_lname(t): _lname(p) if p else ROOT_TYPE for t, p in domain.types.items()}
    parents.pop(ROOT_TYPE, None)
    constants = {_lname(c): frozenset(_types(c.type_tags)) for c in domain.constants}
    predicates: dict[str, tuple[tuple[str, ...], ...]] = {}
    for p in sorted(domain.predicates, key=_lname):  # the pddl package keeps them in sets
        predicates[_lname(p)] = tuple(_types(t.type_tags) for t in p.terms)
    actions: dict[str, ActionSchema] = {}
    for a in sorted(domain.actions, key=_lname):
        name = _lname(a)
        if name in actions:
            raise DomainError(f"action {name} is defined twice")
        pre = compile_formula(a.precondition) if a.precondition is not None else None
        if isinstance(pre, And) and not pre.parts:
            pre = None
        actions[name] = ActionSchema(
            name, _typed(a.parameters), pre, tuple(compile_effect(a.effect))
        )
    compiled = CompiledDomain(_lname(domain), parents, constants, predicates, actions, text)
    _check(compiled)
    return compiled


def _check(d: CompiledDomain) -> None:
    """Every variable of an action is declared and every atom names a declared predicate
    with the right arity."""
    for t in {t for ts in d.predicates.values() for arg in ts for t in arg}:
        if not d.is_type(t):
            raise DomainError(f"unknown type {t} in the predicates")
    for a in d.actions.values():
        params = {v for v, _ in a.params}
        free = a.pre.variables() - params if a.pre is not None else set()
        for c in a.clauses:
            used = set().union(*(x.variables() for x in (*c.adds, *c.dels)))
            used |= c.cond.variables() if c.cond is not None else set()
            free |= used - params - {v for v, _ in c.typed}
        if free:
            raise DomainError(f"action {a.name} uses undeclared variable(s) "
                              f"{' '.join(sorted(free))}")
        atoms: list[Atom] = []
        if a.pre is not None:
            atoms += _atoms(a.pre)
        for c in a.clauses:
            atoms += list(c.adds) + list(c.dels) + (_atoms(c.cond) if c.cond else [])
        for at in atoms:
            sig = d.predicates.get(at.pred)
            if sig is None:
                raise DomainError(f"action {a.name} uses undeclared predicate {at.pred}")
            if len(sig) != len(at.terms):
                raise DomainError(
                    f"action {a.name}: {at.render()} has {len(at.terms)} arguments, "
                    f"{at.pred} takes {len(sig)}"
                )


def _atoms(f: Formula) -> list[Atom]:
    if isinstance(f, Atom):
        return [f]
    if isinstance(f, Not):
        return _atoms(f.body)
    if isinstance(f, And | Or):
        return [a for p in f.parts for a in _atoms(p)]
    if isinstance(f, Imply):
        return _atoms(f.left) + _atoms(f.right)
    if isinstance(f, Quantified):
        return _atoms(f.body)
    return []


_COMMENT = re.compile(r";[^\n]*")


def strip_comments(text: str) -> str:
    """PDDL text without ``;`` comments and blank lines (what the prompts show)."""
    lines = [_COMMENT.sub("", line).rstrip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line.strip())


@lru_cache(maxsize=2)
def domain_text(comments: bool = True) -> str:
    """The predefined domain file shipped with the package (PDDL-Mind §3, Appendix A)."""
    text = resources.files("cogrsi_lib.pddl").joinpath(DOMAIN_FILE).read_text(encoding="utf-8")
    return text if comments else strip_comments(text)


@lru_cache(maxsize=1)
def predefined_domain() -> CompiledDomain:
    """The shipped domain, parsed by the ``pddl`` package and compiled (cached)."""
    from cogrsi_lib.pddl.parse import parse_domain_text

    got = parse_domain_text(domain_text())
    if not isinstance(got, CompiledDomain):
        raise DomainError(f"the shipped domain does not parse: {got.message}")
    return got

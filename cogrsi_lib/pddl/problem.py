"""Problems checked against a domain: the objects and the initial state s0 (PDDL-Mind §3
"State and action extraction").

A problem file parsed by the ``pddl`` package says nothing yet about whether its facts fit
the domain. :func:`compile_problem` checks each object's type and each initial fact's
predicate, arity and argument types. A fact or object that does not fit is left out of s0
and recorded in ``issues`` with the reason, the way the executor records a rejected action:
the state stays well-typed and the error stays visible.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pddl.core import Problem
from pddl.logic import base as lb
from pddl.logic import predicates as lp

from cogrsi_lib.pddl.domain import ROOT_TYPE, CompiledDomain
from cogrsi_lib.pddl.formula import Universe

Fact = tuple[str, ...]  # (predicate, arg1, ..., argN)


def fact_text(fact: Fact) -> str:
    return "(" + " ".join(fact) + ")"


@dataclass(frozen=True)
class Task:
    """A domain, the objects of one story and its initial state."""

    domain: CompiledDomain
    name: str
    objects: dict[str, frozenset[str]]  # object (problem objects and domain constants) -> types
    init: frozenset[Fact]
    issues: tuple[str, ...] = ()
    universe: Universe = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_type: dict[str, set[str]] = defaultdict(set)
        for obj, types in self.objects.items():
            for t in types:
                for up in self.domain.ancestors(t):
                    by_type[up].add(obj)
        object.__setattr__(
            self, "universe", Universe({t: frozenset(v) for t, v in by_type.items()})
        )

    def type_of(self, obj: str) -> str:
        return "|".join(sorted(self.objects.get(obj, frozenset({"?"}))))


def compile_problem(problem: Problem, domain: CompiledDomain) -> Task:
    """Check ``problem`` against ``domain``; what does not fit goes to ``Task.issues``."""
    issues: list[str] = []
    pname = str(problem.name).lower()
    dname = str(problem.domain_name or "").lower()
    if dname and dname != domain.name:
        issues.append(f"problem is for domain {dname}, not {domain.name}")
    objects: dict[str, frozenset[str]] = dict(domain.constants)
    for o in sorted(problem.objects, key=lambda c: str(c.name)):
        name = str(o.name).lower()
        types = frozenset(str(t).lower() for t in o.type_tags) or frozenset({ROOT_TYPE})
        bad = sorted(t for t in types if not domain.is_type(t))
        if bad:
            issues.append(f"object {name}: unknown type {', '.join(bad)}")
            continue
        if name in objects and objects[name] != types:
            issues.append(f"object {name} is declared twice with different types")
            continue
        objects[name] = types
    init: set[Fact] = set()
    for f in sorted(problem.init, key=str):
        fact, why = _fact(f, domain, objects)
        if fact is None:
            issues.append(f"initial fact {f}: {why}")
        else:
            init.add(fact)
    return Task(domain, pname, objects, frozenset(init), tuple(issues))


def _fact(f: object, domain: CompiledDomain, objects: dict[str, frozenset[str]]
          ) -> tuple[Fact | None, str]:
    if isinstance(f, lb.Not):
        return None, "negative initial facts are implicit (closed world)"
    if not isinstance(f, lp.Predicate):
        return None, "not a predicate fact"
    pred = str(f.name).lower()
    args = tuple(str(t.name).lower() for t in f.terms)
    sig = domain.predicates.get(pred)
    if sig is None:
        return None, f"unknown predicate {pred}"
    if len(sig) != len(args):
        return None, f"{pred} takes {len(sig)} arguments, not {len(args)}"
    for i, (arg, wanted) in enumerate(zip(args, sig, strict=True)):
        if arg not in objects:
            return None, f"undeclared object {arg}"
        if not domain.fits(objects[arg], wanted):
            return None, (f"argument {i + 1} of {pred} must be {'|'.join(wanted)}, "
                          f"{arg} is {'|'.join(sorted(objects[arg]))}")
    return (pred, *args), ""

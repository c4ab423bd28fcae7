"""The predefined domain (PDDL-Mind §3, Appendix A) and the domain compiler."""

from __future__ import annotations

from importlib import resources

import pytest
from pddl.parser.domain import DomainParser

from cogrsi_lib.pddl.domain import (
    CompiledDomain,
    DomainError,
    compile_domain,
    domain_text,
    predefined_domain,
    strip_comments,
)
from cogrsi_lib.pddl.parse import ParseFailure, parse_domain_text

PAPER_ACTIONS = {"move", "open", "close", "grab", "drop", "ask", "tell"}
EXTENSION_ACTIONS = {"sleep", "wake", "peek", "change"}


def test_the_domain_ships_as_package_data_and_the_pddl_package_parses_it() -> None:
    text = resources.files("cogrsi_lib.pddl").joinpath("domain.pddl").read_text()
    assert text == domain_text()
    parsed = DomainParser()(text)  # the PyPI parser itself, no wrapper
    assert str(parsed.name) == "pddl-mind"
    assert {str(a.name) for a in parsed.actions} == PAPER_ACTIONS | EXTENSION_ACTIONS


def test_the_paper_types_predicates_and_actions_are_there() -> None:
    d = predefined_domain()
    assert {"agent", "loc", "obj", "utterance"} <= set(d.parents)
    for p in ("at", "in", "holding", "seen", "heard"):
        assert p in d.predicates
    assert set(d.actions) == PAPER_ACTIONS | EXTENSION_ACTIONS
    for a in d.actions.values():
        assert a.params and a.clauses, a.name  # parameters and effects everywhere
        assert a.pre is not None, a.name
    # `at` takes an agent or a container, then a location
    assert d.predicates["at"] == (("agent", "obj"), ("loc",))


def test_the_extension_is_documented_in_the_domain_file() -> None:
    text = domain_text()
    for word in ("leave a", "enter a", "whisper", "peek", "sleep", "wake", "change", "outside"):
        assert word in text
    stripped = strip_comments(text)
    assert ";" not in stripped and "\n\n" not in stripped
    assert isinstance(parse_domain_text(stripped), CompiledDomain)


def _domain(body: str, reqs: str = ":typing :conditional-effects") -> str:
    return f"(define (domain t) (:requirements {reqs}) (:types a) " \
           f"(:predicates (p ?x - a) (q ?x - a)) {body})"


def test_unsupported_constructs_are_refused_with_a_reason() -> None:
    oneof = _domain("(:action f :parameters (?x - a) :precondition (p ?x) "
                    ":effect (oneof (q ?x) (not (p ?x))))", ":typing :non-deterministic")
    got = parse_domain_text(oneof)
    assert isinstance(got, ParseFailure) and got.part == "domain"
    assert "unsupported" in got.message or "oneof" in got.message.lower()


def test_an_action_using_an_undeclared_predicate_is_a_domain_error() -> None:
    text = _domain("(:action f :parameters (?x - a) :precondition (p ?x) :effect (r ?x))")
    parsed = DomainParser()(text.replace(":effect (r ?x)", ":effect (q ?x)"))
    compile_domain(parsed)  # fine
    got = parse_domain_text(text)
    assert isinstance(got, ParseFailure)
    assert "undeclared predicate r" in got.message


def test_wrong_arity_in_an_action_is_a_domain_error() -> None:
    from pddl.core import Action, Domain
    from pddl.logic import Predicate, Variable
    from pddl.requirements import Requirements

    x = Variable("x", ["a"])
    p1 = Predicate("p", x)
    bad = Action("f", [x], precondition=p1, effect=Predicate("p", x, x))
    dom = Domain("t", requirements=[Requirements.TYPING], types={"a": None}, predicates=[p1],
                 actions=[bad])  # the pddl package accepts it
    with pytest.raises(DomainError, match="has 2 arguments, p takes 1"):
        compile_domain(dom)


def test_case_does_not_matter() -> None:
    upper = domain_text().replace("(:action move", "(:action MOVE")
    got = parse_domain_text(upper)
    assert isinstance(got, CompiledDomain) and "move" in got.actions


def test_an_undeclared_variable_is_a_domain_error_not_a_crash_later() -> None:
    for effect in ("(q ?y)", "(forall (?z - a) (when (p ?w) (q ?z)))"):
        text = _domain(f"(:action f :parameters (?x - a) :precondition (p ?x) :effect {effect})")
        got = parse_domain_text(text)
        assert isinstance(got, ParseFailure), effect
        assert "undeclared variable" in got.message

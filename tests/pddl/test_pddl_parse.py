"""Strict parsing of model replies: problems, actions, domains (PDDL-Mind §3)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pddl_helpers import KITCHEN

from cogrsi_lib.pddl.domain import predefined_domain
from cogrsi_lib.pddl.parse import (
    GroundAction,
    ParseFailure,
    extract_define,
    parse_actions_text,
    parse_domain_text,
    parse_problem_text,
)
from cogrsi_lib.pddl.problem import Task


def test_a_problem_inside_prose_and_a_fence_is_found_and_checked() -> None:
    reply = f"Here is the problem file:\n```pddl\n{KITCHEN}```\nHope this helps (really)."
    task = parse_problem_text(reply, predefined_domain())
    assert isinstance(task, Task)
    assert ("in", "marble", "basket") in task.init
    assert task.objects["anne"] == frozenset({"agent"})
    assert task.issues == ()


def test_names_are_case_insensitive() -> None:
    task = parse_problem_text(KITCHEN.replace("anne", "Anne").replace("(at ", "(AT "),
                              predefined_domain())
    assert isinstance(task, Task) and ("at", "anne", "kitchen") in task.init


@pytest.mark.parametrize(
    "reply",
    ["", "I cannot do this.", "(define (problem x) (:domain pddl-mind) (:objects a - agent)",
     "(define (problem x) (:domain pddl-mind) (:init (at a)) )"],
)
def test_a_malformed_problem_is_a_parse_failure_with_the_parsers_message(reply: str) -> None:
    got = parse_problem_text(reply, predefined_domain())
    assert isinstance(got, ParseFailure)
    assert got.part == "problem"
    assert got.message
    if "(define" in reply:
        assert "Unexpected" in got.message  # lark's own words, via the pddl package


def test_facts_that_do_not_fit_the_domain_are_left_out_and_recorded() -> None:
    bad = KITCHEN.replace(
        "(in marble basket)",
        "(in marble basket) (is-loc basket) (in marble) (in marble ghost) (in marble kitchen)",
    ).replace("red blue - value", "red blue - value\n    lamp - furniture")
    task = parse_problem_text(bad, predefined_domain())
    assert isinstance(task, Task)
    issues = " | ".join(task.issues)
    assert "unknown predicate is-loc" in issues
    assert "in takes 2 arguments, not 1" in issues
    assert "undeclared object ghost" in issues
    assert "argument 2 of in must be obj, kitchen is loc" in issues
    assert "object lamp: unknown type furniture" in issues
    assert ("in", "marble", "basket") in task.init
    assert not any(f[0] == "is-loc" for f in task.init)
    assert len(task.issues) == 5


def test_a_problem_for_another_domain_is_flagged() -> None:
    task = parse_problem_text(KITCHEN.replace("(:domain pddl-mind)", "(:domain house)"),
                              predefined_domain())
    assert isinstance(task, Task)
    assert task.issues == ("problem is for domain house, not pddl-mind",)


def test_actions_are_read_from_a_fence_or_the_whole_reply() -> None:
    plain = "(move anne kitchen outside)\n; she leaves\n(GRAB Sally marble basket kitchen)\n"
    assert parse_actions_text(plain) == (
        GroundAction("move", ("anne", "kitchen", "outside")),
        GroundAction("grab", ("sally", "marble", "basket", "kitchen")),
    )
    fenced = "The actions are:\n```\n(sleep bob kitchen)\n```\nDone."
    assert parse_actions_text(fenced) == (GroundAction("sleep", ("bob", "kitchen")),)
    # an action that the domain does not have still parses: the executor rejects it
    assert parse_actions_text("(dance anne)") == (GroundAction("dance", ("anne",)),)


@pytest.mark.parametrize(
    "reply",
    ["", "   ", "1. (move anne kitchen outside)", "(move anne kitchen outside",
     "Anne leaves the kitchen.", "```\n(move anne (kitchen))\n```"],
)
def test_malformed_actions_are_a_parse_failure(reply: str) -> None:
    got = parse_actions_text(reply)
    assert isinstance(got, ParseFailure) and got.part == "actions"
    assert got.message


def test_extract_define_stops_at_the_matching_parenthesis_and_skips_comments() -> None:
    text = "x (define (domain d) ; a comment with ) in it\n (:types a)) trailing )"
    assert extract_define(text, "domain") == \
        "(define (domain d) ; a comment with ) in it\n (:types a))"
    assert extract_define(text, "problem") is None
    assert extract_define("(define (domain d) (:types a", "domain") == \
        "(define (domain d) (:types a"


def test_the_parser_can_be_reused_after_a_failure() -> None:
    # the pddl package's transformers keep per-file state (the last :requirements); neither a
    # failed parse nor an earlier file may leak it into the next one
    first = parse_domain_text("(define (domain d) (:requirements :typing) (:types")
    assert isinstance(first, ParseFailure)
    untyped = ("(define (domain d) (:types a) (:predicates (p ?x - a)) "
               "(:action f :parameters (?x - a) :precondition (p ?x) :effect (not (p ?x))))")
    refused = parse_domain_text(untyped)
    assert isinstance(refused, ParseFailure)
    assert "typing requirement is not specified" in refused.message
    got = parse_domain_text(untyped.replace("(:types", "(:requirements :typing) (:types"))
    assert not isinstance(got, ParseFailure), got
    assert set(got.actions) == {"f"}
    assert isinstance(parse_domain_text(predefined_domain().text), type(got))


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_damaged_domains_never_crash_parsing_or_execution(data) -> None:
    """A model-written domain is arbitrary text: cut a span out of the shipped one and the
    result is a ParseFailure or a domain that executes the gold actions without raising."""
    from pddl_helpers import acts

    from cogrsi_lib.pddl.domain import CompiledDomain, domain_text
    from cogrsi_lib.pddl.executor import execute

    text = domain_text(comments=False)
    start = data.draw(st.integers(0, len(text) - 1))
    stop = data.draw(st.integers(start, min(len(text), start + 40)))
    damaged = text[:start] + text[stop:]
    dom = parse_domain_text(damaged)
    if isinstance(dom, ParseFailure):
        assert dom.message
        return
    assert isinstance(dom, CompiledDomain)
    task = parse_problem_text(KITCHEN, dom)
    if isinstance(task, ParseFailure):
        return
    trace = execute(task, acts("grab sally marble basket kitchen",
                               "drop sally marble box kitchen", "tell anne sally u2 kitchen",
                               "wake bob kitchen", "change anne marble color red blue kitchen"))
    assert trace.n_candidates == 5

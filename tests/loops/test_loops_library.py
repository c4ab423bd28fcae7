"""The rule library and the single principle (CogRSI §4.2, App. C.2 "Loop settings")."""

from __future__ import annotations

import pytest

from cogrsi_lib.loops.library import (
    Edit,
    EditError,
    PrincipleText,
    RuleLibrary,
    artifact_from_json,
    empty_artifact,
)
from cogrsi_lib.reader.principles import Rule, parse_rule_library


def test_edits_compose_the_numbered_principle():
    lib = RuleLibrary()
    assert lib.principle() == ""
    lib = lib.apply(Edit("add", condition="a character sleeps", rule="they miss\nevents."))
    lib = lib.apply(Edit("add", condition="When told", rule="believe it."))
    assert lib.principle() == ("(1) When a character sleeps: they miss events.\n"
                               "(2) When told: believe it.")
    assert [r.condition for r in parse_rule_library(lib.principle())] == ["a character sleeps",
                                                                         "told"]
    lib = lib.apply(Edit("revise", 2, "told privately", "believe the teller."))
    assert lib.principle().endswith("(2) When told privately: believe the teller.")
    lib = lib.apply(Edit("retire", 1))
    assert lib.principle() == "(1) When told privately: believe the teller."


def test_edit_errors_carry_reason_codes():
    full = RuleLibrary(tuple(Rule(f"c{i}", "r") for i in range(5)))
    with pytest.raises(EditError) as e:
        full.apply(Edit("add", condition="x", rule="y"))
    assert e.value.reason == "library_full"
    with pytest.raises(EditError) as e:
        full.apply(Edit("retire", 6))
    assert e.value.reason == "bad_entry"
    with pytest.raises(EditError) as e:
        PrincipleText("a").apply(Edit("add", condition="x", rule="y"))
    assert e.value.reason == "bad_operation"
    with pytest.raises(ValueError):
        RuleLibrary(tuple(Rule("c", "r") for _ in range(6)))


def test_written_text_is_what_the_audit_reads():
    assert Edit("add", condition="c", rule="r").written() == "When c: r"
    assert Edit("retire", 1).written() == ""
    assert Edit("rewrite", principle="whole text").written() == "whole text"


def test_artifacts_round_trip_through_json():
    lib = RuleLibrary((Rule("a", "b"), Rule("c: d", "e")))
    assert artifact_from_json(lib.to_json()) == lib
    p = PrincipleText("some text")
    assert artifact_from_json(p.to_json()) == p
    assert empty_artifact("principle") == PrincipleText("")
    with pytest.raises(ValueError):
        empty_artifact("tools")

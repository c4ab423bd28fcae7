"""Strict answer parsing: what parses, and what is recorded as unparsed (never guessed)."""

from __future__ import annotations

import pytest

from cogrsi_lib.llm.parsing import normalise_free_text, parse_answer, parse_choice

OPTS = ["the green bucket", "the blue container", "the kitchen"]


@pytest.mark.parametrize(
    "reply,value",
    [
        ("Aiden left first.\nAnswer: A", "A"),
        ("Answer: (B)", "B"),
        ("answer: b.", "B"),
        ("**Answer:** C", "C"),
        ("Final answer: A) the green bucket", "A"),
        ("Answer: the blue container", "B"),
        ("Answer: Blue Container.", "B"),
        ("Answer: A\nAnswer: A", "A"),
    ],
)
def test_multiple_choice_parses(reply: str, value: str) -> None:
    p = parse_answer(reply, OPTS)
    assert p.ok and p.value == value


@pytest.mark.parametrize(
    "reply,why",
    [
        ("I think it is the green bucket.", "no 'Answer:' line"),
        ("Aiden thinks so. Answer: A", "no 'Answer:' line"),
        ("Answer: D", "not an option label"),
        ("Answer: A) the kitchen", "not option A"),
        ("Answer: the garden", "names no option"),
        ("Answer: A\nAnswer: B", "conflicting"),
        ("Answer: A or B", "names no option"),
        ("Answer:   ", "no 'Answer:' line"),
    ],
)
def test_multiple_choice_unparsed(reply: str, why: str) -> None:
    p = parse_answer(reply, OPTS)
    assert p.status == "unparsed" and p.value is None
    assert why in p.reason
    assert p.raw == reply


def test_native_labels_are_matched_ignoring_case_and_returned_as_given() -> None:
    p = parse_answer("Answer: A", ["yes", "no"], labels=["a", "b"])
    assert p.value == "a"
    assert parse_answer("Answer: no", ["yes", "no"], labels=["a", "b"]).value == "b"
    assert parse_answer("Answer: c", ["yes", "no"], labels=["a", "b"]).status == "unparsed"


def test_free_text_is_normalised_not_interpreted() -> None:
    assert parse_answer("Answer: The green_bucket.").value == "green bucket"
    assert parse_answer("answer: green bucket").value == "green bucket"
    assert parse_answer("Answer: green bucket\nAnswer: blue box").status == "unparsed"
    assert parse_answer("no answer line at all").status == "unparsed"
    assert normalise_free_text("  An  Apple! ") == "apple"


@pytest.mark.parametrize(
    "reply,value",
    [
        ("Answer: 1", "1"),
        ("Because ...\nAnswer: 2", "2"),
        ("Answer: (2)", "2"),
        ("Answer: 1. green", "1"),
    ],
)
def test_choice_parses(reply: str, value: str) -> None:
    assert parse_choice(reply).value == value


@pytest.mark.parametrize(
    "reply", ["Answer: 3", "Answer: 1 or 2", "Answer: 0", "I pick 1", "Answer: 1\nAnswer: 2"]
)
def test_choice_unparsed(reply: str) -> None:
    assert parse_choice(reply).status == "unparsed"

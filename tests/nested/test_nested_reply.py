"""Strict parsing of replies {"answer": ..., "confidence": ...} (plan §4 Suite A)."""

from __future__ import annotations

import pytest

from cogrsi_lib.nested import ANSWER_FORMAT, parse_reply, prompt

from .helpers import CLASSIC, item, world

OPTIONS = ("basket", "box", "drawer")


@pytest.mark.parametrize("text, answer, confidence", [
    ('{"answer": "box", "confidence": 0.8}', "box", 0.8),
    ('  {"answer": "box"}\n', "box", None),
    ('{"confidence": 0, "answer": "drawer"}', "drawer", 0.0),
    ('{"answer": "basket", "confidence": 1}', "basket", 1.0),
])
def test_well_formed_replies(text: str, answer: str, confidence: float | None) -> None:
    r = parse_reply(text, OPTIONS)
    assert r.parsed and r.answer == answer and r.confidence == confidence


@pytest.mark.parametrize("text, reason", [
    ("box", "not one JSON value"),
    ('```json\n{"answer": "box"}\n```', "not one JSON value"),  # no fences here
    ('{"answer": "box"} I think', "not one JSON value"),
    ('{"answer": "box"}{"answer": "box"}', "not one JSON value"),
    ('"box"', "not an object"),
    ('["box"]', "not an object"),
    ("{}", "answer: Field required"),
    ('{"answer": "Box"}', "answer: Input should be"),
    ('{"answer": "the box"}', "answer: Input should be"),
    ('{"answer": "tray"}', "answer: Input should be"),
    ('{"answer": null}', "answer: Input should be"),
    ('{"answer": 1}', "answer: Input should be"),
    ('{"answer": "box", "confidence": null}', "confidence: Input should be a valid number"),
    ('{"answer": "box", "confidence": "0.8"}', "confidence: Input should be a valid number"),
    ('{"answer": "box", "confidence": true}', "confidence: Input should be a valid number"),
    ('{"answer": "box", "confidence": 1.2}', "confidence: Input should be less than or equal"),
    ('{"answer": "box", "confidence": -0.1}', "confidence: Input should be greater than or equal"),
    ('{"answer": "box", "confidence": NaN}', "non-finite"),
    ('{"answer": "box", "confidence": Infinity}', "non-finite"),
    ('{"answer": "box", "reason": "saw it"}', "reason: Extra inputs are not permitted"),
    ('{"answer": "box", "answer": "drawer"}', "duplicate key"),
    ("", "not one JSON value"),
])
def test_malformed_replies_are_unparsed_with_a_reason(text: str, reason: str) -> None:
    r = parse_reply(text, OPTIONS)
    assert not r.parsed and r.answer is None and r.confidence is None
    assert reason in r.error


def test_non_text_replies_are_unparsed() -> None:
    assert parse_reply(None, OPTIONS).error == "reply is NoneType, not text"
    assert not parse_reply({"answer": "box"}, OPTIONS).parsed


def test_prompt_shows_story_question_options_and_format() -> None:
    it = item(world(*CLASSIC), "Anne", "Sally", "Carla")
    text = prompt(it)
    assert text.startswith(it.story)
    assert "Where does Anne think that Sally thinks that Carla thinks the marble is?" in text
    assert "Options: basket, box, drawer, tray" in text
    assert text.endswith(ANSWER_FORMAT)

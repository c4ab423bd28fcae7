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
    ("box", "not a single JSON value"),
    ('```json\n{"answer": "box"}\n```', "not a single JSON value"),
    ('{"answer": "box"} I think', "not a single JSON value"),
    ('{"answer": "box"}{"answer": "box"}', "not a single JSON value"),
    ('"box"', "not a JSON object"),
    ('["box"]', "not a JSON object"),
    ("{}", "no 'answer'"),
    ('{"answer": "Box"}', "not one of the options"),
    ('{"answer": "the box"}', "not one of the options"),
    ('{"answer": "tray"}', "not one of the options"),
    ('{"answer": null}', "not one of the options"),
    ('{"answer": 1}', "not one of the options"),
    ('{"answer": "box", "confidence": null}', "confidence is not a number"),
    ('{"answer": "box", "confidence": "0.8"}', "confidence is not a number"),
    ('{"answer": "box", "confidence": true}', "confidence is not a number"),
    ('{"answer": "box", "confidence": 1.2}', "outside [0, 1]"),
    ('{"answer": "box", "confidence": -0.1}', "outside [0, 1]"),
    ('{"answer": "box", "confidence": NaN}', "non-finite"),
    ('{"answer": "box", "confidence": Infinity}', "non-finite"),
    ('{"answer": "box", "reason": "saw it"}', "unknown key(s) ['reason']"),
    ('{"answer": "box", "answer": "drawer"}', "duplicate key"),
    ("", "not a single JSON value"),
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

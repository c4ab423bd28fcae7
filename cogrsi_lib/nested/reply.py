"""The required reply format of a nested-belief item and its strict parser (plan §4 Suite A).

A reply is exactly one JSON object ``{"answer": <option>, "confidence": <0..1>}``
(surrounding whitespace allowed; ``confidence`` may be left out, but not null, and is
read as the probability that the answer is correct).  Anything else is *unparsed*:
recorded with its reason and scored wrong, never mapped to an option (DESIGN: parse
strictly).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cogrsi_lib.nested.items import NestedItem

ANSWER_FORMAT = (
    'Reply with one JSON object and nothing else: {"answer": "<one of the options>", '
    '"confidence": <probability from 0 to 1 that your answer is correct>}.'
)


def prompt(item: NestedItem) -> str:
    """The text shown to a model: story, question, options and the reply format."""
    return (f"{item.story}\n\n{item.question}\nOptions: {', '.join(item.options)}\n"
            f"{ANSWER_FORMAT}")


@dataclass(frozen=True)
class Reply:
    """A parsed reply: ``answer`` and ``confidence`` or, if unparsed, the ``error``."""

    answer: str | None = None
    confidence: float | None = None
    error: str | None = None

    @property
    def parsed(self) -> bool:
        return self.error is None


class _Bad(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Bad("duplicate key")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise _Bad(f"non-finite number {name}")


def parse_reply(text: object, options: Sequence[str]) -> Reply:
    """Parse one raw reply strictly against the item's ``options``."""

    def option(answer: object) -> str:
        if not isinstance(answer, str) or answer not in options:
            raise ValueError(f"answer {answer!r} is not one of the options")
        return answer

    return parse_json_reply(text, option)


def parse_json_reply(text: object, read_answer: Callable[[object], str]) -> Reply:
    """Strict parse of one JSON object with ``answer`` and an optional ``confidence`` in
    [0, 1]; ``read_answer`` gives the answer's text or raises ValueError with the reason it is
    not acceptable (an option, a number, ...)."""
    if not isinstance(text, str):
        return Reply(error=f"reply is {type(text).__name__}, not text")
    try:
        raw = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except _Bad as exc:
        return Reply(error=str(exc))
    except json.JSONDecodeError:
        return Reply(error="not a single JSON value")
    if not isinstance(raw, dict):
        return Reply(error="not a JSON object")
    extra = sorted(set(raw) - {"answer", "confidence"})
    if extra:
        return Reply(error=f"unknown key(s) {extra}")
    if "answer" not in raw:
        return Reply(error="no 'answer'")
    try:
        answer = read_answer(raw["answer"])
    except ValueError as exc:
        return Reply(error=str(exc))
    confidence = raw.get("confidence")
    if "confidence" in raw:
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            return Reply(error="confidence is not a number")
        if not (math.isfinite(confidence) and 0 <= confidence <= 1):
            return Reply(error=f"confidence {confidence!r} is outside [0, 1]")
        confidence = float(confidence)
    return Reply(answer=answer, confidence=confidence)

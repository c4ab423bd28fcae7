"""The required reply format of a nested-belief item and its strict parser (plan §4 Suite A).

A reply is exactly one JSON object ``{"answer": <option>, "confidence": <0..1>}``
(surrounding whitespace allowed; ``confidence`` may be left out, but not null, and is
read as the probability that the answer is correct).  The format is declared once, by
:func:`reply_format` (family ``nested.answer``); the same declaration constrains a model's
decoding and parses its reply.  Anything else is *unparsed*: recorded with its reason and
scored wrong, never mapped to an option (DESIGN: parse strictly).  Unlike the project's other
JSON replies, a fenced block is not accepted: this is the frozen reply of the exported
benchmark, scored the same for every model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyError, ReplyFormat, enum_of, reply_model
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.nested.items import NestedItem

FAMILY = prompt_family("nested.answer", "json")
ANSWER_FORMAT = (
    'Reply with one JSON object and nothing else: {"answer": "<one of the options>", '
    '"confidence": <probability from 0 to 1 that your answer is correct>}.'
)
CONFIDENCE = (float, Field(default=None, ge=0, le=1,
                           description="probability that the answer is correct"))


def reply_format(options: Sequence[str], family: str = FAMILY) -> ReplyFormat:
    """``{"answer": <one of options>, "confidence": <0..1, optional>}``, no fences."""
    model = reply_model("NestedAnswer", answer=(enum_of(list(options)), Field()),
                        confidence=CONFIDENCE)
    return ReplyFormat.json(family, model, fences=False)


def prompt(item: NestedItem) -> str:
    """The text shown to a model: story, question, options and the reply format."""
    return prompt_text(item.story, item.question, item.options)


def prompt_text(story: str, question: str, options: Sequence[str]) -> str:
    """:func:`prompt` of a story, question and options."""
    return f"{story}\n\n{question}\nOptions: {', '.join(options)}\n{ANSWER_FORMAT}"


@family_example(FAMILY)
def _example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): a depth-2 question."""
    options = ("basket", "box")
    story = ("Sally put the ball in the basket. Sally left. Anne moved the ball to the box "
             "while Sally watched through the window. Anne did not see her.")
    question = "Where does Anne think that Sally thinks the ball is?"
    return Request((Message("user", prompt_text(story, question, options)),),
                   SamplingParams(max_tokens=64), reply_format(options))


@dataclass(frozen=True)
class Reply:
    """A parsed reply: ``answer`` and ``confidence`` or, if unparsed, the ``error``."""

    answer: str | None = None
    confidence: float | None = None
    error: str | None = None

    @property
    def parsed(self) -> bool:
        return self.error is None


def parse_reply(text: object, options: Sequence[str]) -> Reply:
    """Parse one raw reply strictly against the item's ``options``."""
    return read_reply(reply_format(options), text)


def read_reply(fmt: ReplyFormat, text: object) -> Reply:
    """A :class:`Reply` by the strict parse of ``fmt`` (an answer and an optional
    confidence); the answer is given as text (a number in its shortest form)."""
    try:
        r: Any = fmt.parse(text)
    except ReplyError as err:
        return Reply(error=err.reason)
    answer = r.answer if isinstance(r.answer, str) else format_number(float(r.answer))
    return Reply(answer=answer, confidence=r.confidence)


def format_number(x: float) -> str:
    """A number as answer text: integers without a decimal point, others with up to 4 places."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.4f}".rstrip("0").rstrip(".")

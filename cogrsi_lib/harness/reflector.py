"""SAGE's Reflector (zing-social-mind-report §5.5.1): one call per reflected development
item labels the entries it was shown and may propose a missing strategy (prompt family
``harness.reflector``).

Replies are parsed strictly, as the loops' builder does: a reply that is not one JSON object,
lacks or mistypes a field, names an unknown dimension or entry, or writes the gold option's
text or a character name of the story is rejected with a reason code (:data:`REJECTIONS`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from cogrsi_lib.harness.experience_store import Entry
from cogrsi_lib.harness.taxonomy import DIMENSIONS
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.parsing import normalise_free_text
from cogrsi_lib.llm.reply_format import (
    CHARS_PER_TOKEN,
    ReplyError,
    ReplyFormat,
    describe,
    enum_of,
    reply_model,
    text_field,
)
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.prompts import options_block
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.text import clean, names_in

#: how the Reflector labels each entry it was shown
LABELS: tuple[str, ...] = ("helpful", "harmful", "neutral")
#: Reflector rejection codes, in the order the checks run
REJECTIONS: tuple[str, ...] = (
    "malformed_json",  # breaks the declared format: not JSON, a wrong key, type or value
    "missing_field",
    "names_gold",
    "names_story",
)

REFLECTOR_SYSTEM = (
    "You distil reusable reasoning strategies for questions about what characters perceive, "
    "know, believe, want, intend and feel. Reply with one JSON object and nothing else."
)
REFLECTOR_MARKER = "Reply with exactly one JSON object (the reflection):"
REFLECTOR_TASK = """Story:
{story}

Question: {question}
{options}
The system answered: {answer}
The correct answer: {gold}

Guidance the system was given:
{entries}

Label each guidance entry by its id as "helpful", "harmful" or "neutral" for this case. If a \
reusable strategy is missing, propose one: general, answer-independent guidance that would \
help on other stories with the same pattern, with when to use it and when not to (write null \
for the strategy when none is missing). Do not write the answer or any name of this story.
{marker} {reply}"""
REFLECTOR_FAMILY = prompt_family("harness.reflector", "json")
#: the longest texts of a reflection, and how a smaller budget is shared between them
REFLECTION_CHARS = {"strategy": 400, "use": 150, "boundary": 150}
REFLECTION_SHARES = {"strategy": 0.5, "use": 0.25, "boundary": 0.25}


@dataclass(frozen=True)
class Reflection:
    """An accepted Reflector reply: labels of the shown entries and an optional strategy
    (``revise`` names the shown entry it rewrites, else a new strategy is curated)."""

    labels: dict[str, str]
    dimension: str | None = None
    strategy: str = ""
    use: str = ""
    boundary: str = ""
    revise: str | None = None


class Rejected(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def reflector_format(shown: Sequence[str], max_tokens: int = 400) -> ReplyFormat:
    """The Reflector's reply: an optional strategy with its dimension, use and boundary, the
    label of every shown entry (by id) and which shown entry, if any, the strategy revises;
    the texts share what the token cap leaves of ``CHARS_PER_TOKEN * max_tokens``."""
    label = enum_of(list(LABELS))
    labels = reply_model("EntryLabels", **{eid: (label, Field()) for eid in shown})
    fixed = 150 + 30 * len(shown)  # keys, the dimension, labels and revise: one token a char
    budget = max(0, CHARS_PER_TOKEN * (max_tokens - fixed))

    def text(key: str) -> tuple[Any, Any]:
        most = max(16, min(REFLECTION_CHARS[key], int(REFLECTION_SHARES[key] * budget)))
        return (str | None, text_field(most, 1, _REFLECTION_HINTS[key]))

    model = reply_model(
        "Reflection",
        dimension=(enum_of(list(DIMENSIONS)) | None, Field()),
        strategy=text("strategy"), use=text("use"), boundary=text("boundary"),
        labels=(labels, Field()),
        revise=(enum_of(list(shown)) | None if shown else None, Field()),
    )
    return ReplyFormat.json(REFLECTOR_FAMILY, model)


_REFLECTION_HINTS = {
    "strategy": "the missing strategy",
    "use": "the kind of question it applies to",
    "boundary": "the kind of question it must not be applied to",
}


def reflector_messages(
    item: ReaderItem, record: ItemRecord, entries: Sequence[Entry],
    fmt: ReplyFormat | None = None,
) -> tuple[Message, ...]:
    shown = "\n".join(f"- {e.entry_id}: {e.render()}" for e in entries) or "(none)"
    answer = record.answer_text or record.answer or "(no answer it could parse)"
    fmt = fmt or reflector_format([e.entry_id for e in entries])
    body = REFLECTOR_TASK.format(
        story=item.context.strip(),
        question=item.question,
        options=options_block(item),
        answer=answer,
        gold=item.option_text(item.gold_key()),
        entries=shown,
        marker=REFLECTOR_MARKER,
        reply=describe(fmt),
    )
    return (Message("system", REFLECTOR_SYSTEM), Message("user", body))


@family_example(REFLECTOR_FAMILY)
def _reflector_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM
    from cogrsi_lib.reader.records import new_record

    entry = Entry("m1", "Belief", "Keep the last state a character saw.",
                  "a character was away during a change", "they saw the change")
    fmt = reflector_format(["m1"])
    return Request(reflector_messages(ITEM, new_record("x", ITEM), [entry], fmt),
                   SamplingParams(max_tokens=400), fmt)


def _field(reply: Any, key: str) -> str:
    v = getattr(reply, key)
    v = clean(v) if v is not None else ""
    if not v:
        raise Rejected("missing_field", f"{key!r} is empty")
    return v


def _contains_phrase(text: str, phrase: str) -> bool:
    p = normalise_free_text(phrase)
    return bool(p) and re.search(rf"(?<!\w){re.escape(p)}(?!\w)", normalise_free_text(text))


def parse_reflection(
    text: str, shown: Sequence[str], gold_text: str | None, names: Sequence[str] = (),
    fmt: ReplyFormat | None = None,
) -> Reflection:
    """A :class:`Reflection` from a reply; raises :class:`Rejected` with the reason code
    (``malformed_json`` for a reply that breaks its :func:`reflector_format`)."""
    try:
        reply = (fmt or reflector_format(shown)).parse(text)
    except ReplyError as err:
        raise Rejected("malformed_json", err.reason) from err
    labels = reply.labels.model_dump()
    if reply.strategy is None or not reply.strategy.strip():
        return Reflection(labels)
    strategy, use, boundary = (_field(reply, "strategy"), _field(reply, "use"),
                               _field(reply, "boundary"))
    if reply.dimension is None:
        raise Rejected("missing_field", "a strategy needs its dimension")
    dim, revise = str(reply.dimension), reply.revise
    written = f"{strategy} {use} {boundary}"
    if gold_text and _contains_phrase(written, gold_text):
        raise Rejected("names_gold", f"writes the gold answer {gold_text!r}")
    hits = names_in(written, names)
    if hits:
        raise Rejected("names_story", f"names {', '.join(hits)}")
    return Reflection(dict(labels), dim, strategy, use, boundary, revise)

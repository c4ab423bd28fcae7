"""Answering and arbitration prompts of the reader, with their reply formats (CogRSI §4.1;
Appendix A is not in our copy of the paper, so these texts are ours, written from §4.1, G.6
and PercepToM's prompts).

Each prompt family declares its reply once, beside its prompt (DESIGN.md, Principles):

- ``answer.reasoned`` (a reasoning step, then the answer) and ``answer.direct``: one JSON
  object whose ``answer`` is one of the item's option labels, or a short free-text answer; the
  reasoning field is bounded so that the reply fits its token cap;
- ``reader.arbitration``: a bounded reason, then ``choice`` 1 or 2.

The prompt's reply instruction is rendered from the same declaration, and :func:`read_answer`
parses against it. ``PROMPT_VERSION`` changes whenever a template changes, and is recorded.
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.parsing import ParsedAnswer, normalise_free_text, option_letters
from cogrsi_lib.llm.reply_format import (
    ReplyError,
    ReplyFormat,
    describe,
    enum_of,
    reasoned_model,
    reply_model,
    text_field,
)
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem

SYSTEM = (
    "You answer questions about stories and conversations. Reply with exactly the JSON object "
    "you are asked for and nothing else."
)

THINK_GROUNDED = (
    "Think step by step about who witnessed, heard or was told each event, then answer."
)
THINK_PLAIN = "Think step by step, then answer."
THINK_NONE = "Answer directly, without explanation."

ARBITRATION_TEMPLATE = """{view}

Question: {question}

Two candidate answers:
1. {first}
2. {second}

{principle_block}Decide which candidate is right{under}. Give a short reason, then your \
choice. {reply}"""

REASONED = prompt_family("answer.reasoned", "json")
DIRECT = prompt_family("answer.direct", "json")
ARBITRATION = prompt_family("reader.arbitration", "json")
#: longest free-text answer (the answer alone: a word or a few)
FREE_ANSWER_CHARS = 40


def answer_format(
    item: ReaderItem, think: str, max_tokens: int, *, also: tuple[str, ...] = (),
    family: str | None = None,
) -> ReplyFormat:
    """The reply of an answering prompt: with a reasoning step unless ``think`` is
    :data:`THINK_NONE`; the answer is an option label (or one of ``also``, e.g. a self-exit
    signal), or free text without options."""
    if item.options:
        labels = list(item.labels or option_letters(len(item.options))) + list(also)
        answer = (enum_of(labels), Field(description="the label of one option"))
    else:
        answer = (str, text_field(FREE_ANSWER_CHARS, 1, "the answer alone, in a word or a few"))
    if think == THINK_NONE:
        return ReplyFormat.json(family or DIRECT, reply_model("DirectAnswer", answer=answer))
    model = reasoned_model("ReasonedAnswer", max_tokens, "your step-by-step reasoning",
                           answer=answer)
    return ReplyFormat.json(family or REASONED, model)


def arbitration_format(max_tokens: int) -> ReplyFormat:
    """A bounded reason, then the chosen candidate's number."""
    model = reasoned_model("Arbitration", max_tokens, "why one candidate is right",
                           key="reason", choice=(enum_of([1, 2]), Field()))
    return ReplyFormat.json(ARBITRATION, model)


def options_block(item: ReaderItem) -> str:
    if not item.options:
        return ""
    labels = item.labels or option_letters(len(item.options))
    return "Options:\n" + "\n".join(f"{k}. {o}" for k, o in zip(labels, item.options, strict=True))


def principle_block(principle: str) -> str:
    return f"Principle:\n{principle}\n\n" if principle else ""


def answer_messages(
    item: ReaderItem,
    view: str,
    fmt: ReplyFormat,
    *,
    think: str = THINK_PLAIN,
    principle: str = "",
    question: str | None = None,
    preamble: str = "",
) -> tuple[Message, ...]:
    """One answering prompt: a view of the context, the principle, the question and the
    reply instruction of ``fmt``."""
    parts = [preamble.strip(), view.strip(), principle_block(principle).strip()]
    parts.append(f"Question: {question or item.question}")
    ob = options_block(item)
    if ob:
        parts.append(ob)
    parts.append(f"{think} {describe(fmt)}")
    body = "\n\n".join(p for p in parts if p)
    return (Message("system", SYSTEM), Message("user", body))


def answer_request(
    item: ReaderItem,
    view: str,
    params: SamplingParams,
    *,
    think: str = THINK_PLAIN,
    principle: str = "",
    preamble: str = "",
    structured: bool = True,
    fmt: ReplyFormat | None = None,
) -> Request:
    """The answering request: messages, sampling and the declared reply format (by default
    :func:`answer_format`'s)."""
    fmt = fmt or answer_format(item, think, params.max_tokens)
    msgs = answer_messages(item, view, fmt, think=think, principle=principle, preamble=preamble)
    return Request(msgs, params, fmt, structured)


def read_answer(item: ReaderItem, fmt: ReplyFormat | None, text: str) -> ParsedAnswer:
    """A sample's vote key (an option label, or normalised free text) by the strict parse of
    its format; anything else is ``unparsed`` with the reason."""
    if fmt is None:
        raise ValueError("an answering request always declares its reply format")
    try:
        reply = fmt.parse(text)
    except ReplyError as err:
        return ParsedAnswer("unparsed", None, text, err.reason)
    value = reply.answer if item.options else normalise_free_text(reply.answer)
    if not value:
        return ParsedAnswer("unparsed", None, text, "empty answer")
    return ParsedAnswer("ok", value, text)


def candidate_text(item: ReaderItem, key: str) -> str:
    if item.options:
        return f"{key}. {item.option_text(key)}"
    return key


def arbitration_request(
    item: ReaderItem, view: str, candidates: tuple[str, str], principle: str,
    params: SamplingParams, structured: bool = True,
) -> Request:
    fmt = arbitration_format(params.max_tokens)
    body = ARBITRATION_TEMPLATE.format(
        view=view.strip(),
        question=item.question,
        first=candidate_text(item, candidates[0]),
        second=candidate_text(item, candidates[1]),
        principle_block=principle_block(principle),
        under=" under the principle" if principle else " given the story",
        reply=describe(fmt),
    )
    return Request((Message("system", SYSTEM), Message("user", body)), params, fmt, structured)


def read_choice(fmt: ReplyFormat | None, text: str) -> ParsedAnswer:
    """The arbitration's choice ("1" or "2"), or ``unparsed`` with the reason."""
    assert fmt is not None
    try:
        reply = fmt.parse(text)
    except ReplyError as err:
        return ParsedAnswer("unparsed", None, text, err.reason)
    return ParsedAnswer("ok", str(reply.choice), text)


def _version() -> str:
    import cogrsi_lib.reader.perception as perception

    text = "\n".join(
        [
            SYSTEM,
            THINK_GROUNDED,
            THINK_PLAIN,
            THINK_NONE,
            ARBITRATION_TEMPLATE,
            perception.PERCEPTION_TEMPLATE,
            perception.PERCEPTION_RULE_NARRATIVE,
            perception.PERCEPTION_RULE_CONVERSATION,
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:12]


PROMPT_VERSION = _version()


# -- the families' example requests (cogrsi_lib/llm/families.py) ------------------------------

_EXAMPLE_PARAMS = SamplingParams(max_tokens=96, temperature=0.0)


@family_example(REASONED)
def _reasoned_example() -> Request:
    from cogrsi_lib.reader.example_items import ITEM
    from cogrsi_lib.reader.views import plain_view

    return answer_request(ITEM, plain_view(ITEM), _EXAMPLE_PARAMS)


@family_example(DIRECT)
def _direct_example() -> Request:
    from cogrsi_lib.reader.example_items import ITEM
    from cogrsi_lib.reader.views import plain_view

    return answer_request(ITEM, plain_view(ITEM), _EXAMPLE_PARAMS, think=THINK_NONE)


@family_example(ARBITRATION)
def _arbitration_example() -> Request:
    from cogrsi_lib.reader.example_items import ITEM
    from cogrsi_lib.reader.views import plain_view

    return arbitration_request(ITEM, plain_view(ITEM), ("A", "B"), "", _EXAMPLE_PARAMS)

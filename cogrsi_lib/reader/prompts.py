"""Answering and arbitration prompts of the reader (CogRSI §4.1; Appendix A is not in our copy
of the paper, so these texts are ours, written from §4.1, G.6 and PercepToM's prompts).

Every answering prompt ends with the same strict format instruction ("Answer: <letter>" with
options, "Answer: <short answer>" without), which :func:`cogrsi_lib.llm.parsing.parse_answer`
enforces. ``PROMPT_VERSION`` changes whenever a template changes, and is recorded.
"""

from __future__ import annotations

import hashlib

from cogrsi_lib.llm.parsing import option_letters
from cogrsi_lib.llm.types import Message
from cogrsi_lib.reader.items import ReaderItem

SYSTEM = (
    "You answer questions about stories and conversations. Reply briefly and always finish "
    "with a final line of the form 'Answer: ...'."
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

{principle_block}Decide which candidate is right{under}. Reply with a short reason and finish \
with one line 'Answer: 1' or 'Answer: 2'."""


def options_block(item: ReaderItem) -> str:
    if not item.options:
        return ""
    labels = item.labels or option_letters(len(item.options))
    return "Options:\n" + "\n".join(f"{k}. {o}" for k, o in zip(labels, item.options, strict=True))


def format_instruction(item: ReaderItem) -> str:
    if item.options:
        labels = item.labels or option_letters(len(item.options))
        return (
            f"Finish with one line 'Answer: <label>', where <label> is one of {', '.join(labels)}."
        )
    return "Finish with one line 'Answer: <short answer>' (a few words)."


def principle_block(principle: str) -> str:
    return f"Principle:\n{principle}\n\n" if principle else ""


def answer_messages(
    item: ReaderItem,
    view: str,
    *,
    think: str = THINK_PLAIN,
    principle: str = "",
    question: str | None = None,
    preamble: str = "",
) -> tuple[Message, ...]:
    """One answering prompt: a view of the context, the principle, the question and format."""
    parts = [preamble.strip(), view.strip(), principle_block(principle).strip()]
    parts.append(f"Question: {question or item.question}")
    ob = options_block(item)
    if ob:
        parts.append(ob)
    parts.append(f"{think} {format_instruction(item)}")
    body = "\n\n".join(p for p in parts if p)
    return (Message("system", SYSTEM), Message("user", body))


def candidate_text(item: ReaderItem, key: str) -> str:
    if item.options:
        return f"{key}. {item.option_text(key)}"
    return key


def arbitration_messages(
    item: ReaderItem, view: str, candidates: tuple[str, str], principle: str
) -> tuple[Message, ...]:
    body = ARBITRATION_TEMPLATE.format(
        view=view.strip(),
        question=item.question,
        first=candidate_text(item, candidates[0]),
        second=candidate_text(item, candidates[1]),
        principle_block=principle_block(principle),
        under=" under the principle" if principle else " given the story",
    )
    return (Message("system", SYSTEM), Message("user", body))


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

"""The Selector's dimension call (zing-social-mind-report §5.5.3): which of the seven
social-mental dimensions a question asks about, one strict reply per item (prompt family
``harness.dimension``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

from pydantic import Field

from cogrsi_lib.harness.taxonomy import DIMENSIONS
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow, run_flows
from cogrsi_lib.llm.reply_format import ReplyError, ReplyFormat, describe, enum_of, reply_model
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.prompts import options_block

DIMENSION_HINTS: dict[str, str] = {
    "Emotion": "what a character feels, and why",
    "Desire": "what a character wants or prefers",
    "Intention": "why a character acts, or what they will do next",
    "Knowledge": "what a character knows, saw, heard or was told",
    "Belief": "what a character believes or thinks, true or false, including beliefs about "
              "others' beliefs",
    "Non-Literal Communication": "irony, sarcasm, lies, hints, humour, faux pas or what a "
                                 "speaker really means",
    "Others": "anything else (norms, reality, plain facts of the story)",
}  # fmt: skip
DIMENSION_MARKER = "Which social-mental dimension does this question ask about?"
DIMENSION_FAMILY = prompt_family("harness.dimension", "json")


@cache  # one reply model, built once
def dimension_format() -> ReplyFormat:
    """The dimension reply: one of :data:`DIMENSIONS`, by name."""
    model = reply_model("Dimension", dimension=(enum_of(list(DIMENSIONS)), Field()))
    return ReplyFormat.json(DIMENSION_FAMILY, model)


class DimensionPrediction(NamedTuple):
    dimension: str | None
    status: str  # "ok" | "unparsed"
    raw: str


def dimension_messages(item: ReaderItem) -> tuple[Message, ...]:
    dims = "\n".join(f"- {d}: {DIMENSION_HINTS[d]}" for d in DIMENSIONS)
    parts = [DIMENSION_MARKER, "Dimensions:", dims, "", f"Question: {item.question}"]
    ob = options_block(item)
    if ob:
        parts.append(ob)
    parts += ["", describe(dimension_format())]
    return (Message("user", "\n".join(parts)),)


@family_example(DIMENSION_FAMILY)
def _dimension_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    return Request(dimension_messages(ITEM), SamplingParams(max_tokens=16), dimension_format())


def parse_dimension(reply: str) -> str | None:
    """The dimension a reply names, else None (the reply breaks :func:`dimension_format`)."""
    try:
        return str(dimension_format().parse(reply).dimension)
    except ReplyError:
        return None


def predict_dimension(
    items: Sequence[ReaderItem],
    backend: Backend,
    *,
    max_tokens: int = 16,
    seed: int = 0,
    ledgers: Sequence[CallLedger] | None = None,
    structured: bool = True,
) -> list[DimensionPrediction]:
    """One greedy call per item (:func:`dimension_flow`), all in one stream; an unparsed
    reply gives ``None`` with its raw text. Usage is added to ``ledgers[i]`` (role
    ``dimension``) when given."""
    if ledgers is not None and len(ledgers) != len(items):
        raise ValueError("one ledger per item")
    return run_flows(backend, [
        dimension_flow(it, max_tokens=max_tokens, seed=seed, structured=structured,
                       ledger=ledgers[i] if ledgers is not None else None)
        for i, it in enumerate(items)])


def dimension_flow(item: ReaderItem, *, max_tokens: int = 16, seed: int = 0,
                   ledger: CallLedger | None = None, structured: bool = True
                   ) -> Flow[DimensionPrediction]:
    """An item's dimension call (a step of its flow, :mod:`cogrsi_lib.llm.flow`)."""
    params = SamplingParams(n=1, temperature=0.0, max_tokens=max_tokens, seed=seed)
    [cs] = yield [Request(dimension_messages(item), params, dimension_format(), structured)]
    if ledger is not None:
        ledger.add("dimension", cs)
    dim = parse_dimension(cs[0].text)
    return DimensionPrediction(dim, "ok" if dim else "unparsed", cs[0].text)


def unparsed_count(preds: Sequence[DimensionPrediction]) -> int:
    return sum(p.status != "ok" for p in preds)

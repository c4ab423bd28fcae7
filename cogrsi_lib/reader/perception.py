"""The perception call: who witnessed each sentence or utterance (CogRSI §4.1, G.6; PercepToM).

One call per context. The prompt states PercepToM's perception rule (Jung et al., 2024:
characters perceive the scenes in their location, and the actor perceives their own action)
and asks for *indexed* output: one JSON object with the number of every sentence as a key, in
order, and the list of characters who perceived it (``[]`` for nobody). The reply format
(family ``reader.perception``) is declared by :func:`perception_format`: the keys are fixed
and, where the context's character names can be found, each list holds names of the context
only. Parsing is strict: the format, then every name must occur in the context. Anything else
is malformed; the reader then falls back to the plain reading and counts the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyError, ReplyFormat, enum_of, reply_model, text_field
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem, candidate_names

PERCEPTION_RULE_NARRATIVE = (
    "Assume that characters perceive every scene that happens in their location while they "
    "are there and awake, but not scenes that happen elsewhere or while they are away or "
    "asleep. The actor of an action always perceives that action. A character who is told "
    "something directly perceives that telling."
)
PERCEPTION_RULE_CONVERSATION = (
    "A character hears an utterance if they are present in the conversation when it is said. "
    "Characters who have left, or have not yet joined, do not hear it. The speaker always "
    "hears their own utterance."
)

PERCEPTION_TEMPLATE = """{header}
{numbered}

For each numbered {unit}, list the characters who perceived it. {rule}
{names}Reply with one JSON object and nothing else: the number of every {unit} as a key, in \
order, with the list of the characters who perceived it, [] when nobody did, for example \
{example}"""

FAMILY = prompt_family("reader.perception", "json")
#: the most names one line may list
MAX_NAMES_PER_LINE = 6
#: the longest name when the context's names are not known
MAX_NAME_CHARS = 30


def perception_format(item: ReaderItem) -> ReplyFormat:
    """One key per line, ``"1"`` to ``"n"``; each a list of the context's candidate names
    (:func:`~cogrsi_lib.reader.items.candidate_names`), or of short strings when none are
    found."""
    names = candidate_names(item)
    if names:
        name_type, most = enum_of(names), min(len(names), MAX_NAMES_PER_LINE)
    else:
        name_type, most = Annotated[str, text_field(MAX_NAME_CHARS, 1)], MAX_NAMES_PER_LINE
    fields = {str(i): (list[name_type], Field(max_length=most))
              for i in range(1, len(item.lines()) + 1)}
    return ReplyFormat.json(FAMILY, reply_model("Perception", **fields))


@dataclass(frozen=True)
class Perception:
    """Parsed perception: ``witnesses[i]`` are the characters who perceived line ``i``."""

    witnesses: tuple[tuple[str, ...], ...]

    def names(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for w in self.witnesses:
            for n in w:
                seen.setdefault(n, None)
        return tuple(seen)

    def perceived_by(self, *names: str) -> list[int]:
        """Indices of the lines that every one of ``names`` perceived."""
        want = {n.lower() for n in names}
        return [i for i, w in enumerate(self.witnesses) if want <= {x.lower() for x in w}]

    def has_asymmetry(self) -> bool:
        """Whether some character misses some line another character perceives."""
        everyone = set(self.names())
        return any(set(w) != everyone for w in self.witnesses)


@dataclass(frozen=True)
class PerceptionResult:
    status: str  # "ok" | "malformed"
    perception: Perception | None
    reason: str = ""


def numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(lines, start=1))


def perception_messages(item: ReaderItem) -> tuple[Message, ...]:
    conv = item.kind == "conversation"
    names = candidate_names(item)
    lines = item.lines()
    example = ", ".join(f'"{i}": [...]' for i in range(1, min(len(lines), 2) + 1))
    text = PERCEPTION_TEMPLATE.format(
        header="Conversation:" if conv else "Story:",
        numbered=numbered(lines),
        unit="utterance" if conv else "sentence",
        rule=PERCEPTION_RULE_CONVERSATION if conv else PERCEPTION_RULE_NARRATIVE,
        names=f"Characters: {', '.join(names)}.\n" if names else "",
        example="{" + example + (", ...}" if len(lines) > 2 else "}"),
    )
    return (Message("user", text),)


def perception_budget(item: ReaderItem) -> int:
    """Tokens that cover the longest reply the perception format allows: every line listing
    the most names it may, the longest names first. A token covers at least one byte of UTF-8
    (byte-level BPE), so a name counts its bytes plus two for its quotes and separator; the
    bound holds whatever the tokenizer. The reply is measured in its spaced form
    (``{"1": ["Ann", "Bob"], ...}``), longer than the compact form a backend enforces."""
    names = candidate_names(item)
    if names:
        most = min(len(names), MAX_NAMES_PER_LINE)
        longest = sorted((len(n.encode("utf-8")) for n in names), reverse=True)[:most]
    else:
        longest = [MAX_NAME_CHARS * 4] * MAX_NAMES_PER_LINE  # 4 bytes per character at most
    names_bytes = sum(b + 4 for b in longest)  # "name", plus the space
    # '"12": [' and '], ' around each list, '{' and '}' around the object
    return 2 + sum(6 + len(str(i)) + names_bytes for i in range(1, len(item.lines()) + 1))


def perception_request(
    item: ReaderItem, *, max_tokens: int = 1024, seed: int = 0, structured: bool = True,
) -> Request:
    """The perception request: greedy, with a budget that covers the longest reply the format
    allows (:func:`perception_budget`), capped at ``max_tokens``."""
    budget = min(max_tokens, perception_budget(item))
    return Request(
        perception_messages(item),
        SamplingParams(n=1, temperature=0.0, max_tokens=budget, seed=seed),
        perception_format(item),
        structured,
    )


def parse_perception(
    text: str, item: ReaderItem, fmt: ReplyFormat | None = None
) -> PerceptionResult:
    """Parse the reply strictly (see the module docstring)."""
    fmt = fmt or perception_format(item)
    try:
        reply = fmt.parse(text)
    except ReplyError as err:
        return PerceptionResult("malformed", None, err.reason)
    witnesses = []
    for i in range(1, len(item.lines()) + 1):
        names: list[str] = []
        for name in getattr(reply, str(i)):
            name = name.strip()
            hit = re.search(rf"\b{re.escape(name)}\b", item.context, re.I) if name else None
            if hit is None:
                return PerceptionResult("malformed", None, f"name not in the context: {name!r}")
            names.append(hit.group(0))  # the context's own spelling
        witnesses.append(tuple(dict.fromkeys(names)))
    return PerceptionResult("ok", Perception(tuple(witnesses)))


@family_example(FAMILY)
def _example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    return perception_request(ITEM, max_tokens=256)

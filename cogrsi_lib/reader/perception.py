"""The perception call: who witnessed each sentence or utterance (CogRSI §4.1, G.6; PercepToM).

One call per context. The prompt states PercepToM's perception rule (Jung et al., 2024:
characters perceive the scenes in their location, and the actor perceives their own action)
and asks for *indexed* output, one line per numbered sentence: ``<i>: Name, Name`` (or
``none``). Parsing is strict: every index exactly once, nothing out of range, and every name
must occur in the context. Anything else is malformed; the reader then falls back to the
plain reading and counts the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem

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
Reply with exactly one line per {unit}, in order, in the form
<number>: <names separated by commas>
Write "none" when nobody perceived it. Do not write anything else."""

_LINE = re.compile(r"^\s*(?:\[(\d+)\]\s*[:.)\-]?|(\d+)\s*[:.)\-])\s*(.*?)\s*$")
_NONE = {"none", "nobody", "no one", "-", "n/a", ""}


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
    text = PERCEPTION_TEMPLATE.format(
        header="Conversation:" if conv else "Story:",
        numbered=numbered(item.lines()),
        unit="utterance" if conv else "sentence",
        rule=PERCEPTION_RULE_CONVERSATION if conv else PERCEPTION_RULE_NARRATIVE,
    )
    return (Message("user", text),)


def perception_request(
    item: ReaderItem, *, max_tokens: int = 1024, per_line_tokens: int = 12, seed: int = 0
) -> Request:
    """The perception request: greedy, with a token budget that grows with the line count."""
    budget = min(max_tokens, per_line_tokens * len(item.lines()) + 24)
    return Request(
        perception_messages(item),
        SamplingParams(n=1, temperature=0.0, max_tokens=budget, seed=seed),
    )


def _split_names(value: str) -> list[str]:
    value = value.strip().strip(".")
    if value.lower() in _NONE:
        return []
    parts = re.split(r"\s*(?:,|;|\band\b|&)\s*", value)
    return [p.strip().strip(".\"'[]") for p in parts if p.strip().strip(".\"'[]")]


def parse_perception(text: str, lines: Sequence[str], context: str) -> PerceptionResult:
    """Parse indexed perception output strictly (see the module docstring)."""
    n = len(lines)
    found: dict[int, tuple[str, ...]] = {}
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        idx = int(m.group(1) or m.group(2))
        if not 1 <= idx <= n:
            return PerceptionResult("malformed", None, f"line number {idx} outside 1..{n}")
        if idx in found:
            return PerceptionResult("malformed", None, f"line number {idx} given twice")
        names: list[str] = []
        for name in _split_names(m.group(3)):
            if len(name.split()) > 3 or not re.search(r"[A-Za-z]", name):
                return PerceptionResult("malformed", None, f"not a name: {name!r}")
            hit = re.search(rf"\b{re.escape(name)}\b", context, re.I)
            if hit is None:
                return PerceptionResult("malformed", None, f"name not in the context: {name!r}")
            names.append(hit.group(0))  # the context's own spelling
        found[idx] = tuple(dict.fromkeys(names))
    missing = [i for i in range(1, n + 1) if i not in found]
    if missing:
        return PerceptionResult("malformed", None, f"missing line numbers {missing[:5]}")
    return PerceptionResult("ok", Perception(tuple(found[i] for i in range(1, n + 1))))

"""Views of a context (CogRSI §4.1, C.3 "Controlled reader", G.6).

- plain: the context as given.
- annotated: the whole story, each line followed by who witnessed it (CogRSI keeps
  everything and adds who saw what).
- character view (conversations): the whole conversation, each utterance marked with whether
  the questioned character heard it; ``filtered=True`` keeps only what they heard instead.
- filtered (PercepToM): only the lines that the target character(s) perceived.
"""

from __future__ import annotations

from collections.abc import Sequence

from cogrsi_lib.reader.items import ReaderItem, question_characters
from cogrsi_lib.reader.perception import Perception, numbered


def plain_view(item: ReaderItem) -> str:
    header = "Conversation:" if item.kind == "conversation" else "Story:"
    return f"{header}\n{item.context.strip()}"


def annotated_view(item: ReaderItem, perception: Perception) -> str:
    lines = item.lines()
    if len(lines) != len(perception.witnesses):
        raise ValueError("perception does not cover the item's lines")
    conv = item.kind == "conversation"
    verb = "heard by" if conv else "witnessed by"
    out = []
    for i, (line, who) in enumerate(zip(lines, perception.witnesses, strict=True), start=1):
        names = ", ".join(who) if who else "nobody"
        out.append(f"{i}. {line} [{verb}: {names}]")
    header = (
        "Conversation (each utterance shows who heard it):"
        if conv
        else "Story (each line shows who witnessed it):"
    )
    return header + "\n" + "\n".join(out)


def character_view(
    item: ReaderItem, perception: Perception, character: str, *, filtered: bool = False
) -> str:
    """The questioned character's view of a conversation."""
    lines = item.lines()
    heard = set(perception.perceived_by(character))
    if filtered:
        kept = [line for i, line in enumerate(lines) if i in heard]
        body = numbered(kept) if kept else "(nothing)"
        return f"What {character} heard of the conversation:\n{body}"
    out = []
    for i, line in enumerate(lines):
        mark = f"{character} heard this" if i in heard else f"{character} did not hear this"
        out.append(f"{i + 1}. {line} [{mark}]")
    return f"Conversation from {character}'s side (each utterance marked):\n" + "\n".join(out)


def reading_view(
    item: ReaderItem, perception: Perception, *, filtered_conversation: bool = False
) -> str:
    """The view the annotated samples read: the annotated story, or for a conversation, the
    questioned character's view (the item's ``character``, else the first character the
    question names among the perceived ones; the annotated view when there is none)."""
    if item.kind == "conversation":
        chars = question_characters(item, perception.names())
        if chars:
            return character_view(item, perception, chars[0], filtered=filtered_conversation)
    return annotated_view(item, perception)


def filtered_view(item: ReaderItem, perception: Perception, characters: Sequence[str]) -> str:
    """PercepToM's filtered story: lines perceived by all of ``characters`` (first order: one
    character; second order: both), in order."""
    lines = item.lines()
    keep = perception.perceived_by(*characters)
    who = " and ".join(characters)
    body = " ".join(lines[i] for i in keep) if keep else "(nothing)"
    if len(characters) > 1:
        return f"Here are the past scenes in sequence that {who} both perceived.\n\n{body}"
    return f"Here are the past scenes in sequence that {who} knows about.\n\n{body}"

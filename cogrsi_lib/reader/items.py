"""The reader's input: one question about one context, from any source (CogRSI §3, E.1).

A :class:`ReaderItem` is deliberately plain so that the oracle's counterfactual pairs, the
benchmark loaders and hand-written examples all plug in: context text, question, options (or
``None`` for free text), gold, ids, and for conversations the questioned character.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cogrsi_lib.llm.parsing import normalise_free_text, option_letters

Kind = Literal["narrative", "conversation"]

CONVERSATION_BENCHMARKS = frozenset({"fantom", "percept-fantom", "percept_fantom"})
_QWORDS = {
    "where", "what", "who", "whom", "whose", "which", "when", "why", "how", "does", "do",
    "did", "is", "are", "was", "were", "will", "would", "can", "could", "should", "the", "a",
    "an", "in", "from", "as", "i", "if", "after", "before", "at", "by", "of", "on", "to",
}  # fmt: skip
_NUMBERED = re.compile(r"^\s*\d+\s*[.):]?\s+(?=\S)")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?\b")
#: capitalised words that begin sentences or utterances but are not characters
NOT_NAMES = frozenset("""
A About After Afterwards Again Ah All Also Although An And Another Any Anyway Are As At
Because Before Both But By Can Could Did Do Does Each Either Even Every Everybody Everyone
Finally First For From Good Great Had Has Have He Hello Her Here Hers Hey Hi His How However
If In Into Is It Its Just Last Later Let Like Many Maybe Me Meanwhile Might More Most My
Next No Nobody None Not Now Of Oh Ok Okay On Once One Only Or Other Our Please Really Right
Since So Some Someone Soon Sorry Still Such Sure Thank Thanks That The Their Them Then There
These They This Those Though Through To Today Tomorrow Too Two Under Until Up Us Very Was We
Well Were What When Where Whether Which While Who Whom Whose Why Will With Without Would Wow
Yeah Yes Yesterday Yet You Your Yours Monday Tuesday Wednesday Thursday Friday Saturday Sunday
Question Answer Story Options Option Conversation Welcome Bye Goodbye Congratulations
Congrats Happy Nice Cool Awesome Wait Look Listen Dear Thats Actually Absolutely Definitely
""".split())  # noqa: SIM905 - a word list reads best as text
#: the most candidate names a perception prompt lists
MAX_CANDIDATES = 16
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


@dataclass(frozen=True)
class ReaderItem:
    """One question. ``options`` are option texts, ``labels`` their labels in the benchmark's
    native format (default ``A``, ``B``, ...); ``gold`` is a label or an option's text for
    multiple choice, else the free-text answer. ``character`` is the questioned character
    (conversations). ``segments`` (sentences or utterances) default to the context's lines,
    or its sentences when it is one line; a leading line number (ToMi) is dropped."""

    item_id: str
    context: str
    question: str
    options: tuple[str, ...] | None = None
    gold: str | None = None
    labels: tuple[str, ...] | None = None
    story_id: str | None = None
    kind: Kind = "narrative"
    character: str | None = None
    segments: tuple[str, ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def text_columns(self) -> dict[str, str | None]:
        """The item's text as record columns: story, question and options (a JSON list)."""
        return {"story": self.context, "question": self.question,
                "options_json": None if self.options is None else json.dumps(list(self.options))}

    def with_meta(self, **meta: Any) -> ReaderItem:
        """This item with ``meta`` merged into its meta (the rest unchanged)."""
        return replace(self, meta={**self.meta, **meta})

    def __post_init__(self) -> None:
        if self.kind not in ("narrative", "conversation"):
            raise ValueError(f"kind must be narrative or conversation, not {self.kind!r}")
        if self.options is not None:
            opts = tuple(str(o) for o in self.options)
            if len(opts) < 2:
                raise ValueError("a multiple-choice item needs at least two options")
            labels = tuple(self.labels) if self.labels else tuple(option_letters(len(opts)))
            if len(labels) != len(opts) or len({x.lower() for x in labels}) != len(labels):
                raise ValueError("labels must be one distinct label (ignoring case) per option")
            object.__setattr__(self, "options", opts)
            object.__setattr__(self, "labels", labels)
        elif self.labels:
            raise ValueError("labels without options")
        if self.segments is not None:
            object.__setattr__(self, "segments", tuple(self.segments))

    @property
    def story(self) -> str:
        """The story id (the item id when none was given): the bootstrap's resampling unit."""
        return self.story_id or self.item_id

    def lines(self) -> tuple[str, ...]:
        """The context's sentences or utterances, in order."""
        if self.segments is not None:
            return self.segments
        return split_context(self.context)

    def gold_key(self) -> str | None:
        """The gold answer as a vote key: an option letter, or normalised free text."""
        if self.gold is None:
            return None
        return answer_key(self.gold, self.options, self.labels)

    def option_text(self, key: str | None) -> str | None:
        """The text an answer key stands for (the option's text for a label)."""
        if key is None or not self.options or not self.labels:
            return key
        return self.options[self.labels.index(key)] if key in self.labels else key


def split_context(context: str) -> tuple[str, ...]:
    """Lines of a context (blank lines dropped, ToMi line numbers removed), or sentences."""
    lines = [ln.strip() for ln in context.splitlines() if ln.strip()]
    if len(lines) == 1:
        lines = [s.strip() for s in _SENTENCE.split(lines[0]) if s.strip()]
    return tuple(_NUMBERED.sub("", ln) for ln in lines)


def answer_key(
    answer: str, options: Sequence[str] | None, labels: Sequence[str] | None = None
) -> str:
    """The vote key of a gold or given answer: the option's label (given by label, ignoring
    case, or by the option's exact text), else normalised free text."""
    if not options:
        return normalise_free_text(answer)
    labels = list(labels) if labels else option_letters(len(options))
    a = answer.strip().strip(".):( ").lower()
    for lab in labels:
        if lab.lower() == a:
            return lab
    norm = normalise_free_text(answer)
    for lab, opt in zip(labels, options, strict=True):
        if normalise_free_text(opt) == norm:
            return lab
    raise ValueError(f"gold answer {answer!r} is neither a label nor an option's text")


def candidate_names(item: ReaderItem) -> tuple[str, ...]:
    """The context's likely character names, in order of first mention: capitalised words
    that are not common sentence openers (:data:`NOT_NAMES`), the questioned character first
    when there is one; at most :data:`MAX_CANDIDATES`."""
    found: dict[str, None] = {}
    if item.character:
        found[item.character] = None
    for m in _CAPITALISED.finditer(item.context):
        if m.group(0) not in NOT_NAMES:
            found.setdefault(m.group(0), None)
    return tuple(found)[:MAX_CANDIDATES]


def from_bench_item(item: Any) -> ReaderItem:
    """A :class:`cogrsi_lib.bench.schema.Item` as a reader item (native labels kept; a
    free-text question with a closed answer set is asked as a choice among it); its meta keeps
    the original (``original``) for the benchmark's own verdict."""
    options = tuple(t for _, t in item.options) or tuple(item.choices) or None
    labels = tuple(lab for lab, _ in item.options) or None
    bench = str(item.benchmark).lower()
    kind: Kind = "conversation" if bench in CONVERSATION_BENCHMARKS else "narrative"
    return ReaderItem(
        item_id=str(item.id),
        context=item.context,
        question=item.question,
        options=options,
        gold=item.gold,
        labels=labels,
        story_id=item.story_id,
        kind=kind,
        meta={"benchmark": item.benchmark, "question_type": item.question_type,
              "original": item},
    )


def from_nested_item(item: Any) -> ReaderItem:
    """A :class:`cogrsi_lib.nested.items.NestedItem` (Suite A) as a reader item: the story, the
    question, the containers as options; ``meta["chain"]`` is the belief chain it asks about."""
    return ReaderItem(
        item_id=item.id,
        context=item.story,
        question=item.question,
        options=item.options,
        gold=item.gold,
        story_id=f"world-{item.world_index}",
        meta={"suite": "nested", "depth": item.depth, "partition": item.partition,
              "chain": list(item.chain), "object": item.world.object},
    )


def question_characters(item: ReaderItem, known: Sequence[str] = ()) -> list[str]:
    """The characters a question is about, in the question's order (at most two).

    The item's ``character`` comes first; others are capitalised words of the question that
    occur in ``known`` (e.g. the perception call's names) or, failing that, in the context.
    """
    out: list[str] = [item.character] if item.character else []
    pool = {k.lower(): k for k in known}
    for tok in re.findall(r"[A-Z][\w\-]*", item.question):
        name = re.sub(r"'s$", "", tok)
        if name.lower() in _QWORDS or name in out:
            continue
        if pool:
            if name.lower() in pool:
                out.append(pool[name.lower()])
        elif re.search(rf"\b{re.escape(name)}\b", item.context):
            out.append(name)
    return list(dict.fromkeys(out))[:2]

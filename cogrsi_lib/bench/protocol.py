"""Evaluation protocols of a benchmark: ``official`` and ``uniform`` (CogRSI §3, App. E.3).

A protocol says how a benchmark's items are put to a system and how the replies are scored:
the prompt, the option order and how many times an item is asked (``views``), the per-reply
rule (``judge``), how an item's replies become one verdict (``combine``) and how verdicts
aggregate into the reported metrics (``summarize``; ``"score"`` is the headline).

* ``official`` follows the benchmark's release: its prompt, option order, repetitions and
  aggregation, with the release's scoring logic.  Where the released code is broken, the
  protocol follows its evident intent; every such exception, and everything the release does
  that is not reproduced here, is a :class:`Deviation` of the protocol.
* ``uniform`` puts every benchmark to a system in the package's own prompt with a structured
  reply, so that systems can be compared across benchmarks; its scorer and its differences
  from the release are listed the same way.

:func:`cogrsi_lib.bench.report.deviations_table` lists every deviation from the registry
(one declaration per benchmark); the benchmark README and every benchmark report show it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import polars as pl

from cogrsi_lib.bench.schema import Item
from cogrsi_lib.bench.scoring import Judgement
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Request

__all__ = [
    "EXAMPLE_STORY",
    "PROMPT_NOT_REPRODUCED",
    "STRUCTURED_ANSWER",
    "PROTOCOLS",
    "UNIFORM_PROMPT",
    "Deviation",
    "Message",
    "Protocol",
    "relabel",
    "view_of",
]

#: The two protocols every benchmark has, in report order.
PROTOCOLS: tuple[str, ...] = ("official", "uniform")
#: The story of the official protocols' example requests (cogrsi_lib/llm/families.py).
EXAMPLE_STORY = ("Sally put the ball in the basket. Sally left the room. Anne moved the ball "
                 "to the box.")

Message = dict[str, str]
Summarize = Callable[[Sequence[Item], Sequence[Judgement]], dict[str, float]]
Units = Callable[[Sequence[Item], Sequence[Judgement]], pl.DataFrame]


@dataclass(frozen=True)
class Deviation:
    """One way a protocol differs from the benchmark's release.

    ``aspect`` is what differs (prompt, option order, repetitions, parsing, aggregation,
    metric, data); ``release`` what the release does; ``here`` what this protocol does.
    ``broken=True`` marks a release bug whose intent is followed instead of its code.
    """

    aspect: str
    release: str
    here: str
    broken: bool = False


@dataclass(frozen=True)
class Protocol:
    """How a benchmark's items are asked and scored under one protocol.

    ``prompt(item)`` gives the chat messages of one view (``None``: the package's own
    prompt).  ``views(item)`` gives the presentations an item is asked in (option order,
    repetitions; each view's options relabelled, ``view_of`` maps its labels back); by
    default the item once, as loaded.  ``judge(view, reply)`` applies the per-reply rule to
    one view; ``combine(item, judgements)`` turns the judgements of an item's views (labels
    already mapped back) into its verdict (default: the only one).  ``answer(view)`` is the
    reply form the release's prompt asks for (``None``: free text), which a backend may
    enforce while decoding when asked to (:func:`cogrsi_lib.bench.runner.ask_official`).
    """

    name: str
    judge: Callable[[Item, str], Judgement]
    summarize: Summarize
    units: Units
    prompt: Callable[[Item], list[Message]] | None = None
    views: Callable[[Item], list[Item]] | None = None
    combine: Callable[[Item, Sequence[Judgement]], Judgement] | None = None
    answer: Callable[[Item], ReplyFormat | None] | None = None
    deviations: tuple[Deviation, ...] = ()
    release: str = ""

    def present(self, item: Item) -> list[Item]:
        """The views of ``item`` a system is asked (at least one)."""
        out = self.views(item) if self.views is not None else [item]
        if not out:
            raise ValueError(f"{item.id}: protocol {self.name!r} gives no view")
        return out

    def request(self, view: Item, max_tokens: int = 64, structured: bool = False) -> Request:
        """The release's prompt of one view as a greedy request; its reply is held to
        :attr:`answer` while decoding when ``structured``."""
        if self.prompt is None:
            raise ValueError(f"protocol {self.name!r} has no prompt of its own")
        return Request.of(self.prompt(view), max_tokens=max_tokens, temperature=0.0,
                          reply=self.answer(view) if self.answer is not None else None,
                          structured=structured)

    def score(self, item: Item, replies: str | Sequence[str]) -> Judgement:
        """The verdict on ``item`` from one reply per view (a single reply: every view)."""
        views = self.present(item)
        if isinstance(replies, str):
            replies = [replies] * len(views)
        if len(replies) != len(views):
            raise ValueError(f"{item.id}: {len(replies)} replies for {len(views)} views "
                             f"under protocol {self.name!r}")
        judgements = [_mapped_back(v, self.judge(v, r)) for v, r in zip(views, replies,
                                                                          strict=True)]
        if self.combine is not None:
            return self.combine(item, judgements)
        if len(judgements) != 1:
            raise ValueError(f"protocol {self.name!r} has several views and no combine rule")
        return judgements[0]

    def __post_init__(self) -> None:
        if self.answer is not None and STRUCTURED_ANSWER not in self.deviations:
            object.__setattr__(self, "deviations", (*self.deviations, STRUCTURED_ANSWER))


def view_of(item: Item, order: Sequence[int], number: int = 0) -> Item:
    """``item`` with its options shown in ``order`` (indices into ``item.options``) under the
    item's own labels, in order; the gold answer follows its text and ``extra["view_of"]``
    maps each shown label back to the original."""
    if sorted(order) != list(range(len(item.options))):
        raise ValueError(f"{item.id}: {order} is not an order of {len(item.options)} options")
    labels = list(item.labels)
    shown = tuple((labels[k], item.options[j][1]) for k, j in enumerate(order))
    back = {labels[k]: item.options[j][0] for k, j in enumerate(order)}
    gold = next(lab for lab, orig in back.items() if orig == item.gold)
    extra = {**item.extra, "view_of": back, "view": number}
    return replace(item, id=f"{item.id}#v{number}", options=shown, gold=gold, extra=extra)


def relabel(judgement: Judgement, back: dict[str, str]) -> Judgement:
    """A judgement whose ``parsed`` option label is mapped through ``back``."""
    if judgement.parsed is None or judgement.parsed not in back:
        return judgement
    return replace(judgement, parsed=back[judgement.parsed])


def _mapped_back(view: Item, judgement: Judgement) -> Judgement:
    back = view.extra.get("view_of") if isinstance(view.extra, dict) else None
    return relabel(judgement, back) if back else judgement


#: What every uniform protocol does differently from every release.
UNIFORM_PROMPT = Deviation(
    "prompt",
    "the benchmark's released prompt, free-text reply",
    "the package's own prompt with a JSON reply whose format is enforced while decoding "
    "(same prompt for every benchmark)",
)

#: What an official protocol without the release's prompt does instead.
PROMPT_NOT_REPRODUCED = Deviation(
    "prompt", "the benchmark's released prompt (or none released)",
    "not reproduced: the package's own prompt",
)

#: What an official protocol asked with its answer form enforced does instead (listed for every
#: protocol that declares one).
STRUCTURED_ANSWER = Deviation(
    "decoding", "free-text reply",
    "free text; asked with structured=True, the reply is held to the form the released prompt "
    "asks for (e.g. [[X]]) while decoding",
)

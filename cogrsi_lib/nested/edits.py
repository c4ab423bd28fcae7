"""Deepest-level edits: change what only the deepest level of a chain still holds (plan §5.7).

Depth invariant: "changing an event that only the deepest target knows can alter R_k
while leaving shallower answers invariant".  For a chain ``(X1, ..., Xk)`` the event
that fixed its answer (its ``source``) is, on an adversarial item, known at depth k
only: reality and every shallower prefix have been set by other events since.  An
edit rewrites that event (or the opening location, for a belief from the opening):

* whisper: say another location;
* move: send the object to another container (only where the rest stays legal);
* peek: drop it;
* opening: start the object in another container.

An edit counts only if the oracle, replaying the edited world, gives R_k a new answer
and reality and every ``chain[:j]`` (j < k) their old ones.  The source event is tried
first; when none of its edits counts (e.g. a peek that only confirmed what the peeker
already believed), the other events are tried, latest first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import polars as pl

from cogrsi_lib.oracle.state import Chain, OracleState, replay
from cogrsi_lib.oracle.world import OracleInputError, World

if TYPE_CHECKING:
    from cogrsi_lib.nested.items import NestedItem


EDIT_KINDS = ("relocate_whisper", "redirect_move", "drop_peek", "relocate_opening")


@dataclass(frozen=True)
class DeepestEdit:
    """An edited world in which only the depth-k answer of ``chain`` changed."""

    world: World
    chain: Chain
    event: int  # index of the edited event; -1: the opening location
    kind: str  # relocate_whisper, redirect_move, drop_peek, relocate_opening
    before: str
    after: str


def _answers(state: OracleState, chain: Chain) -> list[str]:
    """Reality, then the answer of every prefix chain[:1] .. chain[:k]."""
    return [state.location] + [str(state.belief(chain[:j], "location").value)
                               for j in range(1, len(chain) + 1)]


def _candidates(world: World, source: int) -> Iterator[tuple[str, World]]:
    events = list(world.events)
    if source < 0:
        for c in world.containers:
            if c != world.location:
                yield "relocate_opening", replace(world, location=c)
        return
    event = events[source]
    if event.type == "peek":
        yield "drop_peek", replace(world, events=tuple(events[:source] + events[source + 1:]))
        return
    field = {"whisper": "location", "move": "to"}.get(event.type)
    if field is None:
        return
    kind = "relocate_whisper" if event.type == "whisper" else "redirect_move"
    for c in world.containers:
        if c != getattr(event, field):
            edited = events[:source] + [replace(event, **{field: c})] + events[source + 1:]
            yield kind, replace(world, events=tuple(edited))


def _all_candidates(world: World, order: list[int]) -> Iterator[tuple[int, str, World]]:
    for event in order:
        for kind, edited in _candidates(world, event):
            yield event, kind, edited


def deepest_edits(world: World, chain: Chain) -> Iterator[DeepestEdit]:
    """Every single-event edit of ``world`` that changes only the depth-k answer of ``chain``,
    edits of the event behind that answer first."""
    if not chain:
        raise ValueError("reality has no deeper level to edit")
    depth = max(len(chain), 1)
    state = replay(world, depth)
    before = _answers(state, chain)
    source = state.belief(chain, "location").source
    others = [i for i in range(len(world.events) - 1, -2, -1) if i != source]
    for event, kind, edited in _all_candidates(world, [source, *others]):
        try:
            after = _answers(replay(edited, depth), chain)
        except OracleInputError:
            continue  # the edit made a later event illegal
        if after[:-1] == before[:-1] and after[-1] != before[-1]:
            yield DeepestEdit(edited, chain, event, kind, before[-1], after[-1])


def deepest_edit(world: World, chain: Chain) -> DeepestEdit | None:
    """The first such edit, or None if there is none."""
    return next(deepest_edits(world, chain), None)


def edit_table(items: Sequence[NestedItem]) -> pl.DataFrame:
    """Per depth: adversarial items, how many admit a deepest-level edit, and by which kind."""
    rows = []
    for depth in sorted({it.depth for it in items if it.depth > 0}):
        adv = [it for it in items if it.depth == depth and it.partition == "adversarial"]
        kinds: dict[str, int] = {}
        for it in adv:
            edit = deepest_edit(it.world, it.chain)
            key = edit.kind if edit else "none"
            kinds[key] = kinds.get(key, 0) + 1
        n_edit = len(adv) - kinds.get("none", 0)
        rows.append({"depth": depth, "adversarial": len(adv), "with_edit": n_edit,
                     "share": n_edit / len(adv) if adv else None}
                    | {k: kinds.get(k, 0) for k in EDIT_KINDS})
    return pl.DataFrame(rows)

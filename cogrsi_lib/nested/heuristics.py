"""Shortcut heuristics that a recursive benchmark must defeat (plan §1.4, §7).

Each heuristic maps an item (anything with a ``world`` and a ``chain``) to a container.
Reality, first-order and prefix are the oracle itself asked a shallower question;
last-mentioned and most-recent-message read the structured events that the story is
rendered from (never the text).

* reality: the true location (R0's answer).
* last_mentioned: the last container the story names: the opening location, then any
  open containers, then each event in order (move destination, whispered location,
  peeked container).
* first_order: the answer of ``chain[:1]`` (reality at R0).
* prefix: the answer of ``chain[:k-1]`` (R_{k-1}; reality at R0 and R1).
* most_recent_message: the location of the story's last whisper, whoever told it; with
  no whisper in the story it falls back to reality.
* initial_location: where the object was at the start (the first container named); not
  in plan §7, added because deep chains often never saw a shared move.
* exclusion: the first option that is neither reality nor any shallower prefix's answer;
  not in plan §7: it shows what the anti-prefix selection itself gives away.

At some depths a heuristic *is* the task (reality at R0, first-order at R0 and R1,
prefix at R0); those cells are flagged ``shortcut = False`` and left out of the best
heuristic used for recursive lift.  Exclusion is left out of the lift everywhere: it
needs every shallower answer, so it is not a non-recursive shortcut.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Protocol

from cogrsi_lib.oracle.state import Chain, OracleState, replay
from cogrsi_lib.oracle.world import World


class Probe(Protocol):
    """What a heuristic reads: the world and the question's chain (items and facts have both)."""

    @property
    def world(self) -> World: ...

    @property
    def chain(self) -> Chain: ...


Heuristic = Callable[[Probe], str]


@lru_cache(maxsize=4096)
def _state(world: World, max_depth: int) -> OracleState:
    return replay(world, max_depth)


def oracle_answer(world: World, chain: Chain) -> str:
    """The oracle's location answer for ``chain`` (reality for the empty chain)."""
    state = _state(world, max(len(chain), 4))
    return str(state.belief(chain, "location").value)  # the empty chain is reality


@lru_cache(maxsize=4096)
def mentioned_locations(world: World) -> tuple[str, ...]:
    """Every container the narrative names, in story order (see ``render.render``)."""
    out = [world.location] + [c for c in world.containers if c in world.open_containers]
    state = OracleState.initial(world, max_depth=1)
    for i, event in enumerate(world.events):
        if event.type == "move":
            out.append(event.to)  # type: ignore[arg-type]
        elif event.type == "whisper":
            out.append(event.location)  # type: ignore[arg-type]
        elif event.type == "peek":
            out.append(state.location)
        state.apply(event, i)
    return tuple(out)


def reality(item: Probe) -> str:
    """Answer with the true location."""
    return oracle_answer(item.world, ())


def last_mentioned(item: Probe) -> str:
    """Answer with the last container named in the story."""
    return mentioned_locations(item.world)[-1]


def first_order(item: Probe) -> str:
    """Answer with the first agent's own belief, whatever the depth."""
    return oracle_answer(item.world, item.chain[:1])


def prefix(item: Probe) -> str:
    """Answer with the next-shallower chain's belief, R_{k-1}."""
    return oracle_answer(item.world, item.chain[: max(len(item.chain) - 1, 0)])


def most_recent_message(item: Probe) -> str:
    """Answer with the last whispered location; reality if nothing was whispered."""
    told = [e.location for e in item.world.events if e.type == "whisper"]
    return told[-1] if told else reality(item)  # type: ignore[return-value]


def initial_location(item: Probe) -> str:
    """Answer with where the object started."""
    return item.world.location


def exclusion(item: Probe) -> str:
    """Answer with the first option that no shallower question (reality included) gives."""
    shallower = {oracle_answer(item.world, item.chain[:j]) for j in range(len(item.chain))}
    rest = [c for c in item.world.containers if c not in shallower]
    return rest[0] if rest else item.world.containers[0]


HEURISTICS: dict[str, Heuristic] = {
    "reality": reality,
    "last_mentioned": last_mentioned,
    "first_order": first_order,
    "prefix": prefix,
    "most_recent_message": most_recent_message,
    "initial_location": initial_location,
    "exclusion": exclusion,
}

# Depths at which a heuristic is the correct procedure, not a shortcut.
NOT_A_SHORTCUT: dict[str, frozenset[int]] = {
    "reality": frozenset({0}),
    "first_order": frozenset({0, 1}),
    "prefix": frozenset({0}),
}


# Baselines that are reported but not used as the "best shallow heuristic" of plan §7.
NOT_IN_LIFT = frozenset({"exclusion"})


def is_shortcut(name: str, depth: int) -> bool:
    """Whether heuristic ``name`` is a shortcut (not the task itself) at ``depth``."""
    return depth not in NOT_A_SHORTCUT.get(name, frozenset())

"""Phenomenon strata of a nested item, read off the oracle's access facts (plan §4, §6.3).

Suite A's dimensions (physical vs hidden observation, private and false communication,
stale beliefs, divergent histories) become tags on each item, so that scores can be
split by them (plan §3, H3 and H4).  Every tag comes from the structured world and the
oracle's ``Answer.via`` / ``Answer.source``, never from the text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cogrsi_lib.oracle.lies import lie_condition, lies
from cogrsi_lib.oracle.state import OracleState
from cogrsi_lib.oracle.world import World

if TYPE_CHECKING:
    from cogrsi_lib.nested.facts import ChainFacts

STRATA_COLUMNS = (
    "via", "lie_condition", "has_whisper", "has_peek", "has_hidden_observer", "has_missed",
    "chain_in_whisper", "source_whisper_false", "source_whisper_lie", "stale",
    "missed_last_move", "divergent", "repeated_agent", "n_distinct_agents", "n_events",
    "n_moves", "n_whispers",
)


def phenomena(world: World, facts: ChainFacts) -> dict[str, Any]:
    """The strata of one chain's answer in ``world``.

    via: how the gold was fixed (reality, initial, move, peek, whisper, view);
    lie_condition: no_lie, unlabelled, known_liar or revealed (plan §5.4, ``oracle.lies``);
    has_hidden_observer / has_missed: an event was secretly watched / missed unnoticed;
    source_whisper_false / _lie: the whisper that fixed it named a location other than the
    true one / is a lie (``oracle.lies``: other than the speaker's own belief, or than the
    true one when the speaker has none) (None unless via is whisper);
    stale: the gold was fixed before the last move; missed_last_move: some agent of the
    chain did not perceive the last move; divergent: the chain's agents perceived
    different sets of events; repeated_agent: an agent occurs twice (e.g. A, B, A).
    """
    chain = facts.chain
    state = OracleState.initial(world, max_depth=1)
    whisper_false: bool | None = None
    whisper_lie: bool | None = None
    for i, event in enumerate(world.events):
        if i == facts.source and event.type == "whisper":
            whisper_false = event.location != state.location
            whisper_lie = i in lies(world)
        state.apply(event, i)
    moves = [i for i, e in enumerate(world.events) if e.type == "move"]
    whispers = [e for e in world.events if e.type == "whisper"]
    last_move = moves[-1] if moves else None
    seen = {a: {i for i, what in state.observation_log[a] if what != "view"} for a in chain}
    return {
        "via": facts.via,
        "lie_condition": lie_condition(world),
        "has_whisper": bool(whispers),
        "has_peek": any(e.type == "peek" for e in world.events),
        "has_hidden_observer": any(e.hidden_observers for e in world.events),
        "has_missed": any(e.missed_by for e in world.events),
        "chain_in_whisper": any({e.actor, e.listener} & set(chain) for e in whispers),
        "source_whisper_false": whisper_false,
        "source_whisper_lie": whisper_lie,
        "stale": last_move is not None and facts.source < last_move,
        "missed_last_move": last_move is not None and any(last_move not in seen[a] for a in chain),
        "divergent": len({frozenset(s) for s in seen.values()}) > 1,
        "repeated_agent": len(set(chain)) < len(chain),
        "n_distinct_agents": len(set(chain)),
        "n_events": len(world.events),
        "n_moves": len(moves),
        "n_whispers": len(whispers),
    }

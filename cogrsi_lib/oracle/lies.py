"""Lies in a world and the narration condition they are told under (plan §5.4).

A whisper is a lie when its claim differs from what the speaker believes at that
moment.  Plan §5.4 asks for three conditions, scored separately, besides stories
without lies: an *unlabelled* lie (nothing marks it), a *known liar* (everyone, the
listeners included, knows the speaker lies, so nobody takes their word: the world's
``known_liars``) and a lie *revealed* to the reader only (``reveal_lies``: the story
says so after the whisper; no agent hears it, so no belief changes).
"""

from __future__ import annotations

from cogrsi_lib.oracle.state import OracleState
from cogrsi_lib.oracle.world import World

NO_LIE = "no_lie"
UNLABELLED = "unlabelled"
KNOWN_LIAR = "known_liar"
REVEALED = "revealed"
LIE_CONDITIONS = (NO_LIE, UNLABELLED, KNOWN_LIAR, REVEALED)


def lies(world: World) -> list[int]:
    """Indices of the whispers whose claim differs from the speaker's own belief."""
    state = OracleState.initial(world, only=[(a,) for a in world.agents])
    out = []
    for i, e in enumerate(world.events):
        if e.type == "whisper" and e.location != state.belief((e.actor,), "location").value:
            out.append(i)
        state.apply(e, i)
    return out


def lie_condition(world: World) -> str:
    """The world's lie condition: no_lie, unlabelled, known_liar or revealed."""
    if not lies(world):
        return NO_LIE
    if world.known_liars:
        return KNOWN_LIAR
    return REVEALED if world.reveal_lies else UNLABELLED

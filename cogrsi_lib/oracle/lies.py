"""Lies in a world and the narration condition they are told under (plan §5.4).

A whisper is a lie when its claim differs from what the speaker believes at that moment,
or, for a speaker with no belief (``opening: unknown``), from the truth.  Plan §5.4 asks for
three conditions, scored separately, besides stories without lies: an *unlabelled* lie
(nothing marks it), a *known liar* (everyone, the listeners included, knows the speaker
lies, so nobody takes their word: the world's ``known_liars``) and a lie *revealed* to the
reader only (``reveal_lies``: the story says so after the whisper; no agent hears it, so no
belief changes).  A world whose lies are told partly by known liars and partly by others is
*mixed*; the sampler draws none (SEMANTICS.md, "Lie conditions").
"""

from __future__ import annotations

from cogrsi_lib.oracle.state import OracleState
from cogrsi_lib.oracle.world import World

NO_LIE = "no_lie"
UNLABELLED = "unlabelled"
KNOWN_LIAR = "known_liar"
REVEALED = "revealed"
MIXED = "mixed"
LIE_CONDITIONS = (NO_LIE, UNLABELLED, KNOWN_LIAR, REVEALED, MIXED)


def lies(world: World) -> list[int]:
    """Indices of the whispers whose claim differs from the speaker's own belief (or, when the
    speaker has none, from where the object is), replaying ``world`` as given."""
    state = OracleState.initial(world, only=[(a,) for a in world.agents])
    out = []
    for i, e in enumerate(world.events):
        if e.type == "whisper":
            held = state.belief((e.actor,), "location").value
            if e.location != (state.location if held is None else held):
                out.append(i)
        state.apply(e, i)
    return out


def liars(world: World) -> frozenset[str]:
    """The agents who tell a lie in ``world``."""
    return frozenset(world.events[i].actor for i in lies(world))


def lie_condition(world: World) -> str:
    """The world's lie condition (SEMANTICS.md, "Lie conditions"): no_lie without a lie;
    revealed when the story marks every lie; known_liar when every lie is told by a known
    liar, unlabelled when none is, mixed otherwise."""
    told = lies(world)
    if not told:
        return NO_LIE
    if world.reveal_lies:
        return REVEALED
    by_known = {world.events[i].actor in world.known_liars for i in told}
    if by_known == {True}:
        return KNOWN_LIAR
    return UNLABELLED if by_known == {False} else MIXED

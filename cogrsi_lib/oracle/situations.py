"""The situations ExploreToM contains, as a subset of the oracle's worlds (CogRSI §5.4, App. C.2).

The paper's loops learn from ExploreToM's physical-access development stories, and §5.4 counts
the invalid rules whose counterexamples lie only in situations ExploreToM never contains. The
set is read from the ExploreToM release (facebookresearch/ExploreToM, ``belief_tracker.py`` and
``story_structure_searcher.py``), restricted to its physical-access interaction types
(``tomi``, ``tomi+object-state`` and their ``+asymmetric`` forms):

============================  =====================================================
ExploreToM action             oracle event
============================  =====================================================
``enter_room``                ``enter``
``leave_room``                ``leave``
``move_object_container``     ``move``
``update_object_state``       ``change`` (a visible or a hidden property)
witnessed "in secret"         a move or change with ``hidden_observers``
"got distracted"              a move or change with ``missed_by``
============================  =====================================================

The release allows at most one action with secret witnesses or a distracted onlooker per story
(``MAX_PEEKING_DISTRACTED_ACTIONS_ALLOWED_PER_STORY = 1``); so does this set. Outside it:
falling asleep and waking, whispering a location to one listener (private telling, and lying
when the whisper is false) and looking into a container later (``peek``). ExploreToM's
``move_object_room`` and its communication partition (private and public telling about
abstract topics) have no counterpart in the oracle, which tells only locations, privately.
"""

from __future__ import annotations

from dataclasses import replace

from cogrsi_lib.oracle.sampler import DEFAULT_WEIGHTS, SamplerConfig
from cogrsi_lib.oracle.world import Event, World

NAME = "exploretom"
#: oracle event types with an ExploreToM physical-access counterpart
INSIDE_EVENTS = ("enter", "leave", "move", "change")
#: oracle event types ExploreToM never contains
OUTSIDE_EVENTS = ("sleep", "wake", "whisper", "peek")
#: ExploreToM's cap on actions with a secret witness or a distracted onlooker, per story
MAX_ASYMMETRIC = 1


def asymmetric(event: Event) -> bool:
    """Is ``event`` secretly watched or missed unnoticed by an onlooker?"""
    return bool(event.hidden_observers or event.missed_by)


def outside_reasons(world: World) -> tuple[str, ...]:
    """Why ``world`` lies outside ExploreToM's situations (empty: it lies inside): its event
    types outside the set, in the order of :data:`OUTSIDE_EVENTS`, and ``asymmetric>1`` when
    more than one event is secretly watched or missed."""
    types = {e.type for e in world.events}
    unknown = types - set(INSIDE_EVENTS) - set(OUTSIDE_EVENTS)
    if unknown:
        raise ValueError(f"event types {sorted(unknown)} are not classified")
    out = [t for t in OUTSIDE_EVENTS if t in types]
    if sum(asymmetric(e) for e in world.events) > MAX_ASYMMETRIC:
        out.append(f"asymmetric>{MAX_ASYMMETRIC}")
    return tuple(out)


def inside(world: World) -> bool:
    """Does ``world`` lie inside ExploreToM's situations?"""
    return not outside_reasons(world)


def exploretom_config(base: SamplerConfig | None = None) -> SamplerConfig:
    """``base`` (default: the sampler's defaults) restricted to ExploreToM's situations: only
    the inside event types keep their weights and at most one event per world is secretly
    watched or missed. Every world it samples lies :func:`inside` the set."""
    return _restricted(base, INSIDE_EVENTS, max_asymmetric=MAX_ASYMMETRIC)


#: the event types of ToMi's stories (ExploreToM's ``tomi`` interaction type)
TOMI_EVENTS = ("enter", "leave", "move")


def tomi_config(base: SamplerConfig | None = None) -> SamplerConfig:
    """``base`` restricted to ToMi's situations, the simplest false beliefs: agents enter and
    leave one room and move the object between closed containers; every move is seen by
    exactly the agents present (none secretly watched or missed), and no property changes."""
    return _restricted(base, TOMI_EVENTS, max_asymmetric=0, p_hidden_observer=0.0,
                       p_missed=0.0, p_open_container=0.0, p_property=0.0)


def _restricted(base: SamplerConfig | None, events: tuple[str, ...],
                **knobs: object) -> SamplerConfig:
    """``base`` (default: the sampler's defaults) keeping only the weights of ``events``,
    with ``knobs`` replaced."""
    base = base or SamplerConfig()
    weights = dict(base.weights) if base.weights else dict(DEFAULT_WEIGHTS)
    kept = tuple((t, w) for t, w in weights.items() if t in events)
    return replace(base, weights=kept, **knobs)  # type: ignore[arg-type]


#: development-data situation sets the loops can draw from (``params.yaml: loops.dev_situations``)
SITUATIONS = {"oracle": "every oracle event (sleep, whispers, lies and peeks included)",
              NAME: "ExploreToM's physical-access situations (cogrsi_lib/oracle/situations.py)"}


def sampler_config(situations: str, base: SamplerConfig | None = None) -> SamplerConfig:
    """The sampler config of a named situation set (:data:`SITUATIONS`)."""
    if situations == NAME:
        return exploretom_config(base)
    if situations == "oracle":
        return base or SamplerConfig()
    raise ValueError(f"unknown situation set {situations!r}; known: {sorted(SITUATIONS)}")

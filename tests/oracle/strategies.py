"""Hypothesis strategies for oracle worlds: via the sampler, and built event by event.

The direct strategy does not use the sampler, so the sampler's biases (one property,
nobody asleep at the start, fixed visibility per property name, at most a few agents)
cannot hide bugs.  Legal next events come from :mod:`tests.oracle.reference`, not from
the oracle.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import strategies as st

from cogrsi_lib.oracle.sampler import SamplerConfig, sample_world
from cogrsi_lib.oracle.world import Question, Value, World

from . import reference as ref

AGENTS = ("Anne", "Sally", "Bob", "Carla", "Dev")
CONTAINERS = ("basket", "box", "drawer", "tray")
# name -> candidate values (one JSON type per property, see report on 1 == True)
PROPERTY_VALUES: dict[str, tuple[Value, ...]] = {
    "color": ("red", "blue", "green"),
    "temperature": ("cold", "warm", "hot"),
    "size": (1, 2, 3),
    "wet": (True, False),
}


@st.composite
def sampler_configs(draw: st.DrawFn) -> SamplerConfig:
    """Sampler configurations, including 4-5 agents and longer stories."""
    lo = draw(st.integers(1, 5))
    hi = draw(st.integers(lo, 5))
    n_min = draw(st.integers(0, 8))
    return SamplerConfig(
        min_agents=lo,
        max_agents=hi,
        n_containers=draw(st.integers(2, 4)),
        min_events=n_min,
        max_events=draw(st.integers(n_min, 14)),
        p_open_container=draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])),
        p_property=draw(st.sampled_from([0.0, 1.0])),
    )


@st.composite
def sampled_worlds(draw: st.DrawFn) -> World:
    """A world from ``sample_world`` with a hypothesis-drawn seed and configuration."""
    seed = draw(st.integers(0, 2**32 - 1))
    return sample_world(random.Random(seed), draw(sampler_configs()))


@st.composite
def opening_worlds(draw: st.DrawFn, max_agents: int = 5) -> World:
    """An opening state (no events) with any legal mix of presence, sleep, open containers."""
    agents = tuple(draw(st.lists(st.sampled_from(AGENTS[:max_agents]), min_size=1,
                                 max_size=max_agents, unique=True)))
    containers = tuple(draw(st.lists(st.sampled_from(CONTAINERS), min_size=2, max_size=4,
                                     unique=True)))
    props = draw(st.lists(st.sampled_from(sorted(PROPERTY_VALUES)), max_size=3, unique=True))
    present = set(agents) if draw(st.booleans()) else draw(st.sets(st.sampled_from(agents)))
    asleep = draw(st.sets(st.sampled_from(sorted(present)))) if present else set()
    return World(
        agents=agents,
        containers=containers,
        object=draw(st.sampled_from(["marble", "ring"])),
        location=draw(st.sampled_from(containers)),
        present=frozenset(present),
        asleep=frozenset(asleep),
        properties=tuple((p, draw(st.sampled_from(PROPERTY_VALUES[p]))) for p in props),
        open_containers=frozenset(draw(st.sets(st.sampled_from(containers)))),
        room=draw(st.sampled_from(["room", "kitchen"])),
        hidden_properties=frozenset(draw(st.sets(st.sampled_from(props))) if props else ()),
        known_liars=frozenset(draw(st.sets(st.sampled_from(agents), max_size=1))),
        testimony=draw(st.sampled_from(["latest", "fresher_access"])),
        opening=draw(st.sampled_from(["common_ground", "unknown"])),
    )


@st.composite
def direct_worlds(draw: st.DrawFn, max_agents: int = 5, max_events: int = 14,
                  types: tuple[str, ...] | None = None) -> World:
    """A world grown event by event from the legal events of :mod:`reference`.

    Each property gets its own drawn visibility; ``types`` restricts the event types.
    """
    world = draw(opening_worlds(max_agents))
    visible = {p: p not in world.hidden_properties and draw(st.booleans())
               for p, _ in world.properties}
    n = draw(st.one_of(st.integers(0, max_events), st.just(max_events)))  # favour long stories
    events = []
    for _ in range(n):
        options = ref.legal_events(world, values=PROPERTY_VALUES, visible=visible)
        if types is not None:
            options = [e for e in options if e.type in types]
        if not options:
            break
        # first the type, then the arguments, so rare types are not drowned by whispers
        etype = draw(st.sampled_from(sorted({e.type for e in options})))
        event = draw(st.sampled_from([e for e in options if e.type == etype]))
        if etype in ("move", "change"):
            situation = ref.situation(world, len(world.events))
            absent = [a for a in world.agents if a not in situation.present]
            onlookers = sorted(situation.awake - {event.actor})
            event = replace(
                event,
                hidden_observers=tuple(draw(st.lists(st.sampled_from(absent), max_size=2,
                                                     unique=True)) if absent else ()),
                missed_by=tuple(draw(st.lists(st.sampled_from(onlookers), max_size=2,
                                              unique=True)) if onlookers else ()))
        events.append(event)
        world = replace(world, events=tuple(events))
    return world


def chains_upto(agents: tuple[str, ...], max_depth: int) -> list[tuple[str, ...]]:
    """Every chain of 1..max_depth agents with no agent twice in a row (own enumeration)."""
    out: list[tuple[str, ...]] = []
    frontier: list[tuple[str, ...]] = [()]
    for _ in range(max_depth):
        frontier = [c + (a,) for c in frontier for a in agents if not c or c[-1] != a]
        out += frontier
    return out


def all_questions(world: World, max_depth: int) -> list[Question]:
    """Reality and every legal chain up to ``max_depth``, for location and each property."""
    kinds: list[tuple[str, str | None]] = [("location", None)]
    kinds += [("property", p) for p, _ in world.properties]
    out = []
    for kind, prop in kinds:
        out.append(Question(kind, (), prop))
        out += [Question(kind, c, prop) for c in chains_upto(world.agents, max_depth)]
    return out


def prefix(world: World, n: int) -> World:
    """The world with only its first ``n`` events."""
    return replace(world, events=world.events[:n])

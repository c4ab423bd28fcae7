"""Shared helpers for the nested-benchmark tests: hand-made worlds and fast settings."""

from __future__ import annotations

from functools import lru_cache

from hypothesis import HealthCheck, settings

from cogrsi_lib.nested.facts import chain_facts
from cogrsi_lib.nested.items import Generation, NestedConfig, NestedItem, generate, make_item
from cogrsi_lib.oracle.state import replay
from cogrsi_lib.oracle.world import World

AGENTS = ["Anne", "Sally", "Bob", "Carla"]
CONTAINERS = ["basket", "box", "drawer", "tray"]


def fast(n: int) -> settings:
    """Hypothesis settings: ``n`` examples, no deadline."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ev(text: str) -> dict:
    """One event in short notation: "Sally leave", "Anne move box", "Anne whisper Sally tray",
    "Sally peek"."""
    w = text.split()
    if w[1] in ("leave", "enter", "sleep", "wake", "peek"):
        return {"type": w[1], "agent": w[0]}
    if w[1] == "move":
        return {"type": "move", "agent": w[0], "to": w[2]}
    if w[1] == "whisper":
        return {"type": "whisper", "speaker": w[0], "listener": w[2], "location": w[3]}
    raise ValueError(text)


def world(*events: str, location: str = "basket", present: list[str] | None = None) -> World:
    """A four-agent, four-container world with the marble in ``location`` at the start."""
    return World.from_dict({
        "agents": AGENTS, "containers": CONTAINERS, "object": "marble",
        "initial": {"location": location, "present": present or AGENTS},
        "events": [ev(e) for e in events],
    })


def item(w: World, *chain: str, index: int = 0) -> NestedItem:
    """The item of ``chain`` in ``w`` (its partition must be defined)."""
    return make_item(chain_facts(replay(w, max(len(chain), 1)), tuple(chain)), index)


# The classic second-order story: everyone sees the move to the box, Carla leaves,
# then Anne moves the marble to the drawer in front of Sally and Bob.
CLASSIC = ("Anne move box", "Carla leave", "Anne move drawer")


@lru_cache(maxsize=64)
def small_generation(seed: int, n_per_cell: int = 3) -> Generation:
    """A small generated item set (cached: generation is deterministic)."""
    return generate(NestedConfig(n_per_cell=n_per_cell, seed=seed))

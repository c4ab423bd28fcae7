"""The read-only world/question objects that translated rule code sees (CogRSI §4.3; ``API.md``).

Translated code defines ``applies(world, q)`` and ``predict(world, q)``; ``world`` is a
:class:`WorldView` and ``q`` a :class:`QuestionView`.  Both are built from a JSON snapshot
(:mod:`cogrsi_lib.audit.snapshot`) so that they can cross into the sandbox process; the
snapshot carries the world's facts (events, who perceived them, who was present or asleep)
and never the oracle's answers or belief states.  This module uses the standard library only:
it is imported by the sandbox child.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

API_VERSION = 2

#: Event fields beyond index/type/actor/perceivers, in the order API.md lists them.
EVENT_FIELDS = (
    "to", "origin", "listener", "location", "truthful", "container",
    "property", "value", "visible", "late_view",
)  # fmt: skip


class _Frozen:
    """Attributes are set once, in ``__init__``; assignment afterwards raises."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


class EventView(_Frozen):
    """One event of the story (see API.md for each field)."""

    __slots__ = ("index", "type", "actor", "perceivers", "hidden_observers", "missed_by",
                 *EVENT_FIELDS)

    def __init__(self, index: int, raw: Mapping[str, Any]) -> None:
        self._set("index", index)
        self._set("type", raw["type"])
        self._set("actor", raw["actor"])
        self._set("perceivers", frozenset(raw["perceivers"]))
        self._set("hidden_observers", frozenset(raw.get("hidden_observers", ())))
        self._set("missed_by", frozenset(raw.get("missed_by", ())))
        for name in EVENT_FIELDS:
            self._set(name, raw.get(name))

    def __repr__(self) -> str:
        extra = "".join(
            f", {n}={getattr(self, n)!r}" for n in EVENT_FIELDS if getattr(self, n) is not None
        )
        return (
            f"Event({self.index}, {self.type!r}, actor={self.actor!r}"
            f"{extra}, perceivers={sorted(self.perceivers)})"
        )


class WorldView(_Frozen):
    """One story world: agents, containers, the object, events and the true state at each step.

    Step ``i`` is the moment event ``i`` happens (before its effects); step
    ``len(world.events)`` is the end of the story.
    """

    __slots__ = (
        "agents", "containers", "object", "room", "open_containers", "initial_location",
        "initial_properties", "events", "known_liars", "testimony", "opening", "_present",
        "_asleep", "_location", "_values", "_candidates",
    )  # fmt: skip

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self._set("agents", tuple(raw["agents"]))
        self._set("containers", tuple(raw["containers"]))
        self._set("object", raw["object"])
        self._set("room", raw["room"])
        self._set("open_containers", frozenset(raw["open_containers"]))
        self._set("initial_location", raw["location"][0])
        self._set(
            "initial_properties",
            MappingProxyType({p: vals[0] for p, vals in raw["values"].items()}),
        )
        self._set("events", tuple(EventView(i, e) for i, e in enumerate(raw["events"])))
        self._set("known_liars", frozenset(raw.get("known_liars", ())))
        self._set("testimony", raw.get("testimony", "latest"))
        self._set("opening", raw.get("opening", "common_ground"))
        self._set("_present", tuple(frozenset(s) for s in raw["present"]))
        self._set("_asleep", tuple(frozenset(s) for s in raw["asleep"]))
        self._set("_location", tuple(raw["location"]))
        self._set("_values", {p: tuple(v) for p, v in raw["values"].items()})
        self._set("_candidates", {k: tuple(v) for k, v in raw["candidates"].items()})

    def _step(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError("a step is an event index (int)")
        n = len(self.events)
        if not -n - 1 <= i <= n:
            raise IndexError(f"step {i} out of range 0..{n}")
        return i if i >= 0 else n + 1 + i

    def present_at(self, i: int) -> frozenset[str]:
        """Agents in the room when event ``i`` happens (``len(events)``: at the end)."""
        return self._present[self._step(i)]

    def asleep_at(self, i: int) -> frozenset[str]:
        """Agents asleep (in the room) when event ``i`` happens."""
        return self._asleep[self._step(i)]

    def location_at(self, i: int) -> str:
        """Where the object really is when event ``i`` happens."""
        return self._location[self._step(i)]

    def value_at(self, prop: str, i: int) -> Any:
        """The real value of property ``prop`` when event ``i`` happens."""
        return self._values[prop][self._step(i)]

    def __repr__(self) -> str:
        return (
            f"World(agents={list(self.agents)}, containers={list(self.containers)}, "
            f"object={self.object!r}, events={len(self.events)})"
        )


class QuestionView(_Frozen):
    """One question: "where does X1 think (that X2 thinks ...) the object is?" or a property."""

    __slots__ = ("kind", "property", "chain", "depth", "text", "candidates")

    def __init__(self, raw: Mapping[str, Any], world: WorldView) -> None:
        self._set("kind", raw["kind"])
        self._set("property", raw.get("property"))
        self._set("chain", tuple(raw["chain"]))
        self._set("depth", len(self.chain))
        self._set("text", raw["text"])
        key = "location" if self.kind == "location" else f"property:{self.property}"
        self._set("candidates", world._candidates[key])

    def __repr__(self) -> str:
        return f"Question({self.kind!r}, chain={list(self.chain)}, property={self.property!r})"


def build_views(
    snapshot: Mapping[str, Any],
) -> tuple[list[WorldView], list[tuple[int, QuestionView]]]:
    """The worlds and ``(world index, question)`` pairs of a snapshot, in snapshot order."""
    if snapshot.get("api_version") != API_VERSION:
        raise ValueError(f"snapshot API version {snapshot.get('api_version')} != {API_VERSION}")
    worlds = [WorldView(w) for w in snapshot["worlds"]]
    questions = [(q["w"], QuestionView(q, worlds[q["w"]])) for q in snapshot["questions"]]
    return worlds, questions


def answer_string(value: Any) -> str | None:
    """A prediction as the audit compares it: a scalar as text, anything else ``None``.

    The text comes from the base type's own method, so a subclass cannot change it, and an
    integer too long to print (more digits than ``sys.get_int_max_str_digits()``) gives
    ``None`` instead of raising.
    """
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        try:
            return int.__repr__(value)
        except ValueError:
            return None
    if isinstance(value, float):
        return float.__repr__(value)
    return None


def same_answer(a: str, b: str) -> bool:
    """Predictions and gold compare ignoring case and surrounding spaces."""
    return a.strip().casefold() == b.strip().casefold()


__all__: Sequence[str] = (
    "API_VERSION", "EventView", "QuestionView", "WorldView", "answer_string", "build_views",
    "same_answer",
)  # fmt: skip

"""Explicit oracle state and its replay, event by event (recursive-reasoning plan §5.2).

The state keeps, separately: the world (where the object is, who is present or
asleep, property values), each agent's observation log, and belief chains up to a
fixed depth.  A chain ``(X1, ..., Xk)`` holds "X1 thinks X2 thinks ... Xk thinks";
``(X,)`` is X's own first-order belief.  Chains never repeat an agent twice in a
row ("A thinks A thinks" is just "A thinks").  The rules are written out, each with
an example, in ``SEMANTICS.md`` beside this file (CogRSI App. C, J105).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import product

from cogrsi_lib.oracle.world import Event, OracleInputError, Value, World, same_value

Chain = tuple[str, ...]
INITIAL = -1  # source index of a belief that comes from the opening state


#: The most belief chains one replay tracks: deeper questions over many agents are refused
#: before any work (SEMANTICS.md, "Input errors").
MAX_CHAINS = 50_000


def chain_count(n_agents: int, max_depth: int) -> int:
    """How many chains :func:`chains` builds: ``n (n-1)^(k-1)`` summed over k = 1..max_depth."""
    if n_agents < 2:
        return min(n_agents, 1) if max_depth >= 1 else 0
    return sum(n_agents * (n_agents - 1) ** (k - 1) for k in range(1, max_depth + 1))


def chains(agents: Iterable[str], max_depth: int) -> list[Chain]:
    """Every chain of length 1..max_depth with no agent twice in a row, shortest first."""
    agents = tuple(agents)
    out: list[Chain] = []
    for k in range(1, max_depth + 1):
        for combo in product(agents, repeat=k):
            if all(a != b for a, b in zip(combo, combo[1:], strict=False)):
                out.append(combo)
    return out


@dataclass
class Belief:
    """One belief of one chain: a value and the event that set it (INITIAL for the opening)."""

    value: Value
    source: int = INITIAL
    via: str = "initial"


@dataclass
class OracleState:
    """The whole explicit state after some prefix of a world's events."""

    world: World
    max_depth: int
    location: str
    present: set[str]
    asleep: set[str]
    properties: dict[str, Value]
    visibility: dict[str, bool] = field(default_factory=dict)
    observation_log: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    location_beliefs: dict[Chain, Belief] = field(default_factory=dict)
    property_beliefs: dict[Chain, dict[str, Belief]] = field(default_factory=dict)
    applied: int = 0
    _chain_sets: list[tuple[Chain, frozenset[str]]] = field(default_factory=list, repr=False)

    @classmethod
    def initial(cls, world: World, max_depth: int = 4) -> OracleState:
        """The opening state: it is common ground, so every chain starts at the truth."""
        if max_depth < 1:
            raise ValueError("max_depth must be at least 1")
        needed = chain_count(len(world.agents), max_depth)
        if needed > MAX_CHAINS:
            raise OracleInputError(
                f"depth {max_depth} over {len(world.agents)} agents needs {needed:.3g} belief "
                f"chains; at most {MAX_CHAINS} are tracked", where="questions")
        all_chains = chains(world.agents, max_depth)
        props = world.initial_properties
        return cls(
            world=world,
            max_depth=max_depth,
            location=world.location,
            present=set(world.present),
            asleep=set(world.asleep),
            properties=dict(props),
            observation_log={a: [] for a in world.agents},
            location_beliefs={c: Belief(world.location) for c in all_chains},
            property_beliefs={c: {p: Belief(v) for p, v in props.items()} for c in all_chains},
            _chain_sets=[(c, frozenset(c)) for c in all_chains],
        )

    # -- who can act and who perceives -------------------------------------------------
    def awake_present(self) -> set[str]:
        return self.present - self.asleep

    def object_in_view(self) -> bool:
        """The object can be seen from the room when it lies in an open container."""
        return self.location in self.world.open_containers

    def perceivers(self, event: Event) -> frozenset[str]:
        """Who perceives ``event`` if it happens now (before its effects)."""
        if event.type == "whisper":
            return frozenset((event.actor, event.listener))  # type: ignore[arg-type]
        if event.type == "peek":
            return frozenset((event.actor,))
        return frozenset(self.awake_present() | {event.actor})

    # -- legality ----------------------------------------------------------------------
    def check(self, event: Event, index: int) -> None:
        """Raise :class:`OracleInputError` if ``event`` is not legal in this state."""
        w = self.world
        a = event.actor
        if a not in w.agents:
            raise OracleInputError(f"unknown agent {a!r}", index)
        t = event.type
        if t == "enter":
            if a in self.present:
                raise OracleInputError(f"{a} enters but is already in the {w.room}", index)
            return
        if t == "wake":
            if a not in self.asleep:
                raise OracleInputError(f"{a} wakes but is not asleep", index)
            return
        if a not in self.present:
            raise OracleInputError(f"{a} is absent and cannot {t}", index)
        if a in self.asleep:
            raise OracleInputError(f"{a} is asleep and cannot {t}", index)
        if t == "move":
            if event.to not in w.containers:
                raise OracleInputError(f"unknown container {event.to!r}", index)
            if event.to == self.location:
                raise OracleInputError(
                    f"move to {event.to!r}, where the {w.object} already is", index
                )
        elif t == "whisper":
            lis = event.listener
            if lis not in w.agents:
                raise OracleInputError(f"unknown agent {lis!r}", index)
            if lis == a:
                raise OracleInputError(f"{a} whispers to themself", index)
            if lis not in self.present:
                raise OracleInputError(f"{lis} is absent and cannot hear a whisper", index)
            if lis in self.asleep:
                raise OracleInputError(f"{lis} is asleep and cannot hear a whisper", index)
            if event.location not in w.containers:
                raise OracleInputError(f"unknown container {event.location!r}", index)
        elif t == "change":
            prop = event.property
            if prop not in self.properties:
                raise OracleInputError(f"unknown property {prop!r}", index)
            if same_value(self.properties[prop], event.value):  # type: ignore[arg-type]
                raise OracleInputError(f"{prop} is already {event.value!r}", index)
            fixed = self.visibility.get(prop)
            if fixed is not None and fixed != event.visible:
                raise OracleInputError(
                    f"{prop} was changed as {'visible' if fixed else 'hidden'} before; "
                    "a property keeps its visibility",
                    index,
                )

    # -- effects -----------------------------------------------------------------------
    def apply(self, event: Event, index: int | None = None) -> frozenset[str]:
        """Check and apply one event; returns who perceived it."""
        index = self.applied if index is None else index
        self.check(event, index)
        who = self.perceivers(event)
        for agent in who:
            self.observation_log[agent].append((index, event.type))
        t = event.type
        if t == "leave":
            self.present.discard(event.actor)
        elif t == "enter":
            self.present.add(event.actor)
            self._late_view(event.actor, index)
        elif t == "sleep":
            self.asleep.add(event.actor)
        elif t == "wake":
            self.asleep.discard(event.actor)
            self._late_view(event.actor, index)
        elif t == "move":
            self.location = event.to  # type: ignore[assignment]
            self._set_location(who, event.to, index, "move")  # type: ignore[arg-type]
        elif t == "peek":
            self._set_location(who, self.location, index, "peek")
        elif t == "whisper":
            s, lis = event.actor, event.listener
            for chain in ((lis,), (s, lis), (lis, s)):
                if chain in self.location_beliefs:
                    self.location_beliefs[chain] = Belief(event.location, index, "whisper")  # type: ignore[arg-type]
        elif t == "change":
            prop = event.property
            self.properties[prop] = event.value  # type: ignore[index]
            self.visibility[prop] = bool(event.visible)  # type: ignore[index]
            for chain, members in self._chain_sets:
                if members <= who:
                    self.property_beliefs[chain][prop] = Belief(event.value, index, "change")  # type: ignore[index,arg-type]
        self.applied += 1
        return who

    def _set_location(self, who: frozenset[str], value: str, index: int, via: str) -> None:
        for chain, members in self._chain_sets:
            if members <= who:
                self.location_beliefs[chain] = Belief(value, index, via)

    def _late_view(self, agent: str, index: int) -> None:
        """An agent who enters or wakes sees the visible properties of an object in view."""
        shown = [p for p, visible in self.visibility.items() if visible]
        if not shown or not self.object_in_view():
            return
        self.observation_log[agent].append((index, "view"))
        mine = self.property_beliefs[(agent,)]
        for prop in shown:
            mine[prop] = Belief(self.properties[prop], index, "view")

    # -- reading -----------------------------------------------------------------------
    def belief(self, chain: Chain, kind: str, prop: str | None = None) -> Belief:
        """The belief of ``chain`` (reality for the empty chain)."""
        if not chain:
            return Belief(self.location if kind == "location" else self.properties[prop])  # type: ignore[index]
        if chain not in self.location_beliefs:
            raise KeyError(f"chain {list(chain)} is deeper than the state's depth {self.max_depth}")
        if kind == "location":
            return self.location_beliefs[chain]
        return self.property_beliefs[chain][prop]  # type: ignore[index]


def replay(world: World, max_depth: int = 4) -> OracleState:
    """Apply every event of ``world`` in order; raises on the first illegal one."""
    state = OracleState.initial(world, max_depth)
    for i, event in enumerate(world.events):
        state.apply(event, i)
    return state


def trace(world: World, max_depth: int = 4) -> Iterator[tuple[int, frozenset[str], OracleState]]:
    """Yield ``(event index, perceivers, state after it)``; the state object is reused."""
    state = OracleState.initial(world, max_depth)
    for i, event in enumerate(world.events):
        who = state.apply(event, i)
        yield i, who, state

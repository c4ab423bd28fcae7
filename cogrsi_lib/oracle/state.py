"""Explicit oracle state and its replay, event by event (recursive-reasoning plan §5.2).

The state keeps, separately: the world (where the object is, who is present or
asleep, property values), each agent's observation log and last sight of the object,
and the belief chains it tracks.  A chain ``(X1, ..., Xk)`` holds "X1 thinks X2 thinks
... Xk thinks"; ``(X,)`` is X's own first-order belief.  Chains never repeat an agent
twice in a row.  A chain's belief changes only by the rules in ``SEMANTICS.md`` beside
this file (CogRSI §4.3 and App. C, J105; plan §5.7), and every rule decides one chain
from that chain's own agents, so the state tracks only the chains it is asked for
(and their prefixes), or every chain up to a depth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

from cogrsi_lib.oracle.world import Event, OracleInputError, Value, World, same_value

Chain = tuple[str, ...]
INITIAL = -1  # source index of a belief that comes from the opening state
#: The value of a belief its chain has no access to (``opening: unknown``): no belief at all.
UNKNOWN = None

#: A sighting of the object: ``(event index, moment)``, ordered as tuples are.  The moments of
#: one event, in time order (SEMANTICS.md, "Testimony"): the object in view as the event
#: begins, the event itself (a witnessed move, a peek, entering or waking into view), the
#: object in view as the event ends.
Sighting = tuple[int, int]
AS_IT_BEGINS, BY_THE_EVENT, AS_IT_ENDS = 0, 1, 2
#: the sighting of those who know the opening state: before every event
OPENING_SIGHTING: Sighting = (INITIAL, AS_IT_ENDS)

#: The deepest chain the oracle answers (SEMANTICS.md, "Input errors").
MAX_DEPTH = 16
#: The most belief chains one replay tracks when asked for every chain up to a depth.
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


@dataclass(frozen=True, slots=True)
class Belief:
    """One belief of one chain: a value (UNKNOWN: none) and the event that set it."""

    value: Value | None
    source: int = INITIAL
    via: str = "initial"


#: the belief of a chain with no access to the opening (``opening: unknown``)
_NO_BELIEF = Belief(UNKNOWN, INITIAL, "unknown")


@dataclass(frozen=True, slots=True)
class _Tracked:
    """A tracked chain with the agent sets its rules test."""

    chain: Chain
    first: str
    rest: frozenset[str]
    members: frozenset[str]


Rule = Callable[[_Tracked], bool]


@lru_cache(maxsize=65_536)
def _tracked_for(chain: Chain) -> _Tracked:
    """A chain with its agent sets (immutable, so shared by every state that tracks it)."""
    return _Tracked(chain, chain[0], frozenset(chain[1:]), frozenset(chain))


def _co_present(actual: frozenset[str], public: frozenset[str]) -> Rule:
    """X1 perceived the event; X2..Xk are taken by everyone to have perceived it."""
    return lambda t: t.first in actual and t.rest <= public


def _within(group: frozenset[str]) -> Rule:
    return lambda t: t.members <= group


@dataclass
class OracleState:
    """The whole explicit state after some prefix of a world's events."""

    world: World
    location: str
    present: set[str]
    asleep: set[str]
    properties: dict[str, Value]
    max_depth: int = 0
    observation_log: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    #: each agent's latest sighting of the object (None: never seen)
    last_seen: dict[str, Sighting | None] = field(default_factory=dict)
    location_beliefs: dict[Chain, Belief] = field(default_factory=dict)
    property_beliefs: dict[Chain, dict[str, Belief]] = field(default_factory=dict)
    #: indices of the whispers their listener took (SEMANTICS.md, "Testimony")
    taken_whispers: list[int] = field(default_factory=list)
    applied: int = 0
    _tracked: list[_Tracked] = field(default_factory=list, repr=False)
    #: the properties seeing the object shows (a fact of the world)
    _visible: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def initial(cls, world: World, max_depth: int = 4,
                only: Iterable[Chain] | None = None, *, checked: bool = False) -> OracleState:
        """The opening state, tracking every chain up to ``max_depth``, or only the chains
        in ``only`` and their prefixes (then ``max_depth`` is ignored). ``checked``: the
        chains of ``only`` were checked already (:func:`~cogrsi_lib.oracle.check_question`)."""
        if only is None:
            if max_depth < 1:
                raise ValueError("max_depth must be at least 1")
            needed = chain_count(len(world.agents), max_depth)
            if needed > MAX_CHAINS:
                raise OracleInputError(
                    f"depth {max_depth} over {len(world.agents)} agents needs {needed:.3g} "
                    f"belief chains; at most {MAX_CHAINS} are tracked", where="questions")
            tracked = chains(world.agents, max_depth)
        else:
            asked = set(only)
            if not checked:  # a chain's prefixes are legal when it is
                for c in asked:
                    _check_chain(world, c)
            wanted = {c[:j] for c in asked for j in range(1, len(c))} | asked
            tracked = sorted(wanted, key=lambda c: (len(c), c))
        props = world.initial_properties
        seen_opening = set(world.agents) if world.opening == "common_ground" else (
            set(world.present) - set(world.asleep))
        state = cls(
            world=world,
            location=world.location,
            present=set(world.present),
            asleep=set(world.asleep),
            properties=dict(props),
            max_depth=max((len(c) for c in tracked), default=0),
            observation_log={a: [] for a in world.agents},
            last_seen={a: (OPENING_SIGHTING if a in seen_opening else None)
                       for a in world.agents},
        )
        state._visible = tuple(p for p, _ in world.properties
                               if p not in world.hidden_properties)
        # beliefs are never changed in place, so chains that start alike share one
        known = Belief(world.location), {p: Belief(v) for p, v in world.properties}
        unknown = _NO_BELIEF, dict.fromkeys(props, _NO_BELIEF)
        for c in tracked:
            tr = _tracked_for(c)
            state._tracked.append(tr)
            loc, by_prop = known if tr.members <= seen_opening else unknown
            state.location_beliefs[c] = loc
            state.property_beliefs[c] = dict(by_prop)
        return state

    # -- who can act and who perceives -------------------------------------------------
    def awake_present(self) -> set[str]:
        return self.present - self.asleep

    def object_in_view(self) -> bool:
        """The object can be seen from the room when it lies in an open container."""
        return self.location in self.world.open_containers

    def public_perceivers(self, event: Event) -> frozenset[str]:
        """Who everyone takes to have perceived ``event`` if it happens now."""
        if event.type == "whisper":
            return frozenset((event.actor, event.listener))  # type: ignore[arg-type]
        if event.type == "peek":
            return frozenset((event.actor,))
        return frozenset(self.awake_present() | {event.actor})

    def perceivers(self, event: Event) -> frozenset[str]:
        """Who actually perceives ``event`` if it happens now (before its effects)."""
        public = self.public_perceivers(event)
        return (public - set(event.missed_by)) | set(event.hidden_observers)

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
            if w.visibility[prop] != event.visible:  # type: ignore[index]
                kind = "visible" if w.visibility[prop] else "hidden"  # type: ignore[index]
                raise OracleInputError(f"{prop} is {kind}; a property keeps its visibility",
                                       index)
        for who in event.hidden_observers:
            if who not in w.agents:
                raise OracleInputError(f"unknown hidden observer {who!r}", index)
            if who in self.present:
                raise OracleInputError(
                    f"{who} is in the {w.room}; a hidden observer watches from outside", index)
        for who in event.missed_by:
            if who not in w.agents:
                raise OracleInputError(f"unknown agent {who!r} in missed_by", index)
            if who == a or who not in self.present or who in self.asleep:
                raise OracleInputError(
                    f"{who} cannot miss it: only a present, awake onlooker can", index)

    # -- effects -----------------------------------------------------------------------
    def apply(self, event: Event, index: int | None = None) -> frozenset[str]:
        """Check and apply one event; returns who actually perceived it."""
        index = self.applied if index is None else index
        self.check(event, index)
        public = self.public_perceivers(event)
        who = ((public - set(event.missed_by)) | set(event.hidden_observers)
               if event.missed_by or event.hidden_observers else public)
        for agent in who:
            self.observation_log[agent].append((index, event.type))
        self._refresh_sight((index, AS_IT_BEGINS))  # the object in view is seen up to now
        t = event.type
        if t == "leave":
            self.present.discard(event.actor)
        elif t == "enter":
            self.present.add(event.actor)
            self._join_view(event.actor, index)
        elif t == "sleep":
            self.asleep.add(event.actor)
        elif t == "wake":
            self.asleep.discard(event.actor)
            self._join_view(event.actor, index)
        elif t == "move":
            self.location = event.to  # type: ignore[assignment]
            rule = _co_present(who, public)
            self._write(rule, self._sight(), index, "move")
            self._saw(who, (index, BY_THE_EVENT))
            self._view_for_the_rest(rule, self._sight(), index)
        elif t == "peek":
            self._write(lambda tr: tr.chain == (event.actor,), self._sight(), index, "peek")
            self._saw({event.actor}, (index, BY_THE_EVENT))
        elif t == "whisper":
            if self._believed(event):
                self.taken_whispers.append(index)
                s, lis = event.actor, event.listener
                told = frozenset((s, lis))
                self._write(lambda tr: tr.members <= told and tr.chain != (s,),
                            {"location": event.location}, index, "whisper")  # type: ignore[dict-item]
        elif t == "change":
            prop = event.property
            self.properties[prop] = event.value  # type: ignore[index]
            rule = _co_present(who, public)
            self._write(rule, {prop: event.value}, index, "change")  # type: ignore[dict-item]
            if event.visible:
                self._view_for_the_rest(rule, {prop: event.value}, index)  # type: ignore[dict-item]
        self._refresh_sight((index, AS_IT_ENDS))
        self.applied += 1
        return who

    def _sight(self) -> dict[str, Value]:
        """What seeing the object shows: its location and every visible property."""
        out: dict[str, Value] = {"location": self.location}
        for p in self._visible:
            out[p] = self.properties[p]
        return out

    def _write(self, rule: Rule, values: dict[str, Value], index: int, via: str) -> None:
        beliefs = {key: Belief(value, index, via) for key, value in values.items()}
        location = beliefs.pop("location", None)
        for tr in self._tracked:
            if rule(tr):
                if location is not None:
                    self.location_beliefs[tr.chain] = location
                if beliefs:
                    self.property_beliefs[tr.chain].update(beliefs)

    def _saw(self, agents: Iterable[str], when: Sighting) -> None:
        for a in agents:
            self.last_seen[a] = when

    def _refresh_sight(self, when: Sighting) -> None:
        """The object in view is seen by every present, awake agent."""
        if self.object_in_view():
            self._saw(self.awake_present(), when)

    def _view_for_the_rest(self, done: Rule, values: dict[str, Value], index: int) -> None:
        """The object lies in view: what it shows is common ground among the agents present
        and awake, also for those who missed the event (the chains ``done`` did not set)."""
        if not self.object_in_view():
            return
        group = frozenset(self.awake_present())
        inside = _within(group)
        self._write(lambda tr: inside(tr) and not done(tr), values, index, "view")
        for a in group:
            if not self.observation_log[a] or self.observation_log[a][-1][0] != index:
                self.observation_log[a].append((index, "view"))

    def _join_view(self, agent: str, index: int) -> None:
        """An agent who enters or wakes while the object is in view joins its common ground."""
        if not self.object_in_view():
            return
        group = frozenset(self.awake_present())
        self.observation_log[agent].append((index, "view"))
        self._write(lambda tr: agent in tr.members and tr.members <= group,
                    self._sight(), index, "view")
        self._saw({agent}, (index, BY_THE_EVENT))

    def _believed(self, event: Event) -> bool:
        """Does the listener take the whisper (SEMANTICS.md, "Testimony")?"""
        if self.object_in_view():
            return False  # both can see the object: a claim never beats plain sight
        if event.actor in self.world.known_liars:
            return False
        if self.world.testimony == "fresher_access":
            spoke, heard = self.last_seen[event.actor], self.last_seen[event.listener]  # type: ignore[index]
            return spoke is not None and (heard is None or spoke > heard)
        return True

    # -- reading -----------------------------------------------------------------------
    def belief(self, chain: Chain, kind: str, prop: str | None = None) -> Belief:
        """The belief of ``chain`` (reality for the empty chain)."""
        if not chain:
            return Belief(self.location if kind == "location" else self.properties[prop])  # type: ignore[index]
        if chain not in self.location_beliefs:
            raise KeyError(f"chain {list(chain)} is not tracked by this state")
        if kind == "location":
            return self.location_beliefs[chain]
        return self.property_beliefs[chain][prop]  # type: ignore[index]


def _check_chain(world: World, chain: Chain) -> None:
    if len(chain) > MAX_DEPTH:
        raise OracleInputError(
            f"a chain of depth {len(chain)} is deeper than the maximum, {MAX_DEPTH}",
            where="questions")
    for a in chain:
        if a not in world.agents:
            raise OracleInputError(f"unknown agent {a!r} in chain", where="questions")
    for a, b in zip(chain, chain[1:], strict=False):
        if a == b:
            raise OracleInputError(f"chain repeats {a} twice in a row", where="questions")


def replay(world: World, max_depth: int = 4, only: Iterable[Chain] | None = None, *,
           checked: bool = False) -> OracleState:
    """Apply every event of ``world`` in order; raises on the first illegal one
    (``checked``: as :meth:`OracleState.initial`)."""
    state = OracleState.initial(world, max_depth, only, checked=checked)
    for i, event in enumerate(world.events):
        state.apply(event, i)
    return state


def trace(world: World, max_depth: int = 4,
          only: Iterable[Chain] | None = None) -> Iterator[tuple[int, frozenset[str], OracleState]]:
    """Yield ``(event index, perceivers, state after it)``; the state object is reused."""
    state = OracleState.initial(world, max_depth, only)
    for i, event in enumerate(world.events):
        who = state.apply(event, i)
        yield i, who, state

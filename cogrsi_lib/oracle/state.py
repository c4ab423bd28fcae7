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

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product

from cogrsi_lib.oracle.records import record
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


@record
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
    depth: int


Rule = Callable[[_Tracked], bool]


@lru_cache(maxsize=65_536)
def _tracked_for(chain: Chain) -> _Tracked:
    """A chain with its agent sets (immutable, so shared by every state that tracks it)."""
    return _Tracked(chain, chain[0], frozenset(chain[1:]), frozenset(chain), len(chain))


#: how many groups of perceivers a :class:`ChainPlan` remembers
_MAX_GROUPS = 256


@dataclass(frozen=True, slots=True)
class ChainPlan:
    """What a replay tracks to answer a list of chains: those chains and their prefixes,
    shortest first; the agents they name; whether each is well formed (no deeper than
    :data:`MAX_DEPTH`, no agent twice in a row), so that a world need only be checked to
    name those agents."""

    tracked: tuple[_Tracked, ...]
    agents: frozenset[str]
    well_formed: bool
    #: the tracked chains themselves
    chains: tuple[Chain, ...]
    #: :meth:`perceived_by`'s answers so far
    _seen_by: dict[frozenset[str], tuple[Chain, ...]] = field(
        default_factory=dict, compare=False, hash=False, repr=False)

    def perceived_by(self, group: frozenset[str]) -> tuple[Chain, ...]:
        """The tracked chains whose agents all perceived an event that ``group`` perceived
        and is taken to have perceived (:func:`_co_present` with ``group`` as both sets);
        remembered, as the same groups recur event after event."""
        found = self._seen_by.get(group)
        if found is None:
            found = tuple(tr.chain for tr in self.tracked if tr.members <= group)
            if len(self._seen_by) < _MAX_GROUPS:
                self._seen_by[group] = found
        return found


@lru_cache(maxsize=4_096)
def chain_plan(asked: tuple[Chain, ...]) -> ChainPlan:
    """The :class:`ChainPlan` of ``asked`` (the same question lists recur across worlds of
    one cast, so this is cached)."""
    wanted = {c[:j] for c in asked for j in range(1, len(c))} | set(asked)
    tracked = tuple(_tracked_for(c) for c in sorted(wanted, key=lambda c: (len(c), c)))
    well_formed = all(chain_problem(c) is None for c in asked)
    return ChainPlan(tracked, frozenset(a for c in asked for a in c), well_formed,
                     tuple(tr.chain for tr in tracked))


def _co_present(actual: frozenset[str], public: frozenset[str]) -> Rule:
    """X1 perceived the event; X2..Xk are taken by everyone to have perceived it."""
    return lambda t: t.first in actual and t.rest <= public


def _within(group: frozenset[str]) -> Rule:
    return lambda t: t.members <= group


@dataclass(slots=True)
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
    _tracked: tuple[_Tracked, ...] = field(default=(), repr=False)
    #: the properties seeing the object shows (a fact of the world)
    _visible: tuple[str, ...] = field(default=(), repr=False)
    #: the plan of the tracked chains when they were asked for (None: every chain to a depth)
    _plan: ChainPlan | None = field(default=None, repr=False)

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
            tracked = tuple(_tracked_for(c) for c in chains(world.agents, max_depth))
            plan = None
        else:
            asked = only if isinstance(only, tuple) else tuple(only)
            if not checked:  # a chain's prefixes are legal when it is
                for c in set(asked):
                    _check_chain(world, c)
            plan = chain_plan(asked)
            tracked = plan.tracked
        props = world.initial_properties
        agents = world.agents
        known = Belief(world.location), {p: Belief(v) for p, v in world.properties}
        # beliefs are never changed in place (a write replaces a chain's property dict), so
        # chains that start alike share them
        keys = plan.chains if plan is not None else [tr.chain for tr in tracked]
        if world.opening == "common_ground":
            last_seen = dict.fromkeys(agents, OPENING_SIGHTING)
            location_beliefs = dict.fromkeys(keys, known[0])
            property_beliefs = dict.fromkeys(keys, known[1])
        else:
            seen = world.present - world.asleep
            last_seen = {a: (OPENING_SIGHTING if a in seen else None) for a in agents}
            unknown = _NO_BELIEF, dict.fromkeys(props, _NO_BELIEF)
            location_beliefs, property_beliefs = {}, {}
            for tr in tracked:
                location_beliefs[tr.chain], property_beliefs[tr.chain] = (
                    known if tr.members <= seen else unknown)
        visible = tuple([p for p, _ in world.properties if p not in world.hidden_properties]
                        if world.properties else ())
        return cls(world, world.location, set(world.present), set(world.asleep), props,
                   tracked[-1].depth if tracked else 0, {a: [] for a in agents}, last_seen,
                   location_beliefs, property_beliefs, [], 0, tracked, visible, plan)

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
        t, actor = event.type, event.actor
        if t == "whisper":
            public = frozenset((actor, event.listener))
        elif t == "peek":
            public = frozenset((actor,))
        elif not self.asleep and actor in self.present:
            public = frozenset(self.present)
        else:
            awake = self.present - self.asleep
            awake.add(actor)
            public = frozenset(awake)
        who = ((public - set(event.missed_by)) | set(event.hidden_observers)
               if event.missed_by or event.hidden_observers else public)
        log = self.observation_log
        for agent in who:
            log[agent].append((index, t))
        in_view = self.world.open_containers
        if self.location in in_view:  # the object in view is seen up to now
            self._saw(self.present - self.asleep, (index, AS_IT_BEGINS))
        if t == "move":
            to = self.location = event.to  # type: ignore[assignment]
            if self._visible:
                self._write(self._perceived(who, public), self._sight(), index, "move")
            else:  # the object shows only where it is: _write, inlined for the commonest event
                belief, beliefs = Belief(to, index, "move"), self.location_beliefs
                for chain in self._perceived(who, public):
                    beliefs[chain] = belief
            when, last_seen = (index, BY_THE_EVENT), self.last_seen
            for a in who:
                last_seen[a] = when
            if to in in_view:
                self._view_for_the_rest(_co_present(who, public), self._sight(), index)
        elif t == "leave":
            self.present.discard(actor)
        elif t == "enter":
            self.present.add(actor)
            self._join_view(actor, index)
        elif t == "whisper":
            if self._believed(event):
                self.taken_whispers.append(index)
                alone = (actor,)  # the speaker's own belief stays theirs
                self._write([c for c in self._perceived(public, public) if c != alone],
                            {"location": event.location}, index, "whisper")  # type: ignore[dict-item]
        elif t == "sleep":
            self.asleep.add(actor)
        elif t == "wake":
            self.asleep.discard(actor)
            self._join_view(actor, index)
        elif t == "peek":
            self._write(self._where(lambda tr: tr.chain == (actor,)), self._sight(), index,
                        "peek")
            self._saw({actor}, (index, BY_THE_EVENT))
        elif t == "change":
            prop = event.property
            self.properties[prop] = event.value  # type: ignore[index]
            values = {prop: event.value}
            self._write(self._perceived(who, public), values, index, "change")  # type: ignore[arg-type]
            if event.visible and self.location in in_view:
                self._view_for_the_rest(_co_present(who, public), values, index)  # type: ignore[arg-type]
        if self.location in in_view:
            self._saw(self.present - self.asleep, (index, AS_IT_ENDS))
        self.applied += 1
        return who

    def _sight(self) -> dict[str, Value]:
        """What seeing the object shows: its location and every visible property."""
        out: dict[str, Value] = {"location": self.location}
        for p in self._visible:
            out[p] = self.properties[p]
        return out

    def _where(self, rule: Rule) -> list[Chain]:
        """The tracked chains ``rule`` holds for."""
        return [tr.chain for tr in self._tracked if rule(tr)]

    def _perceived(self, actual: frozenset[str], public: frozenset[str]) -> Sequence[Chain]:
        """The tracked chains :func:`_co_present`'s rule holds for: through the plan's
        remembered groups when everyone who perceived the event is taken to have."""
        if actual is public and self._plan is not None:
            return self._plan.perceived_by(public)
        return [tr.chain for tr in self._tracked if tr.first in actual and tr.rest <= public]

    def _write(self, chains: Iterable[Chain], values: dict[str, Value], index: int,
               via: str) -> None:
        """Set ``values`` (from event ``index``, by ``via``) as the belief of each of
        ``chains``. A chain's property beliefs are replaced, never changed in place: chains
        share them until one is written."""
        location = Belief(values["location"], index, via) if "location" in values else None
        beliefs = {key: Belief(value, index, via) for key, value in values.items()
                   if key != "location"}
        lb, pb = self.location_beliefs, self.property_beliefs
        if not beliefs:  # where the object is, and nothing else
            if location is not None:
                for chain in chains:
                    lb[chain] = location
            return
        for chain in chains:
            if location is not None:
                lb[chain] = location
            pb[chain] = {**pb[chain], **beliefs}

    def _saw(self, agents: Iterable[str], when: Sighting) -> None:
        for a in agents:
            self.last_seen[a] = when

    def _view_for_the_rest(self, done: Rule, values: dict[str, Value], index: int) -> None:
        """The object lies in view: what it shows is common ground among the agents present
        and awake, also for those who missed the event (the chains ``done`` did not set)."""
        if not self.object_in_view():
            return
        group = frozenset(self.awake_present())
        inside = _within(group)
        self._write(self._where(lambda tr: inside(tr) and not done(tr)), values, index, "view")
        for a in group:
            if not self.observation_log[a] or self.observation_log[a][-1][0] != index:
                self.observation_log[a].append((index, "view"))

    def _join_view(self, agent: str, index: int) -> None:
        """An agent who enters or wakes while the object is in view joins its common ground."""
        if not self.object_in_view():
            return
        group = frozenset(self.awake_present())
        self.observation_log[agent].append((index, "view"))
        self._write(self._where(lambda tr: agent in tr.members and tr.members <= group),
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


def chain_problem(chain: Chain, agents: frozenset[str] | None = None) -> str | None:
    """Why ``chain`` cannot be asked (SEMANTICS.md, "Input errors"): deeper than
    :data:`MAX_DEPTH`, naming an agent not among ``agents`` (when given), or naming an agent
    twice in a row; None when it can."""
    if len(chain) > MAX_DEPTH:
        return f"a chain of depth {len(chain)} is deeper than the maximum, {MAX_DEPTH}"
    if agents is not None:
        for a in chain:
            if a not in agents:
                return f"unknown agent {a!r} in chain"
    for a, b in zip(chain, chain[1:], strict=False):
        if a == b:
            return f"chain repeats {a} twice in a row"
    return None


def _check_chain(world: World, chain: Chain) -> None:
    problem = chain_problem(chain, world.agents_set)
    if problem:
        raise OracleInputError(problem, where="questions")


def replay(world: World, max_depth: int = 4, only: Iterable[Chain] | None = None, *,
           checked: bool = False) -> OracleState:
    """Apply every event of ``world`` in order; raises on the first illegal one
    (``checked``: as :meth:`OracleState.initial`)."""
    state = OracleState.initial(world, max_depth, only, checked=checked)
    apply = state.apply
    for i, event in enumerate(world.events):
        apply(event, i)
    return state


def trace(world: World, max_depth: int = 4,
          only: Iterable[Chain] | None = None) -> Iterator[tuple[int, frozenset[str], OracleState]]:
    """Yield ``(event index, perceivers, state after it)``; the state object is reused."""
    state = OracleState.initial(world, max_depth, only)
    for i, event in enumerate(world.events):
        who = state.apply(event, i)
        yield i, who, state

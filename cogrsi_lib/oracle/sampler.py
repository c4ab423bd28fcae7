"""Seeded sampler of legal worlds and their questions (plan §5.5; CogRSI App. C, J105).

Worlds grow event by event from the moves that are legal in the current state, so
every move changes reality and nobody absent or asleep acts.  ``sample_worlds``
and ``question_table`` give the parquet-ready records of the ``oracle_worlds`` stage.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import polars as pl

from cogrsi_lib.oracle.answer import answer
from cogrsi_lib.oracle.lies import KNOWN_LIAR, REVEALED, UNLABELLED, liars, lie_condition
from cogrsi_lib.oracle.render import CHAT, render, render_question
from cogrsi_lib.oracle.state import OracleState, chains
from cogrsi_lib.oracle.world import Event, Question, Value, World

AGENT_NAMES = ("Anne", "Sally", "Bob", "Carla", "Dev", "Emma", "Felix", "Grace")
CONTAINER_NAMES = ("basket", "box", "drawer", "tray", "cupboard", "bag")
OBJECT_NAMES = ("marble", "key", "ring", "ball", "coin")
ROOM_NAMES = ("kitchen", "study", "garage", "hall")
# name -> (visible?, values): a visible property can be seen by looking, a hidden one cannot.
PROPERTIES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "color": (True, ("red", "blue", "green", "yellow")),
    "temperature": (False, ("cold", "warm", "hot")),
}

# Relative weight of each event type among the legal ones.
DEFAULT_WEIGHTS: dict[str, float] = {
    "move": 4.0, "leave": 2.0, "enter": 2.0, "sleep": 0.7, "wake": 1.0,
    "whisper": 1.2, "peek": 0.8, "change": 1.2,
}


@dataclass(frozen=True)
class SamplerConfig:
    """Knobs of the world sampler (``params.yaml: oracle_worlds``)."""

    min_agents: int = 2
    max_agents: int = 3
    n_containers: int = 3
    min_events: int = 4
    max_events: int = 10
    p_open_container: float = 0.2
    p_property: float = 1.0
    p_truthful_whisper: float = 0.5
    #: chance that a move or change is secretly watched by an absent agent (if any)
    p_hidden_observer: float = 0.1
    #: chance that a present, awake onlooker misses a move or change unnoticed
    p_missed: float = 0.1
    #: at most this many events per world secretly watched or missed (None: no cap)
    max_asymmetric: int | None = None
    testimony: str = "latest"
    opening: str = "common_ground"
    #: the lie conditions (plan §5.4) a world with a lie is told under, with their weights
    lie_conditions: tuple[tuple[str, float], ...] = (
        (UNLABELLED, 1.0), (KNOWN_LIAR, 1.0), (REVEALED, 1.0))
    weights: tuple[tuple[str, float], ...] = tuple(DEFAULT_WEIGHTS.items())
    agent_names: tuple[str, ...] = AGENT_NAMES
    container_names: tuple[str, ...] = CONTAINER_NAMES
    object_names: tuple[str, ...] = OBJECT_NAMES
    room_names: tuple[str, ...] = ROOM_NAMES

    def __post_init__(self) -> None:
        if not 1 <= self.min_agents <= self.max_agents <= len(self.agent_names):
            raise ValueError("need 1 <= min_agents <= max_agents <= number of agent names")
        if not 2 <= self.n_containers <= len(self.container_names):
            raise ValueError("need 2 <= n_containers <= number of container names")
        if not 0 <= self.min_events <= self.max_events:
            raise ValueError("need 0 <= min_events <= max_events")
        for name in ("p_truthful_whisper", "p_hidden_observer", "p_missed"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1]")
        if self.max_asymmetric is not None and self.max_asymmetric < 0:
            raise ValueError("max_asymmetric must be None or at least 0")
        unknown = [c for c, _ in self.lie_conditions if c not in (UNLABELLED, KNOWN_LIAR, REVEALED)]
        if unknown:
            raise ValueError(f"unknown lie condition(s) {unknown}")


def legal_events(state: OracleState) -> list[Event]:
    """Every event that is legal in ``state`` (moves always change reality)."""
    w = state.world
    awake = [a for a in w.agents if a in state.present and a not in state.asleep]
    out: list[Event] = []
    out += [Event("leave", a) for a in awake]
    out += [Event("enter", a) for a in w.agents if a not in state.present]
    out += [Event("sleep", a) for a in awake]
    out += [Event("wake", a) for a in w.agents if a in state.asleep]
    out += [Event("move", a, to=c) for a in awake for c in w.containers if c != state.location]
    out += [Event("peek", a) for a in awake]
    out += [
        Event("whisper", s, listener=lis, location=c)
        for s in awake for lis in awake if lis != s for c in w.containers
    ]
    for prop, current in state.properties.items():
        visible = PROPERTIES.get(prop, (True, ()))[0]
        for value in PROPERTIES.get(prop, (True, ()))[1]:
            if value != current:
                out += [Event("change", a, property=prop, value=value, visible=visible)
                        for a in awake]
    return out


def sample_world(rng: random.Random, cfg: SamplerConfig = SamplerConfig()) -> World:
    """One legal world drawn event by event; the event type first, then its arguments."""
    n_agents = rng.randint(cfg.min_agents, cfg.max_agents)
    agents = tuple(rng.sample(cfg.agent_names, n_agents))
    containers = tuple(rng.sample(cfg.container_names, cfg.n_containers))
    props: tuple[tuple[str, Value], ...] = ()
    if rng.random() < cfg.p_property:
        prop = rng.choice(sorted(PROPERTIES))
        props = ((prop, rng.choice(PROPERTIES[prop][1])),)
    present = frozenset(a for a in agents if rng.random() < 0.85) or frozenset({agents[0]})
    base = World(
        agents=agents,
        containers=containers,
        object=rng.choice(cfg.object_names),
        location=rng.choice(containers),
        present=present,
        properties=props,
        open_containers=frozenset(c for c in containers if rng.random() < cfg.p_open_container),
        room=rng.choice(cfg.room_names),
        hidden_properties=frozenset(p for p, _ in props if not PROPERTIES[p][0]),
        testimony=cfg.testimony,
        opening=cfg.opening,
    )
    state = OracleState.initial(base, max_depth=1)
    weights = dict(cfg.weights)
    events: list[Event] = []
    for i in range(rng.randint(cfg.min_events, cfg.max_events)):
        options = legal_events(state)
        by_type: dict[str, list[Event]] = {}
        for e in options:
            by_type.setdefault(e.type, []).append(e)
        types = [t for t in by_type if weights.get(t, 0) > 0]
        if not types:
            break
        etype = rng.choices(types, [weights[t] for t in types])[0]
        event = rng.choice(by_type[etype])
        if etype == "whisper":
            event = replace(event, location=_whispered(state, event, rng, cfg))
        if etype in ("move", "change") and (
                cfg.max_asymmetric is None
                or sum(bool(e.hidden_observers or e.missed_by) for e in events)
                < cfg.max_asymmetric):
            event = _watched(state, event, rng, cfg)
        state.apply(event, i)
        events.append(event)
    world = replace(base, events=tuple(events))
    told = liars(world) if cfg.lie_conditions else frozenset()
    if told:
        names, weights_ = zip(*cfg.lie_conditions, strict=True)
        condition = rng.choices(names, weights_)[0]
        if condition == KNOWN_LIAR:
            world = known_liar_world(world)
        elif condition == REVEALED:
            world = replace(world, reveal_lies=True)
    return world


def known_liar_world(world: World) -> World:
    """``world`` told under the known-liar condition: every agent who lies is a known liar.

    Nobody takes a known liar's word, so a whisper that passed on their claim can become a
    lie (Sally repeats Anne's ignored claim, which she no longer believes); its speaker is
    made a known liar too, until every lie is told by a known liar.  If no lie is left, the
    world is returned as given (its lies unlabelled), so the sampler draws no mixed world
    and no known liar in a world without lies (SEMANTICS.md, "Lie conditions")."""
    known = liars(world)
    while True:
        told = replace(world, known_liars=known)
        more = liars(told)
        if not more:
            return world
        if more <= known:
            return told
        known |= more


def _watched(state: OracleState, event: Event, rng: random.Random, cfg: SamplerConfig) -> Event:
    """Perhaps a secret observer from outside, perhaps an onlooker who misses it unnoticed.
    A probability of 0 draws nothing, so such a config samples the same worlds as before."""
    absent = [a for a in state.world.agents if a not in state.present]
    onlookers = sorted(state.awake_present() - {event.actor})
    if cfg.p_hidden_observer and absent and rng.random() < cfg.p_hidden_observer:
        event = replace(event, hidden_observers=(rng.choice(absent),))
    if cfg.p_missed and onlookers and rng.random() < cfg.p_missed:
        event = replace(event, missed_by=(rng.choice(onlookers),))
    return event


def _whispered(state: OracleState, event: Event, rng: random.Random, cfg: SamplerConfig) -> str:
    """A truthful whisper says what the speaker believes; a false one any other container."""
    belief = state.belief((event.actor,), "location").value
    if rng.random() < cfg.p_truthful_whisper and belief is not None:
        return str(belief)
    return rng.choice([c for c in state.world.containers if c != belief])


def sample_worlds(n: int, seed: int, cfg: SamplerConfig = SamplerConfig()) -> Iterator[World]:
    """``n`` worlds from one seed; the same seed always gives the same worlds."""
    rng = random.Random(seed)
    for _ in range(n):
        yield sample_world(rng, cfg)


def all_questions(world: World, max_depth: int) -> list[Question]:
    """Reality plus every chain up to ``max_depth``, for location and each property."""
    kinds: list[tuple[str, str | None]] = [("location", None)]
    kinds += [("property", p) for p, _ in world.properties]
    out = []
    for kind, prop in kinds:
        out.append(Question(kind, (), prop))
        out += [Question(kind, c, prop) for c in chains(world.agents, max_depth)]
    return out


def question_records(world: World, world_id: int, max_depth: int) -> list[dict]:
    """One record per question: the gold answer and the access facts behind it."""
    state = OracleState.initial(world, max_depth)
    for i, e in enumerate(world.events):
        state.apply(e, i)
    rows = []
    for q in all_questions(world, max_depth):
        a = answer(state, q)
        perceived = _chain_perceived(state, q, a.source)
        rows.append({
            "world_id": world_id,
            "kind": q.kind,
            "property": q.property,
            "chain": list(q.chain),
            "depth": q.depth,
            "answer": str(a.value) if a.known else None,
            "reality": str(a.reality),
            "false_belief": a.false_belief,
            "source_event": a.source,
            "via": a.via,
            "chain_saw_last_change": perceived,
            "question": render_question(world, q),
            "testimony": world.testimony,
            "opening": world.opening,
        })
    return rows


def _chain_perceived(state: OracleState, q: Question, source: int) -> bool:
    """Did every agent of the chain perceive the last event that changed the asked thing?"""
    last = -1
    for i, e in enumerate(state.world.events):
        if (q.kind == "location" and e.type == "move") or (
            q.kind == "property" and e.type == "change" and e.property == q.property
        ):
            last = i
    if last < 0:
        return True
    logs = state.observation_log
    return all(any(idx == last and what != "view" for idx, what in logs[a]) for a in q.chain)


def world_table(worlds: Sequence[World]) -> pl.DataFrame:
    """One row per world: sizes, the world's JSON (what ``cogrsi oracle answer`` reads) and its
    story rendered as a numbered narrative and as a group chat."""
    return pl.DataFrame({
        "world_id": list(range(len(worlds))),
        "n_agents": [len(w.agents) for w in worlds],
        "n_containers": [len(w.containers) for w in worlds],
        "n_events": [len(w.events) for w in worlds],
        "event_types": [[e.type for e in w.events] for w in worlds],
        "lie_condition": [lie_condition(w) for w in worlds],
        "testimony": [w.testimony for w in worlds],
        "opening": [w.opening for w in worlds],
        "world_json": [w.to_json() for w in worlds],
        "story": [render(w).text for w in worlds],
        "chat": [render(w, CHAT).text for w in worlds],
    })


def question_table(worlds: Sequence[World], max_depth: int) -> pl.DataFrame:
    """Every question of every world with gold answers and access facts."""
    rows = [r for i, w in enumerate(worlds) for r in question_records(w, i, max_depth)]
    schema = {
        "world_id": pl.Int64, "kind": pl.Utf8, "property": pl.Utf8, "chain": pl.List(pl.Utf8),
        "depth": pl.Int64, "answer": pl.Utf8, "reality": pl.Utf8, "false_belief": pl.Boolean,
        "source_event": pl.Int64, "via": pl.Utf8, "chain_saw_last_change": pl.Boolean,
        "question": pl.Utf8, "testimony": pl.Utf8, "opening": pl.Utf8,
    }
    df = pl.DataFrame(rows, schema=schema)
    return df.with_row_index("question_id")

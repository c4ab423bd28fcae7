"""Worlds, events and questions of the access oracle, parsed strictly from JSON.

A world is one room with agents, containers and one object with properties
(CogRSI §4.3, App. C "Semantic audit (J105)").  Parsing checks shape and names
only; whether each event is legal in its state is checked by
:mod:`cogrsi_lib.oracle.state` while the world is replayed.
"""

from __future__ import annotations

import builtins
import json
import math
from dataclasses import field
from functools import cached_property
from pathlib import Path
from typing import Any

from cogrsi_lib.oracle.records import record

EVENT_TYPES = ("leave", "enter", "sleep", "wake", "move", "whisper", "peek", "change")
QUESTION_KINDS = ("location", "property")
#: How a listener weighs a whisper against what they saw (SEMANTICS.md, "Testimony").
TESTIMONY_POLICIES = ("latest", "fresher_access")
#: What agents believe before the first event (SEMANTICS.md, "Opening").
OPENING_POLICIES = ("common_ground", "unknown")
#: Events that may be watched secretly or missed unnoticed (SEMANTICS.md, "Perception").
WATCHED_EVENTS = ("move", "change")
Value = str | int | float | bool

# Fields each event type takes in JSON, beyond "type" (whisper's actor is "speaker").
_EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "leave": ("agent",),
    "enter": ("agent",),
    "sleep": ("agent",),
    "wake": ("agent",),
    "move": ("agent", "to"),
    "whisper": ("speaker", "listener", "location"),
    "peek": ("agent",),
    "change": ("agent", "property", "value", "visible"),
}
# Optional fields: who secretly watched a move or change, and who missed it unnoticed.
_OPTIONAL_FIELDS = ("hidden_observers", "missed_by")
# The keys a world's JSON and its "initial" object may have.
_WORLD_KEYS = frozenset({
    "agents", "containers", "object", "initial", "events", "questions", "open_containers",
    "room", "hidden_properties", "known_liars", "reveal_lies", "testimony", "opening"})
_WORLD_REQUIRED = frozenset({"agents", "containers", "object", "initial"})
_INITIAL_KEYS = frozenset({"location", "present", "asleep", "properties"})
# Per event type, the keys its JSON must have and the keys it may have.
_REQUIRED = {t: frozenset(f) for t, f in _EVENT_FIELDS.items()}
_ALLOWED = {t: frozenset(f) | {"type"} | frozenset(
    _OPTIONAL_FIELDS if t in WATCHED_EVENTS else ()) for t, f in _EVENT_FIELDS.items()}


class OracleInputError(ValueError):
    """A world, event or question the oracle refuses; names the event index when there is one."""

    def __init__(self, problem: str, event_index: int | None = None, where: str | None = None):
        self.problem = problem
        self.event_index = event_index
        self.where = where
        prefix = ""
        if event_index is not None:
            prefix = f"event {event_index}: "
        elif where is not None:
            prefix = f"{where}: "
        super().__init__(prefix + problem)


@record
class Event:
    """One event.  ``actor`` is the agent who acts (the speaker of a whisper).

    ``hidden_observers`` secretly watch a move or change (nobody knows they saw it);
    ``missed_by`` are present, awake agents who miss it while everyone thinks they saw it.
    """

    type: str
    actor: str
    to: str | None = None
    listener: str | None = None
    location: str | None = None
    property: str | None = None
    value: Value | None = None
    visible: bool | None = None
    hidden_observers: tuple[str, ...] = ()
    missed_by: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as ``cogrsi oracle answer`` reads it."""
        out: dict[str, Any] = {"type": self.type}
        for name in _EVENT_FIELDS[self.type]:
            out[name] = self.actor if name in ("agent", "speaker") else getattr(self, name)
        for name in _OPTIONAL_FIELDS:
            if getattr(self, name):
                out[name] = list(getattr(self, name))
        return out

    @classmethod
    def from_dict(cls, raw: Any, index: int) -> Event:
        if not isinstance(raw, dict):
            raise OracleInputError("an event must be a JSON object", index)
        etype = raw.get("type")
        spec = _SPECS.get(etype) if isinstance(etype, str) else None
        if spec is None:
            raise OracleInputError(
                f"unknown event type {etype!r}; expected one of {EVENT_TYPES}", index
            )
        wanted, required, allowed, actor_key = spec
        keys = raw.keys()
        if not required <= keys:
            missing = [k for k in wanted if k not in raw]
            raise OracleInputError(f"{etype} event lacks field(s) {missing}", index)
        hidden: tuple[str, ...] = ()
        missed: tuple[str, ...] = ()
        if len(keys) > len(wanted) + 1:  # more than "type" and the required fields
            if not keys <= allowed:
                extra = sorted(set(keys) - allowed)
                raise OracleInputError(f"{etype} event has unknown field(s) {extra}", index)
            if "hidden_observers" in raw:
                hidden = _agent_list(raw["hidden_observers"], "hidden_observers", index)
            if "missed_by" in raw:
                missed = _agent_list(raw["missed_by"], "missed_by", index)
        to = listener = location = prop = value = visible = None
        if etype == "move":
            to = _string(raw, "to", index)
        elif etype == "whisper":
            listener = _string(raw, "listener", index)
            location = _string(raw, "location", index)
        elif etype == "change":
            prop = _string(raw, "property", index)
        actor = raw[actor_key]
        if not isinstance(actor, str):
            raise OracleInputError("the acting agent must be a string", index)
        if etype == "change":
            visible, value = raw["visible"], raw["value"]
            if not isinstance(visible, bool):
                raise OracleInputError("field 'visible' must be true or false", index)
            if not _is_value(value):
                raise OracleInputError("field 'value' must be a string, number or boolean", index)
        return cls(etype, actor, to, listener, location, prop, value, visible, hidden, missed)


def _string(raw: dict[str, Any], name: str, index: int) -> str:
    """An event's field that must be a string."""
    value = raw[name]
    if not isinstance(value, str):
        raise OracleInputError(f"field {name!r} must be a string", index)
    return value


def _agent_list(names: Any, name: str, index: int) -> tuple[str, ...]:
    """An event's optional list of agent names, checked."""
    if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
        raise OracleInputError(f"field {name!r} must be a list of agent names", index)
    if len(set(names)) != len(names):
        raise OracleInputError(f"field {name!r} names an agent twice", index)
    return tuple(names)


#: per event type: its JSON fields, the required and allowed keys, the actor's key
_SPECS = {t: (f, _REQUIRED[t], _ALLOWED[t], "speaker" if t == "whisper" else "agent")
          for t, f in _EVENT_FIELDS.items()}


@record
class Question:
    """``chain`` = [X1, ..., Xk]: "X1 thinks X2 thinks ... "; the empty chain asks about reality."""

    kind: str
    chain: tuple[str, ...] = ()
    property: str | None = None

    @builtins.property
    def depth(self) -> int:
        return len(self.chain)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "chain": list(self.chain)}
        if self.kind == "property":
            out["property"] = self.property
        return out

    @classmethod
    def from_dict(cls, raw: Any, index: int) -> Question:
        where = f"question {index}"
        if not isinstance(raw, dict):
            raise OracleInputError("a question must be a JSON object", where=where)
        kind = raw.get("kind")
        if kind not in QUESTION_KINDS:
            raise OracleInputError(
                f"unknown kind {kind!r}; expected one of {QUESTION_KINDS}", where=where
            )
        allowed = {"kind", "chain"} | ({"property"} if kind == "property" else set())
        extra = sorted(set(raw) - allowed)
        if extra:
            raise OracleInputError(f"unknown field(s) {extra}", where=where)
        chain = raw.get("chain", [])
        if not isinstance(chain, list) or not all(isinstance(a, str) for a in chain):
            raise OracleInputError("'chain' must be a list of agent names", where=where)
        prop = raw.get("property")
        if kind == "property" and not isinstance(prop, str):
            raise OracleInputError("a property question needs a 'property' name", where=where)
        return cls(kind=kind, chain=tuple(chain), property=prop)


@record(slots=False)
class World:
    """A room, its agents and containers, one object, the initial state and the events."""

    agents: tuple[str, ...]
    containers: tuple[str, ...]
    object: str
    location: str
    present: frozenset[str]
    asleep: frozenset[str] = frozenset()
    properties: tuple[tuple[str, Value], ...] = ()
    events: tuple[Event, ...] = ()
    open_containers: frozenset[str] = frozenset()
    room: str = "room"
    questions: tuple[Question, ...] = field(default=(), compare=False)
    hidden_properties: frozenset[str] = frozenset()
    known_liars: frozenset[str] = frozenset()
    reveal_lies: bool = False
    testimony: str = "latest"
    opening: str = "common_ground"

    def __post_init__(self) -> None:
        # A property first changed as hidden is hidden for the whole story, so a prefix of
        # the events (``replace(world, events=...)``) keeps its visibility.
        first: dict[str, bool] = {}
        for e in self.events:
            if e.type == "change" and isinstance(e.property, str):
                first.setdefault(e.property, bool(e.visible))
        hidden = {p for p, visible in first.items() if not visible}
        if not hidden <= self.hidden_properties:
            object.__setattr__(self, "hidden_properties", self.hidden_properties | hidden)
        self.__dict__["agents_set"] = frozenset(self.agents)  # what agents_set caches
        self._check()

    @property
    def visibility(self) -> dict[str, bool]:
        """Each property's visibility (a fact of the world, not of a prefix of its events)."""
        return {p: p not in self.hidden_properties for p, _ in self.properties}

    def _check(self) -> None:
        where = "world"
        if not self.agents:
            raise OracleInputError("a world needs at least one agent", where=where)
        agents, containers = self.agents_set, frozenset(self.containers)
        for label, names, unique in (("agent", self.agents, agents),
                                     ("container", self.containers, containers)):
            if len(unique) != len(names):
                raise OracleInputError(f"duplicate {label} names in {list(names)}", where=where)
        if not agents.isdisjoint(containers):
            raise OracleInputError("a name is used both as an agent and a container", where=where)
        if self.location not in containers:
            raise OracleInputError(
                f"initial location {self.location!r} is not a container", where="initial"
            )
        if not (self.present <= agents and self.asleep <= agents):
            for name in self.present | self.asleep:
                if name not in agents:
                    raise OracleInputError(f"unknown agent {name!r}", where="initial")
        if not self.asleep <= self.present:
            raise OracleInputError("an asleep agent must be present in the room", where="initial")
        for name in self.open_containers:
            if name not in self.containers:
                raise OracleInputError(f"open container {name!r} is not a container", where=where)
        names = [p for p, _ in self.properties]
        if len(set(names)) != len(names):
            raise OracleInputError("duplicate property names", where="initial")
        for name in self.hidden_properties:
            if name not in names:
                raise OracleInputError(f"hidden property {name!r} is not a property", where=where)
        for name in self.known_liars:
            if name not in self.agents:
                raise OracleInputError(f"known liar {name!r} is not an agent", where=where)
        if self.testimony not in TESTIMONY_POLICIES:
            raise OracleInputError(
                f"testimony {self.testimony!r}; expected one of {TESTIMONY_POLICIES}", where=where)
        if self.opening not in OPENING_POLICIES:
            raise OracleInputError(
                f"opening {self.opening!r}; expected one of {OPENING_POLICIES}", where=where)

    @cached_property
    def agents_set(self) -> frozenset[str]:
        """The agents' names, for membership tests."""
        return frozenset(self.agents)

    @property
    def initial_properties(self) -> dict[str, Value]:
        return dict(self.properties)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form read by ``cogrsi oracle answer`` (questions included if any)."""
        out: dict[str, Any] = {
            "agents": list(self.agents),
            "containers": list(self.containers),
            "object": self.object,
            "initial": {
                "location": self.location,
                "present": [a for a in self.agents if a in self.present],
                "asleep": [a for a in self.agents if a in self.asleep],
                "properties": dict(self.properties),
            },
            "events": [e.to_dict() for e in self.events],
        }
        if self.open_containers:
            out["open_containers"] = [c for c in self.containers if c in self.open_containers]
        if self.room != "room":
            out["room"] = self.room
        if self.hidden_properties:
            out["hidden_properties"] = [p for p, _ in self.properties
                                        if p in self.hidden_properties]
        if self.known_liars:
            out["known_liars"] = [a for a in self.agents if a in self.known_liars]
        if self.reveal_lies:
            out["reveal_lies"] = True
        out["testimony"] = self.testimony
        out["opening"] = self.opening
        if self.questions:
            out["questions"] = [q.to_dict() for q in self.questions]
        return out

    def to_json(self) -> str:
        """Compact JSON; key order follows :meth:`to_dict`, so property order survives."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, raw: Any) -> World:
        if not isinstance(raw, dict):
            raise OracleInputError("the top level must be a JSON object", where="world")
        if not raw.keys() <= _WORLD_KEYS:
            extra = sorted(set(raw) - _WORLD_KEYS)
            raise OracleInputError(f"unknown field(s) {extra}", where="world")
        if not raw.keys() >= _WORLD_REQUIRED:
            missing = next(k for k in ("agents", "containers", "object", "initial")
                           if k not in raw)
            raise OracleInputError(f"missing field {missing!r}", where="world")
        agents = _names(raw["agents"], "agents")
        containers = _names(raw["containers"], "containers")
        if not isinstance(raw["object"], str):
            raise OracleInputError("'object' must be a string", where="world")
        init = raw["initial"]
        if not isinstance(init, dict):
            raise OracleInputError("'initial' must be a JSON object", where="initial")
        if not init.keys() <= _INITIAL_KEYS:
            extra = sorted(set(init) - _INITIAL_KEYS)
            raise OracleInputError(f"unknown field(s) {extra}", where="initial")
        if not isinstance(init.get("location"), str):
            raise OracleInputError("'location' must be a container name", where="initial")
        present = _names(init["present"], "initial.present") if "present" in init else agents
        asleep = _names(init["asleep"], "initial.asleep") if "asleep" in init else ()
        props = init.get("properties", {})
        if not isinstance(props, dict) or (props and not all(map(_is_value, props.values()))):
            raise OracleInputError("'properties' must map names to scalar values", where="initial")
        events = raw.get("events", [])
        if not isinstance(events, list):
            raise OracleInputError("'events' must be a list", where="world")
        questions = raw.get("questions", [])
        if not isinstance(questions, list):
            raise OracleInputError("'questions' must be a list", where="world")
        room = raw.get("room", "room")
        if not isinstance(room, str):
            raise OracleInputError("'room' must be a string", where="world")
        for key in ("testimony", "opening"):
            if not isinstance(raw.get(key, ""), str):
                raise OracleInputError(f"{key!r} must be a string", where="world")
        if not isinstance(raw.get("reveal_lies", False), bool):
            raise OracleInputError("'reveal_lies' must be true or false", where="world")
        return cls(
            tuple(agents), tuple(containers), raw["object"], init["location"],
            frozenset(present), frozenset(asleep), tuple(props.items()),
            tuple([Event.from_dict(e, i) for i, e in enumerate(events)]),
            _name_set(raw, "open_containers"), room,
            tuple([Question.from_dict(q, i) for i, q in enumerate(questions)]),
            _name_set(raw, "hidden_properties"), _name_set(raw, "known_liars"),
            raw.get("reveal_lies", False), raw.get("testimony", "latest"),
            raw.get("opening", "common_ground"))

    @classmethod
    def from_json(cls, text: str | bytes) -> World:
        """Parse a world from JSON text (or UTF-8 bytes), strictly: see :func:`strict_json`."""
        return cls.from_dict(strict_json(text))

    @classmethod
    def load(cls, path: str | Path) -> World:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise OracleInputError(f"cannot read {path}: {exc.strerror}", where="input") from exc
        return cls.from_json(data)


def _refuse_constant(name: str) -> Any:
    raise OracleInputError(f"{name} is not a JSON number", where="input")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise OracleInputError(f"key {key!r} appears twice in one object", where="input")
        out[key] = value
    return out


def strict_json(text: str | bytes) -> Any:
    """JSON as the oracle accepts it: UTF-8, no NaN or infinities, no key given twice, and
    nesting the parser can hold; anything else raises :class:`OracleInputError`."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise OracleInputError(f"not UTF-8 text (byte {exc.start})", where="input") from None
    try:
        return json.loads(text, parse_constant=_refuse_constant,
                          object_pairs_hook=_no_duplicates)
    except OracleInputError:  # from the hooks above
        raise
    except RecursionError:
        raise OracleInputError("malformed JSON: nested too deeply", where="input") from None
    except ValueError as exc:  # a decoding error, or an integer with too many digits
        raise OracleInputError(f"malformed JSON: {exc}", where="input") from None


def _name_set(raw: dict[str, Any], key: str) -> frozenset[str]:
    """The set of names at ``raw[key]`` (a checked list; none if the key is absent)."""
    return frozenset(_names(raw[key], key)) if key in raw else frozenset()


def _names(raw: Any, what: str) -> list[str]:
    if not isinstance(raw, list):
        raise OracleInputError(f"'{what}' must be a list of non-empty strings", where="world")
    for x in raw:
        if not (isinstance(x, str) and x):
            raise OracleInputError(f"'{what}' must be a list of non-empty strings",
                                   where="world")
    if len(set(raw)) != len(raw):
        raise OracleInputError(f"duplicate names in '{what}'", where="world")
    return list(raw)


def same_value(a: Value, b: Value) -> bool:
    """JSON equality: ``true`` is not ``1`` (Python's ``==`` says it is); 1 and 1.0 are equal."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _is_value(v: Any) -> bool:
    """A scalar value: a string, boolean, integer or finite number."""
    return isinstance(v, str | int | bool) or (isinstance(v, float) and math.isfinite(v))

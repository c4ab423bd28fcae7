"""An independent reference for the access oracle, written from ``SEMANTICS.md`` alone.

Style: no state object is carried forward.  Every question is answered by the
"latest writer" rule: scan the events backwards and take the latest event that
*writes* the asked chain; if none does, the opening value (common ground) holds.

* a move (location) or a change (property) writes chain ``c`` when every agent of
  ``c`` perceived it; perceivers are the agents present and awake just before it,
  plus the actor;
* a peek by X writes only ``(X,)``, with the location true at that moment;
* a whisper S -> L of v writes exactly ``(L,)``, ``(S, L)`` and ``(L, S)``, with v;
* a late view (X enters or wakes while the object is in an open container) writes
  ``(X,)`` for every visible property, with its value at that moment.

Who is present or asleep, and where the object is, are recomputed from scratch for
each event index (:func:`situation`).  This module must not import
``cogrsi_lib.oracle.state``; it imports only the plain data classes of ``world.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cogrsi_lib.oracle.world import Event, Question, Value, World

INITIAL = -1


@dataclass(frozen=True)
class Situation:
    """The world just before some event: who is in, who sleeps, where the object is."""

    present: frozenset[str]
    asleep: frozenset[str]
    location: str
    values: dict[str, Value]


@dataclass(frozen=True)
class RefAnswer:
    """The reference's answer: value, reality, the writing event (-1: opening) and how."""

    value: Value
    reality: Value
    source: int
    via: str


def same_value(a: Value, b: Value) -> bool:
    """JSON-level equality: ``1`` and ``True`` (or ``1`` and ``1.0``) are different values."""
    return type(a) is type(b) and a == b


def situation(world: World, index: int) -> Situation:
    """The situation just before ``world.events[index]`` (``index == len(events)``: the end).

    Recomputed from the opening state every time, on purpose.
    """
    present = set(world.present)
    asleep = set(world.asleep)
    location = world.location
    values = dict(world.properties)
    for e in world.events[:index]:
        if e.type == "leave":
            present.discard(e.actor)
        elif e.type == "enter":
            present.add(e.actor)
        elif e.type == "sleep":
            asleep.add(e.actor)
        elif e.type == "wake":
            asleep.discard(e.actor)
        elif e.type == "move":
            location = e.to  # type: ignore[assignment]
        elif e.type == "change":
            values[e.property] = e.value  # type: ignore[index,assignment]
    return Situation(frozenset(present), frozenset(asleep), location, values)


def perceivers(world: World, index: int) -> frozenset[str]:
    """Who perceives event ``index`` (SEMANTICS.md, "Events and who perceives them")."""
    e = world.events[index]
    if e.type == "whisper":
        return frozenset({e.actor, e.listener})  # type: ignore[arg-type]
    if e.type == "peek":
        return frozenset({e.actor})
    s = situation(world, index)
    return frozenset(s.present - s.asleep) | {e.actor}


def visibility(world: World, prop: str) -> bool | None:
    """A property's visibility, as its change events declare it (None: never changed)."""
    for e in world.events:
        if e.type == "change" and e.property == prop:
            return bool(e.visible)
    return None


def late_viewer(world: World, index: int) -> str | None:
    """The agent who gets a late view at event ``index``, if any.

    Enter or wake while the object lies in an open container (enter and wake do not
    move the object, so the location before the event is the location at it).
    """
    e = world.events[index]
    if e.type not in ("enter", "wake"):
        return None
    if situation(world, index).location not in world.open_containers:
        return None
    return e.actor


def _writes(world: World, index: int, q: Question) -> tuple[Value, str] | None:
    """The value event ``index`` writes into chain ``q.chain``, and how; None if it doesn't."""
    e = world.events[index]
    c = q.chain
    if q.kind == "location":
        if e.type == "move" and set(c) <= perceivers(world, index):
            return e.to, "move"  # type: ignore[return-value]
        if e.type == "peek" and c == (e.actor,):
            return situation(world, index).location, "peek"
        told = ((e.listener,), (e.actor, e.listener), (e.listener, e.actor))
        if e.type == "whisper" and c in told:
            return e.location, "whisper"  # type: ignore[return-value]
        return None
    prop = q.property
    if e.type == "change" and e.property == prop and set(c) <= perceivers(world, index):
        return e.value, "change"  # type: ignore[return-value]
    viewer = late_viewer(world, index)
    if viewer is not None and c == (viewer,) and visibility(world, prop) is True:  # type: ignore[arg-type]
        return situation(world, index).values[prop], "view"  # type: ignore[index]
    return None


def reality(world: World, q: Question) -> tuple[Value, int]:
    """The true value at the end and the index of the last event that set it (-1: none)."""
    for i in range(len(world.events) - 1, -1, -1):
        e = world.events[i]
        if q.kind == "location" and e.type == "move":
            return e.to, i  # type: ignore[return-value]
        if q.kind == "property" and e.type == "change" and e.property == q.property:
            return e.value, i  # type: ignore[return-value]
    if q.kind == "location":
        return world.location, INITIAL
    return dict(world.properties)[q.property], INITIAL  # type: ignore[index]


def ref_answer(world: World, q: Question) -> RefAnswer:
    """Answer ``q`` by the latest-writer rule.  Assumes the world and question are legal."""
    truth, last = reality(world, q)
    if not q.chain:
        return RefAnswer(truth, truth, last, "reality")
    for i in range(len(world.events) - 1, -1, -1):
        written = _writes(world, i, q)
        if written is not None:
            return RefAnswer(written[0], truth, i, written[1])
    opening = world.location if q.kind == "location" else dict(world.properties)[q.property]  # type: ignore[index]
    return RefAnswer(opening, truth, INITIAL, "initial")


def illegal_reason(world: World, index: int) -> str | None:
    """Why event ``index`` is illegal in its situation (SEMANTICS.md tables), or None."""
    e = world.events[index]
    s = situation(world, index)
    awake = s.present - s.asleep
    a = e.actor
    if a not in world.agents:
        return "unknown agent"
    if e.type == "enter":
        return "already present" if a in s.present else None
    if e.type == "wake":
        return None if a in s.asleep else "not asleep"
    if a not in awake:
        return "absent" if a not in s.present else "asleep"
    if e.type == "move":
        if e.to not in world.containers:
            return "unknown container"
        if e.to == s.location:
            return "already there"
    elif e.type == "whisper":
        if e.listener not in world.agents:
            return "unknown agent"
        if e.listener == a:
            return "whisper to oneself"
        if e.listener not in awake:
            return "listener absent or asleep"
        if e.location not in world.containers:
            return "unknown container"
    elif e.type == "change":
        if e.property not in s.values:
            return "unknown property"
        if same_value(s.values[e.property], e.value):  # type: ignore[arg-type]
            return "same value"
        for earlier in world.events[:index]:
            if earlier.type == "change" and earlier.property == e.property:
                if earlier.visible != e.visible:
                    return "visibility changed"
                break
    return None


def first_illegal(world: World) -> int | None:
    """Index of the first illegal event, or None if every event is legal."""
    for i in range(len(world.events)):
        if illegal_reason(world, i) is not None:
            return i
    return None


def legal_events(world: World, containers_said: tuple[str, ...] | None = None,
                 values: dict[str, tuple[Value, ...]] | None = None,
                 visible: dict[str, bool] | None = None) -> list[Event]:
    """Every legal next event after ``world``'s events (for strategies that grow worlds).

    ``values``/``visible``: candidate values and the fixed visibility of each property.
    """
    s = situation(world, len(world.events))
    awake = sorted(s.present - s.asleep, key=world.agents.index)
    said = containers_said or world.containers
    out: list[Event] = []
    out += [Event("leave", a) for a in awake]
    out += [Event("enter", a) for a in world.agents if a not in s.present]
    out += [Event("sleep", a) for a in awake]
    out += [Event("wake", a) for a in world.agents if a in s.asleep]
    out += [Event("move", a, to=c) for a in awake for c in world.containers if c != s.location]
    out += [Event("peek", a) for a in awake]
    out += [Event("whisper", sp, listener=li, location=c)
            for sp in awake for li in awake if li != sp for c in said]
    for prop, current in s.values.items():
        for v in (values or {}).get(prop, ()):
            if not same_value(v, current):
                vis = (visible or {}).get(prop, True)
                out += [Event("change", a, property=prop, value=v, visible=vis) for a in awake]
    return out

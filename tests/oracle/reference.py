"""An independent reference for the access oracle (v2), written from ``SEMANTICS.md`` alone.

Style: no state object is carried forward.  Every question is answered by the
"latest writer" rule: scan the events backwards and take the latest event that
*writes* the asked chain; if none does, the opening value holds (``opening``).

* a move writes chain ``c`` (location and visible properties) when ``c[0]`` actually
  perceived it and ``c[1:]`` are public perceivers (co-presence); a change writes its
  property the same way;
* if the object lies in an open container after a move or a visible change, the chains
  of present awake agents that co-presence did not select are written too ("view");
* a peek by X writes only ``(X,)``: the location and visible properties at that moment;
* a believed whisper S -> L of v writes every chain over {S, L} except ``(S,)``; a
  whisper is not believed while the object is in view, from a known liar, or, under
  ``fresher_access``, unless S's last sighting is later than L's (on a clock with three
  moments per event: as it begins, the event itself, as it ends);
* an agent who enters or wakes while the object is in view: every chain of present awake
  agents that contains them gets the location and visible properties ("view").

Who is present or asleep, where the object is and each agent's last sighting are
recomputed from scratch for each event index.  This module must not import
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

    @property
    def awake(self) -> frozenset[str]:
        return self.present - self.asleep


@dataclass(frozen=True)
class RefAnswer:
    """The reference's answer: value (None: no belief), reality, the writing event and how."""

    value: Value | None
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


def public_perceivers(world: World, index: int) -> frozenset[str]:
    """Who everyone takes to have perceived event ``index``."""
    e = world.events[index]
    if e.type == "whisper":
        return frozenset({e.actor, e.listener})  # type: ignore[arg-type]
    if e.type == "peek":
        return frozenset({e.actor})
    return situation(world, index).awake | {e.actor}


def perceivers(world: World, index: int) -> frozenset[str]:
    """Who actually perceives event ``index``: minus who missed it, plus secret observers."""
    e = world.events[index]
    return (public_perceivers(world, index) - set(e.missed_by)) | set(e.hidden_observers)


def visibility(world: World, prop: str) -> bool:
    """Declared hidden, or as its first change says; visible otherwise."""
    if prop in world.hidden_properties:
        return False
    for e in world.events:
        if e.type == "change" and e.property == prop:
            return bool(e.visible)
    return True


def in_view(world: World, location: str) -> bool:
    return location in world.open_containers


def knows_opening(world: World, chain: tuple[str, ...]) -> bool:
    if world.opening == "common_ground":
        return True
    return set(chain) <= world.present - world.asleep


def last_sighting(world: World, agent: str, index: int) -> int | None:
    """When ``agent`` last saw the object in events ``0 .. index - 1`` (before event ``index``
    begins), as a position on one clock that counts every moment of the story in time order;
    None if never.

    The clock: 0 is the opening (for those who know it); event ``j`` has three moments, in
    order: ``3j + 1`` as it begins (the object in view before it), ``3j + 2`` the event itself
    (a move its actual perceivers witness, a peek, entering or waking with the object in
    view), ``3j + 3`` as it ends (the object in view after it).  So an onlooker who missed a
    move off an open tray last saw the object before the mover did.  (A whisper is never
    believed with the object in view, so the moment a whisper begins never decides.)"""
    seen: int | None = 0 if knows_opening(world, (agent,)) else None
    for j in range(index):
        e = world.events[j]
        before, after = situation(world, j), situation(world, j + 1)
        if in_view(world, before.location) and agent in before.awake:
            seen = 3 * j + 1
        if (e.type == "move" and agent in perceivers(world, j)) or (
                e.type == "peek" and e.actor == agent) or (
                e.type in ("enter", "wake") and e.actor == agent
                and in_view(world, before.location) and agent in after.awake):
            seen = 3 * j + 2
        if in_view(world, after.location) and agent in after.awake:
            seen = 3 * j + 3
    return seen


def believed(world: World, index: int) -> bool:
    """Does the listener take whisper ``index``?"""
    e = world.events[index]
    if in_view(world, situation(world, index).location) or e.actor in world.known_liars:
        return False
    if world.testimony == "fresher_access":
        spoke = last_sighting(world, e.actor, index)
        heard = last_sighting(world, e.listener, index)  # type: ignore[arg-type]
        return spoke is not None and (heard is None or spoke > heard)
    return True


def _co_present(world: World, index: int, c: tuple[str, ...]) -> bool:
    return c[0] in perceivers(world, index) and set(c[1:]) <= public_perceivers(world, index)


def _writes(world: World, index: int, q: Question) -> tuple[Value, str] | None:
    """The value event ``index`` writes into chain ``q.chain``, and how; None if it doesn't."""
    e = world.events[index]
    c = q.chain
    before, after = situation(world, index), situation(world, index + 1)
    prop = q.property
    if q.kind == "location":
        shown: Value = after.location
    elif visibility(world, prop):  # type: ignore[arg-type]
        shown = after.values[prop]  # type: ignore[index]
    else:
        shown = None  # type: ignore[assignment]
    in_view_after = in_view(world, after.location) and set(c) <= after.awake
    if e.type == "move":
        if _co_present(world, index, c) and shown is not None:
            return shown, "move"
        if in_view_after and shown is not None:
            return shown, "view"
    elif e.type == "peek":
        if c == (e.actor,) and shown is not None:
            return shown, "peek"
    elif e.type == "whisper":
        told = {e.actor, e.listener}
        if q.kind == "location" and believed(world, index) and set(c) <= told \
                and c != (e.actor,):
            return e.location, "whisper"  # type: ignore[return-value]
    elif e.type == "change":
        if q.kind == "property" and e.property == prop:
            if _co_present(world, index, c):
                return e.value, "change"  # type: ignore[return-value]
            if e.visible and in_view_after:
                return e.value, "view"  # type: ignore[return-value]
    elif (e.type in ("enter", "wake") and in_view(world, before.location) and e.actor in c
          and in_view_after and shown is not None):
        return shown, "view"
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
    if not knows_opening(world, q.chain):
        return RefAnswer(None, truth, INITIAL, "unknown")
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
        if visibility(world, e.property) != e.visible:  # type: ignore[arg-type]
            return "visibility changed"
    for h in e.hidden_observers:
        if h not in world.agents or h in s.present:
            return "hidden observer present"
    for m in e.missed_by:
        if m == a or m not in awake:
            return "missed by someone who cannot"
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
    """Every legal next event after ``world``'s events (for strategies that grow worlds),
    without secret observers or onlookers who miss it (strategies add those).

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

"""Story lines to observations for the state memory (zing-social-mind-report §5.4.1).

:func:`parse_line` reads one sentence of the oracle's story templates (narrative and chat,
gate and eval lexicons) or of the ToMi / Hi-ToM grammar into an :class:`Event`; a line it
cannot read returns ``None`` and is kept as an unparsed observation, never guessed.
Witnesses come either from outside (the oracle's gold perceivers, the perception call's
labels) or from presence (:func:`presence_witnesses`: who entered and has not left the
room, asleep agents left out when the text says they fell asleep).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cogrsi_lib.oracle.render import CHAT, NARRATIVE, Templates
from cogrsi_lib.oracle.sampler import PROPERTIES
from cogrsi_lib.pairs.lexicon import EVAL_CHAT, EVAL_NARRATIVE, GATE_CHAT

EVENT_KINDS = (
    "present", "asleep", "located", "open", "has_property", "known_liar", "leave", "enter",
    "sleep", "wake", "move", "tell", "public_tell", "peek", "change", "noise",
)  # fmt: skip
#: kinds that only say who is where (or awake); they never change a belief by themselves
PRESENCE_KINDS = frozenset({"present", "asleep", "leave", "enter", "sleep", "wake"})
#: every template set :func:`parse_line` reads, first match wins
TEMPLATE_SETS: tuple[Templates, ...] = (NARRATIVE, EVAL_NARRATIVE, CHAT, GATE_CHAT, EVAL_CHAT)

_NAME = r"(?!The\b)[A-Z][\w'-]*"
_WORD = r"[\w-]+"
_GROUPS = {
    "agent": _NAME, "listener": _NAME, "room": _WORD, "object": _WORD, "container": _WORD,
    "location": _WORD, "value": _WORD, "property": r"\w+",
}  # fmt: skip
_NUMBER = re.compile(r"^\s*\d+\s*[.):]?\s+(?=\S)")
_FIELD_KIND = {"whisper": "tell"}
_TEMPLATE_FIELDS = (
    "present", "asleep", "located", "open", "has_property", "known_liar", "leave", "enter",
    "sleep", "wake", "move", "whisper", "peek",
)  # fmt: skip
#: clauses a line may end with: a secret observer, an onlooker who missed it, a revealed lie
_CLAUSE_FIELDS = ("watched", "missed", "lie_revealed")

# Hi-ToM / ToMi grammar beyond the oracle's templates (He et al. 2023; Le et al. 2019).
_NAMES = rf"{_NAME}(?:, {_NAME})*(?:,? and {_NAME})?"
_HITOM: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("enter", rf"(?P<agents>{_NAMES}) entered the (?P<room>{_WORD})\."),
        ("leave", rf"(?P<agent>{_NAME}) (?:exited|left|went out of) the (?P<room>{_WORD})\."),
        ("present", rf"(?P<agents>{_NAMES}) (?:is|are) in the (?P<room>{_WORD})\."),
        (
            "noise",
            rf"(?P<agent>{_NAME}) made no movements and stayed in the (?P<room>{_WORD})"
            r" for \d+ minutes?\.",
        ),
        (
            "public_tell",
            rf"(?P<agent>{_NAME}) publicly (?:claimed|told everyone|told)"
            rf" that (?:the )?(?P<object>{_WORD}) is in the (?P<location>{_WORD})\.",
        ),
        (
            "tell",
            rf"(?P<agent>{_NAME}) privately told (?P<listener>{_NAME}) that (?:the )?"
            rf"(?P<object>{_WORD}) is in the (?P<location>{_WORD})\.",
        ),
        ("noise", rf"(?P<agent>{_NAME}) (?:saw an?|lost (?:his|her|their)) {_WORD}\."),
        ("noise", rf"(?P<agent>{_NAME}) (?:likes|dislikes|loves|hates) the {_WORD}\."),
    )
)


class ExtractionError(ValueError):
    """Witness labels that do not fit the story (wrong count, bad entry)."""


@dataclass(frozen=True)
class Event:
    """One parsed line. ``agents`` holds every actor (several for "A, B and C entered");
    ``agent`` is the first. ``location`` is a move's destination or a tell's claim,
    ``container`` where an opening line, a peek or an open-container line points."""

    kind: str
    agents: tuple[str, ...] = ()
    listener: str | None = None
    room: str | None = None
    object: str | None = None
    container: str | None = None
    location: str | None = None
    property: str | None = None
    value: str | None = None
    visible: bool | None = None
    style: str = "narrative"
    hidden_observers: tuple[str, ...] = ()
    missed_by: tuple[str, ...] = ()
    lie_revealed: bool = False

    @builtins.property
    def agent(self) -> str | None:
        return self.agents[0] if self.agents else None


@dataclass(frozen=True)
class Observation:
    """One story line: its index, text, parsed event (None: unparsed) and witnesses."""

    index: int
    text: str
    event: Event | None
    witnesses: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Extraction:
    """The observations of a story and what could not be read."""

    observations: tuple[Observation, ...]
    witness_source: str

    @property
    def unparsed(self) -> tuple[Observation, ...]:
        return tuple(o for o in self.observations if o.event is None)

    def counts(self) -> dict[str, int]:
        out = {"lines": len(self.observations), "unparsed": len(self.unparsed)}
        for o in self.observations:
            if o.event is not None:
                out[o.event.kind] = out.get(o.event.kind, 0) + 1
        return out


def strip_number(text: str) -> str:
    """Drop a leading line number ("12 Anne left." -> "Anne left.")."""
    return _NUMBER.sub("", text.strip())


def _compile(template: str) -> re.Pattern[str]:
    parts: list[str] = []
    seen: set[str] = set()
    for literal, name in re.findall(r"([^{]*)(?:\{(\w+)\})?", template):
        parts.append(re.escape(literal))
        if not name:
            continue
        if name in seen:
            parts.append(f"(?P={name})")
        else:
            seen.add(name)
            parts.append(f"(?P<{name}>{_GROUPS.get(name, _WORD)})")
    return re.compile("".join(parts))


def _template_patterns(t: Templates) -> list[tuple[str, str | None, re.Pattern[str]]]:
    """(kind, property, pattern) per template of ``t``; located before has_property."""
    out = [(_FIELD_KIND.get(f, f), None, _compile(getattr(t, f))) for f in _TEMPLATE_FIELDS]
    out += [("change", prop, _compile(tpl)) for prop, tpl in t.change.items()]
    out.append(("change", None, _compile(t.change_default)))
    return out


_PATTERNS = [(t.style, p) for t in TEMPLATE_SETS for p in _template_patterns(t)]
_CLAUSES = [(f, re.compile(r"(?:^|\s+)" + _compile(getattr(t, f)).pattern + "$"))
            for t in TEMPLATE_SETS for f in _CLAUSE_FIELDS]


def _strip_clauses(line: str) -> tuple[str, dict[str, list[str]]]:
    """Split trailing clauses (secret observer, missed, lie revealed) off a line."""
    found: dict[str, list[str]] = {f: [] for f in _CLAUSE_FIELDS}
    changed = True
    while changed:
        changed = False
        for field_name, pattern in _CLAUSES:
            m = pattern.search(line)
            if m is not None and m.start() > 0:
                found[field_name].insert(0, m.groupdict().get("agent") or "")
                line = line[: m.start()]
                changed = True
                break
    return line, found


def value_lexicon(
    properties: Mapping[str, tuple[bool, Sequence[str]]] = PROPERTIES,
) -> dict[str, tuple[str, bool]]:
    """value -> (property, visible?) from a ``name -> (visible, values)`` table."""
    out: dict[str, tuple[str, bool]] = {}
    for name, (visible, values) in properties.items():
        for v in values:
            out[str(v)] = (name, bool(visible))
    return out


_VALUES = value_lexicon()


def parse_line(text: str, values: Mapping[str, tuple[str, bool]] | None = None) -> Event | None:
    """The event one story line tells, or ``None`` when no template or grammar rule fits.

    ``values`` maps a property value to its property and visibility (default: the oracle
    sampler's properties); a property line whose value is not in it is left unparsed.
    """
    values = _VALUES if values is None else values
    line, clauses = _strip_clauses(strip_number(text))
    for style, (kind, prop, pattern) in _PATTERNS:
        m = pattern.fullmatch(line)
        if m is None:
            continue
        event = _from_match(kind, prop, m.groupdict(), style, values)
        if event is not None:
            return replace(event, hidden_observers=tuple(clauses["watched"]),
                           missed_by=tuple(clauses["missed"]),
                           lie_revealed=bool(clauses["lie_revealed"]))
    for kind, pattern in _HITOM:
        m = pattern.fullmatch(line)
        if m is not None:
            return _from_match(kind, None, m.groupdict(), "narrative", values)
    return None


def _from_match(
    kind: str,
    prop: str | None,
    g: dict[str, Any],
    style: str,
    values: Mapping[str, tuple[str, bool]],
) -> Event | None:
    if "agents" in g:
        agents = tuple(a for a in re.split(r",? and |, ", g["agents"]) if a)
    else:
        agents = (g["agent"],) if g.get("agent") else ()
    if kind in ("located", "has_property", "open"):
        agents = ()  # the chat's opening voice is the narrator, not an actor
    value = g.get("value")
    visible = None
    if kind in ("has_property", "change"):
        if value not in values:
            return None
        known, visible = values[value]
        if prop is None:
            prop = known
        elif prop != known:
            return None
    return Event(
        kind=kind,
        agents=agents,
        listener=g.get("listener"),
        room=g.get("room"),
        object=g.get("object"),
        container=g.get("container"),
        location=g.get("location"),
        property=prop,
        value=value,
        visible=visible,
        style=style,
    )


# -- witnesses ------------------------------------------------------------------------------
@dataclass
class _Presence:
    """Who is in which room and who is asleep, as the text says."""

    respect_sleep: bool = True
    room_of: dict[str, str | None] = field(default_factory=dict)
    asleep: set[str] = field(default_factory=set)
    scene: str | None = None

    def occupants(self, room: str | None) -> set[str]:
        room = room if room is not None else self.scene
        out = {a for a, r in self.room_of.items() if r is not None and r == room}
        return out - self.asleep if self.respect_sleep else out

    def everyone(self) -> set[str]:
        return set(self.room_of)

    def witnesses(self, e: Event) -> frozenset[str]:
        """Who perceives ``e`` by presence (before its effects)."""
        actors = set(e.agents)
        if e.kind == "public_tell":
            return frozenset(self.everyone() | actors)
        if e.kind == "tell":
            here = self.occupants(self.room_of.get(e.agent or ""))
            return frozenset(here | actors | ({e.listener} if e.listener else set()))
        if e.kind in ("located", "has_property", "open", "known_liar"):
            return frozenset(self.occupants(self.scene))
        room = e.room if e.kind in ("enter", "present") else self.room_of.get(e.agent or "")
        return frozenset(self.occupants(room or self.scene) | actors)

    def apply(self, e: Event) -> None:
        for a in e.agents:
            self.room_of.setdefault(a, None)
        if e.listener:
            self.room_of.setdefault(e.listener, None)
        if e.kind in ("enter", "present"):
            room = e.room or self.scene or "room"
            for a in e.agents:
                self.room_of[a] = room
            self.scene = room
        elif e.kind == "leave":
            for a in e.agents:
                self.room_of[a] = None
        elif e.kind == "asleep" or e.kind == "sleep":
            self.asleep.update(e.agents)
        elif e.kind == "wake":
            self.asleep.difference_update(e.agents)


def presence_witnesses(
    events: Sequence[Event | None], respect_sleep: bool = True
) -> list[frozenset[str]]:
    """Witnesses of each line derived from presence alone: the actors and everyone awake in
    the actor's room (for a narrator's line, the room of the last entry); a public claim
    reaches everyone named so far, a private tell the speaker, the listener and whoever is
    in the speaker's room. ``respect_sleep=False`` ignores what the text says about sleep.
    Unparsed lines get no witnesses."""
    p = _Presence(respect_sleep=respect_sleep)
    out: list[frozenset[str]] = []
    for e in events:
        if e is None:
            out.append(frozenset())
            continue
        for a in e.agents:
            p.room_of.setdefault(a, None)
        out.append(p.witnesses(e))
        p.apply(e)
    return out


def extract(
    lines: Sequence[str] | str,
    witnesses: str | Sequence[Iterable[str]] | Any = "presence",
    *,
    values: Mapping[str, tuple[str, bool]] | None = None,
    respect_sleep: bool = True,
) -> Extraction:
    """Observations of a story (text or lines). ``witnesses``: ``"presence"``, a sequence
    with one name collection per line (gold perceivers, perception labels) or a
    :class:`cogrsi_lib.reader.perception.Perception`."""
    if isinstance(lines, str):
        lines = [ln for ln in lines.splitlines() if ln.strip()]
    events = [parse_line(t, values) for t in lines]
    if isinstance(witnesses, str):
        if witnesses != "presence":
            raise ExtractionError(
                f"unknown witness source {witnesses!r}; expected 'presence' "
                "or one name list per line"
            )
        labels = presence_witnesses(events, respect_sleep=respect_sleep)
        source = "presence"
    else:
        raw = getattr(witnesses, "witnesses", witnesses)
        labels = [frozenset(w) for w in raw]
        if len(labels) != len(lines):
            raise ExtractionError(f"{len(labels)} witness entries for {len(lines)} lines")
        for i, w in enumerate(labels):
            bad = [n for n in w if not isinstance(n, str) or not n]
            if bad:
                raise ExtractionError(f"witness entry {i}: not a name: {bad[0]!r}")
        source = "given"
    obs = tuple(
        Observation(i, t, e, w)
        for i, (t, e, w) in enumerate(zip(lines, events, labels, strict=True))
    )
    return Extraction(obs, source)


_Q_REAL = re.compile(
    r"(?:Where|In which container) is the (?P<object>[\w-]+) (?:really|actually)\?"
)
_Q_PROP_REAL = re.compile(
    r"(?:What|Which) (?P<property>\w+) (?:is|does) the "
    r"(?P<object>[\w-]+) (?:really|actually)(?: have)?\?"
)
_Q_BELIEF = re.compile(
    r"(?:Where|In which container|(?:What|Which) (?P<property>\w+)) does "
    r"(?P<chain>.+?) the (?P<object>[\w-]+) (?:is|has)\?"
)
_Q_LINK = re.compile(rf"(?:that\s+)?({_NAME})\s+(?:really\s+)?(?:think|thinks|believe|believes)\b")


def parse_question(text: str) -> tuple[tuple[str, ...], str, str] | None:
    """``(chain, object, attribute)`` of a belief or reality question in the oracle's or
    Hi-ToM's wording ("Where does A think B thinks the X is?"); ``None`` if not one."""
    q = strip_number(text).removeprefix("Question:").strip()
    for pattern in (_Q_REAL, _Q_PROP_REAL):
        m = pattern.fullmatch(q)
        if m:
            return (), m["object"], m.groupdict().get("property") or "location"
    m = _Q_BELIEF.fullmatch(q)
    if m is None:
        return None
    links = list(_Q_LINK.finditer(m["chain"]))
    if not links or _Q_LINK.sub("", m["chain"]).strip():
        return None
    chain = tuple(x.group(1) for x in links)
    return chain, m["object"], m["property"] or "location"


def item_extraction(item: Any, witnesses: str = "gold") -> Extraction:
    """Observations of a :class:`~cogrsi_lib.reader.items.ReaderItem`: ``"gold"`` reads the
    perceivers the oracle stores in ``item.meta["perceivers"]``; ``"presence"`` derives them."""
    lines = item.lines()
    if witnesses == "presence":
        return extract(lines, "presence")
    if witnesses != "gold":
        raise ExtractionError(f"unknown witness source {witnesses!r}; expected gold/presence")
    perceivers = item.meta.get("perceivers") if item.meta else None
    if perceivers is None:
        raise ExtractionError(f"item {item.item_id}: no gold perceivers in meta")
    return extract(lines, perceivers)

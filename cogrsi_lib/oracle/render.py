"""Render worlds as ToMi-style numbered narratives or as group chats (CogRSI App. C).

Stories are rendered from the structured world and its replayed state, never the
other way round: gold answers always come from the state.  Each rendered line keeps
the index of the event it tells (None for the opening lines) and who perceived it,
so the gold perceivers of a story are known too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cogrsi_lib.oracle.lies import lies
from cogrsi_lib.oracle.state import OracleState
from cogrsi_lib.oracle.world import Event, Question, World


@dataclass(frozen=True)
class Templates:
    """Sentence templates for one story style.  Placeholders: {agent} {listener} {room}
    {object} {container} {location} {property} {value} {agents} {chain_text}."""

    style: str
    present: str
    asleep: str
    located: str
    open: str
    has_property: str
    leave: str
    enter: str
    sleep: str
    wake: str
    move: str
    whisper: str
    peek: str
    change: dict[str, str] = field(default_factory=dict)
    change_default: str = "{agent} made the {object} {value}."
    ask_reality: str = "Where is the {object} really?"
    ask_location: str = "Where does {chain_text} the {object} is?"
    ask_property_reality: str = "What {property} is the {object} really?"
    ask_property: str = "What {property} does {chain_text} the {object} is?"
    think: str = "think"
    thinks_link: str = "that {agent} thinks"
    numbered: bool = True
    watched: str = "{agent} secretly watched this from outside the {room}; nobody knew."
    missed: str = "{agent} was looking away and missed this, but nobody noticed."
    known_liar: str = "Everyone knows that {agent} lies."
    lie_revealed: str = "({agent} was lying.)"


NARRATIVE = Templates(
    style="narrative",
    present="{agent} is in the {room}.",
    asleep="{agent} is asleep.",
    located="The {object} is in the {container}.",
    open="The {container} is open, so anyone in the {room} can see what is in it.",
    has_property="The {object} is {value}.",
    leave="{agent} exited the {room}.",
    enter="{agent} entered the {room}.",
    sleep="{agent} fell asleep.",
    wake="{agent} woke up.",
    move="{agent} moved the {object} to the {location}.",
    whisper="{agent} privately told {listener} that the {object} is in the {location}.",
    peek="{agent} looked inside the {container} and saw the {object} there.",
    change={"color": "{agent} painted the {object} {value}."},
)

CHAT = Templates(
    style="chat",
    present="[{agent} is in the group chat]",
    asleep="[{agent} has muted the chat]",
    located="{agent}: The {object} is in the {container}.",
    open="{agent}: The {container} is open, anyone here can see what is in it.",
    has_property="{agent}: The {object} is {value}.",
    leave="[{agent} left the chat]",
    enter="[{agent} rejoined the chat]",
    sleep="[{agent} muted the chat]",
    wake="[{agent} unmuted the chat]",
    move="{agent}: I just moved the {object} to the {location}.",
    whisper="(private message) {agent} -> {listener}: The {object} is in the {location}.",
    peek="({agent} checked the {container} and saw the {object}, without telling anyone)",
    change={"color": "{agent}: I painted the {object} {value}."},
    change_default="{agent}: I made the {object} {value}.",
    numbered=False,
    watched="({agent} secretly read this on a shared screen; nobody knew)",
    missed="({agent} did not read this, though everyone assumed they had)",
    known_liar="[everyone here knows that {agent} lies]",
    lie_revealed="({agent} was lying)",
)


@dataclass(frozen=True)
class Line:
    """One rendered sentence or message, the event it tells and who perceived it."""

    text: str
    event: int | None
    perceivers: frozenset[str]


@dataclass(frozen=True)
class Story:
    lines: tuple[Line, ...]
    style: str

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def render(world: World, templates: Templates = NARRATIVE) -> Story:
    """The story of ``world`` in the given style.  A secret observer, an onlooker who missed
    an event, a known liar and (with ``reveal_lies``) each lie are told in words too."""
    state = OracleState.initial(world, max_depth=1)
    revealed = set(lies(world)) if world.reveal_lies else set()
    everyone = frozenset(world.agents)
    # the opening is perceived by everyone, or (``opening: unknown``) by who is there awake
    opening = everyone if world.opening == "common_ground" else world.present - world.asleep
    opening_voice = world.agents[0] if world.agents else ""
    raw: list[tuple[str, int | None, frozenset[str]]] = []

    def text(template: str, **kw: object) -> str:
        return template.format(**{"room": world.room, "object": world.object,
                                  "agent": opening_voice, **kw})

    def put(template: str, event: int | None, who: frozenset[str], **kw: object) -> None:
        raw.append((text(template, **kw), event, who))

    for a in world.agents:
        if a in world.present:
            put(templates.present, None, everyone, agent=a)
    for a in world.agents:
        if a in world.asleep:
            put(templates.asleep, None, everyone, agent=a)
    put(templates.located, None, opening, container=world.location)
    for c in world.containers:
        if c in world.open_containers:
            put(templates.open, None, everyone, container=c)
    for _prop, value in world.properties:
        put(templates.has_property, None, opening, value=value)
    for a in world.agents:
        if a in world.known_liars:
            put(templates.known_liar, None, everyone, agent=a)
    for i, e in enumerate(world.events):
        container = state.location
        who = state.apply(e, i)
        told = [text(_event_template(templates, e), agent=e.actor, listener=e.listener,
                     location=e.to if e.type == "move" else e.location, container=container,
                     property=e.property, value=e.value)]
        told += [text(templates.watched, agent=a) for a in e.hidden_observers]
        told += [text(templates.missed, agent=a) for a in e.missed_by]
        told += [text(templates.lie_revealed, agent=e.actor)] if i in revealed else []
        raw.append((" ".join(told), i, who))
    lines = []
    for n, (text, ev, who) in enumerate(raw, start=1):
        lines.append(Line(f"{n} {text}" if templates.numbered else text, ev, who))
    return Story(tuple(lines), templates.style)


def _event_template(t: Templates, e: Event) -> str:
    if e.type == "change":
        return t.change.get(e.property or "", t.change_default)
    return getattr(t, e.type)


def render_question(world: World, q: Question, templates: Templates = NARRATIVE) -> str:
    """The question in words: "Where does Anne think that Sally thinks the marble is?"."""
    if not q.chain:
        template = templates.ask_reality if q.kind == "location" else templates.ask_property_reality
        return template.format(object=world.object, property=q.property)
    first, rest = q.chain[0], q.chain[1:]
    chain_text = " ".join([f"{first} {templates.think}"]
                          + [templates.thinks_link.format(agent=a) for a in rest])
    template = templates.ask_location if q.kind == "location" else templates.ask_property
    return template.format(chain_text=chain_text, object=world.object, property=q.property)

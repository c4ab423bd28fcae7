"""The access oracle's worlds as PDDL-Mind problems and gold action sequences, and the
cross-check that the two formal models agree where they overlap (PDDL-Mind §5.1).

:func:`gold_pddl` writes an oracle world as a problem of the predefined domain (the room and
``outside`` are locations; the object and containers are objects; each whisper is a private
utterance) and maps each event to actions (see the table in ``domain.pddl``; a move is a grab
then a drop, each container opened before and closed after unless it is open in the world). The
opening state is common ground in the oracle, so every agent starts with ``seen`` and
``noticed`` facts for the true location and property values. A property is ``visible`` unless
the world declares it hidden (``World.visibility``). The two models overlap on worlds with the
default policies and no secret observer or unnoticed miss (the domain has no way to say
either); :func:`gold_pddl` refuses other worlds.

:func:`cross_check` replays the world in the oracle and executes the gold actions, and after
each event compares: where the object is and that nobody holds it, who is present and asleep,
property values, open containers, each agent's latest sight (the location after the last
move or peek the oracle says the agent perceived; it is the oracle's first-order location
belief whenever that did not come from a whisper), each agent's noticed property values (the
oracle's first-order property beliefs) and who heard which whisper.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cogrsi_lib.oracle.state import OracleState
from cogrsi_lib.oracle.world import Value, World, same_value
from cogrsi_lib.pddl.domain import CompiledDomain, predefined_domain
from cogrsi_lib.pddl.executor import Executor, initial_state
from cogrsi_lib.pddl.parse import GroundAction, parse_problem_text
from cogrsi_lib.pddl.problem import Fact, Task

OUTSIDE = "outside"
_NAME = re.compile(r"[^a-z0-9_-]+")


class OracleMapError(ValueError):
    """A world whose names cannot be written as distinct PDDL names."""


def pddl_name(text: str) -> str:
    """A PDDL name for ``text``: lower case, other characters as ``_``, a letter first."""
    name = _NAME.sub("_", text.strip().lower()).strip("_")
    if not name or not name[0].isalpha():
        name = "x_" + name
    return name


def value_name(v: Value) -> str:
    """A PDDL name for a property value; JSON-equal values get one name (1 and 1.0)."""
    if isinstance(v, bool):
        return "v_true" if v else "v_false"
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int | float):
        return pddl_name("n_" + str(v).replace("-", "minus").replace(".", "_"))
    return pddl_name(v)


@dataclass(frozen=True)
class GoldPDDL:
    """An oracle world as a problem file and a gold action sequence."""

    world: World
    problem_text: str
    actions: tuple[GroundAction, ...]
    event_of_action: tuple[int, ...]  # the event index each action comes from
    agent: dict[str, str]  # oracle name -> PDDL name (agents)
    container: dict[str, str]
    obj: str
    room: str
    prop: dict[str, str]
    value: dict[tuple[str, str], str] = field(default_factory=dict)  # (prop, value name) ->

    def task(self, domain: CompiledDomain | None = None) -> Task:
        got = parse_problem_text(self.problem_text, domain or predefined_domain())
        if not isinstance(got, Task):
            raise OracleMapError(f"gold problem does not parse: {got}")
        if got.issues:
            raise OracleMapError(f"gold problem does not fit the domain: {got.issues}")
        return got

    def actions_text(self) -> str:
        return "\n".join(str(a) for a in self.actions)


def _prop_values(world: World) -> dict[str, list[Value]]:
    out: dict[str, list[Value]] = {p: [v] for p, v in world.properties}
    for e in world.events:
        if e.type == "change" and e.property in out:
            vals = out[e.property]
            if not any(same_value(e.value, x) for x in vals):  # type: ignore[arg-type]
                vals.append(e.value)  # type: ignore[arg-type]
    return out


def gold_pddl(world: World) -> GoldPDDL:
    """The world's problem file (its opening state) and its events as gold actions."""
    if any(e.hidden_observers or e.missed_by for e in world.events):
        raise OracleMapError("a secret observer or an unnoticed miss has no PDDL action")
    if world.opening != "common_ground":
        raise OracleMapError("the predefined domain starts from common ground only")
    agent = {a: pddl_name(a) for a in world.agents}
    container = {c: pddl_name(c) for c in world.containers}
    obj, room = pddl_name(world.object), pddl_name(world.room)
    values = _prop_values(world)
    prop = {p: pddl_name(p) for p in values}
    vname = {(p, value_name(v)): value_name(v) for p, vs in values.items() for v in vs}
    utter = {i: f"u{i}" for i, e in enumerate(world.events) if e.type == "whisper"}
    names = [*agent.values(), *container.values(), obj, room, OUTSIDE, *prop.values(),
             *utter.values()]
    distinct_values = set(vname.values())
    if len(set(names)) != len(names) or distinct_values & set(names):
        raise OracleMapError(f"names clash once written in PDDL: {sorted(names)}")

    visible = {p for p, shown in world.visibility.items() if shown}
    lines: list[str] = []
    for a in world.agents:
        lines.append(f"(at {agent[a]} {room if a in world.present else OUTSIDE})")
    lines += [f"(asleep {agent[a]})" for a in world.agents if a in world.asleep]
    for c in world.containers:
        lines += [f"(container {container[c]})", f"(at {container[c]} {room})"]
        if c in world.open_containers:
            lines.append(f"(opened {container[c]})")
    lines.append(f"(in {obj} {container[world.location]})")
    lines += [f"(seen {agent[a]} {obj} {container[world.location]})" for a in world.agents]
    for p, v in world.properties:
        lines.append(f"(has {obj} {prop[p]} {value_name(v)})")
        lines += [f"(noticed {agent[a]} {obj} {prop[p]} {value_name(v)})" for a in world.agents]
    lines += [f"(visible {prop[p]})" for p in prop if p in visible]
    for i, u in utter.items():
        e = world.events[i]
        lines += [f"(says {u} {obj} {container[e.location]})", f"(private {u})"]  # type: ignore[index]
    objects = (
        f"    {' '.join(agent.values())} - agent\n"
        f"    {room} {OUTSIDE} - loc\n"
        f"    {' '.join([obj, *container.values()])} - obj\n"
        + (f"    {' '.join(utter.values())} - utterance\n" if utter else "")
        + (f"    {' '.join(prop.values())} - prop\n" if prop else "")
        + (f"    {' '.join(sorted(distinct_values))} - value\n" if distinct_values else "")
    )
    problem = (
        f"(define (problem story)\n  (:domain pddl-mind)\n  (:objects\n{objects}  )\n"
        "  (:init\n" + "".join(f"    {line}\n" for line in lines) + "  )\n  (:goal (and)))\n"
    )

    actions: list[GroundAction] = []
    source: list[int] = []
    where = world.location
    current = dict(world.properties)
    for i, e in enumerate(world.events):
        a = agent[e.actor]
        new: list[GroundAction]
        if e.type == "leave":
            new = [GroundAction("move", (a, room, OUTSIDE))]
        elif e.type == "enter":
            new = [GroundAction("move", (a, OUTSIDE, room))]
        elif e.type in ("sleep", "wake"):
            new = [GroundAction(e.type, (a, room))]
        elif e.type == "move":
            new = [*_in_view(a, container[where], room, where in world.open_containers,
                             GroundAction("grab", (a, obj, container[where], room))),
                   *_in_view(a, container[e.to], room,  # type: ignore[index]
                             e.to in world.open_containers,
                             GroundAction("drop", (a, obj, container[e.to], room)))]  # type: ignore[index]
            where = e.to  # type: ignore[assignment]
        elif e.type == "whisper":
            new = [GroundAction("tell", (a, agent[e.listener], utter[i], room))]  # type: ignore[index]
        elif e.type == "peek":
            new = [GroundAction("peek", (a, container[where], room))]
        elif e.type == "change":
            p = e.property
            new = [GroundAction("change", (a, obj, prop[p], value_name(current[p]),  # type: ignore[index]
                                           value_name(e.value), room))]  # type: ignore[arg-type]
            current[p] = e.value  # type: ignore[index,assignment]
        else:  # pragma: no cover - World refuses other types
            raise OracleMapError(f"event {i}: unknown type {e.type}")
        actions += new
        source += [i] * len(new)
    return GoldPDDL(world, problem, tuple(actions), tuple(source), agent, container, obj, room,
                    prop, vname)


def _in_view(agent: str, container: str, room: str, is_open: bool,
             action: GroundAction) -> list[GroundAction]:
    """``action`` on a container, opened before and closed after unless it is open anyway
    (grab and drop need the container open; the oracle's containers stay as they were)."""
    if is_open:
        return [action]
    return [GroundAction("open", (agent, container, room)), action,
            GroundAction("close", (agent, container, room))]


@dataclass(frozen=True)
class Mismatch:
    """One disagreement between the oracle and the executed gold actions."""

    event: int  # -1: the opening state
    what: str
    oracle: object
    pddl: object


def _view(state: frozenset[Fact], gold: GoldPDDL) -> dict[str, object]:
    """What the PDDL state says, in the oracle's names."""
    back_agent = {v: k for k, v in gold.agent.items()}
    back_cont = {v: k for k, v in gold.container.items()}
    back_prop = {v: k for k, v in gold.prop.items()}
    o = gold.obj
    view: dict[str, object] = {
        "location": sorted(back_cont.get(f[2], f[2]) for f in state if f[0] == "in" and f[1] == o),
        "holding": sorted(f[1] for f in state if f[0] == "holding"),
        "present": sorted(back_agent[f[1]] for f in state
                          if f[0] == "at" and f[1] in back_agent and f[2] == gold.room),
        "asleep": sorted(back_agent[f[1]] for f in state if f[0] == "asleep"),
        "open": sorted(back_cont[f[1]] for f in state if f[0] == "opened"),
        "properties": sorted((back_prop[f[2]], f[3]) for f in state if f[0] == "has"),
    }
    for a, pa in gold.agent.items():
        view[f"seen:{a}"] = sorted(back_cont.get(f[3], f[3]) for f in state
                                   if f[0] == "seen" and f[1] == pa and f[2] == o)
        view[f"noticed:{a}"] = sorted((back_prop[f[3]], f[4]) for f in state
                                      if f[0] == "noticed" and f[1] == pa and f[2] == o)
        view[f"heard:{a}"] = sorted(int(f[2][1:]) for f in state if f[0] == "heard" and f[1] == pa)
    return view


def _oracle_view(st: OracleState, sight: dict[str, str], heard: dict[str, list[int]]
                 ) -> dict[str, object]:
    w = st.world
    view: dict[str, object] = {
        "location": [st.location],
        "holding": [],
        "present": sorted(st.present),
        "asleep": sorted(st.asleep),
        "open": sorted(w.open_containers),
        "properties": sorted((p, value_name(v)) for p, v in st.properties.items()),
    }
    for a in w.agents:
        view[f"seen:{a}"] = [sight[a]]
        view[f"noticed:{a}"] = sorted((p, value_name(b.value))
                                      for p, b in st.property_beliefs[(a,)].items())
        view[f"heard:{a}"] = sorted(heard[a])
    return view


def cross_check(world: World, domain: CompiledDomain | None = None) -> list[Mismatch]:
    """Every disagreement between the oracle and the executed gold actions (empty: they agree).

    A rejected gold action is a mismatch too (the domain refused a legal oracle event).
    """
    gold = gold_pddl(world)
    task = gold.task(domain)
    executor = Executor(task)
    state = initial_state(task)
    ost = OracleState.initial(world, max_depth=1)
    sight = {a: world.location for a in world.agents}
    heard: dict[str, list[int]] = {a: [] for a in world.agents}
    out: list[Mismatch] = []

    def compare(event: int) -> None:
        frozen = frozenset((p, *a) for p, facts in state.items() for a in facts)
        mine, theirs = _view(frozen, gold), _oracle_view(ost, sight, heard)
        for key in theirs:
            if mine[key] != theirs[key]:
                out.append(Mismatch(event, key, theirs[key], mine[key]))
        for a in world.agents:  # the sight is the oracle's belief unless a whisper set it
            belief = ost.location_beliefs[(a,)]
            if belief.via != "whisper" and belief.value != sight[a]:
                out.append(Mismatch(event, f"belief:{a}", belief.value, sight[a]))

    compare(-1)
    pos = 0
    for i, event in enumerate(world.events):
        who = ost.apply(event, i)
        if event.type in ("move", "peek"):
            for a in who:
                sight[a] = ost.location
        if (i, "view") in ost.observation_log[event.actor]:  # joined the view of it
            sight[event.actor] = ost.location
        if event.type == "whisper":
            for a in who:
                heard[a].append(i)
        while pos < len(gold.actions) and gold.event_of_action[pos] == i:
            got = executor.apply(state, gold.actions[pos])
            if isinstance(got, str):
                out.append(Mismatch(i, f"rejected {gold.actions[pos]}", "legal", got))
            pos += 1
        compare(i)
    return out

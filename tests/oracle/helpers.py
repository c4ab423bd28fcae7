"""Shared helpers for the oracle tests: comparing the oracle with the reference."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from cogrsi_lib.oracle.answer import Answer
from cogrsi_lib.oracle.world import Question, World

from . import reference as ref


def fast(n: int) -> settings:
    """Hypothesis settings for the oracle suite: ``n`` examples, no deadline."""
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_agrees(world: World, q: Question, a: Answer) -> None:
    """The oracle's answer equals the reference's: value, reality, source and via."""
    r = ref.ref_answer(world, q)
    assert ref.same_value(a.value, r.value) and ref.same_value(a.reality, r.reality), (
        f"value disagreement on {q}: oracle {a}, reference {r}\n{world.to_json()}"
    )
    assert (a.source, a.via) == (r.source, r.via), (
        f"provenance disagreement on {q}: oracle {a}, reference {r}\n{world.to_json()}"
    )


def ev(text: str) -> dict:
    """One event in a short notation, as JSON: "Sally leave", "Anne move box",
    "Anne whisper Sally basket", "Sally peek", "Anne change color blue visible|hidden"."""
    words = text.split()
    agent, kind = words[0], words[1]
    if kind in ("leave", "enter", "sleep", "wake", "peek"):
        return {"type": kind, "agent": agent}
    if kind == "move":
        return {"type": "move", "agent": agent, "to": words[2]}
    if kind == "whisper":
        return {"type": "whisper", "speaker": agent, "listener": words[2], "location": words[3]}
    if kind == "change":
        return {"type": "change", "agent": agent, "property": words[2], "value": words[3],
                "visible": words[4] == "visible"}
    raise ValueError(f"bad event notation {text!r}")


def make_world(events: list[str], agents: tuple[str, ...] = ("Anne", "Sally"),
               containers: tuple[str, ...] = ("basket", "box", "drawer"),
               location: str = "basket", present: tuple[str, ...] | None = None,
               asleep: tuple[str, ...] = (), properties: dict | None = None,
               open_containers: tuple[str, ...] = ()) -> World:
    """A world from the short event notation, through the JSON parser."""
    raw = {
        "agents": list(agents), "containers": list(containers), "object": "marble",
        "initial": {"location": location,
                    "present": list(agents if present is None else present),
                    "asleep": list(asleep), "properties": properties or {}},
        "events": [ev(t) for t in events],
    }
    if open_containers:
        raw["open_containers"] = list(open_containers)
    return World.from_dict(raw)

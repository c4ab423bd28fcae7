"""Assemble ``golden.jsonl`` from the hand-written entries below.

Every expected answer and justification here was derived by hand from the events,
following ``cogrsi_lib/oracle/SEMANTICS.md`` v2 (latest event that writes the chain, else
the opening value); the items whose answer changed from v1 were re-derived by hand under v2,
with their justifications rewritten.  The ``sightings`` group covers the order of sightings
within one event under ``testimony: fresher_access``.  This script only formats JSON: it does
not import the oracle and computes no answer.  Run: ``python tests/oracle/golden/build_golden.py``.

Event notation: "Sally leave", "Anne move box", "Anne whisper Sally basket" (speaker,
listener, said location), "Sally peek", "Anne change color blue visible|hidden"
(values that parse as JSON, e.g. ``3`` or ``true``, keep their JSON type).
"""

# ruff: noqa: E501  (a table of hand-written entries; one item per statement reads best)
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("golden.jsonl")
AS = ("Anne", "Sally")
ASB = ("Anne", "Sally", "Bob")
ASBC = ("Anne", "Sally", "Bob", "Carla")
ASBCD = ("Anne", "Sally", "Bob", "Carla", "Dev")
C3 = ("basket", "box", "drawer")
C4 = ("basket", "box", "drawer", "tray")


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def ev(text: str) -> dict:
    w = text.split()
    if w[1] in ("leave", "enter", "sleep", "wake", "peek"):
        return {"type": w[1], "agent": w[0]}
    if w[1] == "move":
        return {"type": "move", "agent": w[0], "to": w[2]}
    if w[1] == "whisper":
        return {"type": "whisper", "speaker": w[0], "listener": w[2], "location": w[3]}
    if w[1] == "change":
        return {"type": "change", "agent": w[0], "property": w[2], "value": _value(w[3]),
                "visible": w[4] == "visible"}
    raise ValueError(text)


def W(events: list[str], agents: tuple[str, ...] = AS, containers: tuple[str, ...] = C3,
      location: str = "basket", present: tuple[str, ...] | None = None,
      asleep: tuple[str, ...] = (), props: dict | None = None,
      open_: tuple[str, ...] = (), **extra: Any) -> dict:
    """A world as JSON (``cogrsi oracle answer`` input, without questions).  ``extra``: more
    top-level fields (testimony, opening, known_liars, hidden_properties)."""
    out = {
        "agents": list(agents), "containers": list(containers), "object": "marble",
        "initial": {"location": location, "present": list(agents if present is None else present),
                    "asleep": list(asleep), "properties": props or {}},
        "events": [ev(e) for e in events],
    }
    if open_:
        out["open_containers"] = list(open_)
    out.update(extra)
    return out


def watched(world: dict, index: int, hidden: tuple[str, ...] = (),
            missed: tuple[str, ...] = ()) -> dict:
    """``world`` with event ``index`` secretly watched by ``hidden`` and missed by ``missed``."""
    event = dict(world["events"][index])
    if hidden:
        event["hidden_observers"] = list(hidden)
    if missed:
        event["missed_by"] = list(missed)
    events = list(world["events"])
    events[index] = event
    return {**world, "events": events}


ITEMS: list[tuple[str, dict, tuple[str, ...], str | None, Any, str]] = []


def item(group: str, world: dict, chain: tuple[str, ...], prop: str | None, expected: Any,
         why: str) -> None:
    ITEMS.append((group, world, chain, prop, expected, why))


# ----------------------------------------------------------------------------- R0 ------
# Reality: the last move (or the last change of the property), else the opening value.
item("R0", W([]), (), None, "basket", "No events: the marble stays in the opening container, the basket.")
item("R0", W(["Anne move box"]), (), None, "box", "The only move (e0) puts it in the box.")
item("R0", W(["Anne move box", "Sally move drawer"]), (), None, "drawer",
     "Last move e1 puts it in the drawer.")
item("R0", W(["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally basket"]), (), None,
     "box", "Last move e1 -> box; the whisper (a lie) changes no reality.")
item("R0", W(["Anne move box", "Anne move basket"]), (), None, "basket",
     "e0 box, e1 back to the basket; reality is the last move.")
item("R0", W(["Anne sleep", "Sally move box", "Anne wake", "Sally peek"]), (), None, "box",
     "e1 moves it to the box; sleep, wake and peek never move the object.")
item("R0", W(["Anne change color blue visible"], props={"color": "red"}), (), "color", "blue",
     "The only change e0 paints it blue.")
item("R0", W(["Anne change color blue visible", "Sally change color green visible"],
             props={"color": "red"}), (), "color", "green", "Last change e1 makes it green.")
item("R0", W(["Sally leave", "Anne change temp hot hidden"], props={"temp": "cold"}), (), "temp",
     "hot", "A hidden change still changes reality: hot (e1).")
item("R0", W(["Bob leave", "Anne move drawer", "Sally move box", "Bob enter", "Bob peek",
              "Anne whisper Bob drawer"], agents=ASB), (), None, "box",
     "Last move e2 -> box; Anne's whisper 'drawer' is false and changes nothing real.")
item("R0", W(["Anne move drawer", "Anne move basket", "Sally move box"], location="box"), (), None,
     "box", "Opening box, then drawer, basket, and e2 back to the box.")
item("R0", W(["Anne move box"], props={"color": "green"}), (), "color", "green",
     "No change event: the colour keeps its opening value green.")
item("R0", W(["Anne change color blue visible", "Anne move box", "Sally change color red visible"],
             props={"color": "red"}), (), "color", "red",
     "Blue at e0, back to red at e2 (the move is irrelevant to colour).")
item("R0", W(["Anne move box", "Sally enter", "Sally move drawer"], present=("Anne",)), (), None,
     "drawer", "Sally enters (e1) and makes the last move e2 -> drawer.")
item("R0", W(["Anne move tray", "Anne leave", "Sally wake", "Sally move box"], containers=C4,
             asleep=("Sally",)), (), None, "box",
     "Anne moves it to the tray; Sally, asleep at the start, wakes and makes the last move: box.")
item("R0", W(["Carla leave", "Bob sleep", "Anne move box", "Sally move drawer", "Bob wake",
              "Carla enter", "Carla move basket"], agents=ASBC), (), None, "basket",
     "Last move e6 by Carla -> basket.")
item("R0", W(["Anne whisper Sally box", "Sally whisper Anne drawer"]), (), None, "basket",
     "Only whispers, no move: reality is the opening basket.")
item("R0", W(["Anne change size 2 hidden", "Sally change size 3 hidden"], props={"size": 1}), (),
     "size", 3, "Integer property: 1 -> 2 -> 3; the last change e1 gives 3.")
item("R0", W(["Anne move box", "Bob move drawer", "Carla move tray", "Dev move basket",
              "Dev move box"], agents=ASBCD, containers=C4), (), None, "box",
     "Five moves; the last (e4, Dev) puts it in the box.")
item("R0", W(["Sally leave", "Anne change color blue visible", "Sally enter"], props={"color": "red"},
             open_=("basket",)), (), "color", "blue",
     "e1 paints it blue; a view changes beliefs, not reality.")

# ----------------------------------------------------------------------------- R1 ------
SALLY_ANNE = W(["Sally leave", "Anne move box", "Sally enter"])
item("R1", SALLY_ANNE, ("Sally",), None, "basket",
     "Sally was out for the only move (e1), so nothing wrote [Sally]: opening basket.")
item("R1", SALLY_ANNE, ("Anne",), None, "box", "Anne made the move e1 herself: box.")
item("R1", W(["Anne sleep", "Sally move box", "Anne wake"]), ("Anne",), None, "basket",
     "Anne was asleep in the room during the move e1 (asleep perceives nothing): basket.")
item("R1", W(["Sally leave", "Anne move box", "Sally enter", "Sally peek"]), ("Sally",), None, "box",
     "Sally missed the move but peeked (e3), which sets [Sally] to the true location, box.")
item("R1", W(["Anne move box", "Anne whisper Sally drawer"]), ("Sally",), None, "drawer",
     "Both saw the move to box, but the later lie e1 writes [Sally] = drawer.")
item("R1", W(["Anne move box", "Anne whisper Sally drawer"]), ("Anne",), None, "box",
     "A whisper never changes the speaker's own belief; Anne's last writer is the move e0: box.")
item("R1", W(["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally box"]), ("Sally",),
     None, "box", "Sally missed the move; Anne's truthful whisper e3 writes [Sally] = box.")
item("R1", W(["Bob leave", "Anne move box", "Anne whisper Sally drawer", "Bob enter"], agents=ASB),
     ("Bob",), None, "basket",
     "Bob was out for the move and the whisper is private to Anne and Sally: opening basket.")
item("R1", W(["Anne whisper Sally drawer", "Sally peek"]), ("Sally",), None, "basket",
     "Anne lied 'drawer', but Sally's later peek e1 shows the true location, the basket.")
item("R1", W(["Anne whisper Sally drawer", "Anne move box"]), ("Sally",), None, "box",
     "Sally, present and awake, watched the later move e1: box overrides the lie.")
item("R1", W(["Sally leave", "Anne change color blue visible", "Sally enter"],
             props={"color": "red"}), ("Sally",), "color", "red",
     "Sally missed the paint job e1 and no container is open (nothing in view): red.")
item("R1", W(["Sally leave", "Anne change color blue visible", "Sally enter"],
             props={"color": "red"}, open_=("basket",)), ("Sally",), "color", "blue",
     "Sally enters (e2) while the marble lies in the open basket: she sees its visible colour, blue.")
item("R1", W(["Sally leave", "Anne change temp hot hidden", "Sally enter"], props={"temp": "cold"},
             open_=("basket",)), ("Sally",), "temp", "cold",
     "Temperature is hidden, so entering with the marble in view shows nothing: cold.")
item("R1", W(["Sally leave", "Anne move tray", "Anne change color blue visible", "Sally enter"],
             containers=("basket", "tray"), props={"color": "red"}, open_=("tray",)),
     ("Sally",), None, "tray",
     "Sally enters (e3) while the marble lies on the open tray: she joins its common ground and sees where it is: tray.")
item("R1", W(["Sally sleep", "Anne change color green visible", "Sally wake"], props={"color": "red"},
             open_=("basket",)), ("Sally",), "color", "green",
     "Sally slept through e1 but wakes (e2) with the marble in the open basket: sees green.")
item("R1", W(["Anne move box", "Anne move drawer", "Sally wake"], asleep=("Sally",)), ("Sally",), None,
     "basket", "Sally was asleep from the start through both moves: opening basket.")
item("R1", W(["Anne move box", "Sally enter", "Anne move drawer"], present=("Anne",)), ("Sally",), None,
     "drawer", "Sally missed e0 but was in the room, awake, for the later move e2: drawer.")
item("R1", W(["Sally leave", "Anne move box", "Sally enter", "Sally move drawer", "Anne sleep",
              "Sally move basket", "Anne wake"]), ("Anne",), None, "drawer",
     "Anne saw e3 (drawer) but was asleep for e5 (basket): drawer.")
item("R1", W(["Carla leave", "Anne move box", "Carla enter", "Bob whisper Carla drawer"], agents=ASBC),
     ("Carla",), None, "drawer",
     "Carla missed the move; Bob's false whisper e3 writes [Carla] = drawer.")
item("R1", W(["Anne move box", "Sally leave", "Anne move drawer", "Sally enter",
              "Bob whisper Sally basket", "Sally peek"], agents=ASB), ("Sally",), None, "drawer",
     "Bob's lie (e4) is overridden by Sally's own peek e5 at the true location, the drawer.")

# ----------------------------------------------------------------------------- R2 ------
item("R2", SALLY_ANNE, ("Anne", "Sally"), None, "basket",
     "[Anne, Sally] needs both to perceive; Sally missed e1, nothing else writes it: basket.")
item("R2", SALLY_ANNE, ("Sally", "Anne"), None, "basket",
     "Sally missed e1, so Sally still thinks Anne thinks basket (no inference).")
item("R2", W(["Anne move box"]), ("Sally", "Anne"), None, "box",
     "Both present and awake for e0: every chain over {Anne, Sally} is box.")
item("R2", W(["Anne move box", "Anne whisper Sally drawer"]), ("Anne", "Sally"), None, "drawer",
     "A whisper S->L writes [S, L]: Anne thinks Sally believes her lie, drawer.")
item("R2", W(["Anne move box", "Anne whisper Sally drawer"]), ("Sally", "Anne"), None, "drawer",
     "A whisper S->L writes [L, S]: Sally thinks Anne believes what she said, drawer.")
item("R2", W(["Anne move box", "Anne whisper Sally drawer"], agents=ASB), ("Bob", "Sally"), None,
     "box", "Bob did not hear the whisper; the last event both Bob and Sally saw is e0: box.")
item("R2", W(["Sally leave", "Anne move box", "Sally enter", "Sally peek"]), ("Anne", "Sally"), None,
     "basket", "The peek e3 writes only [Sally]; Sally missed e1: [Anne, Sally] stays basket.")
item("R2", W(["Sally leave", "Anne move box", "Sally enter", "Sally peek"]), ("Sally", "Anne"), None,
     "basket", "Sally knows box from her peek, but nothing wrote [Sally, Anne]: basket.")
item("R2", W(["Anne sleep", "Sally move box", "Anne wake"]), ("Sally", "Anne"), None, "basket",
     "Anne was asleep during e1, so the chain [Sally, Anne] was not written: basket.")
item("R2", W(["Bob leave", "Anne move box", "Bob enter", "Sally whisper Bob box"], agents=ASB),
     ("Bob", "Sally"), None, "box", "Whisper Sally->Bob writes [Bob, Sally] = box (e3).")
item("R2", W(["Bob leave", "Anne move box", "Bob enter", "Sally whisper Bob box"], agents=ASB),
     ("Anne", "Bob"), None, "basket",
     "Anne did not hear the whisper (it writes [Sally, Bob], not [Anne, Bob]); Bob missed e1: basket.")
item("R2", W(["Sally leave", "Anne move box", "Sally enter", "Anne move drawer"]), ("Sally", "Anne"),
     None, "drawer", "Both were present and awake for the last move e3: drawer.")
item("R2", W(["Sally leave", "Anne change color blue visible", "Sally enter"],
             props={"color": "red"}), ("Anne", "Sally"), "color", "red",
     "Sally missed the change e1: [Anne, Sally] colour stays red.")
item("R2", W(["Sally leave", "Anne change color blue visible", "Sally enter"], props={"color": "red"},
             open_=("basket",)), ("Anne", "Sally"), "color", "blue",
     "Sally enters (e2) with the marble in the open basket; Anne, present and awake, watches her join its common ground: blue.")
item("R2", W(["Sally leave", "Anne change color blue visible", "Sally enter"], props={"color": "red"},
             open_=("basket",)), ("Sally", "Anne"), "color", "blue",
     "At e2 the marble lies in view of both Sally and Anne (present, awake): its colour is their common ground: blue.")
item("R2", W(["Bob sleep", "Anne move box", "Bob wake", "Sally leave", "Bob move drawer"],
             agents=ASB), ("Sally", "Bob"), None, "basket",
     "e1: Bob asleep; e4: Sally out. No event reached both: opening basket.")
item("R2", W(["Anne whisper Sally box", "Sally whisper Anne drawer"]), ("Anne", "Sally"), None,
     "drawer", "Latest writer of [Anne, Sally] is e1 (Sally->Anne writes [L, S]): drawer.")
item("R2", W(["Anne whisper Sally box", "Sally whisper Anne drawer"]), ("Sally", "Anne"), None,
     "drawer", "e1 Sally->Anne writes [S, L] = [Sally, Anne]: drawer.")
item("R2", W(["Carla leave", "Anne move box", "Carla enter", "Bob whisper Carla box"], agents=ASBC),
     ("Anne", "Carla"), None, "basket",
     "Carla missed e1 and Anne was not party to the whisper: basket.")
item("R2", W(["Carla leave", "Anne move box", "Carla enter", "Bob whisper Carla box"], agents=ASBC),
     ("Carla", "Bob"), None, "box", "Whisper Bob->Carla writes [Carla, Bob] = box.")

# ----------------------------------------------------------------------------- R3 ------
item("R3", W(["Sally leave", "Anne move box", "Sally enter"], agents=ASB), ("Bob", "Anne", "Sally"),
     None, "basket", "Sally missed the only move e1: any chain with Sally stays basket.")
item("R3", W(["Sally leave", "Anne move box", "Sally enter"], agents=ASB), ("Anne", "Bob", "Anne"),
     None, "box", "Anne and Bob both saw e1: every chain over {Anne, Bob} is box.")
item("R3", W(["Bob leave", "Anne move box", "Bob enter", "Anne whisper Bob box"], agents=ASB),
     ("Sally", "Anne", "Bob"), None, "basket",
     "Sally is no party to the whisper e3 and Bob missed e1, so nothing writes [Sally, Anne, Bob]: opening basket.")
item("R3", W(["Bob leave", "Anne move box", "Bob enter", "Anne whisper Bob box"], agents=ASB),
     ("Anne", "Bob", "Anne"), None, "box",
     "The believed whisper e3 writes every chain over {Anne, Bob} but [Anne], at every depth: box.")
item("R3", W(["Anne move box", "Anne whisper Sally drawer"]), ("Anne", "Sally", "Anne"), None, "drawer",
     "The whisper e1 writes every chain over {Anne, Sally} but [Anne], depth 3 included: drawer.")
item("R3", W(["Bob sleep", "Sally move box", "Bob wake", "Anne move drawer"], agents=ASB),
     ("Anne", "Sally", "Bob"), None, "drawer", "All three present and awake for e3: drawer.")
item("R3", W(["Bob sleep", "Sally move box", "Bob wake"], agents=ASB), ("Anne", "Sally", "Bob"), None,
     "basket", "Bob was asleep during the only move e1: basket.")
item("R3", W(["Sally leave", "Anne move box", "Bob leave", "Anne move drawer", "Sally enter",
              "Bob enter"], agents=ASB), ("Sally", "Bob", "Anne"), None, "basket",
     "Sally missed both moves: chain stays at the opening basket.")
item("R3", W(["Sally leave", "Anne move box", "Bob leave", "Anne move drawer", "Sally enter",
              "Bob enter"], agents=ASB), ("Bob", "Anne", "Bob"), None, "box",
     "Anne and Bob both saw e1 (box); Bob was out for e3: box.")
item("R3", W(["Carla leave", "Anne move box", "Bob leave", "Anne move drawer"], agents=ASBC),
     ("Sally", "Anne", "Bob"), None, "box",
     "e1 seen by Anne, Sally, Bob (box); e3 missed by Bob: box (reality and prefixes: drawer).")
item("R3", W(["Carla leave", "Anne move box", "Bob leave", "Anne move drawer"], agents=ASBC),
     ("Carla", "Anne", "Bob"), None, "basket", "Carla missed both moves: basket.")
item("R3", W(["Sally leave", "Anne change wet true visible", "Sally enter"], agents=ASB,
             props={"wet": False}), ("Bob", "Anne", "Sally"), "wet", False,
     "Boolean property: Sally missed the change e1, so the chain keeps the opening false.")
item("R3", W(["Bob sleep", "Anne change color blue visible", "Bob wake",
              "Sally change color green visible"], agents=ASB, props={"color": "red"}),
     ("Anne", "Bob", "Sally"), "color", "green", "All three awake and present for e3: green.")
item("R3", W(["Bob sleep", "Anne change color blue visible", "Bob wake"], agents=ASB,
             props={"color": "red"}, open_=("basket",)), ("Anne", "Bob", "Anne"), "color", "blue",
     "Bob slept through e1 but wakes (e2) with the marble in the open basket: every chain of the awake Anne and Bob that contains Bob sees blue.")
item("R3", W(["Anne move box", "Sally leave", "Anne move drawer", "Sally enter",
              "Bob whisper Sally drawer"], agents=ASB), ("Anne", "Bob", "Sally"), None, "box",
     "Anne is no party to the whisper e4 and Sally missed e2; e0 was seen by all: box.")
item("R3", W(["Anne move box", "Sally leave", "Anne move drawer", "Sally enter",
              "Bob whisper Sally drawer"], agents=ASB), ("Sally", "Bob", "Sally"), None, "drawer",
     "The whisper e4 Bob->Sally writes every chain over {Bob, Sally} but [Bob]: drawer.")
item("R3", W(["Sally leave", "Anne move box", "Sally enter", "Sally peek"]), ("Sally", "Anne", "Sally"),
     None, "basket", "Sally missed e1 and a peek writes only [Sally]: basket.")
item("R3", W(["Dev leave", "Carla sleep", "Anne move box", "Dev enter", "Carla wake",
              "Bob move drawer"], agents=ASBCD), ("Dev", "Carla", "Anne"), None, "drawer",
     "All five present and awake for e5: drawer.")
item("R3", W(["Dev leave", "Carla sleep", "Anne move box", "Dev enter", "Carla wake"], agents=ASBCD),
     ("Anne", "Bob", "Carla"), None, "basket", "Carla was asleep for the only move e2: basket.")
item("R3", W(["Anne move box", "Sally leave", "Anne move drawer", "Sally enter",
              "Anne whisper Sally tray"], containers=C4), ("Sally", "Anne", "Sally"), None, "tray",
     "The whisper e4 Anne->Sally writes every chain over {Anne, Sally} but [Anne]: tray.")

# ------------------------------------------------------------------- mixed adversarial ---
R4W = W(["Carla leave", "Anne move box", "Bob leave", "Anne move drawer", "Sally leave",
         "Anne move tray"], agents=ASBC, containers=C4)
item("mixed", R4W, ("Anne", "Sally", "Bob", "Carla"), None, "basket",
     "R4: Carla missed all three moves: the chain keeps the opening basket (reality tray).")
item("mixed", R4W, ("Anne", "Sally", "Anne", "Bob"), None, "box",
     "R4 over {Anne, Sally, Bob}: only e1 reached all three: box (prefixes tray, drawer, drawer).")
item("mixed", W(["Bob sleep", "Anne move box", "Bob wake", "Sally leave", "Anne move drawer"],
                agents=ASB), ("Sally", "Anne", "Bob", "Anne"), None, "basket",
     "R4: e1 missed by asleep Bob, e4 by absent Sally: basket.")
LIES = W(["Anne move box", "Anne whisper Sally drawer", "Sally whisper Anne tray"], containers=C4)
item("mixed", LIES, ("Anne",), None, "tray",
     "Testimony: Sally->Anne writes [Anne] = tray, although Anne saw the move to box (no inference).")
item("mixed", LIES, ("Sally",), None, "drawer",
     "Anne's lie e1 wrote [Sally] = drawer; Sally's own whisper e2 leaves her belief unchanged.")
item("mixed", LIES, ("Anne", "Sally"), None, "tray",
     "e2 Sally->Anne writes [L, S] = [Anne, Sally] = tray, overriding e1's drawer.")
PEEKLIE = W(["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally drawer", "Sally peek"])
item("mixed", PEEKLIE, ("Anne", "Sally"), None, "drawer",
     "Sally's peek is private; [Anne, Sally] was last written by the lie e3: drawer.")
item("mixed", PEEKLIE, ("Sally",), None, "box", "Sally's peek e4 overrides the lie: box.")
ASLEEPVIEW = W(["Anne move box", "Sally sleep", "Anne change color blue visible", "Sally wake"],
               containers=("basket", "box"), props={"color": "red"}, open_=("box",))
item("mixed", ASLEEPVIEW, ("Sally",), "color", "blue",
     "Asleep for e2, but she wakes (e3) with the marble in the open box and sees it: blue.")
item("mixed", ASLEEPVIEW, ("Anne", "Sally"), "color", "blue",
     "Sally slept through e2, but wakes (e3) into the common view of the open box with Anne: blue.")
item("mixed", W(["Sally sleep", "Anne change temp hot hidden", "Sally wake"], props={"temp": "cold"},
                open_=("basket",)), ("Sally",), "temp", "cold",
     "Hidden property: waking with the marble in view shows nothing: cold.")
item("mixed", W(["Sally leave", "Anne change color blue visible", "Anne move box", "Sally enter"],
                props={"color": "red"}, open_=("basket",)), ("Sally",), "color", "red",
     "At Sally's entry (e3) the marble is in the closed box, not in view: red.")
item("mixed", W(["Sally leave", "Anne change color blue visible", "Sally enter", "Sally leave",
                 "Anne change color green visible"], props={"color": "red"}, open_=("basket",)),
     ("Sally",), "color", "blue", "Entering with the marble in view (e2) shows blue; Sally was out for e4 (green): blue.")
item("mixed", W(["Anne whisper Sally box"]), ("Anne", "Sally", "Anne", "Sally"), None, "box",
     "R4: the whisper e0 writes every chain over {Anne, Sally} but [Anne], depth 4 included: box.")
PEEK3 = W(["Anne move box", "Bob leave", "Anne move drawer", "Bob enter", "Anne whisper Bob tray",
           "Bob peek"], agents=ASB, containers=C4)
item("mixed", PEEK3, ("Bob",), None, "drawer", "Bob's peek e5 overrides Anne's lie (tray): drawer.")
item("mixed", PEEK3, ("Sally", "Bob"), None, "box",
     "Sally heard no whisper, Bob missed e2, the peek is private: last shared event e0, box.")
R4FIVE = W(["Dev leave", "Anne move box", "Carla leave", "Anne move drawer", "Bob sleep",
            "Anne move tray"], agents=ASBCD, containers=C4)
item("mixed", R4FIVE, ("Sally", "Bob", "Carla", "Dev"), None, "basket",
     "R4: Dev missed all three moves: basket.")
item("mixed", R4FIVE, ("Anne", "Sally", "Bob", "Carla"), None, "box",
     "R4: e1 reached Anne, Sally, Bob, Carla; e3 missed Carla; e5 missed Bob: box.")
item("mixed", W(["Anne whisper Sally drawer", "Sally leave", "Sally enter", "Anne move box"]),
     ("Sally", "Anne"), None, "box", "Both watched the last move e3, which overrides the whisper: box.")
item("mixed", W(["Bob sleep", "Anne change color blue visible", "Sally leave",
                 "Anne change color green visible", "Bob wake", "Sally enter"], agents=ASB,
                props={"color": "red"}), ("Sally", "Bob"), "color", "red",
     "e1: Bob asleep; e3: Sally out and Bob asleep; no open container: red.")


# ----------------------------------------------------------------------------- v2 ------
# The rules semantics v2 adds (SEMANTICS.md): secret observers, unnoticed misses, what
# seeing the object shows, testimony policies, known liars and an unknown opening.
SECRET = watched(W(["Bob leave", "Anne move box"], agents=ASB), 1, hidden=("Bob",))
item("v2", SECRET, ("Bob",), None, "box", "Bob secretly watched the move e1 from outside: box.")
item("v2", SECRET, ("Bob", "Anne"), None, "box",
     "Bob saw Anne make the move e1, and Anne is a public perceiver: box.")
item("v2", SECRET, ("Anne", "Bob"), None, "basket",
     "Nobody knows Bob watched: Anne's model of Bob keeps the opening basket.")
item("v2", SECRET, ("Bob", "Anne", "Bob"), None, "basket",
     "Bob knows Anne does not know he watched: [Anne, Bob] in Bob's eyes is still basket.")
MISSED = watched(W(["Anne move box"], agents=ASB), 0, missed=("Sally",))
item("v2", MISSED, ("Sally",), None, "basket", "Sally looked away during e0: she keeps basket.")
item("v2", MISSED, ("Bob", "Sally"), None, "box",
     "Nobody noticed Sally look away: Bob takes her to have seen e0: box.")
item("v2", MISSED, ("Sally", "Bob"), None, "basket",
     "Sally perceived nothing of e0, so her model of Bob is unchanged: basket.")
item("v2", watched(W(["Anne move tray"], containers=C4, open_=("tray",)), 0, missed=("Sally",)),
     ("Sally",), None, "tray",
     "Sally missed the move e0, but the marble now lies on the open tray in her view: tray.")
item("v2", W(["Sally leave", "Anne change color green visible", "Sally enter", "Anne move box"],
             props={"color": "red"}), ("Sally",), "color", "green",
     "Sally missed the paint job e1 but watched the move e3: the carried marble is green.")
item("v2", W(["Sally leave", "Anne change color green visible", "Sally enter", "Sally peek"],
             props={"color": "red"}), ("Anne", "Sally"), "color", "red",
     "Sally's peek e3 shows her the colour, but it is private: Anne thinks Sally thinks red.")
item("v2", W(["Anne move box", "Anne whisper Sally basket"], testimony="fresher_access"),
     ("Sally",), None, "box",
     "fresher_access: both saw the move e0; Anne saw it no later than Sally, so Sally keeps box.")
item("v2", W(["Anne move box", "Anne whisper Sally basket"], testimony="fresher_access"),
     ("Anne", "Sally"), None, "box",
     "fresher_access: the claim e1 is not taken, so no chain changes: Anne thinks Sally thinks box.")
item("v2", W(["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally drawer"],
             testimony="fresher_access"), ("Sally",), None, "drawer",
     "fresher_access: Anne saw the marble at e1, after Sally's last sighting (the opening): drawer.")
item("v2", W(["Anne move box", "Anne whisper Sally basket"]), ("Sally",), None, "basket",
     "latest: the word e1 beats the earlier sight of e0: basket.")
item("v2", W(["Anne whisper Sally basket"], containers=C4, location="tray", open_=("tray",)),
     ("Sally",), None, "tray",
     "The marble lies on the open tray in plain view: the claim e0 changes nothing: tray.")
item("v2", W(["Sally leave", "Anne move box", "Sally enter", "Anne whisper Sally box"],
             known_liars=["Anne"]), ("Sally",), None, "basket",
     "Everyone knows Anne lies, so Sally does not take her word e3; she missed e1: basket.")
item("v2", W(["Sally enter"], present=("Anne",), opening="unknown"), ("Sally",), None, None,
     "opening unknown: Sally was out at the start and has seen nothing since: no belief (null).")
item("v2", W(["Sally enter", "Anne move box"], present=("Anne",), opening="unknown"),
     ("Anne", "Sally"), None, "box", "opening unknown: both watched the move e1: box.")
item("v2", W(["Sally enter"], present=("Anne",), opening="unknown"), ("Anne",), None, "basket",
     "opening unknown: Anne was present and awake at the start: basket.")
item("v2", W(["Sally enter"], present=("Anne",)), ("Sally",), None, "basket",
     "opening common_ground (the default): even the absent Sally starts at basket.")


# ------------------------------------------------------------------------ sightings ---
# fresher_access: sightings within one event are ordered (SEMANTICS.md, "Testimony"): the
# object in view as the event begins, then the event itself, then the object in view as it
# ends.  The marble starts on the open tray; the basket, box and drawer are closed.
OFF_TRAY = watched(W(["Anne move box", "Anne whisper Sally basket"], containers=C4,
                     location="tray", open_=("tray",), testimony="fresher_access"),
                   0, missed=("Sally",))
item("sightings", OFF_TRAY, ("Sally",), None, "basket",
     "Sally looked away as Anne moved the marble off the open tray (e0): she last saw it as e0 began, Anne by the move itself, later; so Sally takes Anne's 'basket' (e1).")
item("sightings", OFF_TRAY, ("Anne", "Sally"), None, "basket",
     "The believed whisper e1 writes every chain over {Anne, Sally} but [Anne]: basket (the move e0 had written box).")
item("sightings", OFF_TRAY, ("Sally", "Anne", "Sally"), None, "basket",
     "Depth 3 over {Anne, Sally}: written by the believed whisper e1: basket.")
item("sightings", OFF_TRAY, ("Anne",), None, "box",
     "A whisper never changes the speaker's own belief; Anne made the move e0: box.")
BACK = watched(W(["Anne move box", "Sally whisper Anne tray"], containers=C4, location="tray",
                 open_=("tray",), testimony="fresher_access"), 0, missed=("Sally",))
item("sightings", BACK, ("Anne",), None, "box",
     "Sally's last sighting (as e0 began) is older than Anne's (the move e0), so Anne does not take 'tray' (e1): box.")
item("sightings", BACK, ("Sally", "Anne"), None, "tray",
     "The whisper e1 is not taken, so it writes nothing; Sally missed e0: the opening tray.")
TIE = W(["Anne move box", "Anne whisper Sally basket"], containers=C4, location="tray",
        open_=("tray",), testimony="fresher_access")
item("sightings", TIE, ("Sally",), None, "box",
     "Both watched the move off the tray (e0): their sightings are the same moment, not later, so Sally keeps box.")
SECRET_OFF_TRAY = watched(W(["Bob leave", "Anne move box", "Bob enter",
                             "Bob whisper Sally basket", "Sally whisper Bob tray"],
                            agents=ASB, containers=C4, location="tray", open_=("tray",),
                            testimony="fresher_access"), 1, hidden=("Bob",), missed=("Sally",))
item("sightings", SECRET_OFF_TRAY, ("Sally",), None, "basket",
     "Bob secretly watched the move e1, Sally missed it (her last sighting: as e1 began): Bob is fresher, so Sally takes 'basket' (e3).")
item("sightings", SECRET_OFF_TRAY, ("Bob",), None, "box",
     "Sally's 'tray' (e4) is older news than Bob's sighting of the move e1: not taken; Bob keeps box.")
item("sightings", SECRET_OFF_TRAY, ("Anne", "Bob"), None, "tray",
     "Nobody knows Bob watched e1, and Anne heard no whisper: her model of Bob keeps the opening tray.")


def main() -> None:
    counters: dict[str, int] = {}
    lines = []
    for group, world, chain, prop, expected, why in ITEMS:
        counters[group] = counters.get(group, 0) + 1
        question: dict[str, Any] = {"kind": "property" if prop else "location", "chain": list(chain)}
        if prop:
            question["property"] = prop
        lines.append(json.dumps({
            "id": f"{group}-{counters[group]:02d}", "group": group, "world": world,
            "question": question, "expected": expected, "justification": why,
        }, sort_keys=True))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} items to {OUT}: {counters}")


if __name__ == "__main__":
    main()
